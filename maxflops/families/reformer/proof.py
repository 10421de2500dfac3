"""Reformer's proof side: the LSH hash, LSH attention over hash-sorted chunks and chunked local attention as reference
kernels; its Flax layers (LSH's shared query-key projection, the local layer as the attention family's GQA layer
around its core); its part of the reduced model and its bench case. Imports jax; the family's analytic module does
not.

Shapes: qk, q, k, v [Bt, L, H, hd] (one KV head per query head); rotations [H, hd, rounds, w].
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...proofkit.case import Case, components, engine
from ...proofkit.kernels import NEG, dense
from ..attention import GLOBAL
from ..attention import proof as attention_proof
from . import hash_width

SELF = -1e5  # a query's own key: kept only where nothing else is visible (transformers' self mask value)


def lsh_hash(qk, rotations):
    """Each head's keys against its random rotations (no gradient: the buckets are integers): the argmax over the
    rotations and their negations. Returns the buckets [Bt, H, rounds, L]."""
    with jax.named_scope("lsh_hash"):
        rotated = jnp.einsum("blhd,hdnw->bhnlw", jax.lax.stop_gradient(qk), rotations)
    return jnp.argmax(jnp.concatenate([rotated, -rotated], -1), -1)


def _unit(x):
    """Keys scaled to unit length over sqrt(hd), as transformers' LSH layer scales them (elementwise)."""
    return x * jax.lax.rsqrt(jnp.sum(x * x, -1, keepdims=True) + 1e-6) / np.sqrt(x.shape[-1])


def _lookback(x, nb):
    """Each chunk beside the ``nb`` chunks before it (wrapping around), on axis -3 (chunks) into axis -2."""
    return jnp.concatenate([jnp.roll(x, s, axis=-3) for s in range(nb, 0, -1)] + [x], axis=-2)


