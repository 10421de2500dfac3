"""MiniMax sparse attention (MSA, MiniMax-M3's sparse layers), letter 'B', mixer "msa": GQA attention whose keys fall
in blocks of B (``msa_block_size``), each query attending at most K whole blocks (``msa_topk_blocks``): its own block
(causal inside it) and the ``msa_local_blocks`` - 1 before it always, the rest the best-scored earlier blocks a
Lightning indexer picks. Per KV group its own pick, the same count.

Per token, with D the hidden width, H query heads of width hd over Hkv KV heads, an indexer of n heads of width d:
- the layer's q/k/v and output projections as any GQA layer's (``maxflops.families.attention``);
- the indexer's projections: q D -> n d, one key D -> d (``indexer_proj``);
- its scores: q . k per index head over every visible key, 2 n d per (query, key) pair (``indexer_score``); the
  max-pool of the keys' scores into blocks and the top-K are comparisons;
- QK^T and PV over the attended keys, 2 H hd each per pair (``core_attention``): a query i < KB sees every visible
  key (all its blocks are picked), a later one i % B + 1 keys of its own block and K - 1 whole blocks
  (``block_topk``: with m = min(L, KB), m(m+1)/2 + chunked(L - m, B) + (K - 1) B (L - m) pairs in a sequence
  of L; the count whatever the indexer picks).

Training: the indexer's output is a set of block indices, so no gradient reaches it (transformers' eager model and
any program): it runs forward only (``maxflops.training``: an indexer with no loss). Hardware: the attention's
pairs under ``msa_impl`` (every attended pair, the whole gathered blocks, or the masked square as transformers'
eager path runs it); the indexer's under ``indexer_impl`` (as the attention kernel visits them, or the full square),
none for a sequence of at most K blocks under ``indexer_skip_short`` (it attends every visible key).
Decode: the new token's indexer scores every cached index key and itself; it attends its picked blocks; the cache
holds the layer's keys and values and the index keys (d each).
"""

from __future__ import annotations

from ... import masks
from ...fields import field_of
from .. import attention
from ..attention import GLOBAL
from ..base import Family, Priced

MSA = "msa"
LETTER = "B"


def block_topk(L, B, K):
    """Attended pairs of a block-sparse layer (blocks of B keys, top K blocks, the query's own block forced)."""
    m = masks._minimum(L, K * B)
    return masks.causal(m) + masks.chunked(L - m, B) + (K - 1) * B * (L - m)


