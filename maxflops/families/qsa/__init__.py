"""QSA (Qwen4-Exp's indexed attention), letter 'Q', mixer "qsa": GQA attention whose queries each attend the partial
tail of their visible keys and at most K whole blocks of r (``qsa_block_size``; K = ``qsa_budget`` / r), the blocks
an indexer picks among the complete blocks of its visible keys.

Per token, with D the hidden width, H query heads of width hd over Hkv KV heads, an indexer of n heads of width d:
- the layer's q/k/v and output projections as any GQA layer's (``maxflops.families.attention``);
- the indexer's projections: its q D -> n d and one key D -> d, in one matmul (``indexer_proj``);
- its scores: each query's q against the mean-pooled key of every complete block it sees (floor((i+1)/r) of them),
  2 n d per (query, block) (``indexer_score``); the pooling, the ReLU, the sum over heads and the top-K are no
  matmul;
- QK^T and PV over the attended keys, 2 H hd each per pair (``core_attention``): min(floor((i+1)/r), K) r +
  (i+1) mod r for query i (``qsa_pairs``: the count whatever the indexer picks).

Training: the indexer's output is a set of block indices, so no gradient reaches it: it runs forward only (an
indexer with no loss, as MiniMax sparse attention's). Hardware: the attention's pairs under ``qsa_impl`` (the
attended pairs, or the masked square as transformers' eager path runs it); the indexer's scores under
``indexer_impl`` ('dense': every query against every complete block of its sequence), none for a sequence of
fewer than (K + 1) r tokens under ``indexer_skip_short`` (every query attends every visible key).
Decode: the new token's indexer pools every cached index key (read) and scores the complete blocks; it attends its
picked blocks and its tail; the cache holds the layer's keys and values and the raw index keys (d each).
"""

from __future__ import annotations

from ... import masks
from ...fields import field_of
from .. import attention
from ..base import Family, Priced

QSA = "qsa"
LETTER = "Q"


def qsa_pairs(L, r, K):
    """Attended pairs of a QSA layer (Qwen4-Exp): query i's visible keys in complete blocks of r (floor((i+1)/r) of
    them) and the partial tail ((i+1) mod r); it attends min(blocks, K) whole blocks and the tail:
    r * compressed_topk(L, r, K) + sum_{v<=L} v mod r, the last sum chunked(L, r) - r floor(L / r) (both
    ``maxflops.masks``)."""
    return r * masks.compressed_topk(L, r, K) + masks.chunked(L, r) - r * (L // r)


def new_token_qsa_keys(kv, r, K):
    """Keys the token at position ``kv`` attends in a QSA layer: min(floor((kv+1)/r), K) whole blocks and the tail."""
    return r * masks.new_token_blocks(kv, r, K) + (kv + 1) % r


def blocks(c) -> tuple[int, int]:
    """(block size r, whole blocks attended K)."""
    r = c["qsa_block_size"]
    return r, c["qsa_budget"] // r


def pairs(seqs, c, decode: bool):
    """The (query, key) pairs the layer attends."""
    r, K = blocks(c)
    if decode:
        return seqs.sum(lambda kv: new_token_qsa_keys(kv, r, K))
    return seqs.sum(lambda L: qsa_pairs(L, r, K))


def hardware_pairs(seqs, c, decode: bool):
    """The pairs the attention kernel computes under ``qsa_impl``."""
    if c["qsa_impl"] == "dense":
        return attention.dense_pairs(seqs, decode)
    return pairs(seqs, c, decode)


def _indexer(p: Priced, c, seqs, decode: bool, tokens, hardware: bool) -> None:
    """The indexer's projections (per token) and its scores (per query and complete visible block; 'dense': every
    complete block of the sequence)."""
    n, d = c["index_n_heads"], c["index_head_dim"]
    r, K = blocks(c)
    if hardware and c["indexer_skip_short"] and not decode:  # a sequence whose every query sees at most K complete
        seqs = seqs.longer_than((K + 1) * r - 1)  # blocks attends every visible key: no pick is read
        if seqs is None:
            p.out["indexer_proj"] = p.out["indexer_score"] = 0
            return
        tokens = seqs.tokens
    p.out["indexer_proj"] = 2 * c["emb_dim"] * (n * d + d) * tokens
    if decode:
        scored = seqs.sum(lambda kv: masks.new_token_blocks(kv, r))
    elif hardware and c["indexer_impl"] == "dense":
        scored = seqs.sum(lambda L: L * (L // r))
    else:
        scored = seqs.sum(lambda L: masks.compressed_visible(L, r))
    p.out["indexer_score"] = 2 * n * d * scored


price, price_hardware = attention.indexed_pricing(pairs, hardware_pairs, _indexer)


def decode_cache(kind, c, seqs) -> dict:
    """The attended keys and values (read), the new token's (written); every cached raw index key and the new one
    (read: the blocks are pooled from them), the new one (written)."""
    return attention.indexed_decode_cache(kind, c, seqs, lambda kv: new_token_qsa_keys(kv, *blocks(c)))


def mixer_of(letter: str, layer_number: int, c):
    return (QSA, 0, True, 0) if letter == LETTER else None


def label(mixer_label: str, row) -> str:
    return mixer_label + " + indexer"


def check(c, letters: str, err) -> None:
    if LETTER not in letters:
        return
    if c["attention_type"] != "global":
        err("attention_type", f"{c['attention_type']!r} with QSA ('Q') layers: they are GQA layers (Qwen4-Exp's)")
    if not c["causal"]:
        err("causal", "False: QSA ('Q' layers) is causal")
    if c["qsa_budget"] % c["qsa_block_size"]:
        err("qsa_budget", f"{c['qsa_budget']} is not a multiple of qsa_block_size={c['qsa_block_size']} (the "
                          "budget is whole blocks)")
    if c["indexer_loss_scaling_factor"] > 0:
        err("indexer_loss_scaling_factor", f"{c['indexer_loss_scaling_factor']} with QSA ('Q') layers: their indexer "
                                           "trains through no loss maxflops models (its block indices carry no "
                                           "gradient)")


SCHEMA = {
    "qsa_block_size": field_of(64, int, "QSA ('Q' layers, Qwen4-Exp's indexer_compress_ratio): keys per block (r); "
                                        "the indexer scores each complete block's mean-pooled key, and each "
                                        "query attends whole picked blocks and its partial tail.", minimum=1),
    "qsa_budget": field_of(2048, int, "QSA: the tokens of whole blocks each query attends at most (Qwen4-Exp's "
                                      "indexer_budget, a multiple of qsa_block_size), beside its tail: query i "
                                      "attends min(floor((i+1)/r), budget/r) r + (i+1) mod r keys.", minimum=1),
    "qsa_impl": field_of("ideal", str, "Hardware QSA: 'ideal' the attended pairs; 'dense' the full L x L square "
                                       "with the selection mask (transformers' eager path).",
                         choices=("ideal", "dense")),
}


FAMILY = Family(
    name="qsa",
    letters={LETTER: "QSA: the tail and whole key blocks an indexer picks from pooled keys (Qwen4-Exp)"},
    mixers={QSA: "indexed attention"},
    components=(),
    schema=SCHEMA,
    mixer_of=mixer_of,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    label=label,
    check=check,
    conventions=("exact",),
    hf_layer_types={},  # (Qwen4-Exp's loader names its indexed layers; "indexed_attention" is DSA's elsewhere)
)
