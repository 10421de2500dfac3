"""The gated delta product's proof side: its reference kernel (the input projection, the causal depthwise conv over
values, keys and query, the M-step gated delta rule in its recurrent or chunked form, the gated norm and the output
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
    """Token by token, per head: S <- exp(g) S, then for each of the M steps S <- S + k_j (x) beta_j (v_j - S^T k_j),
    then o = S^T q. The M + 1 reads of S are the matmuls; the decay and the rank-one updates are elementwise.
    q [B, L, H, N]; k [B, L, M, H, N]; v [B, L, M, H, P]; g [B, L, H]; beta [B, L, M, H] -> o [B, L, H, P]."""
    B, L, M, H, N = k.shape
    P = v.shape[-1]

    def step(S, inp):
        qt, kt, vt, gt, bt = inp
        S = S * jnp.exp(gt)[..., None, None]
        for j in range(M):
            read = jnp.einsum("bhn,bhnp->bhp", kt[:, j], S)
            S = S + kt[:, j, ..., :, None] * ((vt[:, j] - read) * bt[:, j, ..., None])[..., None, :]
        return S, jnp.einsum("bhn,bhnp->bhp", qt, S)

    xs = tuple(jnp.moveaxis(t, 1, 0) for t in (q, k, v, g, beta))
    _, o = jax.lax.scan(step, jnp.zeros((B, H, N, P), q.dtype), xs)
    return jnp.moveaxis(o, 0, 1)


def core_chunked(q, k, v, g, beta, chunk):
    """The chunked form of FLA's and Megatron-LM's chunk_gated_delta_product (the family's ``gdp_chunked``), shapes as
    ``core_recurrent``. The keys, values and betas are interleaved into the Householder-expanded stream (token-major,
    M positions per token, the decay on each token's first), which is cut into ceil(M L / C) chunks: in each, the
    key-key scores (a matmul) under the decay (elementwise), the inverse T of the unit lower-triangular UT system (a
    triangular solve) and the WY factors W = T (beta e^G K), U = T (beta V); then chunk by chunk the new values
    U - W S and the state update. The queries stay on the token stream, in ceil(L / C) chunks: each reads the state
    at its chunk's start (the expanded stream's state every M chunks) and, for each of the M copies, the masked
    decayed scores against the chunk's keys times their new values."""
    B, L, M, H, N = k.shape
    P = v.shape[-1]
    C = chunk
    nt, ne = -(-L // C), -(-(L * M) // C)
    heads_first = lambda t: jnp.moveaxis(t, 2, 1)  # noqa: E731  [B, X, H, ...] -> [B, H, X, ...]

    # the expanded stream [B, H, M L, ...], padded to ne chunks
    ke = heads_first(k.reshape(B, L * M, H, N))
    ve = heads_first(v.reshape(B, L * M, H, P))
    be = heads_first(beta.reshape(B, L * M, H))
    ge = heads_first(jnp.concatenate([g[:, :, None], jnp.zeros((B, L, M - 1, H), g.dtype)], 2).reshape(B, L * M, H))
    pad = ne * C - L * M

    def chunks(t, n, pad):  # [B, H, X, ...] -> [B, H, n, C, ...]
        t = jnp.pad(t, [(0, 0), (0, 0), (0, pad)] + [(0, 0)] * (t.ndim - 3))
        return t.reshape(B, H, n, C, *t.shape[3:])

    kc, vc, bc, gc = chunks(ke, ne, pad), chunks(ve, ne, pad), chunks(be, ne, pad), chunks(ge, ne, pad)
    G = jnp.cumsum(gc, -1)
    strict = jnp.tril(jnp.ones((C, C), bool), -1)
    decay = jnp.exp(jnp.where(strict, G[..., :, None] - G[..., None, :], -jnp.inf))
    A = (kc @ jnp.swapaxes(kc, -1, -2)) * decay * bc[..., :, None]
    T = jax.scipy.linalg.solve_triangular(jnp.eye(C, dtype=q.dtype) + A, jnp.broadcast_to(jnp.eye(C, dtype=q.dtype),
                                                                                            A.shape), lower=True)
    W = T @ (kc * (bc * jnp.exp(G))[..., None])
    U = T @ (vc * bc[..., None])

    def step(S, inp):
        ki, wi, ui, gi = inp
        v_new = ui - wi @ S
        last = gi[..., -1:]
        S_next = S * jnp.exp(last)[..., None] + jnp.swapaxes(ki * jnp.exp(last - gi)[..., None], -1, -2) @ v_new
        return S_next, (S, v_new)

    xs = tuple(jnp.moveaxis(t, 2, 0) for t in (kc, W, U, G))
    _, (before, v_new) = jax.lax.scan(step, jnp.zeros((B, H, N, P), q.dtype), xs)  # the state entering each chunk
    starts = jnp.moveaxis(before[:: M][:nt], 0, 2)  # [B, H, nt, N, P]: the state at each token chunk's start

    # back to tokens: [B, H, nt, C, M, ...] for the keys and new values, [B, H, nt, C, ...] for the queries
    v_new = jnp.moveaxis(v_new, 0, 2).reshape(B, H, ne * C, P)[:, :, : L * M]
    tpad = nt * C - L
    v_tok = chunks(v_new.reshape(B, H, L, M, P), nt, tpad)
    k_tok = chunks(ke.reshape(B, H, L, M, N), nt, tpad)
    q_tok = chunks(heads_first(q), nt, tpad)
    Gt = jnp.cumsum(chunks(heads_first(g), nt, tpad), -1)
    causal = jnp.tril(jnp.ones((C, C), bool))
    mask = jnp.exp(jnp.where(causal, Gt[..., :, None] - Gt[..., None, :], -jnp.inf))
    o = (q_tok @ starts) * jnp.exp(Gt)[..., None]
    scores = jnp.einsum("bhtcn,bhtsmn->bhtmcs", q_tok, k_tok) * mask[:, :, :, None]
    o = o + jnp.einsum("bhtmcs,bhtsmp->bhtcp", scores, v_tok)
    return jnp.moveaxis(o.reshape(B, H, nt * C, P)[:, :, :L], 1, 2)


def gdp(p, x, H, P, N, G, M, K, impl="recurrent", chunk=64):
    """The gated delta product layer as Megatron-LM's GatedDeltaProductMixer computes it: in_proj to z, the M values,
    the M keys, the query, the M betas and the decay; the causal depthwise conv and silu over values, keys and query;
    l2-normed keys and query repeated from their groups to the heads, the query scaled by N^-1/2; beta = sigmoid(b),
    g = -exp(A_log) softplus(a + dt_bias); the core (``impl``); the gated RMS norm (per group) and out_proj.
    x [B, L, D]."""
    B, L, D = x.shape
    d_in = H * P
    conv_ch = M * d_in + (M + 1) * G * N
    with jax.named_scope("qkv_proj"):
        proj = dense(x, p["in_proj"])
    z, vkq, ba = proj[..., :d_in], proj[..., d_in: d_in + conv_ch], proj[..., d_in + conv_ch:]
    with jax.named_scope("gdp_conv"):
        y = causal_conv(vkq, p["conv"], K)
    y = jax.nn.silu(y)
    v = y[..., : M * d_in].reshape(B, L, M, H, P)
    k = _l2norm(y[..., M * d_in: M * d_in + M * G * N].reshape(B, L, M, G, N))
    q = _l2norm(y[..., M * d_in + M * G * N:].reshape(B, L, G, N)) * N ** -0.5
    k, q = jnp.repeat(k, H // G, axis=3), jnp.repeat(q, H // G, axis=2)
    beta = jax.nn.sigmoid(ba[..., : M * H]).reshape(B, L, M, H)
    g = -jnp.exp(p["A_log"]) * jax.nn.softplus(ba[..., M * H:] + p["dt_bias"])
    with jax.named_scope("core_attention"):
        o = core_recurrent(q, k, v, g, beta) if impl == "recurrent" else core_chunked(q, k, v, g, beta, chunk)
    o = (o.reshape(B, L, d_in) * jax.nn.silu(z)).reshape(B, L, G, d_in // G)
    o = (o / jnp.sqrt(jnp.mean(o * o, -1, keepdims=True) + 1e-5)).reshape(B, L, d_in) * p["norm"]
    with jax.named_scope("out_proj"):
        return dense(o, p["out"])


KERNELS = (gdp, core_recurrent, core_chunked)


def params(p, D, H, P, N, G, M, K):
    """The mixer's parameters, each made by ``p(name, shape)``."""
    d_in = H * P
    width = d_in * (1 + M) + G * N * (1 + M) + H * (1 + M)
    return {"in_proj": p("in_proj", (D, width)), "conv": p("conv", (K, 1, M * d_in + (M + 1) * G * N)),
            "A_log": p("A_log", (H,)), "dt_bias": p("dt_bias", (H,)), "norm": p("norm", (d_in,)),
            "out": p("out", (d_in, D))}


def _widths(c):
    return (c["gdp_num_heads"], c["gdp_head_dim"], c["gdp_state_dim"], c["gdp_num_groups"], c["gdp_num_householder"],
            c["gdp_conv_kernel"])


def layer(c, kind, p, h, top_idx, aux):
    """The gated delta product (``gdp``) in the form ``gdp_impl`` says."""
    H, P, N, G, M, K = _widths(c)
    prm = params(p, h.shape[-1], H, P, N, G, M, K)
    return gdp(prm, h, H, P, N, G, M, K, c["gdp_impl"], c["gdp_chunk_size"]), top_idx, aux


def reduce(c) -> dict:
    """The reduced model's gated delta product: 4 heads of width 4 in 2 groups of key width 4, its own Householder
    steps (at most 3), conv <= 3, chunks <= 4."""
    return dict(gdp_num_heads=4, gdp_head_dim=4, gdp_state_dim=4, gdp_num_groups=2,
                gdp_num_householder=min(c["gdp_num_householder"], 3), gdp_conv_kernel=min(c["gdp_conv_kernel"], 3),
                gdp_chunk_size=min(c["gdp_chunk_size"], 4))


MATVEC = "gated-delta-product state reads"  # the optimizer rewrites its per-token state reads (matrix-vector dots)


def bench_cases(ctx) -> list:
    """The recurrent and the chunked forms: the preset's H heads of width d / 2 in Hkv groups of key width d, three
    Householder steps, conv 4, chunks of 64."""
    p, arr = ctx.p, ctx.arr
    B, L, D = p["B"], p["L"], p["D"]
    H, G, P, N, M, K, C = p["H"], p["Hkv"], max(p["d"] // 2, 1), p["d"], 3, 4, 64

    def case(impl):
        def run(mesh):
            prm = params(lambda name, shape: arr(*shape), D, H, P, N, G, M, K)
            prm["A_log"] = prm["A_log"] * 0.1
            return jax.jit(lambda prm, x: gdp(prm, x, H, P, N, G, M, K, impl, C)), [prm, arr(B, L, D)], 1

        def analytic():
            b = engine(attention_layer_pattern="P", emb_dim=D, per_device_batch_size=B, max_target_length=L,
                       gdp_num_heads=H, gdp_head_dim=P, gdp_state_dim=N, gdp_num_groups=G, gdp_num_householder=M,
                       gdp_conv_kernel=K, gdp_impl=impl, gdp_chunk_size=C)
            return components(b, "qkv_proj", "gdp_conv", "core_attention", "out_proj")

        label = "recurrent" if impl == "recurrent" else f"chunked, chunks of {C}"
        return Case(f"gated delta product, {label} (reference kernel)",
                    f"B={B} L={L} heads={H}x{P} groups={G}x{N} M={M} conv {K} D={D}", run, analytic, module="lowered",
                    why="the optimizer rewrites the state reads (matrix-vector dots)" if impl == "recurrent" else
                    "the optimizer may fuse the elementwise scores into dots")

    return [case("recurrent"), case("chunked")]