def block_topk_gathered(L, B, K):
    """Keys a gather kernel reads for a block-sparse layer: every query min(K, ceil(L / B)) whole blocks (the
    indexer's top-k is taken over the sequence's blocks; the unselected slots and the masked keys computed)."""
    return L * masks._minimum(-(-L // B), K) * B


def new_token_block_keys(kv, B, K, gathered: bool = False):
    """Keys the token at position ``kv`` attends in a block-sparse layer (``gathered``: the whole blocks a gather
    kernel reads, min(K, ceil((kv + 1) / B)) of them)."""
    if gathered:
        return masks._minimum((kv + B) // B, K) * B
    if isinstance(kv, int):
        return kv + 1 if kv < K * B else kv % B + 1 + (K - 1) * B
    import numpy as np

    return np.where(kv < K * B, kv + 1, kv % B + 1 + (K - 1) * B)


def blocks(c) -> tuple[int, int]:
    """(block size B, blocks attended K)."""
    return c["msa_block_size"], c["msa_topk_blocks"]


def pairs(seqs, c, decode: bool):
    """The (query, key) pairs the layer attends."""
    B, K = blocks(c)
    if decode:
        return seqs.sum(lambda kv: new_token_block_keys(kv, B, K))
    return seqs.sum(lambda L: block_topk(L, B, K))


def hardware_pairs(seqs, c, decode: bool):
    """The pairs the attention kernel computes under ``msa_impl``."""
    impl = c["msa_impl"]
    if impl == "dense":
        return attention.dense_pairs(seqs, decode)
    if impl == "gather":
        B, K = blocks(c)
        if decode:
            return seqs.sum(lambda kv: new_token_block_keys(kv, B, K, gathered=True))
        return seqs.sum(lambda L: block_topk_gathered(L, B, K))
    return pairs(seqs, c, decode)


def _indexer(p: Priced, c, seqs, decode: bool, tokens, hardware: bool) -> None:
    """The indexer's projections (per token) and scores (per visible pair, as the config's kernels visit them)."""
    n, d = c["index_n_heads"], c["index_head_dim"]
    if hardware and c["indexer_skip_short"] and not decode:  # a sequence of at most K blocks attends them all
        B, K = blocks(c)
        seqs = seqs.longer_than(K * B)
        if seqs is None:
            p.out["indexer_proj"] = p.out["indexer_score"] = 0
            return
        tokens = seqs.tokens
    p.out["indexer_proj"] = 2 * c["emb_dim"] * (n * d + d) * tokens
    if not hardware:
        scored = seqs.sum(lambda kv: kv + 1) if decode else seqs.exact_pairs(GLOBAL, 0)
    elif c["indexer_impl"] == "dense":
        scored = attention.dense_pairs(seqs, decode)
    else:
        scored = attention.impl_pairs(GLOBAL, 0, seqs, c, decode, masked=False)
    p.out["indexer_score"] = 2 * n * d * scored


price, price_hardware = attention.indexed_pricing(pairs, hardware_pairs, _indexer)


def decode_cache(kind, c, seqs) -> dict:
    """The picked blocks' cached keys and values (read), the new token's (written); every cached index key and the
    new one (read), the new one (written)."""
    return attention.indexed_decode_cache(kind, c, seqs, lambda kv: new_token_block_keys(kv, *blocks(c)))


def mixer_of(letter: str, layer_number: int, c):
    return (MSA, c["msa_topk_blocks"], True, 0) if letter == LETTER else None


def label(mixer_label: str, row) -> str:
    return mixer_label + " + indexer"


def check(c, letters: str, err) -> None:
    if LETTER not in letters:
        return
    if c["attention_type"] != "global":
        err("attention_type", f"{c['attention_type']!r} with MiniMax sparse attention ('B') layers: they are GQA "
                              "layers (MiniMax-M3's)")
    if not c["causal"]:
        err("causal", "False: MiniMax sparse attention ('B' layers) is causal")
    if not 1 <= c["msa_local_blocks"] <= c["msa_topk_blocks"]:
        err("msa_local_blocks", f"{c['msa_local_blocks']}: the query's own block must be among the "
                                f"msa_topk_blocks={c['msa_topk_blocks']} it attends (1 <= msa_local_blocks <= "
                                "msa_topk_blocks), else the count depends on the indexer's scores")
    if c["indexer_loss_scaling_factor"] > 0:
        err("indexer_loss_scaling_factor", f"{c['indexer_loss_scaling_factor']} with MiniMax sparse attention ('B') "
                                           "layers: their indexer trains through no loss maxflops models (its "
                                           "block indices carry no gradient)")


SCHEMA = {
    "msa_block_size": field_of(128, int, "MiniMax sparse attention ('B' layers): keys per block (B); the indexer "
                                         "max-pools its key scores per block and each query attends whole blocks.",
                               minimum=1),
    "msa_topk_blocks": field_of(16, int, "MiniMax sparse attention: the blocks each query attends (K), its own "
                                         "among them: a query past K blocks attends i % B + 1 + (K - 1) B keys.",
                                minimum=1),
    "msa_local_blocks": field_of(1, int, "MiniMax sparse attention: the query's own block and the ones just before it "
                                         "always attended (1 <= this <= msa_topk_blocks; the count does not depend "
                                         "on it).", minimum=1),
    "msa_impl": field_of("ideal", str, "Hardware MiniMax sparse attention: 'ideal' the attended pairs; 'gather' "
                                       "every query's min(K, ceil(L / B)) picked blocks read whole (the masked keys "
                                       "computed); 'dense' the full L x L square with the block mask (transformers' "
                                       "eager and SDPA paths).", choices=("ideal", "gather", "dense")),
}


FAMILY = Family(
    name="msa",
    letters={LETTER: "MiniMax sparse attention: whole key blocks an indexer picks (MiniMax-M3)"},
    mixers={MSA: "block-sparse attention"},
    components=(),
    schema=SCHEMA,
    mixer_of=mixer_of,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    label=label,
    check=check,
    plan_keys=("msa_topk_blocks",),
    conventions=("exact",),
    hf_layer_types={"minimax_m3_sparse": LETTER},
)
