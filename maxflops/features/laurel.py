"""LAuReL, the learned augmented residual (Gemma 3n): beside each layer's mixer, on its normed input, a low-rank
branch D -> r -> D (``laurel_rank``) added to the residual, its output normed."""

from __future__ import annotations

from ..components import Component, WEIGHT
from ..fields import field_of
from ..families.base import NO_MIXER
from .base import Feature, one_residual_scheme, register

SCHEMA = {
    "laurel_rank": field_of(0, int, "LAuReL (Gemma 3n's learned augmented residual): beside the mixer, on its normed "
                                    "input, a low-rank D -> r -> D branch added to the residual (4 D r FLOPs per "
                                    "token and mixer layer, component laurel); 0: none.", minimum=0),
}


def price(p, kind, c, seqs, decode, tokens, hardware) -> None:
    if c["laurel_rank"] and kind.mixer != NO_MIXER:
        p.out["laurel"] = 4 * c["emb_dim"] * c["laurel_rank"] * tokens


FEATURE = register(Feature(
    "laurel", "a low-rank branch D -> r -> D beside each mixer (Gemma 3n)", SCHEMA, switches=("laurel_rank",),
    on=lambda c: bool(c["laurel_rank"]), off="", order=40,
    components=(Component("laurel", WEIGHT, 49, "LAuReL: the low-rank branch D -> r -> D beside the mixer "
                                                  "(Gemma 3n)"),),
    weight_components=("laurel",), check=lambda c, err: one_residual_scheme(c, "laurel_rank", err), price=price,
    proof="maxflops.features.proofs.laurel"))
