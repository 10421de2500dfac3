"""Mamba-1's proof side: its reference kernel (projections, the causal depthwise conv, x_proj and dt_proj, the
selective scan token by token, the gate and the output projection), its Flax layer, its part of the reduced model
and its bench case. Imports jax; the family's analytic module does not."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import causal_conv, dense


def mamba1(p, x, inner, state, rank, K):
    """A Mamba-1 mixer over x [B, L, D]. Parameters: in_proj [D, 2 inner], conv [K, 1, inner], x_proj
    [inner, rank + 2 state], dt_proj [rank, inner], dt_bias [inner], A_log [inner, state], D_skip [inner],
    out [inner, D]. The scan: per channel h <- exp(dt A) h + dt B x (elementwise), y = h C (a matmul over the state)."""
    Bsz, L, _ = x.shape
    with jax.named_scope("qkv_proj"):
        xz = dense(x, p["in_proj"])
    xs, z = xz[..., :inner], xz[..., inner:]
    with jax.named_scope("ssm_conv"):
        xs = jax.nn.silu(causal_conv(xs, p["conv"], K))
    with jax.named_scope("qkv_proj"):
        dbc = dense(xs, p["x_proj"])
        dt = dense(dbc[..., :rank], p["dt_proj"])
    Bm, Cm = dbc[..., rank:rank + state], dbc[..., rank + state:]
    dt = jax.nn.softplus(dt + p["dt_bias"])
    A = -jnp.exp(p["A_log"])

    def step(h, inp):
        xt, dtt, bt, ct = inp  # [B, inner], [B, inner], [B, state], [B, state]
        h = jnp.exp(dtt[..., None] * A) * h + (dtt * xt)[..., None] * bt[:, None, :]
        return h, jnp.einsum("bin,bn->bi", h, ct)

    with jax.named_scope("core_attention"):
        h0 = jnp.zeros((Bsz, inner, state), x.dtype)
        _, y = jax.lax.scan(step, h0, tuple(jnp.moveaxis(t, 1, 0) for t in (xs, dt, Bm, Cm)))
    y = (jnp.moveaxis(y, 0, 1) + xs * p["D_skip"]) * jax.nn.silu(z)
    with jax.named_scope("out_proj"):
        return dense(y, p["out"])


KERNELS = (mamba1,)


def params(p, D, inner, state, rank, K):
    return {"in_proj": p("in_proj", (D, 2 * inner)), "conv": p("conv", (K, 1, inner)),
            "x_proj": p("x_proj", (inner, rank + 2 * state)), "dt_proj": p("dt_proj", (rank, inner)),
            "dt_bias": p("dt_bias", (inner,)), "A_log": p("A_log", (inner, state)), "D_skip": p("D_skip", (inner,)),
            "out": p("out", (inner, D))}


def layer(c, kind, p, h, top_idx, aux):
    inner, state, rank, K = c["mamba1_inner_dim"], c["mamba1_state_dim"], c["mamba1_dt_rank"], c["mamba1_conv_kernel"]
    return mamba1(params(p, h.shape[-1], inner, state, rank, K), h, inner, state, rank, K), top_idx, aux


def reduce(c) -> dict:
    """The reduced model's Mamba-1: inner width 12, state 4, dt rank 3, conv <= 3."""
    return dict(mamba1_inner_dim=12, mamba1_state_dim=4, mamba1_dt_rank=3,
                mamba1_conv_kernel=min(c["mamba1_conv_kernel"], 3))


MATVEC = "Mamba state reads"  # the optimizer rewrites its per-token state reads (matrix-vector dots)


def bench_cases(ctx) -> list:
    """The recurrent form: inner width 2 D, state 16, dt rank D / 16, conv 4."""
    p, arr = ctx.p, ctx.arr
    B, L, D = p["B"], p["L"], p["D"]
    inner, state, rank, K = 2 * D, 16, max(1, D // 16), 4

    def run(mesh):
        prm = {"in_proj": arr(D, 2 * inner), "conv": arr(K, 1, inner), "x_proj": arr(inner, rank + 2 * state),
               "dt_proj": arr(rank, inner), "dt_bias": arr(inner), "A_log": arr(inner, state) * 0.1,
               "D_skip": arr(inner), "out": arr(inner, D)}
        return jax.jit(lambda prm, x: mamba1(prm, x, inner, state, rank, K)), [prm, arr(B, L, D)], 1

    def analytic():
        b = engine(attention_layer_pattern="A", emb_dim=D, per_device_batch_size=B, max_target_length=L,
                   mamba1_inner_dim=inner, mamba1_state_dim=state, mamba1_dt_rank=rank, mamba1_conv_kernel=K)
        return components(b, "qkv_proj", "ssm_conv", "core_attention", "out_proj")

    return [Case("Mamba-1, selective scan (reference kernel)", f"B={B} L={L} inner={inner} N={state} R={rank} "
                 f"conv {K} D={D}", run, analytic, module="lowered",
                 why="the optimizer rewrites the state reads (matrix-vector dots)")]
