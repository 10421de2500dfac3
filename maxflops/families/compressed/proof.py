"""The compressed family's proof side (DeepSeek-V4): its reference kernels (the q latent and K=V projection, the
grouped low-rank output, the compressors, the block indexer, one softmax over the window and the blocks, the
indexer's top-k and KL loss), its Flax layer and its bench case. Imports jax; the family's analytic module does
not."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import NEG, dense
from ..attention import WINDOW
from ..attention.proof import attention, mask_matrix, query_blocks
from . import COMPRESSED, CSA


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
    depends on the projections: a sequence shorter than one block forms none, but a model running it among longer
    ones (packed documents here run one by one, a varlen kernel's one row) still projected every token, so the
    caller adds ``keep`` to its output to keep those matmuls in the program. (Where no sequence of the step forms a
    block, the layer follows ``dead_compressor``.)"""
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
    wblocks = query_blocks(WINDOW, window, L, impl, block_q, block_kv)
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
            msk = jnp.asarray(mask_matrix(WINDOW, window, np.arange(a0, a1), np.arange(lo, hi)))
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


KERNELS = (compressed_qkv, grouped_out, compress, compressed_indexer, compressed_attention, compressed_topk,
           compressed_kl_loss)


# --- the Flax layer ----------------------------------------------------------------------------------------------

