"""xLSTM's mLSTM on the proof side: its reference kernel (the projections, the gates, the recurrence in its recurrent,
chunked or chunked-then-recurrent form, the per-head norm, the output gate and projection), its Flax layer, its part
of the reduced model and its bench cases. Imports jax; the family's analytic module does not."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import dense


def _step(state, inp, outer_matmul=False):
    """One token of every head: the stabilized gates, C <- f C + i k (x) v, n <- f n + i k (elementwise; with
    ``outer_matmul`` the outer product as a dot without contraction, as transformers' step kernel runs it), the reads
    q C and q . n. state (C [B, H, dqk, dv], n [B, H, dqk], m [B, H]); inp (q, k [B, H, dqk], v [B, H, dv], i, f
    [B, H])."""
    C, n, m = state
    q, k, v, i, f = inp
    logf = jax.nn.log_sigmoid(f)
    m_new = jnp.maximum(logf + m, i)
    fa, ia = jnp.exp(logf + m - m_new), jnp.exp(i - m_new)
    kv = jnp.einsum("bhk,bhv->bhkv", k, v) if outer_matmul else k[..., :, None] * v[..., None, :]
    C = fa[..., None, None] * C + ia[..., None, None] * kv
    n = fa[..., None] * n + ia[..., None] * k
    num = jnp.einsum("bhk,bhkv->bhv", q, C)
    den = jnp.maximum(jnp.abs(jnp.einsum("bhk,bhk->bh", q, n)), jnp.exp(-m_new))
    return (C, n, m_new), num / den[..., None]


def core_recurrent(q, k, v, i, f, state, outer_matmul=False):
    """Token by token. q, k [B, L, H, dqk]; v [B, L, H, dv]; i, f [B, L, H]. Returns (h [B, L, H, dv], state)."""
    def step(s, inp):
        return _step(s, inp, outer_matmul)

    state, h = jax.lax.scan(step, state, tuple(jnp.moveaxis(t, 1, 0) for t in (q, k, v, i, f)))
    return jnp.moveaxis(h, 0, 1), state


def core_chunk(q, k, v, i, f, state):
    """One chunk of c tokens at once (transformers' chunkwise kernel, its stabilizers simplified): the inter-chunk
    reads Q C and Q n of the state carried in, the intra-chunk Q K^T gated by the cumulative forget and input gates
    (masked above the diagonal) and applied to V, then the state decayed over the chunk plus its update (K gated to
    the chunk's end)^T V (the normalizer's update a sum)."""
    C, n, m = state
    logf = jnp.cumsum(jax.nn.log_sigmoid(f), axis=1)  # [B, c, H]
    c = q.shape[1]
    gap = logf[:, :, None, :] - logf[:, None, :, :] + i[:, None, :, :]  # [B, c (query), c (key), H]
    causal = jnp.tril(jnp.ones((c, c), bool))[None, :, :, None]
    gate = jnp.where(causal, jnp.exp(jnp.minimum(gap, 0.0)), 0.0)
    decay_q = jnp.exp(logf)  # the state's decay up to each token
    inter = jnp.einsum("bchk,bhkv->bchv", q * decay_q[..., None], C)
    norm = jnp.einsum("bchk,bhk->bch", q * decay_q[..., None], n)
    scores = jnp.einsum("bchk,bdhk->bcdh", q, k) * gate
    intra = jnp.einsum("bcdh,bdhv->bchv", scores, v)
    h = (inter + intra) / jnp.maximum(jnp.abs(norm + scores.sum(2)), 1.0)[..., None]
    to_end = jnp.exp(logf[:, -1:, :] - logf + i)  # each key gated to the chunk's end
    C = jnp.exp(logf[:, -1])[..., None, None] * C + jnp.einsum("bchk,bchv->bhkv", k * to_end[..., None], v)
    n = jnp.exp(logf[:, -1])[..., None] * n + (k * to_end[..., None]).sum(1)
    return h, (C, n, m)


def core_chunked(q, k, v, i, f, state, chunk, then_recurrent=False):
    """Chunks of ``chunk`` tokens; 'chunked' pads the sequence with zeros to whole chunks, ``then_recurrent`` runs
    the tokens after the last whole chunk by the step kernel (the outer product as a matmul)."""
    L = q.shape[1]
    whole = L // chunk if then_recurrent else -(-L // chunk)
    if not then_recurrent and whole * chunk > L:
        pad = ((0, 0), (0, whole * chunk - L), (0, 0))
        q, k, v = (jnp.pad(t, pad + ((0, 0),)) for t in (q, k, v))
        i, f = (jnp.pad(t, pad) for t in (i, f))
    out = []
    for s in range(0, whole * chunk, chunk):
        h, state = core_chunk(*(t[:, s:s + chunk] for t in (q, k, v, i, f)), state)
        out.append(h)
    if then_recurrent and whole * chunk < L:
        h, state = core_recurrent(*(t[:, whole * chunk:] for t in (q, k, v, i, f)), state, outer_matmul=True)
        out.append(h)
    return jnp.concatenate(out, axis=1)[:, :L], state


def mlstm(p, x, H, impl="recurrent", chunk=64, state=None, return_state=False):
    """The mLSTM layer: q, k, v, the output gate and the input and forget gates from x; the core (``impl``) from
    ``state`` (zeros when None); a per-head norm, the sigmoid output gate, out_proj. x [B, L, D]. With
    ``return_state``: (output, the last state)."""
    B, L, D = x.shape
    with jax.named_scope("qkv_proj"):
        q, k = dense(x, p["q"]), dense(x, p["k"])
        v, o = dense(x, p["v"]), dense(x, p["o"])
        i, f = dense(x, p["i"]), dense(x, p["f"])
    dqk, dv = q.shape[-1] // H, v.shape[-1] // H
    q, k, v = q.reshape(B, L, H, dqk) * dqk ** -0.5, k.reshape(B, L, H, dqk), v.reshape(B, L, H, dv)
    if state is None:
        state = (jnp.zeros((B, H, dqk, dv), x.dtype), jnp.zeros((B, H, dqk), x.dtype), jnp.zeros((B, H), x.dtype))
    with jax.named_scope("core_attention"):
        if impl == "recurrent":
            h, state = core_recurrent(q, k, v, i, f, state)
        else:
            h, state = core_chunked(q, k, v, i, f, state, chunk, impl == "chunked_then_recurrent")
    h = h / jnp.sqrt(jnp.mean(h * h, -1, keepdims=True) + 1e-6)
    h = h.reshape(B, L, H * dv) * jax.nn.sigmoid(o)
    with jax.named_scope("out_proj"):
        out = dense(h, p["out"])
    return (out, state) if return_state else out


KERNELS = (mlstm, core_recurrent, core_chunked)


def params(p, D, H, QK, V):
    return {"q": p("q", (D, QK)), "k": p("k", (D, QK)), "v": p("v", (D, V)), "o": p("o", (D, V)),
            "i": p("i", (D, H)), "f": p("f", (D, H)), "out": p("out", (V, D))}


def _sizes(c):
    D = c["emb_dim"]
    return c["mlstm_num_heads"], c["mlstm_qk_dim"] or D // 2, c["mlstm_v_dim"] or D


def layer(c, kind, p, h, top_idx, aux):
    """The mLSTM layer in the form ``mlstm_impl`` says (its last state unused: a chunked form's last update has no
    gradient, so the Flax model is held in the recurrent form, the chunked ones by the bench cases)."""
    H, QK, V = _sizes(c)
    return mlstm(params(p, h.shape[-1], H, QK, V), h, H, c["mlstm_impl"], c["mlstm_chunk_size"]), top_idx, aux


def reduce(c) -> dict:
    """The reduced model's mLSTM: 2 heads, q and k 8 wide, v 12, chunks <= 4."""
    return dict(mlstm_num_heads=2, mlstm_qk_dim=8, mlstm_v_dim=12, mlstm_chunk_size=min(c["mlstm_chunk_size"], 4))


MATVEC = "mLSTM state reads"  # the optimizer rewrites its per-token state reads (matrix-vector dots)


def bench_cases(ctx) -> list:
    """The recurrent, chunked and chunked-then-recurrent forms: the preset's H heads of width d (q, k and v alike),
    chunks of the preset's tile (at most 64); each a prefill that keeps its last state (every update runs)."""
    p, arr = ctx.p, ctx.arr
    B, L, D = p["B"], p["L"], p["D"]
    H, d, chunk = p["H"], p["d"], min(p["blk"], 64)

    def case(impl):
        def run(mesh):
            prm = params(lambda name, shape: arr(*shape), D, H, H * d, H * d)
            return jax.jit(lambda prm, x: mlstm(prm, x, H, impl, chunk, return_state=True)), [prm, arr(B, L, D)], 1

        def analytic():
            b = engine(attention_layer_pattern="T", emb_dim=D, per_device_batch_size=B, max_target_length=L,
                       mlstm_num_heads=H, mlstm_qk_dim=H * d, mlstm_v_dim=H * d, mlstm_impl=impl,
                       mlstm_chunk_size=chunk)
            return components(b, "qkv_proj", "core_attention", "out_proj")

        label = {"recurrent": "recurrent", "chunked": f"chunked, chunks of {chunk}",
                 "chunked_then_recurrent": f"chunks of {chunk}, then recurrent"}[impl]
        return Case(f"mLSTM, {label} (reference kernel)", f"B={B} L={L} heads={H}x{d} D={D}", run, analytic,
                    module="lowered", why="the optimizer rewrites the state reads (matrix-vector dots)")

    return [case(impl) for impl in ("recurrent", "chunked", "chunked_then_recurrent")]
