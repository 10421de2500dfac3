"""Kimi delta attention's proof side: its reference kernel (the projections and low-rank gates, the causal depthwise
conv, the gated delta rule with per-channel decay in its recurrent or chunked form, the gated norm and the output
projection), its Flax layer, its part of the reduced model and its bench cases. Imports jax; the family's analytic
module does not."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import causal_conv, dense


def _l2norm(x):
    return x / jnp.sqrt(jnp.sum(x * x, -1, keepdims=True) + 1e-6)


def core_recurrent(q, k, v, g, beta):
    """Token by token, per head: S <- diag(exp g) S, S <- S + k (x) beta (v - S^T k), o = S^T q. The two reads of S
    are the matmuls; the decay and the rank-one update are elementwise. q, k, v, g [B, L, H, d]; beta [B, L, H]."""
    B, L, H, d = q.shape

    def step(S, inp):
        qt, kt, vt, gt, bt = inp
        S = S * jnp.exp(gt)[..., :, None]
        read = jnp.einsum("bhk,bhkv->bhv", kt, S)
        S = S + kt[..., :, None] * ((vt - read) * bt[..., None])[..., None, :]
        return S, jnp.einsum("bhk,bhkv->bhv", qt, S)

    xs = tuple(jnp.moveaxis(t, 1, 0) for t in (q, k, v, g, beta))
    _, o = jax.lax.scan(step, jnp.zeros((B, H, d, d), q.dtype), xs)
    return jnp.moveaxis(o, 0, 1)


def core_chunked(q, k, v, g, beta, chunk):
    """The chunked form (as transformers' torch path runs it): the sequence padded to whole chunks; in each chunk
    the key-key scores under the per-channel decay (elementwise: the decay sits inside the sum), the UT system
    solved by forward substitution (elementwise), its products with the beta-scaled values and decayed keys
    (matmuls); then chunk by chunk the decayed queries' and the transformed keys' reads of the state, the masked
    query-key scores times the new values and the state update (matmuls). Shapes as ``core_recurrent``."""
    B, L, H, d = q.shape
    C = chunk
    pad = (-L) % C
    n = (L + pad) // C

    def chunks(t):  # [B, L, H, ...] -> [B, H, n, C, ...]
        t = jnp.pad(t, [(0, 0), (0, pad)] + [(0, 0)] * (t.ndim - 2))
        t = jnp.moveaxis(t, 2, 1)
        return t.reshape(B, H, n, C, *t.shape[3:])

    q, k, v, g, beta = (chunks(t) for t in (q, k, v, g, beta))
    gc = jnp.cumsum(g, axis=-2)
    kb, vb = k * beta[..., None], v * beta[..., None]
    causal = jnp.tril(jnp.ones((C, C), bool))
    decay = jnp.exp(jnp.where(causal[..., None], gc[..., :, None, :] - gc[..., None, :, :], -jnp.inf))
    strict = jnp.tril(jnp.ones((C, C), bool), -1)
    A = jnp.where(strict, -jnp.sum(kb[..., :, None, :] * k[..., None, :, :] * decay, -1), 0.0)

    def substitute(i, A):  # row i of (I - A)^-1 - I from the rows above it, elementwise
        row = A[..., i, :]
        upd = row + jnp.sum(row[..., :, None] * A, -2)
        return A.at[..., i, :].set(jnp.where(jnp.arange(C) < i, upd, row))

    T = jax.lax.fori_loop(1, C, substitute, A) + jnp.eye(C, dtype=q.dtype)
    u = T @ vb
    w = T @ (kb * jnp.exp(gc))
    qk = jnp.where(causal, jnp.sum(q[..., :, None, :] * k[..., None, :, :] * decay, -1), 0.0)

    def step(S, inp):
        qi, ki, ui, wi, gi, qki = inp
        v_new = ui - wi @ S
        o = (qi * jnp.exp(gi)) @ S + qki @ v_new
        last = gi[..., -1:, :]
        S = S * jnp.exp(last)[..., 0, :, None] + jnp.swapaxes(ki * jnp.exp(last - gi), -1, -2) @ v_new
        return S, o

    xs = tuple(jnp.moveaxis(t, 2, 0) for t in (q, k, u, w, gc, qk))
    _, o = jax.lax.scan(step, jnp.zeros((B, H, d, d), q.dtype), xs)  # o [n, B, H, C, d]
    o = jnp.moveaxis(o, 0, 2).reshape(B, H, n * C, d)[:, :, :L]
    return jnp.moveaxis(o, 1, 2)


def kda(p, x, H, d, K, impl="recurrent", chunk=64):
    """Kimi delta attention: q, k, v with the causal depthwise conv and silu, the low-rank forget gate (softplus of
    f_b f_a x plus a bias, times -exp(A_log)), beta, the core (``impl``), the gated norm with the low-rank output
    gate, o_proj. x [B, L, D]."""
    B, L, D = x.shape
    with jax.named_scope("qkv_proj"):
        qkv = jnp.concatenate([dense(x, p["q"]), dense(x, p["k"]), dense(x, p["v"])], -1)
        f = dense(x, p["f"]) if "f" in p else dense(dense(x, p["f_a"]), p["f_b"])  # (full rank: one matmul)
        b = dense(x, p["b"])
        gate = dense(x, p["g"]) if "g" in p else dense(dense(x, p["g_a"]), p["g_b"])  # (full rank: one matmul)
    with jax.named_scope("kda_conv"):
        y = causal_conv(qkv, p["conv"], K)
    y = jax.nn.silu(y).reshape(B, L, 3, H, d)
    q, k, v = _l2norm(y[:, :, 0]) * d ** -0.5, _l2norm(y[:, :, 1]), y[:, :, 2]
    g = (-jnp.exp(p["A_log"])[:, None] * jax.nn.softplus(f.reshape(B, L, H, d) + p["dt_bias"].reshape(H, d)))
    beta = jax.nn.sigmoid(b)
    with jax.named_scope("core_attention"):
        o = core_recurrent(q, k, v, g, beta) if impl == "recurrent" else core_chunked(q, k, v, g, beta, chunk)
    o = o / jnp.sqrt(jnp.mean(o * o, -1, keepdims=True) + 1e-5) * p["norm"]
    o = (o * jax.nn.sigmoid(gate.reshape(B, L, H, d))).reshape(B, L, H * d)
    with jax.named_scope("out_proj"):
        return dense(o, p["o"])


KERNELS = (kda, core_recurrent, core_chunked)


def params(p, D, H, d, r, K, full_gate=False, full_forget=False):
    """The mixer's parameters, each made by ``p(name, shape)``; ``full_gate`` / ``full_forget``: the output / forget
    gate one D -> H d matrix."""
    hd = H * d
    gate = {"g": p("g", (D, hd))} if full_gate else {"g_a": p("g_a", (D, r)), "g_b": p("g_b", (r, hd))}
    forget = {"f": p("f", (D, hd))} if full_forget else {"f_a": p("f_a", (D, r)), "f_b": p("f_b", (r, hd))}
    return {"q": p("q", (D, hd)), "k": p("k", (D, hd)), "v": p("v", (D, hd)), **forget, "b": p("b", (D, H)), **gate,
            "conv": p("conv", (K, 1, 3 * hd)), "A_log": p("A_log", (H,)), "dt_bias": p("dt_bias", (hd,)),
            "norm": p("norm", (d,)), "o": p("o", (hd, D))}


def layer(c, kind, p, h, top_idx, aux):
    """Kimi delta attention (``kda``) in the form ``kda_impl`` says."""
    H, d, K = c["kda_num_heads"], c["kda_head_dim"], c["kda_conv_kernel"]
    prm = params(p, h.shape[-1], H, d, c["kda_gate_rank"] or d, K, c["kda_full_rank_gate"],
                 c["kda_full_rank_forget_gate"])
    return kda(prm, h, H, d, K, c["kda_impl"], c["kda_chunk_size"]), top_idx, aux


def reduce(c) -> dict:
    """The reduced model's Kimi delta attention: 2 heads of width 4, gates of rank 3, conv <= 3, chunks <= 4."""
    return dict(kda_num_heads=2, kda_head_dim=4, kda_gate_rank=3, kda_conv_kernel=min(c["kda_conv_kernel"], 3),
                kda_chunk_size=min(c["kda_chunk_size"], 4))


MATVEC = "Kimi delta attention state reads"  # the optimizer rewrites its per-token state reads (matrix-vector dots)


def bench_cases(ctx) -> list:
    """The recurrent and the chunked forms: the preset's H heads of width d / 2, gates of rank d / 2, conv 4, chunks
    of 64."""
    p, arr = ctx.p, ctx.arr
    B, L, D = p["B"], p["L"], p["D"]
    H, d, K, C = p["H"], max(p["d"] // 2, 1), 4, 64

    def case(impl):
        def run(mesh):
            prm = params(lambda name, shape: arr(*shape), D, H, d, d, K)
            prm["A_log"] = prm["A_log"] * 0.1
            return jax.jit(lambda prm, x: kda(prm, x, H, d, K, impl, C)), [prm, arr(B, L, D)], 1

        def analytic():
            b = engine(attention_layer_pattern="K", emb_dim=D, per_device_batch_size=B, max_target_length=L,
                       kda_num_heads=H, kda_head_dim=d, kda_conv_kernel=K, kda_impl=impl, kda_chunk_size=C)
            return components(b, "qkv_proj", "kda_conv", "core_attention", "out_proj")

        label = "recurrent" if impl == "recurrent" else f"chunked, chunks of {C}"
        return Case(f"Kimi delta attention, {label} (reference kernel)", f"B={B} L={L} heads={H}x{d} conv {K} D={D}",
                    run, analytic, module="lowered",
                    why="the optimizer rewrites the state reads (matrix-vector dots)" if impl == "recurrent" else
                    "the optimizer may fuse the elementwise scores into dots")

    return [case("recurrent"), case("chunked")]
