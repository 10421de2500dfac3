"""AltUp's part of the Flax model (Gemma 3n): a residual scheme over n streams [B, L, n, D]."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.kernels import dense, rms


def enter(c, x, param):
    """The embedding and its projections D -> D, one per other stream."""
    if c["mtp_num_layers"] and c["mode"] == "train":
        raise ValueError("mtp_num_layers: MTP modules with AltUp streams are not modelled in the Flax model")
    D = x.shape[-1]
    with jax.named_scope("altup_proj"):
        return jnp.stack([x] + [dense(x, param(f"altup_in{i}", (D, D))) for i in range(1, c["altup_num_inputs"])],
                         2)


def layer(c, kind, p, x, run, messages):
    """One layer under AltUp (Gemma 3n's Gemma3nTextDecoderLayer): the streams predicted (a router D -> n on the
    normed active stream, tanh, coefficients n -> n^2, the streams mixed n x n over D, plus themselves); the layer on
    the active prediction (its mixer on the normed input, beside it what features add there (LAuReL), then the
    FFN); the correction (the router on the layer's output, coefficients n -> n plus one, each stream's innovation
    scaled by its coefficient: elementwise); then what features add after the layer (a per-layer embedding), from
    the corrected active stream into the others."""
    B, L, n, D = x.shape
    router = p("altup_router", (D, n))
    with jax.named_scope("altup"):
        mod = jnp.tanh(dense(rms(x[:, :, 0]), router))
        coefs = dense(mod, p("altup_predict", (n, n * n))).reshape(B, L, n, n)
        pred = jnp.einsum("blnd,blnm->blmd", x, coefs) + x
    active = pred[:, :, 0]
    h = active
    if run.mixer is not None:
        normed = rms(active)
        h = h + run.mixer(normed)
        for beside in run.beside:
            h = beside(h, normed)
    if run.ffn is not None:
        h = h + run.ffn(rms(h))
    with jax.named_scope("altup"):
        correct = dense(jnp.tanh(dense(rms(h), router)), p("altup_correct", (n, n))) + 1.0
    x = pred + (h - active)[:, :, None, :] * correct[..., None]
    for add in run.after:
        x = x.at[:, :, 1:].add(add(x[:, :, 0])[:, :, None, :])
    return x


def leave(c, x, param):
    """The active stream as it is, the others through D -> D, averaged."""
    D = x.shape[-1]
    with jax.named_scope("altup_proj"):
        return jnp.mean(jnp.stack([x[:, :, 0]] + [dense(x[:, :, i], param(f"altup_out{i}", (D, D)))
                                                  for i in range(1, c["altup_num_inputs"])], 2), 2)
