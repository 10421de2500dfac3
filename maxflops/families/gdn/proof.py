"""The gated delta net's proof side: its reference kernel (the recurrent form: projections, the causal depthwise conv,
the per-token state recurrence, the output gate and projection), its Flax layer and its bench case. Imports jax;
the family's analytic module does not."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import causal_conv, dense


def gdn(p, x, nk, nv, dk, dv, kernel):
    """Gated delta net, recurrent: projections, causal depthwise conv over q, k, v, then per token and value
    head S <- a*S + k (x) beta*(v - S^T k) (elementwise update) and o = S^T q (the two state matmuls)."""
    B, L, D = x.shape
    with jax.named_scope("qkv_proj"):
        qkvz = dense(x, p["in_qkvz"])
        ba = dense(x, p["in_ba"])
    conv_ch = 2 * nk * dk + nv * dv
    qkv, z = qkvz[..., :conv_ch], qkvz[..., conv_ch:]
    with jax.named_scope("gdn_conv"):
        y = causal_conv(qkv, p["conv"], kernel)
    y = jax.nn.silu(y)
    q = y[..., : nk * dk].reshape(B, L, nk, dk)
    k = y[..., nk * dk: 2 * nk * dk].reshape(B, L, nk, dk)
    v = y[..., 2 * nk * dk:].reshape(B, L, nv, dv)
    rep = nv // nk
    q, k = jnp.repeat(q, rep, axis=2), jnp.repeat(k, rep, axis=2)
    beta = jax.nn.sigmoid(ba[..., :nv])
    decay = jnp.exp(-jax.nn.softplus(ba[..., nv:]))

    def step(S, inp):
        qt, kt, vt, bt, at = inp
        S = S * at[..., None, None]
        read = jnp.einsum("bhk,bhkv->bhv", kt, S)
        delta = (vt - read) * bt[..., None]
        S = S + kt[..., :, None] * delta[..., None, :]  # rank-one update: elementwise
        return S, jnp.einsum("bhk,bhkv->bhv", qt, S)

    with jax.named_scope("core_attention"):
        S0 = jnp.zeros((B, nv, dk, dv), x.dtype)
        xs = tuple(jnp.moveaxis(t, 1, 0) for t in (q, k, v, beta, decay))
        _, o = jax.lax.scan(step, S0, xs)
    o = jnp.moveaxis(o, 0, 1).reshape(B, L, nv * dv) * jax.nn.silu(z)
    with jax.named_scope("out_proj"):
        return dense(o, p["out"])


KERNELS = (gdn,)


def layer(c, kind, p, h, top_idx, aux):
    """The gated delta net: its projections, conv and recurrence (``gdn``)."""
    D = h.shape[-1]
    nk, nv, dk, dv, ker = (c["gdn_num_key_heads"], c["gdn_num_value_heads"], c["gdn_key_head_dim"],
                           c["gdn_value_head_dim"], c["gdn_conv_kernel_dim"])
    params = {"in_qkvz": p("in_qkvz", (D, 2 * nk * dk + 2 * nv * dv)), "in_ba": p("in_ba", (D, 2 * nv)),
              "conv": p("conv", (ker, 1, 2 * nk * dk + nv * dv)), "out": p("out", (nv * dv, D))}
    return gdn(params, h, nk, nv, dk, dv, ker), top_idx, aux


def reduce(c) -> dict:
    """The reduced model's gated delta net: 2 key and 4 value heads of width 4, conv kernel <= 3."""
    return dict(gdn_num_key_heads=2, gdn_num_value_heads=4, gdn_key_head_dim=4, gdn_value_head_dim=4,
                gdn_conv_kernel_dim=min(c["gdn_conv_kernel_dim"], 3))


MATVEC = "gated-delta-net state reads"  # the optimizer rewrites its per-token state reads (matrix-vector dots)


def bench_cases(ctx) -> list:
    """The recurrent form, with head widths from the attention heads (key heads Hkv, value heads H, key width d,
    value width d / 2)."""
    p, arr = ctx.p, ctx.arr
    B, L, D = p["B"], p["L"], p["D"]
    nk, nv, dk, dv, ker = p["Hkv"], p["H"], p["d"], p["d"] // 2, 4

    def run(mesh):
        conv_ch = 2 * nk * dk + nv * dv
        prm = {"in_qkvz": arr(D, 2 * nk * dk + 2 * nv * dv), "in_ba": arr(D, 2 * nv), "conv": arr(ker, 1, conv_ch),
               "out": arr(nv * dv, D)}
        return jax.jit(lambda prm, x: gdn(prm, x, nk, nv, dk, dv, ker)), [prm, arr(B, L, D)], 1

    def analytic():
        b = engine(attention_layer_pattern="D", emb_dim=D, per_device_batch_size=B, max_target_length=L,
                   gdn_num_key_heads=nk, gdn_num_value_heads=nv, gdn_key_head_dim=dk, gdn_value_head_dim=dv,
                   gdn_conv_kernel_dim=ker)
        return components(b, "qkv_proj", "gdn_conv", "core_attention", "out_proj")

    return [Case("gated delta net, recurrent (reference kernel)", f"B={B} L={L} heads={nk}/{nv} dk={dk} dv={dv} "
                 f"conv {ker} D={D}", run, analytic, module="lowered",
                 why="the optimizer rewrites the state reads (matrix-vector dots)")]
