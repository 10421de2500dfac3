"""mHC's part of the Flax model (DeepSeek-V4; HY-V4's and Qwen4-Exp's variants): a residual scheme over G streams
[B, L, G, D]."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.kernels import dense, rms


def reduce(c, out):
    return {"mhc_expansion_rate": min(c["mhc_expansion_rate"], 3)}


def enter(c, x, param):
    """The embedding in every stream."""
    if c["mtp_num_layers"] and c["mode"] == "train":
        raise ValueError("mtp_num_layers: MTP modules with mHC streams are not modelled in the Flax model")
    B, L, D = x.shape
    return jnp.broadcast_to(x[:, :, None, :], (B, L, c["mhc_expansion_rate"], D))


def layer(c, kind, p, x, run, messages):
    """One mixing around each branch, then what features add after the layer."""
    for tag, branch in run.branches:
        x = _mhc(p, x, branch, tag, c["weighted_sum_impl"] == "einsum", not c["mhc_plain_residual"], c["mhc_lowrank"])
    for add in run.after:
        x = x + add(x)
    return x


def leave(c, x, param):
    """The streams collapsed: the hyper head's weights (a projection), or a plain sum."""
    B, L, G, D = x.shape
    if c["mhc_hyper_head"] and c["mhc_lowrank"]:  # (gated: a weight per stream and channel)
        return _gated_weights(param, "mhc_head", "hc_head", x, c["mhc_lowrank"])[0]
    if c["mhc_hyper_head"]:
        with jax.named_scope("mhc_head"):
            w = dense(rms(x.reshape(B, L, G * D)), param("hc_head", (G * D, G)))
        return (jax.nn.sigmoid(w)[..., None] * x).sum(2)
    return x.sum(2)


def _gated_weights(p, scope, prefix, x, r):
    """Gated hyper-connections' input weights (Qwen4-Exp's): the normed streams x [B, L, G, D] through G*D -> r ->
    G*D, a sigmoid weight per stream and channel; the streams' weighted mean (elementwise), and the normed streams."""
    B, L, G, D = x.shape
    xn = rms(x)
    with jax.named_scope(scope):
        w = dense(jax.nn.silu(dense(xn.reshape(B, L, G * D), p(f"{prefix}_down", (G * D, r))) / G),
                  p(f"{prefix}_up", (r, G * D)))
    return (jax.nn.sigmoid(w).reshape(B, L, G, D) * xn).mean(2), xn


def _mhc(p, x, branch, tag, einsum_sum=True, mix=True, lowrank=0):
    """One mHC mixing around ``branch`` over the streams x [B, L, G, D]: a projection of the normed streams to the
    pre (G), post (G) and residual (G x G) weights, the branch on the pre-weighted sum of the streams (a contraction
    over G; a multiply and a sum without ``einsum_sum``), and the streams mixed by the residual weights (G x G over
    D) plus the branch output spread by the post weights (elementwise). ``lowrank`` (Qwen4-Exp's gated
    hyper-connections, the streams kept): per-channel input weights through G*D -> r -> G*D and the post weights
    G*D -> G."""
    B, L, G, D = x.shape
    if lowrank:
        h, xn = _gated_weights(p, "mhc", f"hc_{tag}", x, lowrank)
        with jax.named_scope("mhc"):
            post = 2 * jax.nn.sigmoid(dense(xn.reshape(B, L, G * D), p(f"hc_{tag}_inject", (G * D, G))) / G)
        return x + post[..., None] * branch(h)[:, :, None, :]
    with jax.named_scope("mhc"):
        proj = dense(rms(x.reshape(B, L, G * D)), p(f"hc_{tag}", (G * D, 2 * G + (G * G if mix else 0))))
    pre, post = jax.nn.sigmoid(proj[..., :G]), 2 * jax.nn.sigmoid(proj[..., G:2 * G])
    with jax.named_scope("mhc"):
        h = jnp.einsum("blg,blgd->bld", pre, x) if einsum_sum else (pre[..., None] * x).sum(2)
    y = branch(rms(h))
    if not mix:  # HY-V4: the streams kept, the branch's output added by the post weights
        return x + post[..., None] * y[:, :, None, :]
    res = jax.nn.softmax(proj[..., 2 * G:].reshape(B, L, G, G), -1)
    with jax.named_scope("mhc"):
        mixed = jnp.einsum("blgh,blgd->blhd", res, x)
    return mixed + post[..., None] * y[:, :, None, :]
