"""AltUp, alternating updates (Gemma 3n): the residual state is n streams of D (``altup_num_inputs``); each layer
runs on the first (the active one) after a prediction mixes the streams (a router D -> n, coefficients n -> n^2, the
mix n x n over D) and corrects them after (the router again, coefficients n -> n, an elementwise scale); the other
streams enter as D -> D projections of the embedding and leave through D -> D projections (at the head's side)."""

from __future__ import annotations

from .. import terms
from ..components import Component, WEIGHT
from ..families.base import read_branch_ends
from ..fields import field_of
from .base import Feature, one_residual_scheme, register

SCHEMA = {
    "altup_num_inputs": field_of(0, int, "AltUp (Gemma 3n's alternating updates): the residual state is this many "
                                         "streams of D; each layer runs on the first (the active one) after a "
                                         "prediction mixes the streams (a router D -> n, coefficients n -> n^2, the "
                                         "mix n x n over D) and corrects them after (the router again, coefficients "
                                         "n -> n, an elementwise scale); the other streams enter as D -> D "
                                         "projections of the embedding and leave through D -> D projections "
                                         "(components altup, altup_proj); 0: one plain residual stream.", minimum=0),
}


def check(c, err) -> None:
    one_residual_scheme(c, "altup_num_inputs", err)
    if c["altup_num_inputs"]:  # Gemma 3n's layers: AltUp around a plain pre-norm layer, no MTP modules
        for key in ("residual_conv_kernel", "gated_norm_rank", "mtp_num_layers"):
            if c[key]:
                err(key, f"{c[key]} with altup_num_inputs={c['altup_num_inputs']}: not modelled")


def price(p, kind, c, seqs, decode, tokens, hardware) -> None:
    if c["altup_num_inputs"]:  # the branches' outputs feed the correction's router and innovation, so a
        # rematerialized layer recomputes their last matmuls too
        p.out["altup"] = terms.altup(c["altup_num_inputs"], c["emb_dim"]) * tokens
        read_branch_ends(p)


def head(c, tokens, hardware) -> dict:
    if c["altup_num_inputs"] <= 1:
        return {}
    return {"altup_proj": terms.altup_proj(c["altup_num_inputs"], c["emb_dim"]) * tokens}


def decode(kind, c, seqs, elements, cache) -> None:
    if c["altup_num_inputs"]:  # its router (used twice, read once) and both coefficient matrices
        n = c["altup_num_inputs"]
        elements["altup"] = c["emb_dim"] * n + n * n * n + n * n


def decode_head(c) -> dict:
    if c["altup_num_inputs"] <= 1:
        return {}
    return {"altup_proj": terms.altup_proj(c["altup_num_inputs"], c["emb_dim"]) // 2}

FEATURE = register(Feature(
    "altup", "alternating updates over n residual streams (Gemma 3n)", SCHEMA, switches=("altup_num_inputs",),
    on=lambda c: bool(c["altup_num_inputs"]), off="", order=50,
    components=(Component("altup", WEIGHT, 48, "AltUp: the router, prediction and correction coefficients and the "
                                                 "streams' mix around each layer (Gemma 3n)"),
                Component("altup_proj", WEIGHT, 275, "AltUp: the D -> D projections of the embedding into the "
                                                       "other streams and out of them")),
    check=check, price=price, decode=decode, head=head, decode_head=decode_head,
    proof="maxflops.features.proofs.altup"))
