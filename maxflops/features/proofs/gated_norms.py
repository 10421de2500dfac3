"""Gated norms' part of the Flax model (A.X K2's GatedRMSNorm)."""

from __future__ import annotations

import jax

from ...proofkit.kernels import dense, rms


def branch_input(c, kind, p, x, tag):
    """The mixer's input norm, and the FFN's on a MoE layer: the norm's output y scaled by
    sigmoid(fc2(silu(fc1(y)))), fc1 D -> r, fc2 r -> D; None for a dense FFN's (a plain norm)."""
    if not (tag == "attn" or kind.ffn == "moe"):
        return None
    D, r = x.shape[-1], c["gated_norm_rank"]
    y = rms(x)
    with jax.named_scope("norm_gate"):
        g = dense(jax.nn.silu(dense(y, p(f"gate_fc1_{tag}", (D, r)))), p(f"gate_fc2_{tag}", (r, D)))
    return y * jax.nn.sigmoid(g)