def lsh_attention(qk, v, buckets, C, nb, impl="ideal", flash=False):
    """LSH attention (Reformer's, causal). A sequence of at most C tokens: standard causal attention (``impl``
    'ideal' the causal pairs, 'dense' the square), not hashed. A longer one (a whole number of chunks): each round
    sorts the positions by (bucket, position), splits them into chunks of C and each chunk attends itself and the
    ``nb`` chunks before it, dense, masked causal by position and off its own key; the rounds' outputs weighed by
    their log-sum-exps. Matmuls: QK^T and PV over C (1 + nb) keys per query and round."""
    Bt, L, H, hd = qk.shape
    if L <= C:
        return attention_proof.attention(qk, _unit(qk), v, GLOBAL, 0, impl, flash=flash)
    n = buckets.shape[2]
    order = jnp.argsort(buckets * L + jnp.arange(L), axis=-1)  # [Bt, H, n, L]: by bucket, then position
    gather = lambda x: jnp.take_along_axis(x.transpose(0, 2, 1, 3)[:, :, None], order[..., None], axis=3)  # noqa
    sq, sv = gather(qk), gather(v)  # [Bt, H, n, L, hd]
    shape = (Bt, H, n, L // C, C)
    sq, sv, pos = sq.reshape(*shape, hd), sv.reshape(*shape, hd), order.reshape(shape)
    keys, vals, kpos = _lookback(_unit(sq), nb), _lookback(sv, nb), _lookback(pos[..., None], nb)[..., 0]
    causal = pos[..., :, None] >= kpos[..., None, :]
    own = pos[..., :, None] == kpos[..., None, :]

    def probs_of(sq, keys):
        s = jnp.einsum("bhnxqd,bhnxkd->bhnxqk", sq, keys)
        s = jnp.where(own, SELF, jnp.where(causal, s, NEG))
        lse = jax.nn.logsumexp(s, -1)  # [Bt, H, n, L/C, C]
        return jnp.exp(s - lse[..., None]), lse

    if flash:
        probs_of = jax.checkpoint(probs_of)
    probs, lse = probs_of(sq, keys)
    out = jnp.einsum("bhnxqk,bhnxkd->bhnxqd", probs, vals)
    back = jnp.argsort(order, axis=-1)  # each position's place in its round's sorted order
    out = jnp.take_along_axis(out.reshape(Bt, H, n, L, hd), back[..., None], axis=3)
    lse = jnp.take_along_axis(lse.reshape(Bt, H, n, L), back, axis=3)
    weights = jax.nn.softmax(lse, axis=2)[..., None]  # the rounds, by how much each saw
    return (out * weights).sum(2).transpose(0, 2, 1, 3)  # [Bt, L, H, hd]


def local_attention(q, k, v, C, nb, impl="ideal", flash=False):
    """Chunked local attention looking ``nb`` chunks back (Reformer's, causal). 'ideal': each query against its keys
    from the start of chunk c - nb up to itself (one dot per row); 'dense': a sequence of at most C tokens the full
    square, a longer one each chunk's whole square against its chunks (the last chunk padded)."""
    Bt, L, H, hd = q.shape
    if impl == "ideal":
        def probs_of(qi, ki):
            return jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", qi, ki), -1)

        if flash:
            probs_of = jax.checkpoint(probs_of)
        outs = []
        for i in range(L):
            lo = max(0, (i // C - nb) * C)
            outs.append(jnp.einsum("bhqk,bkhd->bqhd", probs_of(q[:, i:i + 1], k[:, lo:i + 1]), v[:, lo:i + 1]))
        return jnp.concatenate(outs, 1) if L > 1 else outs[0]
    if L <= C:
        return attention_proof.attention(q, k, v, GLOBAL, 0, "dense", flash=flash)
    nc = -(-L // C)
    pad = lambda x: jnp.pad(x, ((0, 0), (0, nc * C - L), (0, 0), (0, 0))).reshape(Bt, nc, C, H, hd)  # noqa: E731
    qc, kc, vc = pad(q), pad(k), pad(v)
    pos = np.arange(nc * C).reshape(nc, C)
    kpos = np.concatenate([np.roll(pos, s, axis=0) for s in range(nb, 0, -1)] + [pos], axis=1)
    keep = pos[:, :, None] >= kpos[:, None, :]  # (a wrapped chunk holds later positions: masked)
    keys = jnp.concatenate([jnp.roll(kc, s, axis=1) for s in range(nb, 0, -1)] + [kc], axis=2)
    vals = jnp.concatenate([jnp.roll(vc, s, axis=1) for s in range(nb, 0, -1)] + [vc], axis=2)

    def probs_of(qc, keys):
        s = jnp.einsum("bxqhd,bxkhd->bxhqk", qc, keys)
        return jax.nn.softmax(jnp.where(jnp.asarray(keep)[:, None], s, NEG), -1)

    if flash:
        probs_of = jax.checkpoint(probs_of)
    out = jnp.einsum("bxhqk,bxkhd->bxqhd", probs_of(qc, keys), vals)
    return out.reshape(Bt, nc * C, H, hd)[:, :L]


KERNELS = (lsh_hash, lsh_attention, local_attention)


# --- the Flax layers -----------------------------------------------------------------------------------------------

def rotations(c, L):
    """The LSH layer's random rotations at sequence length L (a constant of the program, no parameter)."""
    w = max(hash_width(c, L), 1)
    shape = (c["num_query_heads"], c["head_dim"], c["lsh_num_hashes"], w)
    return jax.random.normal(jax.random.PRNGKey(0), shape)


def local_core(c, kind, p, h, q, k, v, q_lat, top_idx, aux):
    impl = "dense" if c["attention_impl"] == "dense" else "ideal"
    return local_attention(q, k, v, c["local_chunk_length"], c["local_chunks_before"], impl,
                           c["flash_backward_recompute"]), top_idx, aux


def layer(c, kind, p, h, top_idx, aux):
    """A local layer: the attention family's GQA layer around the chunked core. An LSH layer: the shared query-key
    and the value projections, the hash (a sequence longer than a chunk), LSH attention, the output projection."""
    if kind.mixer != "lsh":
        return attention_proof.layer(c, kind, p, h, top_idx, aux, core=local_core)
    B, L, D = h.shape
    H, hd, C = c["num_query_heads"], c["head_dim"], c["lsh_chunk_length"]
    with jax.named_scope("qkv_proj"):
        qk = dense(h, p("wqk", (D, H * hd))).reshape(B, L, H, hd)
        v = dense(h, p("wv", (D, H * hd))).reshape(B, L, H, hd)
    buckets = lsh_hash(qk, rotations(c, L)) if L > C else None
    impl = "dense" if c["attention_impl"] == "dense" else "ideal"
    with jax.named_scope("core_attention"):
        o = lsh_attention(qk, v, buckets, C, c["lsh_chunks_before"], impl, c["flash_backward_recompute"])
    with jax.named_scope("out_proj"):
        return dense(o.reshape(B, L, H * hd), p("wo", (H * hd, D))), top_idx, aux


def reduce(c) -> dict:
    """The reduced model's Reformer layers: chunks of 4 looking one back, two rounds of a 2-column hash; with LSH
    layers, sequences of 12 tokens (whole chunks)."""
    out = dict(lsh_chunk_length=4, local_chunk_length=4, lsh_chunks_before=1, local_chunks_before=1,
               lsh_num_hashes=2, lsh_hash_width=2)
    if "E" in c["attention_layer_pattern"] + c["mtp_layer_pattern"] + c["parallel_layer_pattern"]:
        out["max_target_length"] = 12
    return out


MATVEC = ""  # its dots stay matrix-matrix under XLA's optimizer


# --- bench cases -------------------------------------------------------------------------------------------------

def bench_cases(ctx) -> list:
    """Reformer's LSH layer core at the preset's sizes: the hash (two rounds of 4 columns) and LSH attention over
    chunks of the preset's tile looking one chunk back, as transformers runs it."""
    p, arr = ctx.p, ctx.arr
    Bt, L, H, hd = p["B"], p["L"], p["H"], p["d"]
    C = p["blk"] if L % p["blk"] == 0 and L > p["blk"] else L

    def run(mesh):
        def core(qk, v, rot):
            return lsh_attention(qk, v, lsh_hash(qk, rot) if L > C else None, C, 1, "dense")

        return jax.jit(core), [arr(Bt, L, H, hd), arr(Bt, L, H, hd), arr(H, hd, 2, 4)], 1

    def analytic():
        b = engine(attention_layer_pattern="E", emb_dim=H * hd, per_device_batch_size=Bt, max_target_length=L,
                   num_query_heads=H, num_kv_heads=H, head_dim=hd, lsh_chunk_length=C, lsh_chunks_before=1,
                   lsh_num_hashes=2, lsh_hash_width=4, attention_impl="dense")
        return components(b, "lsh_hash", "core_attention")

    return [Case(f"LSH attention: 2 rounds of a 4-column hash, chunks of {C} looking one back",
                 f"B={Bt} L={L} H={H} d={hd}", run, analytic)]
