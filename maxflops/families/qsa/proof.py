"""QSA's proof side: the indexer's scores of mean-pooled key blocks and its pick, attention over the picked blocks and
the tail in two forms (the attended pairs, the masked square) as reference kernels; its Flax layer (the attention
family's GQA layer around a QSA core); its part of the reduced model and its bench case. Imports jax; the family's
analytic module does not.

Shapes: x [Bt, L, D]; q [Bt, L, H, hd]; k, v [Bt, L, Hkv, hd]. One pick per query, shared by every head (Qwen4-Exp's
indexer sums its heads' ReLU scores).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import NEG, dense
from ..attention import proof as attention_proof
from ..msa.proof import _attend


def block_scores(p, x, n, d, r, impl="attention"):
    """The indexer: q (n heads of d) and one raw key (d) per token from one projection; each complete block of r
    keys mean-pooled (no matmul); per query the ReLU of its heads' scores against the pooled blocks it sees, summed
    over the heads. ``impl`` 'attention': each query scores its visible complete blocks only (one dot per run of r
    queries that see the same blocks); 'dense': every query every complete block of the sequence, masked. Returns
    [Bt, L, L // r] (NEG where a block is not visible), no gradient (its only use is the pick's indices)."""
    Bt, L, _ = x.shape
    nb = L // r
    x = jax.lax.stop_gradient(x)
    with jax.named_scope("indexer_proj"):
        qk = dense(x, p["idx_wqk"])
    qi, ki = qk[..., :n * d].reshape(Bt, L, n, d), qk[..., n * d:]
    pooled = ki[:, :nb * r].reshape(Bt, nb, r, d).mean(2)  # [Bt, nb, d]
    visible = (np.arange(L)[:, None] + 1) // r > np.arange(nb)[None, :]  # [L, nb]
    with jax.named_scope("indexer_score"):
        if impl == "dense":
            s = jax.nn.relu(jnp.einsum("bqnd,bjd->bqnj", qi, pooled)).sum(2)
            s = jnp.where(jnp.asarray(visible), s, NEG)
        else:
            rows = [jnp.full((Bt, min(L, r - 1), nb), NEG)] if r > 1 else []
            for lo in range(r - 1, L, r):  # queries lo .. lo + r - 1 see (lo + 1) // r blocks
                hi, seen = min(lo + r, L), (lo + 1) // r
                s = jax.nn.relu(jnp.einsum("bqnd,bjd->bqnj", qi[:, lo:hi], pooled[:, :seen])).sum(2)
                rows.append(jnp.pad(s, ((0, 0), (0, 0), (0, nb - seen)), constant_values=NEG))
            s = jnp.concatenate(rows, 1) if len(rows) > 1 else rows[0]
    return jax.lax.stop_gradient(s)


def qsa_attention(q, k, v, scores, r, K, impl="ideal", flash=False):
    """Attention of each query over its tail ((i+1) mod r keys up to itself) and its picked blocks (the top
    min(K, visible) by ``scores``).

    ``ideal``: a query that sees at most K complete blocks attends every visible key (one dot per row); a later one
    its tail and the K picked blocks, gathered: K r + (i+1) mod r keys. ``dense``: the full L x L square, masked
    (transformers' eager path). ``flash``: QK^T recomputed in the backward pass."""
    Bt, L, H, hd = q.shape
    hkv = k.shape[2]
    qg = q.reshape(Bt, L, hkv, H // hkv, hd)
    nb = scores.shape[-1]
    if impl == "dense":
        idx = jax.lax.top_k(scores, min(K, nb))[1] if nb else jnp.zeros((Bt, L, 0), jnp.int32)
        picked = ((idx[..., None] == jnp.arange(nb)).any(-2) & (scores > NEG / 2)) if nb else \
            jnp.zeros((Bt, L, 0), bool)  # [Bt, L, nb]
        block_of = np.minimum(np.arange(L) // r, max(nb - 1, 0))
        i, j = np.arange(L)[:, None], np.arange(L)[None, :]
        tail = (j >= ((i + 1) // r) * r) & (j <= i)
        in_block = (j < nb * r) & (j < ((i + 1) // r) * r)
        keep = (picked[:, :, block_of] & in_block) | tail if nb else jnp.broadcast_to(tail, (Bt, L, L))
        o = _attend(qg, [("bqkgd,bskd->bkgqs", k, v, keep[:, None, None])], flash)
        return o.reshape(Bt, L, H, v.shape[-1])
    kt, vt = k.transpose(0, 2, 1, 3), v.transpose(0, 2, 1, 3)  # [Bt, Hkv, L, hd]
    first = min(L, (K + 1) * r - 1)  # queries that attend every visible key
    outs = []
    for i in range(first):
        outs.append(_attend(qg[:, i:i + 1], [("bqkgd,bskd->bkgqs", k[:, :i + 1], v[:, :i + 1],
                                              np.ones((1, i + 1), bool))], flash))
    if first < L:
        idx = jax.lax.top_k(scores[:, first:], K)[1]  # [Bt, L', K]
        pos = (idx[..., None] * r + np.arange(r)).reshape(Bt, L - first, K * r)
        kg = jnp.take_along_axis(kt[:, :, None], pos[:, None, :, :, None], axis=3)  # [Bt, Hkv, L', K r, hd]
        vg = jnp.take_along_axis(vt[:, :, None], pos[:, None, :, :, None], axis=3)
        every = np.ones((K * r,), bool)
        for i in range(first, L):
            s0, j = ((i + 1) // r) * r, i - first
            parts = [("bqkgd,bkqsd->bkgqs", kg[:, :, j:j + 1], vg[:, :, j:j + 1], every)]
            if s0 <= i:  # the tail (none when the query closes a block)
                parts.insert(0, ("bqkgd,bskd->bkgqs", k[:, s0:i + 1], v[:, s0:i + 1], np.ones((1, i + 1 - s0), bool)))
            outs.append(_attend(qg[:, i:i + 1], parts, flash))
    o = jnp.concatenate(outs, axis=1) if len(outs) > 1 else outs[0]
    return o.reshape(Bt, L, H, v.shape[-1])


KERNELS = (block_scores, qsa_attention)


# --- the Flax layer ----------------------------------------------------------------------------------------------

def qsa_core(c, kind, p, h, q, k, v, q_lat, top_idx, aux):
    """The indexer's block scores (``indexer_impl``), then attention over the tail and the picked blocks
    (``qsa_impl``)."""
    D = h.shape[-1]
    n, d, r = c["index_n_heads"], c["index_head_dim"], c["qsa_block_size"]
    scores = block_scores({"idx_wqk": p("idx_wqk", (D, n * d + d))}, h, n, d, r,
                          "dense" if c["indexer_impl"] == "dense" else "attention")
    return qsa_attention(q, k, v, scores, r, c["qsa_budget"] // r, c["qsa_impl"],
                         c["flash_backward_recompute"]), top_idx, aux


def layer(c, kind, p, h, top_idx, aux):
    """GQA projections (the attention family's layer) around the QSA core."""
    return attention_proof.layer(c, kind, p, h, top_idx, aux, core=qsa_core)


def reduce(c) -> dict:
    """The reduced model's QSA: blocks of 3, a budget of 2 blocks, two index heads of 4."""
    return dict(index_n_heads=2, index_head_dim=4, qsa_block_size=min(c["qsa_block_size"], 3),
                qsa_budget=2 * min(c["qsa_block_size"], 3))


MATVEC = ""  # its dots stay matrix-matrix under XLA's optimizer


# --- bench cases -------------------------------------------------------------------------------------------------

def bench_cases(ctx) -> list:
    """Qwen4-Exp's indexed layer core at the preset's sizes: the indexer (two heads of the preset's index width,
    blocks of the preset's tile, scored densely) and QSA over the tail and L / (4 tile) picked blocks, masked
    square (transformers' eager form)."""
    p, arr = ctx.p, ctx.arr
    Bt, L, H, Hkv, hd, D = p["B"], p["L"], p["H"], p["Hkv"], p["d"], p["D"]
    d, r = p["idx"][1], p["blk"]
    K = max(1, L // (4 * r))

    def run(mesh):
        prm = {"idx_wqk": arr(D, 2 * d + d)}

        def core(prm, x, q, k, v):
            return qsa_attention(q, k, v, block_scores(prm, x, 2, d, r, "dense"), r, K, "dense")

        return jax.jit(core), [prm, arr(Bt, L, D), arr(Bt, L, H, hd), arr(Bt, L, Hkv, hd), arr(Bt, L, Hkv, hd)], 1

    def analytic():
        b = engine(attention_layer_pattern="Q", emb_dim=D, per_device_batch_size=Bt, max_target_length=L,
                   num_query_heads=H, num_kv_heads=Hkv, head_dim=hd, index_n_heads=2, index_head_dim=d,
                   qsa_block_size=r, qsa_budget=K * r, qsa_impl="dense", indexer_impl="dense")
        return components(b, "indexer_proj", "indexer_score", "core_attention")

    return [Case(f"QSA: indexer over pooled blocks of {r} + {K} picked blocks and the tail (masked square)",
                 f"B={Bt} L={L} H={H}/{Hkv} d={hd} index 2x{d}", run, analytic)]
