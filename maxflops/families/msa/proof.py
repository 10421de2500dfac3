"""MiniMax sparse attention's proof side: the Lightning indexer's block scores and pick, block-sparse attention in its
three forms (the attended pairs, the gathered blocks, the masked square) as reference kernels; its Flax layer (the
attention family's GQA layer around an MSA core); its part of the reduced model and its bench case. Imports jax; the
family's analytic module does not.

Shapes: x [Bt, L, D]; q [Bt, L, H, hd]; k, v [Bt, L, Hkv, hd]; one index head per KV head (MiniMax-M3's
index_n_heads == num_key_value_heads), so each KV group attends its own blocks.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import NEG, dense
from ..attention import GLOBAL
from ..attention import proof as attention_proof
from ..attention.proof import mask_matrix, query_blocks

FORCED = 1e30  # the local blocks' score: above every scored block


def block_scores(p, x, n, d, B, local, impl="ideal", block_q=1, block_kv=1):
    """The indexer: q (n heads of d) and one key (d) per token, q . k over the visible pairs the attention
    implementation visits, max-pooled per block of B keys; the query's block and the ``local`` - 1 before it forced
    above every other, the blocks it cannot see at NEG. Returns [Bt, n, L, ceil(L / B)], no gradient (its only use
    is the pick's indices)."""
    Bt, L, _ = x.shape
    x = jax.lax.stop_gradient(x)
    with jax.named_scope("indexer_proj"):
        qi = dense(x, p["idx_wq"]).reshape(Bt, L, n, d)
        ki = dense(x, p["idx_wk"])
    rows = []
    with jax.named_scope("indexer_score"):
        for a0, a1, lo, hi in query_blocks(GLOBAL, 0, L, impl, block_q, block_kv):
            s = jnp.einsum("bqnd,bsd->bnqs", qi[:, a0:a1], ki[:, lo:hi])
            m = mask_matrix(GLOBAL, 0, np.arange(a0, a1), np.arange(lo, hi))
            rows.append(jnp.full((Bt, n, a1 - a0, L), NEG).at[..., lo:hi].set(jnp.where(m, s, NEG)))
        s = jnp.concatenate(rows, axis=2) if len(rows) > 1 else rows[0]
    nb = -(-L // B)
    s = jnp.pad(s, ((0, 0), (0, 0), (0, 0), (0, nb * B - L)), constant_values=NEG)
    blocks = s.reshape(Bt, n, L, nb, B).max(-1)
    forced = np.zeros((L, nb), bool)
    for j in range(local):
        forced[np.arange(L), np.maximum(np.arange(L) // B - j, 0)] = True
    return jax.lax.stop_gradient(jnp.where(jnp.asarray(forced), FORCED, blocks))


def pick(scores, K):
    """The top min(K, blocks) blocks per query and index head, and which of them are visible: ([..., K'], [..., K'])."""
    vals, idx = jax.lax.top_k(scores, min(K, scores.shape[-1]))
    return idx, vals > NEG / 2


def _attend(qg, parts, flash=False):
    """Softmax over the concatenated key parts [(the QK^T einsum spec, keys, values, mask)], then the weighted values:
    one QK^T and one PV per part. ``flash``: the probabilities are rematerialized in the backward pass (QK^T
    recomputed once), as flash attention's backward does."""
    specs, masks_ = [spec for spec, *_ in parts], [m for *_, m in parts]

    def probs_of(qg, *keys):
        scores = [jnp.where(m, jnp.einsum(spec, qg, kk), NEG) for spec, kk, m in zip(specs, keys, masks_)]
        return jax.nn.softmax(jnp.concatenate(scores, -1), -1)

    if flash:
        probs_of = jax.checkpoint(probs_of)
    probs = probs_of(qg, *(kk for _, kk, _, _ in parts))
    out, at = 0, 0
    for spec, kk, vv, _ in parts:
        w = kk.shape[-2] if "bkqsd" in spec else kk.shape[1]  # (gathered keys [Bt, Hkv, rows, s, hd])
        lhs, rhs = spec.split("->")[0].split(",")
        out = out + jnp.einsum(f"{spec.split('->')[1]},{rhs}->{lhs}", probs[..., at:at + w], vv)
        at += w
    return out


def msa_attention(q, k, v, scores, B, K, impl="ideal", flash=False):
    """Attention over each KV group's picked blocks (``scores`` from ``block_scores``, n == Hkv), causal inside.

    ``ideal``: a query that sees at most K blocks attends its visible keys (one dot per row); a later one its own
    block's keys up to itself and the K - 1 other picked blocks, gathered: i % B + 1 + (K - 1) B keys.
    ``gather``: every query gathers its min(K, blocks) picked blocks whole, the masked keys computed.
    ``dense``: the full L x L square, masked to the picked blocks (transformers' eager path). ``flash``: QK^T
    recomputed in the backward pass."""
    Bt, L, H, hd = q.shape
    hkv = k.shape[2]
    assert scores.shape[1] == hkv, "one index head per KV head"
    qg = q.reshape(Bt, L, hkv, H // hkv, hd)
    kt, vt = k.transpose(0, 2, 1, 3), v.transpose(0, 2, 1, 3)  # [Bt, Hkv, L, hd]
    causal = np.arange(L)[None, :] <= np.arange(L)[:, None]
    if impl == "dense":
        idx, valid = pick(scores, K)
        nb = scores.shape[-1]
        chosen = ((idx[..., None] == jnp.arange(nb)) & valid[..., None]).any(-2)  # [Bt, Hkv, L, nb]
        keep = chosen[..., np.arange(L) // B] & causal  # [Bt, Hkv, L, L]
        o = _attend(qg, [("bqkgd,bskd->bkgqs", k, v, keep[:, :, None])], flash)
        return o.reshape(Bt, L, H, v.shape[-1])
    if impl == "gather":
        idx, valid = pick(scores, K)
        pos = (idx[..., None] * B + np.arange(B)).reshape(*idx.shape[:-1], -1)  # [Bt, Hkv, L, K'B]
        ok = jnp.repeat(valid, B, -1) & (pos <= np.arange(L)[:, None])
        pos = jnp.minimum(pos, L - 1)
        kg = jnp.take_along_axis(kt[:, :, None], pos[..., None], axis=3)  # [Bt, Hkv, L, K'B, hd]
        vg = jnp.take_along_axis(vt[:, :, None], pos[..., None], axis=3)
        o = _attend(qg, [("bqkgd,bkqsd->bkgqs", kg, vg, ok[:, :, None])], flash)
        return o.reshape(Bt, L, H, v.shape[-1])
    first = min(L, K * B)  # queries that attend every visible key
    outs = []
    for i in range(first):
        outs.append(_attend(qg[:, i:i + 1], [("bqkgd,bskd->bkgqs", k[:, :i + 1], v[:, :i + 1],
                                              np.ones((1, i + 1), bool))], flash))
    if first < L:
        own = np.arange(L) // B
        others = jnp.where(jnp.asarray(own[:, None] == np.arange(scores.shape[-1])), NEG, scores)[:, :, first:]
        idx = jax.lax.top_k(others, K - 1)[1]  # the K - 1 picked blocks besides the query's own
        pos = (idx[..., None] * B + np.arange(B)).reshape(*idx.shape[:-1], -1)  # [Bt, Hkv, L', (K-1)B]
        kg = jnp.take_along_axis(kt[:, :, None], pos[..., None], axis=3)
        vg = jnp.take_along_axis(vt[:, :, None], pos[..., None], axis=3)
        every = np.ones(((K - 1) * B,), bool)
        for i in range(first, L):
            s0 = (i // B) * B
            j = i - first
            outs.append(_attend(qg[:, i:i + 1], [
                ("bqkgd,bskd->bkgqs", k[:, s0:i + 1], v[:, s0:i + 1], np.ones((1, i + 1 - s0), bool)),
                ("bqkgd,bkqsd->bkgqs", kg[:, :, j:j + 1], vg[:, :, j:j + 1], every)], flash))
    o = jnp.concatenate(outs, axis=1) if len(outs) > 1 else outs[0]
    return o.reshape(Bt, L, H, v.shape[-1])


KERNELS = (block_scores, pick, msa_attention)


# --- the Flax layer ----------------------------------------------------------------------------------------------

def msa_core(c, kind, p, h, q, k, v, q_lat, top_idx, aux):
    """The indexer's block scores (``indexer_impl``: the pairs the attention kernel visits, or the full square), then
    attention over the picked blocks (``msa_impl``). The ideal form does not read the pick of a sequence of at most K
    blocks (it attends every visible key), and XLA drops that indexer: ``indexer_skip_short`` says so."""
    D = h.shape[-1]
    n, d = c["index_n_heads"], c["index_head_dim"]
    prm = {"idx_wq": p("idx_wq", (D, n * d)), "idx_wk": p("idx_wk", (D, d))}
    impl = "dense" if c["indexer_impl"] == "dense" else c["attention_impl"]
    scores = block_scores(prm, h, n, d, c["msa_block_size"], c["msa_local_blocks"], impl,
                          c["attention_block_q"], c["attention_block_kv"])
    return msa_attention(q, k, v, scores, c["msa_block_size"], c["msa_topk_blocks"], c["msa_impl"],
                         c["flash_backward_recompute"]), top_idx, aux


def layer(c, kind, p, h, top_idx, aux):
    """GQA projections (the attention family's layer) around the MSA core."""
    return attention_proof.layer(c, kind, p, h, top_idx, aux, core=msa_core)


def reduce(c) -> dict:
    """The reduced model's MSA: blocks of 3, 2 of them attended (the local one and one more), one index head of 4 per
    KV head."""
    return dict(index_n_heads=min(c["num_kv_heads"], 2), index_head_dim=4, msa_block_size=min(c["msa_block_size"], 3),
                msa_topk_blocks=min(c["msa_topk_blocks"], 2), msa_local_blocks=1)


MATVEC = ""  # its dots stay matrix-matrix under XLA's optimizer (a query group per KV head)


# --- bench cases -------------------------------------------------------------------------------------------------

def bench_cases(ctx) -> list:
    """MiniMax-M3's sparse layer core at the preset's sizes: the indexer (one head of the preset's index width per
    KV head) and gathered block-sparse attention, blocks of the preset's tile, L / (4 tile) blocks attended."""
    p, arr = ctx.p, ctx.arr
    Bt, L, H, Hkv, hd, D = p["B"], p["L"], p["H"], p["Hkv"], p["d"], p["D"]
    d, blk = p["idx"][1], p["blk"]
    K = max(2, L // (4 * blk))

    def run(mesh):
        prm = {"idx_wq": arr(D, Hkv * d), "idx_wk": arr(D, d)}

        def core(prm, x, q, k, v):
            scores = block_scores(prm, x, Hkv, d, blk, 1, "blocked", blk, blk)
            return msa_attention(q, k, v, scores, blk, K, "gather")

        return jax.jit(core), [prm, arr(Bt, L, D), arr(Bt, L, H, hd), arr(Bt, L, Hkv, hd), arr(Bt, L, Hkv, hd)], 1

    def analytic():
        b = engine(attention_layer_pattern="B", emb_dim=D, per_device_batch_size=Bt, max_target_length=L,
                   num_query_heads=H, num_kv_heads=Hkv, head_dim=hd, index_n_heads=Hkv, index_head_dim=d,
                   msa_block_size=blk, msa_topk_blocks=K, msa_impl="gather", attention_impl="blocked",
                   attention_block_q=blk, attention_block_kv=blk)
        return components(b, "indexer_proj", "indexer_score", "core_attention")

    return [Case(f"MiniMax sparse attention: indexer + {K} gathered blocks of {blk} (reference kernel)",
                 f"B={Bt} L={L} H={H}/{Hkv} d={hd} index {Hkv}x{d}", run, analytic)]
