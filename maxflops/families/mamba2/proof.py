"""Mamba-2's proof side: its reference kernel (projections, the causal depthwise conv, the scan in its recurrent or
chunked SSD form, the gated norm and the output projection), its Flax layer, its part of the reduced model and its
bench cases. Imports jax; the family's analytic module does not."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import causal_conv, dense


def scan_recurrent(x, dt, A, Bh, Ch):
    """The recurrence, token by token: per head h <- exp(dt A) h + (dt x) (x) B (elementwise), y = h C (the only
    matmul: a state read, 2 head_dim N per head). x [B, L, H, P]; dt [B, L, H]; A [H]; Bh, Ch [B, L, H, N]."""
    Bsz, L, H, P = x.shape
    N = Bh.shape[-1]

    def step(h, inp):
        xt, dtt, bt, ct = inp
        h = jnp.exp(dtt * A)[..., None, None] * h + (dtt[..., None] * xt)[..., :, None] * bt[..., None, :]
        return h, jnp.einsum("bhpn,bhn->bhp", h, ct)

    h0 = jnp.zeros((Bsz, H, P, N), x.dtype)
    _, y = jax.lax.scan(step, h0, tuple(jnp.moveaxis(t, 1, 0) for t in (x, dt, Bh, Ch)))
    return jnp.moveaxis(y, 0, 1)


def _segsum(a):
    """exp-ready segment sums over the last axis: out[..., i, j] = sum_{j < k <= i} a[..., k] (i >= j), -inf above."""
    Q = a.shape[-1]
    cs = jnp.cumsum(a, -1)
    seg = cs[..., :, None] - cs[..., None, :]
    return jnp.where(jnp.tril(jnp.ones((Q, Q), bool)), seg, -jnp.inf)


def scan_chunked(x, dt, A, Bh, Ch, chunk):
    """The chunked SSD algorithm (transformers' torch path): the sequence padded to whole chunks of ``chunk``; per
    chunk C B^T masked by the decays times x (the diagonal blocks), the chunk's state, the state passing between
    chunks (a decay matrix over the chunks and the zero initial state), and each chunk's read of its incoming state.
    Shapes as ``scan_recurrent``."""
    Bsz, L, H, P = x.shape
    N = Bh.shape[-1]
    Q = chunk
    pad = (-L) % Q
    nc = (L + pad) // Q

    def chunks(t):
        t = jnp.pad(t, [(0, 0), (0, pad)] + [(0, 0)] * (t.ndim - 2))
        return t.reshape(Bsz, nc, Q, *t.shape[2:])

    xd = chunks(x * dt[..., None])  # [b, c, l, h, p]
    a = chunks(dt * A).transpose(0, 3, 1, 2)  # [b, h, c, l]
    Bc, Cc = chunks(Bh), chunks(Ch)  # [b, c, l, h, n]
    a_cum = jnp.cumsum(a, -1)
    decay_in = jnp.exp(_segsum(a))  # [b, h, c, l, s]
    scores = jnp.einsum("bclhn,bcshn->bclsh", Cc, Bc)
    y_diag = jnp.einsum("bclsh,bcshp->bclhp", scores * decay_in.transpose(0, 2, 3, 4, 1), xd)
    decay_to_end = jnp.exp(a_cum[..., -1:] - a_cum)  # [b, h, c, l]
    states = jnp.einsum("bclhn,bclhp->bchpn", Bc * decay_to_end.transpose(0, 2, 3, 1)[..., None], xd)
    states = jnp.concatenate([jnp.zeros_like(states[:, :1]), states], axis=1)  # the zero initial state
    ends = jnp.pad(a_cum[..., -1], [(0, 0), (0, 0), (1, 0)])  # [b, h, c + 1]
    decay_chunk = jnp.exp(_segsum(ends)).transpose(0, 3, 2, 1)  # [b, z (from), c (to), h]
    new_states = jnp.einsum("bzch,bzhpn->bchpn", decay_chunk, states)[:, :-1]
    y_off = jnp.einsum("bclhn,bchpn->bclhp", Cc, new_states) * jnp.exp(a_cum).transpose(0, 2, 3, 1)[..., None]
    return (y_diag + y_off).reshape(Bsz, nc * Q, H, P)[:, :L]


def mamba2(p, x, H, P, N, G, K, impl="recurrent", chunk=1):
    """A Mamba-2 mixer over x [B, L, D]. Parameters: in_proj [D, 2 H P + 2 G N + H], conv [K, 1, H P + 2 G N],
    dt_bias, A_log, D_skip [H], norm [H P], out [H P, D]. Scopes: qkv_proj, ssm_conv, core_attention, out_proj."""
    Bsz, L, _ = x.shape
    d_in = H * P
    with jax.named_scope("qkv_proj"):
        proj = dense(x, p["in_proj"])
    z, xbc, dt = proj[..., :d_in], proj[..., d_in:2 * d_in + 2 * G * N], proj[..., 2 * d_in + 2 * G * N:]
    with jax.named_scope("ssm_conv"):
        xbc = jax.nn.silu(causal_conv(xbc, p["conv"], K))
    xs = xbc[..., :d_in].reshape(Bsz, L, H, P)
    rep = H // G
    Bh = jnp.repeat(xbc[..., d_in:d_in + G * N].reshape(Bsz, L, G, N), rep, axis=2)
    Ch = jnp.repeat(xbc[..., d_in + G * N:].reshape(Bsz, L, G, N), rep, axis=2)
    dt = jax.nn.softplus(dt + p["dt_bias"])
    A = -jnp.exp(p["A_log"])
    with jax.named_scope("core_attention"):
        y = scan_recurrent(xs, dt, A, Bh, Ch) if impl == "recurrent" else scan_chunked(xs, dt, A, Bh, Ch, chunk)
    y = (y + xs * p["D_skip"][:, None]).reshape(Bsz, L, d_in) * jax.nn.silu(z)
    g = y.reshape(Bsz, L, G, d_in // G)  # the gated norm, per group
    y = (g * jax.lax.rsqrt(jnp.mean(g * g, -1, keepdims=True) + 1e-5)).reshape(Bsz, L, d_in) * p["norm"]
    with jax.named_scope("out_proj"):
        return dense(y, p["out"])


KERNELS = (mamba2, scan_recurrent, scan_chunked)


def params(p, D, H, P, N, G, K):
    """The mixer's parameters, each made by ``p(name, shape)``."""
    d_in = H * P
    return {"in_proj": p("in_proj", (D, 2 * d_in + 2 * G * N + H)), "conv": p("conv", (K, 1, d_in + 2 * G * N)),
            "dt_bias": p("dt_bias", (H,)), "A_log": p("A_log", (H,)), "D_skip": p("D_skip", (H,)),
            "norm": p("norm", (d_in,)), "out": p("out", (d_in, D))}


def _sizes(c):
    return (c["mamba_num_heads"], c["mamba_head_dim"], c["mamba_state_dim"], c["mamba_n_groups"],
            c["mamba_conv_kernel"])


def layer(c, kind, p, h, top_idx, aux):
    """The Mamba-2 mixer (``mamba2``) in the form ``mamba_impl`` says."""
    H, P, N, G, K = _sizes(c)
    prm = params(p, h.shape[-1], H, P, N, G, K)
    return mamba2(prm, h, H, P, N, G, K, c["mamba_impl"], c["mamba_chunk_size"]), top_idx, aux


def reduce(c) -> dict:
    """The reduced model's Mamba-2: 4 heads of width 4, state 4, 2 groups, conv <= 3, chunks <= 4 (13 tokens: 3 whole
    chunks and a partial one)."""
    return dict(mamba_num_heads=4, mamba_head_dim=4, mamba_state_dim=4, mamba_n_groups=2,
                mamba_conv_kernel=min(c["mamba_conv_kernel"], 3), mamba_chunk_size=min(c["mamba_chunk_size"], 4))


MATVEC = "Mamba state reads"  # the optimizer rewrites its per-token state reads (matrix-vector dots)


def bench_cases(ctx) -> list:
    """The recurrent and the chunked forms: the preset's H heads of width d / 2, state d, H / Hkv groups, conv 4,
    chunks of the preset's tile (at most 256)."""
    p, arr = ctx.p, ctx.arr
    B, L, D = p["B"], p["L"], p["D"]
    H, P, N = p["H"], p["d"] // 2, p["d"]
    G, K, Q = max(1, H // p["Hkv"]), 4, min(p["blk"], 256)

    def case(impl):
        def run(mesh):
            d_in = H * P
            prm = {"in_proj": arr(D, 2 * d_in + 2 * G * N + H), "conv": arr(K, 1, d_in + 2 * G * N),
                   "dt_bias": arr(H), "A_log": arr(H) * 0.1, "D_skip": arr(H), "norm": arr(d_in), "out": arr(d_in, D)}
            return jax.jit(lambda prm, x: mamba2(prm, x, H, P, N, G, K, impl, Q)), [prm, arr(B, L, D)], 1

        def analytic():
            b = engine(attention_layer_pattern="M", emb_dim=D, per_device_batch_size=B, max_target_length=L,
                       mamba_num_heads=H, mamba_head_dim=P, mamba_state_dim=N, mamba_n_groups=G,
                       mamba_conv_kernel=K, mamba_impl=impl, mamba_chunk_size=Q)
            return components(b, "qkv_proj", "ssm_conv", "core_attention", "out_proj")

        label = "recurrent" if impl == "recurrent" else f"chunked SSD, chunks of {Q}"
        return Case(f"Mamba-2, {label} (reference kernel)", f"B={B} L={L} heads={H}x{P} N={N} groups={G} conv {K} "
                    f"D={D}", run, analytic, module="lowered" if impl == "recurrent" else "optimized",
                    why="the optimizer rewrites the state reads (matrix-vector dots)" if impl == "recurrent" else "")

    return [case("recurrent"), case("chunked")]
