"""The DSA family's proof side: the lightning indexer's scores, top-k, gathered sparse attention and the indexer's
KL loss as reference kernels; its Flax layer (the attention family's layer with a DSA core); its bench cases.
Imports jax; the family's analytic module does not."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...proofkit.case import Case, component, components, engine
from ...proofkit.kernels import NEG, dense
from ..attention import GLOBAL
from ..attention import proof as attention_proof
from ..attention.proof import mask_matrix, mla_cfg, query_blocks


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
        for a0, a1, lo, hi in query_blocks(GLOBAL, 0, L, impl, block_q, block_kv):
            s = jax.nn.relu(jnp.einsum("bqnh,bsh->bqns", qi[:, a0:a1], ki[:, lo:hi]))
            s = jnp.einsum("bqns,bqn->bqs", s, wi[:, a0:a1])
            m = mask_matrix(GLOBAL, 0, np.arange(a0, a1), np.arange(lo, hi))
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
        for a0, a1, lo, hi in query_blocks(GLOBAL, 0, L, impl, block_q, block_kv):
            s = jnp.einsum("bqkgd,bskd->bqkgs", qg[:, a0:a1], k[:, lo:hi]).sum((2, 3))
            m = mask_matrix(GLOBAL, 0, np.arange(a0, a1), np.arange(lo, hi))
            rows.append(jnp.full((B, a1 - a0, L), NEG).at[:, :, lo:hi].set(jnp.where(m, s, NEG)))
        target = jax.nn.softmax(jnp.concatenate(rows, axis=1) if len(rows) > 1 else rows[0], -1)
    return -(target * jax.nn.log_softmax(index_scores, -1)).sum() / (B * L)


def indexer_kl_loss_selected(q, k, index_scores, top_idx, K):
    """The sparse indexer loss (Megatron's dsa_indexer_use_sparse_loss): the KL over each query's selected keys only.
    The target is the main attention's QK^T (detached; summed over heads) over the selected pairs, the keys gathered
    at the top-k (queries 0..K-2: their i+1 visible keys); the indexer's scores are gathered there too (a gather:
    its backward scatters into the scores, whose matmuls then run their backward as the dense loss's do). Matmuls:
    2*H*dqk per selected pair, sum_i min(i+1, K)."""
    B, L, H, dqk = q.shape
    hkv = k.shape[2]
    K = min(K, L)
    qg = jax.lax.stop_gradient(q).reshape(B, L, hkv, H // hkv, dqk)
    k = jax.lax.stop_gradient(k)
    first = min(K - 1, L)
    total = 0.0
    with jax.named_scope("indexer_kl"):
        for i in range(first):
            t = jax.nn.softmax(jnp.einsum("bkgd,bskd->bs", qg[:, i], k[:, : i + 1]), -1)
            total = total - (t * jax.nn.log_softmax(index_scores[:, i, : i + 1], -1)).sum()
        if first < L:
            idx = top_idx[:, first:, :K]  # [B, L', K]
            kg = jnp.take_along_axis(k[:, None], idx[:, :, :, None, None], axis=2)  # [B, L', K, Hkv, d]
            t = jax.nn.softmax(jnp.einsum("blkgd,blskd->bls", qg[:, first:], kg), -1)
            sel = jnp.take_along_axis(index_scores[:, first:], idx, axis=2)
            total = total - (t * jax.nn.log_softmax(sel, -1)).sum()
    return total / (B * L)


KERNELS = (indexer_scores, topk_indices, dsa_attention, indexer_kl_loss, indexer_kl_loss_selected)


# --- the Flax layer ----------------------------------------------------------------------------------------------

def dsa_core(c, kind, p, h, q, k, v, q_lat, top_idx, aux):
    """A DSA layer's core: on an index-computing layer the indexer's scores, its top-k and (training) its KL loss;
    then attention over the top-k keys (``dsa_impl``)."""
    impl, bq, bkv = c["attention_impl"], c["attention_block_q"], c["attention_block_kv"]
    if kind.computes_index:
        D = h.shape[-1]
        n, hdi = c["index_n_heads"], c["index_head_dim"]
        idx_params = {"idx_wq": p("idx_wq", ((c["q_lora_rank"] or D), n * hdi)), "idx_wk": p("idx_wk", (D, hdi)),
                      "idx_w": p("idx_w", (D, n))}
        scores = indexer_scores(idx_params, h, q_lat, n, hdi, impl, bq, bkv)
        top_idx = topk_indices(scores, kind.span)
        if c["indexer_loss_scaling_factor"] > 0:
            if c["indexer_loss_pairs"] == "selected":  # the sparse loss: over the selected pairs only
                loss = indexer_kl_loss_selected(q, k, scores, top_idx, kind.span)
            else:
                loss = indexer_kl_loss(q, k, scores, impl, bq, bkv)
            aux = aux + c["indexer_loss_scaling_factor"] * loss
    o = dsa_attention(q, k, v, top_idx, kind.span, c["dsa_impl"], c["flash_backward_recompute"])
    return o, top_idx, aux


def layer(c, kind, p, h, top_idx, aux):
    """MLA projections (the attention family's layer) around the DSA core."""
    return attention_proof.layer(c, kind, p, h, top_idx, aux, core=dsa_core)


def reduce(c) -> dict:
    """The reduced model's indexer: 2 heads x 4, top-k <= 5; index reuse kept with freq <= 2 and offset <= 2, so that
    computing and reusing layers both appear."""
    return dict(index_n_heads=2, index_head_dim=4, index_topk=min(c["index_topk"], 5),
                index_topk_freq=min(c["index_topk_freq"], 2), index_skip_offset=min(c["index_skip_offset"], 2))


MATVEC = "DSA per query"  # the optimizer rewrites its per-query dots (matrix-vector) as multiply+reduce


# --- bench cases -------------------------------------------------------------------------------------------------

def bench_cases(ctx) -> list:
    """The indexer's scoring pass, top-k, gathered sparse attention in the absorbed (MQA) form, and MaxText's DSA
    composition rebuilt with the same ops."""
    p, arr = ctx.p, ctx.arr
    B, L, H = p["B"], p["L"], p["H"]
    n, hd = p["idx"]
    ql, kl, nope, rope, v = p["mla"]
    D = p["D"]
    mla = mla_cfg(p)
    cases = []

    def indexer_run(mesh):
        prm = {"idx_wq": arr(ql, n * hd), "idx_wk": arr(D, hd), "idx_w": arr(D, n)}
        fn = jax.jit(lambda prm, x, q: indexer_scores(prm, x, q, n, hd, "blocked", p["blk"], p["blk"]))
        return fn, [prm, arr(B, L, D), arr(B, L, ql)], 1

    def indexer_analytic():
        b = engine(use_sparse_indexer=True, index_n_heads=n, index_head_dim=hd, index_topk=p["K"],
                   attention_impl="blocked", attention_block_q=p["blk"], attention_block_kv=p["blk"], **mla)
        return components(b, "indexer_proj", "indexer_score")

    cases.append(Case("DSA indexer: projections + scoring (blocked)", f"B={B} L={L} heads={n}x{hd} D={D}",
                      indexer_run, indexer_analytic, module="lowered",
                      why="the optimizer rewrites the head reduction (a matrix-vector product) as multiply+reduce"))

    def topk_run(mesh):
        scores = jnp.where(jnp.tril(jnp.ones((L, L), bool)), arr(B, L, L, dt=jnp.float32), -1e30)
        return jax.jit(lambda s: topk_indices(s, p["K"])), [scores], 1

    cases.append(Case(f"top-k selection (K={p['K']} of L)", f"B={B} L={L}", topk_run, lambda: (0, 0),
                      module="none", why="no matmul: a sort, timed only"))

    dB, dL, dK = p.get("dsa", (B, L, p["K"]))

    def dsa_run(mesh):
        q = arr(dB, dL, H, kl + rope)
        k = arr(dB, dL, 1, kl + rope)
        vv = arr(dB, dL, 1, kl)
        scores = jnp.where(jnp.tril(jnp.ones((dL, dL), bool)), arr(dB, dL, dL, dt=jnp.float32), -1e30)
        top = topk_indices(scores, dK)
        return jax.jit(lambda q, k, vv, top: dsa_attention(q, k, vv, top, dK, "gather_k")), [q, k, vv, top], 1

    def dsa_analytic():
        b = engine(use_sparse_indexer=True, index_topk=dK, dsa_impl="gather_k", mla_absorbed=True,
                   **{**mla, "max_target_length": dL, "per_device_batch_size": dB})
        return component(b, "core_attention")

    cases.append(Case(f"DSA sparse attention, {dK} gathered keys (absorbed MLA)",
                      f"B={dB} L={dL} H={H} latent {kl}+{rope}", dsa_run, dsa_analytic))

    # MaxText's DSA composition (attention_mla.py with attention='dot_product', rebuilt here with the same ops):
    # the indexer over the full square, top-k, its mask, and MLA attention over the full masked square.
    def maxtext_dsa_run(mesh):
        prm = {"idx_wq": arr(ql, n * hd), "idx_wk": arr(D, hd), "idx_w": arr(D, n)}

        def composition(prm, x, q_lat, q, k, vv):
            scores = indexer_scores(prm, x, q_lat, n, hd, "dense")
            kth = jax.lax.top_k(scores, p["K"])[0][..., -1:]
            keep = (scores >= kth) & jnp.tril(jnp.ones((L, L), bool))  # MaxText re-applies the causal mask
            logits = jnp.einsum("bqhd,bkhd->bhqk", q, k)
            probs = jax.nn.softmax(jnp.where(keep[:, None], logits, -1e30), -1)
            return jnp.einsum("bhqk,bkhd->bqhd", probs, vv)

        return jax.jit(composition), [prm, arr(B, L, D), arr(B, L, ql), arr(B, L, H, nope + rope),
                                      arr(B, L, H, nope + rope), arr(B, L, H, v)], 1

    def maxtext_dsa_analytic():
        b = engine(use_sparse_indexer=True, index_n_heads=n, index_head_dim=hd, index_topk=p["K"], dsa_impl="dense",
                   attention_impl="dense", indexer_skip_short=True, **mla)
        return components(b, "indexer_proj", "indexer_score", "core_attention")

    cases.append(Case(f"MaxText DSA (dot_product): indexer, top-{p['K']}, masked MLA attention (rebuilt)",
                      f"B={B} L={L} H={H} d={nope + rope}/{v} idx {n}x{hd}", maxtext_dsa_run, maxtext_dsa_analytic,
                      module="lowered", why="the optimizer rewrites the indexer's head weighting (a matrix-vector "
                                            "product) as multiply+reduce"))
    return cases
