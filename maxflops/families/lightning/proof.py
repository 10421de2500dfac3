"""Lightning attention's proof side: its reference kernel (the q/k/v projection with silu, the decayed linear
attention in its recurrent or blocked form, the norm, the sigmoid output gate and the output projection), its Flax
layer, its part of the reduced model and its bench cases. Imports jax; the family's analytic module does not."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import dense


def slopes(H):
    """Per-head decay rates (MiniMax's geometric slopes)."""
    return (2.0 ** (-8.0 / H)) ** jnp.arange(1, H + 1)


def core_recurrent(q, k, v, rate, S0):
    """Token by token, per head: S <- exp(-rate) S + k (x) v (elementwise), o = q S (the one matmul: a read of the
    state). q, k, v [B, L, H, d]; rate [H]; S0 [B, H, d, d] the state carried in. Returns (o, the last state)."""
    B, L, H, d = q.shape
    decay = jnp.exp(-rate)[None, :, None, None]

    def step(S, inp):
        qt, kt, vt = inp
        S = decay * S + kt[..., :, None] * vt[..., None, :]
        return S, jnp.einsum("bhk,bhkv->bhv", qt, S)

    S, o = jax.lax.scan(step, S0, tuple(jnp.moveaxis(t, 1, 0) for t in (q, k, v)))
    return jnp.moveaxis(o, 0, 1), S


def core_blocked(q, k, v, rate, block, S0):
    """Blocks of ``block`` tokens, the last one its own length: per block the intra-block scores Q K^T over the whole
    square, decayed by distance (masked above the diagonal) and applied to V; the decayed queries' read of the
    state carried in from earlier blocks; then the state decayed over the block plus its update (K decayed to the
    block's end)^T V. Shapes and result as ``core_recurrent``."""
    B, L, H, d = q.shape
    q, k, v = (jnp.moveaxis(t, 1, 2) for t in (q, k, v))  # [B, H, L, d]
    r = rate[:, None, None]
    S = S0
    out = []
    for start in range(0, L, block):
        b = min(block, L - start)
        qi, ki, vi = (t[:, :, start:start + b] for t in (q, k, v))
        pos = jnp.arange(1, b + 1, dtype=q.dtype)[:, None]
        dist = pos - pos.T
        diag = jnp.where(dist >= 0, jnp.exp(-r * jnp.maximum(dist, 0)), 0.0)
        intra = ((qi @ jnp.swapaxes(ki, -1, -2)) * diag) @ vi
        inter = (qi * jnp.exp(-r * pos)) @ S
        out.append(intra + inter)
        S = jnp.exp(-r * b) * S + jnp.swapaxes(ki * jnp.exp(-r * (b - pos)), -1, -2) @ vi
    return jnp.moveaxis(jnp.concatenate(out, axis=2), 1, 2), S


def lightning(p, x, H, d, impl="recurrent", block=256, state=None, return_state=False):
    """Lightning attention: silu(x W_qkv) split per head into q, k, v; the core (``impl``) from ``state`` (zeros when
    None); an RMS norm over the heads; the sigmoid output gate of x; out_proj. x [B, L, D]. With ``return_state``:
    (output, the last state), a prefill that keeps its state for the tokens after it (its last update then runs:
    as transformers' forward runs it)."""
    B, L, D = x.shape
    with jax.named_scope("qkv_proj"):
        qkv = jax.nn.silu(dense(x, p["qkv"])).reshape(B, L, H, 3 * d)
        gate = jax.nn.sigmoid(dense(x, p["gate"]))
    q, k, v = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]
    rate = slopes(H).astype(x.dtype)
    S0 = jnp.zeros((B, H, d, d), x.dtype) if state is None else state
    with jax.named_scope("core_attention"):
        o, S = core_recurrent(q, k, v, rate, S0) if impl == "recurrent" else core_blocked(q, k, v, rate, block, S0)
    o = o.reshape(B, L, H * d)
    o = o / jnp.sqrt(jnp.mean(o * o, -1, keepdims=True) + 1e-5) * p["norm"] * gate
    with jax.named_scope("out_proj"):
        out = dense(o, p["out"])
    return (out, S) if return_state else out


KERNELS = (lightning, core_recurrent, core_blocked)


def params(p, D, H, d):
    """The mixer's parameters, each made by ``p(name, shape)``."""
    return {"qkv": p("qkv", (D, 3 * H * d)), "gate": p("gate", (D, H * d)), "norm": p("norm", (H * d,)),
            "out": p("out", (H * d, D))}


def _sizes(c):
    return c["lightning_num_heads"] or c["num_query_heads"], c["lightning_head_dim"] or c["head_dim"]


def layer(c, kind, p, h, top_idx, aux):
    """Lightning attention (``lightning``) in the form ``lightning_impl`` says."""
    H, d = _sizes(c)
    return lightning(params(p, h.shape[-1], H, d), h, H, d, c["lightning_impl"], c["lightning_block_size"]), \
        top_idx, aux


def reduce(c) -> dict:
    """The reduced model's lightning attention: 2 heads of width 4, blocks <= 4."""
    return dict(lightning_num_heads=2, lightning_head_dim=4,
                lightning_block_size=min(c["lightning_block_size"], 4))


MATVEC = "lightning attention state reads"  # the optimizer rewrites its per-token state reads (matrix-vector dots)


def bench_cases(ctx) -> list:
    """The recurrent and the blocked forms: the preset's H heads of width d, blocks of the preset's tile (at most
    256)."""
    p, arr = ctx.p, ctx.arr
    B, L, D = p["B"], p["L"], p["D"]
    H, d, blk = p["H"], p["d"], min(p["blk"], 256)

    def case(impl):
        def run(mesh):  # a prefill from a state, keeping its last one (every block's update runs)
            prm = params(lambda name, shape: arr(*shape), D, H, d)
            S0 = arr(B, H, d, d) * 0.0
            return jax.jit(lambda prm, x, S0: lightning(prm, x, H, d, impl, blk, S0, return_state=True)), \
                [prm, arr(B, L, D), S0], 1

        def analytic():
            b = engine(attention_layer_pattern="N", emb_dim=D, per_device_batch_size=B, max_target_length=L,
                       lightning_num_heads=H, lightning_head_dim=d, lightning_impl=impl, lightning_block_size=blk)
            return components(b, "qkv_proj", "core_attention", "out_proj")

        label = "recurrent" if impl == "recurrent" else f"blocked, blocks of {blk}"
        return Case(f"lightning attention, {label} (reference kernel)", f"B={B} L={L} heads={H}x{d} D={D}", run,
                    analytic, module="lowered",
                    why="the optimizer rewrites the state reads (matrix-vector dots)" if impl == "recurrent" else
                    "the optimizer rewrites a partial last block's thin dots")

    return [case("recurrent"), case("blocked")]
