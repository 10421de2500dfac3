"""Residual convs (Inkling's attn_sconv and mlp_sconv): a causal depthwise conv of K taps (``residual_conv_kernel``)
over each branch's output (the mixer's, the FFN's), D channels each, with a residual, before it joins the layer's
residual stream."""

from __future__ import annotations

from ..components import Component, WEIGHT
from ..families import conv
from ..fields import field_of
from .base import Feature, branches, one_residual_scheme, register

SCHEMA = {
    "residual_conv_kernel": field_of(0, int, "A causal depthwise conv of this many taps over the mixer's output and "
                                             "over the FFN's output, each with a residual, before they join the "
                                             "layer's residual stream (Inkling's attn_sconv and mlp_sconv); 0: none.",
                                     minimum=0),
}


def price(p, kind, c, seqs, decode, tokens, hardware) -> None:
    K, n = c["residual_conv_kernel"], branches(kind)
    if not (K and n):
        return
    d = c["emb_dim"]
    if hardware:
        conv.price_hardware(p, "residual_conv", c["aux_conv_impl"], n * d, K, c, seqs, decode, tokens)
    else:
        conv.price(p, "residual_conv", n * d, K, c, seqs, decode, tokens)
    for k in ("mlp", "moe_routed", "moe_shared", *p.closing):  # the branch's last matmul feeds the conv
        p.tail.pop(k, None)
    # the last branch's conv output only joins the residual stream (the mixer's, with an FFN after, feeds its norm)
    p.tail["residual_conv"] = p.out["residual_conv"] // n


def decode(kind, c, seqs, elements, cache) -> None:
    K = c["residual_conv_kernel"]
    if K:  # the convs' kernels, and per sequence their last K - 1 inputs
        width = c["emb_dim"] * branches(kind)
        cache["weights"] = cache.get("weights", 0) + width * K * c["weight_bytes"]
        cache["state"] = cache.get("state", 0) + 2 * (K - 1) * width * c["state_bytes"] * seqs.count


FEATURE = register(Feature(
    "residual_conv", "a causal depthwise conv over each branch's output before the residual add (Inkling)", SCHEMA,
    switches=("residual_conv_kernel",), on=lambda c: bool(c["residual_conv_kernel"]), off="", order=60,
    components=(Component("residual_conv", WEIGHT, 135, "the causal depthwise convs over each branch's output "
                                                          "before the residual add (Inkling)"),),
    check=lambda c, err: one_residual_scheme(c, "residual_conv_kernel", err, attn_res=False), price=price,
    decode=decode, proof="maxflops.features.proofs.residual_conv"))
