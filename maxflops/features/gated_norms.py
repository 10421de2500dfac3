"""Gated norms (A.X K2's GatedRMSNorm): a layer's input norm, and on MoE layers its FFN's norm, scale their output by
a sigmoid gate from a low-rank MLP of it, D -> r -> D (``gated_norm_rank``)."""

from __future__ import annotations

from ..components import Component, WEIGHT
from ..fields import field_of
from ..families.base import NO_MIXER
from .base import Feature, one_residual_scheme, register

SCHEMA = {
    "gated_norm_rank": field_of(0, int, "Gated norms (A.X K2's GatedRMSNorm): the layer's input norm, and on MoE "
                                        "layers the FFN's norm, scale their output by a sigmoid gate from a "
                                        "low-rank MLP of it, D -> this rank -> D (4 D r FLOPs per gated norm and "
                                        "token, component norm_gate); 0: plain norms.", minimum=0),
}


def price(p, kind, c, seqs, decode, tokens, hardware) -> None:
    if c["gated_norm_rank"]:  # the mixer's input norm, and the FFN's on a MoE layer
        norms = (kind.mixer != NO_MIXER) + (kind.ffn == "moe")
        p.out["norm_gate"] = 4 * c["emb_dim"] * c["gated_norm_rank"] * norms * tokens


FEATURE = register(Feature(
    "gated_norms", "a low-rank sigmoid gate on the layer's input norm, and the FFN's on MoE layers (A.X K2)", SCHEMA,
    switches=("gated_norm_rank",), on=lambda c: bool(c["gated_norm_rank"]), off="", order=70,
    components=(Component("norm_gate", WEIGHT, 47, "gated norms: the low-rank sigmoid gate on a layer's input norm "
                                                     "(and its FFN's norm on MoE layers), D -> r -> D"),),
    weight_components=("norm_gate",), check=lambda c, err: one_residual_scheme(c, "gated_norm_rank", err),
    price=price, proof="maxflops.features.proofs.gated_norms"))