def layer(c, kind, p, h, top_idx, aux):
    """DeepSeek-V4 attention: q through its latent, one K=V projection, the window and (CSA, HCA) compressed blocks
    in one softmax, the grouped low-rank output."""
    B, L, D = h.shape
    H, hd, nkv, ql = c["num_query_heads"], c["head_dim"], c["num_kv_heads"], c["q_lora_rank"]
    impl, bq, bkv = c["attention_impl"], c["attention_block_q"], c["attention_block_kv"]
    params = {"wkv": p("wkv", (D, nkv * hd))}
    if ql:
        params |= {"wq_a": p("wq_a", (D, ql)), "wq_b": p("wq_b", (ql, H * hd))}
    else:
        params["wq"] = p("wq", (D, H * hd))
    groups, rank = c["o_groups"], c["o_lora_rank"]
    if groups:
        params |= {"wo_a": p("wo_a", (groups, H * hd // groups, rank)), "wo_b": p("wo_b", (groups * rank, D))}
    else:
        params["wo"] = p("wo", (H * hd, D))
    q, kv, q_lat = compressed_qkv(params, h, H, nkv, hd, ql)
    if kind.mixer in COMPRESSED:
        m, overlap, topk = kind.ratio, kind.mixer == CSA, kind.span
        width = hd * (2 if overlap else 1)
        comp, keep = compress({"wkv": p("c_wkv", (D, width)), "wgate": p("c_wgate", (D, width))}, h, m, overlap,
                              "compressor")
        blocks_idx = None
        if kind.computes_index:
            n, hdi = c["index_n_heads"], c["index_head_dim"]
            idx = {"idx_wq": p("idx_wq", (ql or D, n * hdi)), "idx_w": p("idx_w", (D, n)),
                   "idx_wkv": p("idx_wkv", (D, 2 * hdi)), "idx_wgate": p("idx_wgate", (D, 2 * hdi))}
            scores, idx_keep = compressed_indexer(idx, h, q_lat, m, n, hdi, impl, bq, bkv,
                                                  c["weighted_sum_impl"] != "elementwise")
            # without its loss nothing reaches the indexer: its kept-alive zero must not open a gradient path
            if c["indexer_loss_scaling_factor"] == 0:
                idx_keep = jax.lax.stop_gradient(idx_keep)
            keep = keep + idx_keep
            blocks_idx = compressed_topk(scores, topk)
            if c["indexer_loss_scaling_factor"] > 0:
                aux = aux + c["indexer_loss_scaling_factor"] * compressed_kl_loss(q, comp, scores, m, impl, bq, bkv)
        if c["step_longest_sequence"] < m:  # no sequence of the step forms a block: nothing reads the compressor
            keep = 0.0 if c["dead_compressor"] == "eliminated" else jax.lax.stop_gradient(keep)
        with jax.named_scope("core_attention"):
            o = compressed_attention(q, kv, comp, m, c["sliding_window_size"], blocks_idx, topk, impl, bq, bkv,
                                     c["dsa_impl"] if topk else impl, c["flash_backward_recompute"]) + keep
    else:
        with jax.named_scope("core_attention"):
            o = attention(q, kv, kv, kind.mixer, kind.span, impl, bq, bkv, c["flash_backward_recompute"])
    o = o.reshape(B, L, -1)
    if groups:
        return grouped_out(params, o, groups), top_idx, aux
    with jax.named_scope("out_proj"):
        return dense(o, params["wo"]), top_idx, aux


def reduce(c) -> dict:
    """The reduced model of a compressed config: 2 output groups of rank 6, blocks of <= 3 (CSA) and <= 5 (HCA),
    top-k <= 2 blocks."""
    if c["attention_type"] != "compressed":
        return {}
    return dict(o_groups=2 if c["o_groups"] else 0, o_lora_rank=6 if c["o_groups"] else 0,
                csa_compress_ratio=min(c["csa_compress_ratio"], 3), hca_compress_ratio=min(c["hca_compress_ratio"], 5),
                index_topk=min(c["index_topk"], 2))


MATVEC = ""  # its dots stay matrix-matrix under XLA's optimizer (the block indexer's head weighting is a matmul)


# --- bench cases -------------------------------------------------------------------------------------------------

def bench_cases(ctx) -> list:
    """A CSA layer's attention: its compressor, the block indexer, the window and the top-k blocks."""
    p, arr = ctx.p, ctx.arr
    B, L, H, d, D = p["B"], p["L"], p["H"], p["d"], p["D"]
    n, hd = p["idx"]
    ql = p["mla"][0]
    m4, W4 = 4, p["W"]
    v4_cfg = dict(attention_type="compressed", attention_layer_pattern="S", num_query_heads=H, num_kv_heads=1,
                  head_dim=d, q_lora_rank=ql, emb_dim=D, sliding_window_size=W4, csa_compress_ratio=m4,
                  use_sparse_indexer=True, index_n_heads=n, index_head_dim=hd, index_topk=p["K"] // m4,
                  max_target_length=L, per_device_batch_size=B, attention_impl="blocked", attention_block_q=p["blk"],
                  attention_block_kv=p["blk"], dsa_impl="dense")

    def v4_run(mesh):
        prm = {"c": {"wkv": arr(D, 2 * d), "wgate": arr(D, 2 * d)},
               "i": {"idx_wq": arr(ql, n * hd), "idx_w": arr(D, n), "idx_wkv": arr(D, 2 * hd),
                     "idx_wgate": arr(D, 2 * hd)}}

        def one_layer(prm, x, q_lat, q, kv):
            comp, _ = compress(prm["c"], x, m4, True, "compressor")
            scores, _ = compressed_indexer(prm["i"], x, q_lat, m4, n, hd, "blocked", p["blk"], p["blk"])
            top = compressed_topk(scores, p["K"] // m4)
            return compressed_attention(q, kv, comp, m4, W4, top, p["K"] // m4, "blocked", p["blk"], p["blk"],
                                        "dense")

        return jax.jit(one_layer), [prm, arr(B, L, D), arr(B, L, ql), arr(B, L, H, d), arr(B, L, 1, d)], 1

    def v4_analytic():
        return components(engine(**v4_cfg), "compressor", "indexer_proj", "indexer_score", "core_attention")

    return [Case(f"DeepSeek-V4 CSA attention: compressor, block indexer, window {W4} + top-{p['K'] // m4} blocks "
                 f"of {m4}", f"B={B} L={L} H={H}/1 d={d} D={D} tile {p['blk']}", v4_run, v4_analytic,
                 module="lowered", why="the optimizer rewrites the indexer's head weighting (a matrix-vector "
                                       "product) as multiply+reduce")]
