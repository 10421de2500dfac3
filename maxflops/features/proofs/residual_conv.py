"""Residual convs' part of the Flax model (Inkling's attn_sconv and mlp_sconv)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...proofkit.kernels import causal_conv


def branch_output(c, p, y, tag, segments):
    """A causal depthwise conv over a branch's output, with a residual, each document's its own."""
    K = c["residual_conv_kernel"]
    w = p(f"res_conv_{tag}", (K, 1, y.shape[-1]))
    bounds = np.cumsum((0,) + (segments or (y.shape[1],)))
    with jax.named_scope("residual_conv"):
        return y + jnp.concatenate([causal_conv(y[:, a:b], w, K) for a, b in zip(bounds[:-1], bounds[1:])], axis=1)
