"""Reference JAX kernels for every mixer and FFN the engine counts, one per implementation knob.

Each kernel issues exactly the matmuls its analytic hardware count says, so that XLA's loop-aware matmul count
of the jitted kernel equals the engine's figure (see ``tests/test_xla_kernels.py``). Everything else (masks,
softmax, gates, the gated-delta-net rank-one update, top-k, gathers) is elementwise or data movement.

Shapes: x [B, L, D]; q [B, L, H, d]; k, v [B, S, Hkv, d]. Scopes (``jax.named_scope``) carry the engine's
component names so that a module's matmuls can be attributed per component.

Forms of masked attention (``impl``):
- ``ideal``: one dot per query row over exactly its visible keys;
- ``dense``: the full L x L square, masked;
- ``blocked``: per query block, one dot over the contiguous range of key blocks its mask touches (the tiles a
  flash/splash kernel visits), masked inside.
"""

from __future__ import annotations


import jax
import jax.numpy as jnp
import numpy as np

from ..terms import capacity_slots

NEG = -1e30


# --- masks as index ranges ---------------------------------------------------------------------------------

def visible(mixer: str, span: int, i: int, L: int) -> tuple[int, int]:
    """[lo, hi) keys of query i (0-based) in a sequence of length L."""
    if mixer == "bidirectional":
        return 0, L
    if mixer == "window":
        return max(0, i - span + 1), i + 1
    if mixer == "chunk":
        return (i // span) * span, i + 1
    return 0, i + 1  # global causal


def mask_matrix(mixer: str, span: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    i, j = rows[:, None], cols[None, :]
    if mixer == "bidirectional":
        return np.ones((len(rows), len(cols)), bool)
    m = j <= i
    if mixer == "window":
        m &= j > i - span
    elif mixer == "chunk":
        m &= (j // span) == (i // span)
    return m


def query_blocks(mixer: str, span: int, L: int, impl: str, bq: int = 1, bkv: int = 1):
    """[(q_lo, q_hi, k_lo, k_hi)]: the query rows and the contiguous key range one dot covers."""
    if impl == "ideal":
        return [(i, i + 1, *visible(mixer, span, i, L)) for i in range(L)]
    if impl == "dense":
        return [(0, L, 0, L)]
    out = []
    for a0 in range(0, L, bq):
        a1 = min(a0 + bq, L)
        lo = visible(mixer, span, a0, L)[0]
        hi = L - 1 if mixer == "bidirectional" else a1 - 1
        out.append((a0, a1, (lo // bkv) * bkv, min((hi // bkv + 1) * bkv, L)))
    return out


# --- softmax attention ---------------------------------------------------------------------------------------

def _softmax(s, m):
    s = jnp.where(m, s, NEG)
    return jax.nn.softmax(s, axis=-1)


def attention(q, k, v, mixer="global", span=0, impl="ideal", block_q=1, block_kv=1, flash=False):
    """Masked multi-head attention with GQA (H = G * Hkv). q [B,L,H,dqk], k [B,L,Hkv,dqk], v [B,L,Hkv,dv].

    Matmuls: for each (query rows, key range) block, QK^T (2*H*dqk per pair) and PV (2*H*dv per pair).
    ``flash``: the probabilities are rematerialized in the backward pass (QK^T recomputed once), as flash
    attention's backward does.
    """
    B, L, H, dqk = q.shape
    hkv = k.shape[2]
    g = H // hkv
    qg = q.reshape(B, L, hkv, g, dqk)
    outs = []

    def probs(qb, kb, m):
        s = jnp.einsum("bqkgd,bskd->bkgqs", qb, kb)
        return _softmax(s, m)

    if flash:
        probs = jax.checkpoint(probs, static_argnums=())
    for a0, a1, lo, hi in query_blocks(mixer, span, L, impl, block_q, block_kv):
        m = jnp.asarray(mask_matrix(mixer, span, np.arange(a0, a1), np.arange(lo, hi)))
        p = probs(qg[:, a0:a1], k[:, lo:hi], m)
        outs.append(jnp.einsum("bkgqs,bskd->bqkgd", p, v[:, lo:hi]))
    o = jnp.concatenate(outs, axis=1) if len(outs) > 1 else outs[0]
    return o.reshape(B, L, H, v.shape[-1])


def attention_decode(q, k, v, mixer="global", span=0, impl="ideal", block_kv=1):
    """The new token (position kv = S-1) against the cache k, v [B, S, Hkv, d]. q [B, 1, H, dqk]."""
    B, _, H, dqk = q.shape
    S, hkv = k.shape[1], k.shape[2]
    kv = S - 1
    lo, hi = visible(mixer, span, kv, S)
    if impl == "dense":
        lo, hi = 0, S
    elif impl == "blocked":
        lo, hi = (lo // block_kv) * block_kv, min((kv // block_kv + 1) * block_kv, S)
    m = jnp.asarray(mask_matrix(mixer, span, np.array([kv]), np.arange(lo, hi)))
    qg = q.reshape(B, 1, hkv, H // hkv, dqk)
    s = jnp.einsum("bqkgd,bskd->bkgqs", qg, k[:, lo:hi])
    p = _softmax(s, m)
    return jnp.einsum("bkgqs,bskd->bqkgd", p, v[:, lo:hi]).reshape(B, 1, H, v.shape[-1])


# --- projections -----------------------------------------------------------------------------------------------

def dense(x, w, scope=None):
    if scope:
        with jax.named_scope(scope):
            return jnp.einsum("...d,df->...f", x, w)
    return jnp.einsum("...d,df->...f", x, w)


def gqa_qkv(p, x, n_q, n_kv, head_dim, output_gate=False):
    """q (and a per-head output gate), k, v projections. Returns q, k, v, gate (or None)."""
    B, L, _ = x.shape
    with jax.named_scope("qkv_proj"):
        q = dense(x, p["wq"]).reshape(B, L, n_q, -1)
        k = dense(x, p["wk"]).reshape(B, L, n_kv, head_dim)
        v = dense(x, p["wv"]).reshape(B, L, n_kv, head_dim)
    gate = None
    if output_gate:
        q, gate = q[..., :head_dim], q[..., head_dim:]
    return q, k, v, gate


def mla_qkv(p, x, n_q, q_lora, kv_lora, nope, rope, v_dim):
    """Non-absorbed MLA. Returns q [B,L,H,nope+rope], k [B,L,H,nope+rope], v [B,L,H,v], the q latent."""
    B, L, _ = x.shape
    with jax.named_scope("qkv_proj"):
        q_lat = dense(x, p["wq_a"]) if q_lora else x
        q = dense(q_lat, p["wq_b"] if q_lora else p["wq"]).reshape(B, L, n_q, nope + rope)
        ckv = dense(x, p["wkv_a"])
        c, k_rope = ckv[..., :kv_lora], ckv[..., kv_lora:]
        kv = dense(c, p["wkv_b"]).reshape(B, L, n_q, nope + v_dim)
    k = jnp.concatenate([kv[..., :nope], jnp.broadcast_to(k_rope[:, :, None, :], (B, L, n_q, rope))], -1)
    return q, k, kv[..., nope:], q_lat


def mla_absorbed_qkv(p, x, n_q, q_lora, kv_lora, nope, rope):
    """Absorbed MLA as multi-query attention in the kv latent: q = [q_nope W_uk | q_rope] per head
    [B,L,H,kv_lora+rope], one shared key [c | k_rope] [B,L,1,kv_lora+rope] and value c [B,L,1,kv_lora].
    W_uk and W_uv are views of wkv_b. Returns q, k, v, the q latent."""
    B, L, _ = x.shape
    with jax.named_scope("qkv_proj"):
        q_lat = dense(x, p["wq_a"]) if q_lora else x
        q = dense(q_lat, p["wq_b"] if q_lora else p["wq"]).reshape(B, L, n_q, nope + rope)
        w_uk = p["wkv_b"].reshape(kv_lora, n_q, -1)[:, :, :nope].transpose(1, 2, 0)  # [H, nope, kv_lora]
        q_abs = jnp.einsum("blhn,hnc->blhc", q[..., :nope], w_uk)
        ckv = dense(x, p["wkv_a"])
    q_cat = jnp.concatenate([q_abs, q[..., nope:]], -1)
    return q_cat, ckv[:, :, None, :], ckv[:, :, None, :kv_lora], q_lat


def mla_absorbed_out(p, o_lat, n_q, kv_lora, nope):
    """The latent attention output [B,L,H,kv_lora] expanded per head by W_uv, then projected out."""
    B, L = o_lat.shape[:2]
    with jax.named_scope("out_proj"):
        w_uv = p["wkv_b"].reshape(kv_lora, n_q, -1)[:, :, nope:].transpose(1, 0, 2)  # [H, kv_lora, v]
        o = jnp.einsum("blhc,hcv->blhv", o_lat, w_uv).reshape(B, L, -1)
        return dense(o, p["wo"])


# --- DSA: indexer, top-k, sparse attention ---------------------------------------------------------------------

def indexer_scores(p, x, q_lat, n_heads, head_dim, impl="ideal", block_q=1, block_kv=1):
    """Lightning indexer over causal pairs: score(i, j) = sum_h w_h(i) * relu(q_h(i) . k(j)), computed over the
    pairs the attention implementation visits. Inputs are detached (the indexer learns only from its own
    loss). Returns scores [B, L, L], -1e30 outside the causal mask."""
    B, L, _ = x.shape
    x, q_lat = jax.lax.stop_gradient(x), jax.lax.stop_gradient(q_lat)
    with jax.named_scope("indexer_proj"):
        qi = dense(q_lat, p["idx_wq"]).reshape(B, L, n_heads, head_dim)
        ki = dense(x, p["idx_wk"])
        wi = dense(x, p["idx_w"])
    rows = []
    with jax.named_scope("indexer_score"):
        for a0, a1, lo, hi in query_blocks("global", 0, L, impl, block_q, block_kv):
            s = jax.nn.relu(jnp.einsum("bqnh,bsh->bqns", qi[:, a0:a1], ki[:, lo:hi]))
            s = jnp.einsum("bqns,bqn->bqs", s, wi[:, a0:a1])
            m = mask_matrix("global", 0, np.arange(a0, a1), np.arange(lo, hi))
            rows.append(jnp.full((B, a1 - a0, L), NEG).at[:, :, lo:hi].set(jnp.where(m, s, NEG)))
    return jnp.concatenate(rows, axis=1) if len(rows) > 1 else rows[0]


def topk_indices(scores, K):
    """Indices of the K best keys per query, best first (top_k: not a matmul)."""
    return jax.lax.top_k(jax.lax.stop_gradient(scores), min(K, scores.shape[-1]))[1]


def dsa_attention(q, k, v, top_idx, K, impl="ideal", flash=False):
    """Sparse attention over the top-K keys of each query; GQA layout as ``attention``.

    ``ideal``: queries 0..K-2 attend their i+1 visible keys (a dot per row), later queries gather exactly K
    keys (one batched dot): sum_i min(i+1, K) pairs. ``gather_k``: every query gathers min(L, K) keys, early
    queries' surplus masked. ``top_idx`` [B, L, >=K] from ``topk_indices`` of causally masked scores.
    ``flash``: the probabilities are rematerialized in the backward pass (QK^T recomputed once).
    """
    B, L, H, dqk = q.shape
    hkv = k.shape[2]
    g = H // hkv
    K = min(K, L)
    qg = q.reshape(B, L, hkv, g, dqk)
    outs = []
    first = min(K - 1, L) if impl == "ideal" else 0

    def row_probs(qi, ki):
        return jax.nn.softmax(jnp.einsum("bkgd,bskd->bkgs", qi, ki), -1)

    def gathered_probs(qb, kg, valid):
        s = jnp.einsum("blkgd,blskd->blkgs", qb, kg)
        return jax.nn.softmax(jnp.where(valid[None, :, None, None, :], s, NEG), -1)

    if flash:
        row_probs, gathered_probs = jax.checkpoint(row_probs), jax.checkpoint(gathered_probs)
    for i in range(first):
        p = row_probs(qg[:, i], k[:, : i + 1])
        outs.append(jnp.einsum("bkgs,bskd->bkgd", p, v[:, : i + 1])[:, None])
    if first < L:
        idx = top_idx[:, first:, :K]  # [B, L', K]
        kg = jnp.take_along_axis(k[:, None], idx[:, :, :, None, None], axis=2)  # [B, L', K, Hkv, d]
        vg = jnp.take_along_axis(v[:, None], idx[:, :, :, None, None], axis=2)
        rows = np.arange(first, L)[:, None]
        valid = jnp.asarray(np.arange(K)[None, :] <= rows)  # best-first: the first min(i+1, K) are visible
        outs.append(jnp.einsum("blkgs,blskd->blkgd", gathered_probs(qg[:, first:], kg, valid), vg))
    o = jnp.concatenate(outs, axis=1) if len(outs) > 1 else outs[0]
    return o.reshape(B, L, H, v.shape[-1])


def indexer_kl_loss(q, k, index_scores, impl="ideal", block_q=1, block_kv=1):
    """The indexer's KL loss: the main attention's QK^T scores (detached; GQA layout), summed over heads and
    normalized over the causal keys, are the target of the indexer's distribution. Matmuls: 2*H*dqk per pair
    visited (the same pairs as the indexer's scoring)."""
    B, L, H, dqk = q.shape
    hkv = k.shape[2]
    qg = jax.lax.stop_gradient(q).reshape(B, L, hkv, H // hkv, dqk)
    k = jax.lax.stop_gradient(k)
    rows = []
    with jax.named_scope("indexer_kl"):
        for a0, a1, lo, hi in query_blocks("global", 0, L, impl, block_q, block_kv):
            s = jnp.einsum("bqkgd,bskd->bqkgs", qg[:, a0:a1], k[:, lo:hi]).sum((2, 3))
            m = mask_matrix("global", 0, np.arange(a0, a1), np.arange(lo, hi))
            rows.append(jnp.full((B, a1 - a0, L), NEG).at[:, :, lo:hi].set(jnp.where(m, s, NEG)))
        target = jax.nn.softmax(jnp.concatenate(rows, axis=1) if len(rows) > 1 else rows[0], -1)
    return -(target * jax.nn.log_softmax(index_scores, -1)).sum() / (B * L)


# --- gated delta net (recurrent form) -------------------------------------------------------------------------

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
        y = jax.lax.conv_general_dilated(qkv, p["conv"], window_strides=(1,), padding=[(kernel - 1, 0)],
                                         dimension_numbers=("NWC", "WIO", "NWC"), feature_group_count=conv_ch)
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


# --- FFN and MoE -------------------------------------------------------------------------------------------------

def mlp(p, x, gated=True, prefix=""):
    """Gated: down(act(x W_gate) * (x W_up)); plain: down(act(x W_up))."""
    h = dense(x, p[prefix + "up"])
    if gated:
        h = jax.nn.silu(dense(x, p[prefix + "gate"])) * h
    else:
        h = jax.nn.gelu(h)
    return dense(h, p[prefix + "down"])


def moe(p, x, num_experts, k, gated=True, impl="ideal", capacity_factor=1.0, shared=0, shared_gate=False):
    """Top-k MoE over the tokens of x [B, L, D]. ``ideal``: each token runs its k experts (their weights are
    gathered per token); ``capacity``: per sequence, every expert runs ceil(cf * L * k / E) slots (padded,
    overflow dropped); ``dense``: every expert runs every token. Router D -> E; shared experts and their gate
    as dense layers."""
    B, L, D = x.shape
    xt = x.reshape(B * L, D)
    T = B * L
    with jax.named_scope("moe_router"):
        logits = dense(xt, p["router"])
    gate_w, idx = jax.lax.top_k(logits, k)
    gate_w = jax.nn.softmax(gate_w, -1)
    names = ["up", "down"] + (["gate"] if gated else [])
    with jax.named_scope("moe_routed"):
        if impl == "ideal":
            w = {n: p["experts_" + n][idx] for n in names}  # [T, k, ...]
            y = _expert_ffn(xt, w, gated, "td,tkdf->tkf", "tkf,tkfd->tkd")
            out = (gate_w[..., None] * y).sum(1)
        elif impl == "dense":
            w = {n: p["experts_" + n] for n in names}
            y = _expert_ffn(xt, w, gated, "td,edf->tef", "tef,efd->ted")
            weights = jnp.zeros((T, num_experts), x.dtype).at[jnp.arange(T)[:, None], idx].set(gate_w)
            out = (weights[..., None] * y).sum(1)
        else:  # each sequence (row of the batch) is one dispatch group
            out = jax.vmap(lambda xg, ig, wg: _capacity_group(p, xg, ig, wg, num_experts, k, gated,
                                                             capacity_factor))(
                x, idx.reshape(B, L, k), gate_w.reshape(B, L, k)).reshape(T, D)
    if shared:
        with jax.named_scope("moe_shared"):
            s = sum(mlp(p, xt, gated, prefix=f"shared{i}_") for i in range(shared))
            if shared_gate:
                s = jax.nn.sigmoid(dense(xt, p["shared_gate"])) * s
            out = out + s
    return out.reshape(B, L, D)


def _expert_ffn(x, w, gated, up_spec, down_spec):
    """An expert FFN in any layout: gated act(x W_gate) * (x W_up), or plain act(x W_up), then W_down."""
    h = jnp.einsum(up_spec, x, w["up"])
    h = jax.nn.silu(jnp.einsum(up_spec, x, w["gate"])) * h if gated else jax.nn.gelu(h)
    return jnp.einsum(down_spec, h, w["down"])


def _capacity_group(p, xt, idx, gate_w, num_experts, k, gated, capacity_factor):
    """One dispatch group: every expert runs C = ceil(cf * tokens * k / E) slots; overflow is dropped."""
    T, D = xt.shape
    C = capacity_slots(T, k, num_experts, capacity_factor)  # the engine's own rule
    onehot = jax.nn.one_hot(idx.reshape(-1), num_experts, dtype=jnp.int32)  # [T*k, E]
    pos = (jnp.cumsum(onehot, axis=0) * onehot - 1).max(-1)  # slot of each (token, choice) in its expert
    keep = pos < C
    tok = jnp.repeat(jnp.arange(T), k)
    slot_tok = jnp.full((num_experts, C), T).at[idx.reshape(-1), jnp.where(keep, pos, C)].set(tok, mode="drop")
    xe = jnp.concatenate([xt, jnp.zeros((1, D), xt.dtype)], 0)[slot_tok]  # [E, C, D]
    w = {n: p["experts_" + n] for n in ("up", "down", "gate") if "experts_" + n in p}
    ye = _expert_ffn(xe, w, gated, "ecd,edf->ecf", "ecf,efd->ecd")
    ye = jnp.concatenate([ye.reshape(-1, D), jnp.zeros((1, D), xt.dtype)], 0)
    flat_slot = jnp.where(keep, idx.reshape(-1) * C + pos, num_experts * C)
    return (ye[flat_slot].reshape(T, k, D) * gate_w[..., None]).sum(1)



# --- compressed attention (DeepSeek-V4) ---------------------------------------------------------------------

def compressed_qkv(p, x, n_q, n_kv, head_dim, q_lora):
    """q through the q latent (or directly), and one projection whose output is both keys and values.
    Returns q [B,L,H,hd], kv [B,L,Hkv,hd], the q latent."""
    B, L, _ = x.shape
    with jax.named_scope("qkv_proj"):
        q_lat = dense(x, p["wq_a"]) if q_lora else x
        q = dense(q_lat, p["wq_b"] if q_lora else p["wq"]).reshape(B, L, n_q, head_dim)
        kv = dense(x, p["wkv"]).reshape(B, L, n_kv, head_dim)
    return q, kv, q_lat


def grouped_out(p, o, groups):
    """The grouped low-rank output: o [B,L,H*hd] in G groups, each projected to its rank, then G*rank -> D."""
    B, L, width = o.shape
    with jax.named_scope("out_proj"):
        lat = jnp.einsum("blgi,gio->blgo", o.reshape(B, L, groups, width // groups), p["wo_a"])
        return dense(lat.reshape(B, L, -1), p["wo_b"])


def compress(p, x, m, overlap, scope):
    """A compressor: kv and gate projections (D -> width, or 2*width with overlapping blocks), then per block a
    softmax over its tokens of the gates weighting the kv rows, channel by channel (elementwise). L // m blocks;
    with ``overlap`` block b pools tokens [(b-1)m, (b+1)m): the first half of the channels of the previous
    block's tokens and the second half of its own. Returns the blocks [B, L // m, width] and ``keep``, a zero that
    depends on the projections: a sequence shorter than one block forms none, but a model running it still
    projected every token, so the caller adds ``keep`` to its output to keep those matmuls in the program."""
    B, L, _ = x.shape
    with jax.named_scope(scope):
        kv = dense(x, p["wkv"])
        gate = dense(x, p["wgate"])
    C = L // m
    width = kv.shape[-1] // (2 if overlap else 1)
    if C == 0:
        return jnp.zeros((B, 0, width), kv.dtype), 0 * (kv.sum() + gate.sum())
    kv, gate = kv[:, : C * m].reshape(B, C, m, -1), gate[:, : C * m].reshape(B, C, m, -1)
    if overlap:
        w = kv.shape[-1] // 2
        prev = lambda t: jnp.pad(t[:, :-1, :, :w], ((0, 0), (1, 0), (0, 0), (0, 0)))  # noqa: E731
        first = jnp.arange(C)[None, :, None, None] == 0
        kv = jnp.concatenate([prev(kv), kv[..., w:]], axis=2)
        gate = jnp.concatenate([jnp.where(first, NEG, prev(gate)), gate[..., w:]], axis=2)
    weights = jax.nn.softmax(gate, axis=2)
    return (kv * weights).sum(axis=2), 0.0


def block_visible(i, m):
    """Compressed blocks visible to query i: those whose last token (b+1)m - 1 is at or before i."""
    return (i + 1) // m


def compressed_indexer(p, x, q_lat, m, n_heads, head_dim, impl="ideal", block_q=1, block_kv=1, einsum_sum=True):
    """The block indexer: q from the q latent, head weights, its own overlapping compressor for the block keys (all
    detached), and per query the score of each visible block, sum_h w_h relu(q_h . k_b), over the blocks the
    implementation visits ('ideal' the visible ones, 'dense' every formed block, 'blocked' the tiles up to the last
    visible one). ``einsum_sum``: the head weighting as a matmul, else a multiply and a sum. Returns the scores
    [B, L, C] (-1e30 where a block is not visible) and ``keep`` (see ``compress``)."""
    B, L, _ = x.shape
    x, q_lat = jax.lax.stop_gradient(x), jax.lax.stop_gradient(q_lat)
    with jax.named_scope("indexer_proj"):
        qi = dense(q_lat, p["idx_wq"]).reshape(B, L, n_heads, head_dim)
        wi = dense(x, p["idx_w"])
    ki, keep = compress({"wkv": p["idx_wkv"], "wgate": p["idx_wgate"]}, x, m, True, "indexer_proj")
    if ki.shape[1] == 0:  # no block to score; q and the head weights were still projected for every token
        return jnp.full((B, L, 0), NEG), 0 * (qi.sum() + wi.sum()) + keep

    def score(a0, a1, hi):
        s = jax.nn.relu(jnp.einsum("bqnh,bch->bqnc", qi[:, a0:a1], ki[:, :hi]))
        return jnp.einsum("bqnc,bqn->bqc", s, wi[:, a0:a1]) if einsum_sum else (s * wi[:, a0:a1, :, None]).sum(2)

    with jax.named_scope("indexer_score"):
        return _block_scores(B, L, m, ki.shape[1], impl, block_q, block_kv, score), keep


def _block_scores(B, L, m, C, impl, block_q, block_kv, score):
    """Scores [B, L, C] of each query against the compressed blocks the implementation visits (``block_ranges``),
    ``score(a0, a1, hi)`` giving rows a0..a1-1 against blocks 0..hi-1; -1e30 where a block is not visible."""
    rows = []
    for a0, a1, hi in block_ranges(L, m, C, impl, block_q, block_kv):
        row = jnp.full((B, a1 - a0, C), NEG)
        if hi:
            vis = np.arange(hi)[None, :] < np.array([block_visible(i, m) for i in range(a0, a1)])[:, None]
            row = row.at[:, :, :hi].set(jnp.where(vis, score(a0, a1, hi), NEG))
        rows.append(row)
    return jnp.concatenate(rows, axis=1) if len(rows) > 1 else rows[0]


def block_ranges(L, m, C, impl, block_q=1, block_kv=1):
    """[(q_lo, q_hi, blocks)]: query rows and the leading compressed blocks [0, blocks) one dot covers."""
    if impl == "dense":
        return [(0, L, C)]
    if impl == "blocked":
        out = []
        for a0 in range(0, L, block_q):
            a1 = min(a0 + block_q, L)
            out.append((a0, a1, min(-(-block_visible(a1 - 1, m) // block_kv) * block_kv, C)))
        return out
    return [(i, i + 1, block_visible(i, m)) for i in range(L)]


def compressed_attention(q, kv, comp, m, window, top_idx=None, K=0, impl="ideal", block_q=1, block_kv=1,
                         block_impl="ideal", flash=False):
    """One softmax over a query's sliding window of keys and its compressed blocks; keys are also the values.
    q [B,L,H,hd], kv [B,L,Hkv,hd], comp [B,C,hd] (one head, shared). The window part is computed as ``attention``
    computes a window (``impl``); the blocks by ``block_impl``: 'ideal' each query's visible blocks (with a top-K:
    its min(visible, K) selected ones, gathered), 'dense' every formed block, masked, 'gather_k' min(C, K) selected
    blocks for every query, 'blocked' the tiles up to the last visible block. Matmuls: QK^T and PV over exactly
    those (query, key) pairs. ``top_idx`` [B, L, >=min(K, C)]: block indices best first, visible ones first."""
    B, L, H, hd = q.shape
    hkv, C = kv.shape[2], comp.shape[1]
    g = H // hkv
    qg = q.reshape(B, L, hkv, g, hd)
    compk = jnp.broadcast_to(comp[:, :, None, :], (B, C, hkv, hd))
    wblocks = query_blocks("window", window, L, impl, block_q, block_kv)
    vis = np.array([block_visible(i, m) for i in range(L)])
    gathered = bool(K) and block_impl in ("ideal", "gather_k")
    N = min(C, K) if gathered else C  # width of the block scores: gathered slots, or every block
    counts = [min(vis[i], K) if block_impl == "ideal" else N for i in range(L)] if gathered else None

    def gather(i, n):  # the first n selected blocks of row i: [B, n, Hkv, hd]
        return jnp.take_along_axis(compk, top_idx[:, i, :n, None, None], axis=1)

    def scores(qg):
        sw = jnp.full((B, hkv, g, L, L), NEG)
        for a0, a1, lo, hi in wblocks:
            s = jnp.einsum("bqkgd,bskd->bkgqs", qg[:, a0:a1], kv[:, lo:hi])
            msk = jnp.asarray(mask_matrix("window", window, np.arange(a0, a1), np.arange(lo, hi)))
            sw = sw.at[:, :, :, a0:a1, lo:hi].set(jnp.where(msk, s, NEG))
        sc = jnp.full((B, hkv, g, L, N), NEG)
        if gathered:
            for i, n in enumerate(counts):
                if n:
                    s = jnp.einsum("bkgd,bnkd->bkgn", qg[:, i], gather(i, n))
                    s = jnp.where(np.arange(n) < min(vis[i], K), s, NEG)  # gather_k: early rows' surplus masked
                    sc = sc.at[:, :, :, i, :n].set(s)
        elif C:
            for a0, a1, hi in block_ranges(L, m, C, block_impl, block_q, block_kv):
                if hi == 0:
                    continue
                s = jnp.einsum("bqkgd,bckd->bkgqc", qg[:, a0:a1], compk[:, :hi])
                ok = jnp.asarray(np.arange(hi)[None, :] < vis[a0:a1, None])[None]
                if K:  # the top-K mask over the formed blocks (dense)
                    hit = jax.nn.one_hot(top_idx[:, a0:a1, :min(C, K)], C, dtype=bool).any(axis=2)[:, :, :hi]
                    ok = ok & hit
                sc = sc.at[:, :, :, a0:a1, :hi].set(jnp.where(ok[:, None, None], s, NEG))
        return sw, sc

    def probabilities(qg):
        sw, sc = scores(qg)
        return jax.nn.softmax(jnp.concatenate([sw, sc], axis=-1), axis=-1)

    if flash:  # the probabilities are rematerialized in the backward pass: QK^T once more
        probabilities = jax.checkpoint(probabilities)
    probs = probabilities(qg)
    pw, pc = probs[..., :L], probs[..., L:]
    outs = [jnp.einsum("bkgqs,bskd->bqkgd", pw[:, :, :, a0:a1, lo:hi], kv[:, lo:hi]) for a0, a1, lo, hi in wblocks]
    o = jnp.concatenate(outs, axis=1) if len(outs) > 1 else outs[0]
    rows = []
    if gathered:
        for i, n in enumerate(counts):
            if n:
                rows.append(jnp.einsum("bkgn,bnkd->bkgd", pc[:, :, :, i, :n], gather(i, n))[:, None])
            else:
                rows.append(jnp.zeros((B, 1, hkv, g, hd), o.dtype))
    elif C:
        for a0, a1, hi in block_ranges(L, m, C, block_impl, block_q, block_kv):
            if hi:
                rows.append(jnp.einsum("bkgqc,bckd->bqkgd", pc[:, :, :, a0:a1, :hi], compk[:, :hi]))
            else:
                rows.append(jnp.zeros((B, a1 - a0, hkv, g, hd), o.dtype))
    if rows:
        o = o + (jnp.concatenate(rows, axis=1) if len(rows) > 1 else rows[0])
    return o.reshape(B, L, H, hd)


def compressed_topk(scores, K):
    """The indexer's top-K blocks per query, best first (invisible blocks, at -1e30, come last)."""
    return jax.lax.top_k(jax.lax.stop_gradient(scores), min(K, scores.shape[-1]))[1]


def compressed_kl_loss(q, comp, index_scores, m, impl="ideal", block_q=1, block_kv=1):
    """A CSA layer's indexer KL loss: the main attention's scores of each query against the blocks the indexer scores
    (detached; summed over heads, normalized over the visible blocks) are the target of the indexer's distribution.
    Matmuls: 2*H*hd per scored (query, block) pair."""
    B, L, H, hd = q.shape
    C = comp.shape[1]
    q, comp = jax.lax.stop_gradient(q), jax.lax.stop_gradient(comp)
    with jax.named_scope("indexer_kl"):
        scores = _block_scores(B, L, m, C, impl, block_q, block_kv,
                               lambda a0, a1, hi: jnp.einsum("bqhd,bcd->bqhc", q[:, a0:a1], comp[:, :hi]).sum(2))
        target = jax.nn.softmax(scores, -1)
    seen = (index_scores > NEG / 2).any(-1, keepdims=True)  # queries that see a block
    return -jnp.where(seen, target * jax.nn.log_softmax(index_scores, -1), 0.0).sum() / (B * L)
