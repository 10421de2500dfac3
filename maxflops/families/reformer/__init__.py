"""Reformer's attention (Kitaev et al. 2020; transformers' modeling_reformer), letters 'E' (LSH attention, mixer
"lsh") and 'O' (chunked local attention, mixer "local_chunks"): both split the sequence into chunks and let each
chunk of queries attend itself and the chunks before it, dense inside; a sequence no longer than a chunk runs
standard (causal) attention instead.

Per token, with D the hidden width and H heads of width hd:
- LSH ('E'): one projection D -> H hd serves as both queries and keys (shared QK), one D -> H hd the values
  (``qkv_proj``); the output H hd -> D (``out_proj``). The hash: each head's key against ``lsh_num_hashes`` random
  rotations of w columns (w = num_buckets / 2, or the sum of its factors / 2; no learned weight), 2 H hd w per token
  and round (``lsh_hash``), for a sequence longer than a chunk (a shorter one is not hashed). Each round sorts the
  keys by bucket and splits them into chunks of C = ``lsh_chunk_length``; each query attends its chunk and the
  ``lsh_chunks_before`` chunks before it: C (1 + before) keys a round, whichever keys the hash brought together (the
  causal and self masks inside the chunks depend on the hash, so the count is the keys scored). ``core_attention``:
  2 H hd per pair for QK^T and as much for PV.
- Local ('O'): q, k, v and output projections as any GQA layer's (``maxflops.families.attention``); query i in chunk
  c attends the keys from chunk c - ``local_chunks_before`` = nb up to itself (``lookback``: with
  m = min(L, (nb + 1) C), m(m+1)/2 + nb C (L - m) + chunked(L - m, C) pairs in a sequence of L).

Training: the hash has no gradient (its buckets are integers), so it runs forward only; Reformer's reversible layers
(``remat_policy='reversible'``) recompute every matmul of a layer's forward in the backward pass but the hash, whose
buckets the forward keeps. Hardware: with ``attention_impl='dense'`` every chunk's whole square against its chunks
(ceil(L / C) C query slots, a partial last chunk padded; the full L x L square for a sequence of at most one chunk),
as transformers runs it; otherwise the attended pairs. Decode (a K/V cache per token; transformers instead caches
each layer's input and projects the keys and values it reads again at every step): the new token hashes its key and
attends C (1 + before) keys a round (every cached key while the sequence fits one chunk); a local layer its
look-back. The LSH cache also holds each token's buckets (one per head and round), all of them read to sort.
"""

from __future__ import annotations

import math

from ... import masks
from ...components import ATTENTION_KIND, Component
from ...fields import field_of
from .. import attention
from ..base import Family, Priced, ffn_width

LSH, LOCAL = "lsh", "local_chunks"
LETTERS = {"E": LSH, "O": LOCAL}

COMPONENTS = (Component("lsh_hash", ATTENTION_KIND, 115, "LSH attention's hash: each head's keys against random "
                                                          "rotations (no learned weight), forward only"),)


# --- the chunks ---------------------------------------------------------------------------------------------------

def lookback(L, C, nb):
    """Attended pairs of a chunked local layer that looks ``nb`` chunks back (Reformer's local attention, causal):
    query i in chunk c = i // C sees keys from (c - nb) C (0 at least) up to i, min(i + 1, nb C + i mod C + 1) of
    them. With m = min(L, (nb + 1) C): causal(m) + nb C (L - m) + chunked(L - m, C) (the rest starts on a chunk)."""
    m = masks._minimum(L, (nb + 1) * C)
    return masks.causal(m) + nb * C * (L - m) + masks.chunked(L - m, C)


def new_token_lookback(kv, C, nb):
    """Keys the token at position ``kv`` attends in a chunked local layer looking ``nb`` chunks back."""
    return masks._minimum(kv + 1, nb * C + kv % C + 1)


def chunk_slots(L, C):
    """Query slots of a sequence run in whole chunks of C (a partial last chunk padded): ceil(L / C) C."""
    return -(-L // C) * C


def where(cond, a, b):
    """``a`` where ``cond`` holds, else ``b``: a Python branch for one length, numpy's for an array of them."""
    if isinstance(cond, bool):
        return a if cond else b
    import numpy as np

    return np.where(cond, a, b)


def hash_width(c, L):
    """Columns of the random rotations per round and head at sequence length L (transformers' rotation_size / 2):
    ``lsh_hash_width``, or where it is 0 transformers' rule for an unset num_buckets, from the length: 2^p buckets
    with p = floor(log2(2 floor(L / C))), factorized in two (2^(p // 2) and 2^(p - p // 2)) above
    2 max(isqrt(lsh_max_positions // C), C)."""
    w = c["lsh_hash_width"]
    if w:
        return w
    C = c["lsh_chunk_length"]
    limit = 2 * max(math.isqrt(c["lsh_max_positions"] // C), C)

    def rule(n: int) -> int:
        p = (2 * (int(n) // C)).bit_length() - 1
        if p < 1:  # (a sequence of at most one chunk is not hashed)
            return 0
        if 2 ** p > limit:
            return (2 ** (p // 2) + 2 ** (p - p // 2)) // 2
        return 2 ** p // 2

    if isinstance(L, int):
        return rule(L)
    import numpy as np

    return np.frompyfunc(rule, 1, 1)(L).astype(L.dtype)


def lsh_pairs(c, L, dense: bool):
    """(Query, key) pairs of an LSH layer over a sequence of length L: a causal sequence of at most one chunk (the
    full square when ``dense``), else every round's queries against C (1 + before) keys (``dense``: every query slot
    of the chunks, the last one padded)."""
    C, nb, n = c["lsh_chunk_length"], c["lsh_chunks_before"], c["lsh_num_hashes"]
    ragged = (L > C) & (L % C != 0)
    if ragged if isinstance(ragged, bool) else ragged.any():
        bad = L if isinstance(L, int) else int(L[ragged][0])
        raise ValueError(f"config key 'max_target_length' (or a document of segment_lengths): a sequence of {bad} "
                         f"tokens through LSH ('E') layers is longer than lsh_chunk_length={C} and not a whole number "
                         "of chunks (transformers pads it to whole chunks in prefill and refuses it in training): give "
                         "lengths of at most one chunk or whole chunks")
    short = L * L if dense else masks.causal(L)
    return where(L <= C, short, n * (chunk_slots(L, C) if dense else L) * C * (1 + nb))


def local_pairs(c, L, dense: bool):
    """Pairs of a chunked local layer: its look-back (``dense``: each chunk's square against its chunks, the full
    square for a sequence of at most one chunk)."""
    C, nb = c["local_chunk_length"], c["local_chunks_before"]
    if not dense:
        return lookback(L, C, nb)
    return where(L <= C, L * L, chunk_slots(L, C) * C * (1 + nb))


def new_token_keys(kind, c, kv):
    """Keys the token at position ``kv`` attends (every round's, for LSH)."""
    if kind.mixer == LOCAL:
        return new_token_lookback(kv, c["local_chunk_length"], c["local_chunks_before"])
    C, nb, n = c["lsh_chunk_length"], c["lsh_chunks_before"], c["lsh_num_hashes"]
    return where(kv + 1 <= C, kv + 1, n * C * (1 + nb))


def _hashed(c, seqs, decode: bool):
    """Hash columns of the step, summed over its tokens: each token of a sequence longer than a chunk, every round
    (decode: the new token once its sequence has outgrown a chunk; on the step it outgrows one, every token of it,
    since the cached ones ran unhashed)."""
    C, n = c["lsh_chunk_length"], c["lsh_num_hashes"]
    if decode:
        return seqs.sum(lambda kv: where(kv + 1 > C, n * hash_width(c, kv + 1) * where(kv > C, 1, kv + 1),
                                               0))
    return seqs.sum(lambda L: where(L > C, n * L * hash_width(c, L), 0))


# --- pricing ------------------------------------------------------------------------------------------------------

def _price(p: Priced, kind, c, seqs, decode, tokens, hardware: bool) -> None:
    dense = hardware and c["attention_impl"] == "dense"
    if kind.mixer == LOCAL:
        h, d_qk, d_v = attention.project(p, kind, c, tokens, hardware)
        attended = seqs.sum(lambda kv: new_token_keys(kind, c, kv)) if decode else \
            seqs.sum(lambda L: local_pairs(c, L, dense))
        attention.core(p, h, d_qk, d_v, attended)
        return
    D, H, hd = c["emb_dim"], c["num_query_heads"], c["head_dim"]
    p.out["qkv_proj"] = 2 * 2 * D * H * hd * tokens  # the shared query-key projection and the values
    p.out["out_proj"] = p.closing["out_proj"] = 2 * H * hd * ffn_width(c) * tokens
    attended = seqs.sum(lambda kv: new_token_keys(kind, c, kv)) if decode else \
        seqs.sum(lambda L: lsh_pairs(c, L, dense))
    attention.core(p, H, hd, hd, attended)
    p.out["lsh_hash"] = 2 * H * hd * _hashed(c, seqs, decode)
    p.forward_only.add("lsh_hash")  # integer buckets: no gradient
    if hardware and c["remat_policy"] == "reversible":  # the forward's buckets are kept for the backward pass
        p.tail["lsh_hash"] = p.out["lsh_hash"]


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _price(p, kind, c, seqs, decode, tokens, hardware=False)


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _price(p, kind, c, seqs, decode, tokens, hardware=True)


def decode_cache(kind, c, seqs) -> dict:
    """The attended keys and values (read, every round's for LSH) and the new token's (written); for LSH every
    cached token's buckets (read: the new token's place in each round's sorted order) and the new one's (written;
    on the step the sequence outgrows a chunk, every token's)."""
    entry, write = attention.entry_bytes(kind, c)
    kb = c["kv_cache_bytes"]
    out = {"kv_read": seqs.sum(lambda kv: new_token_keys(kind, c, kv)) * entry * kb,
           "kv_write": seqs.count * write * kb}
    if kind.mixer == LSH:  # (a sequence of at most one chunk runs unhashed: no buckets, none cached)
        C = c["lsh_chunk_length"]
        buckets = c["num_query_heads"] * c["lsh_num_hashes"] * c["index_cache_bytes"]
        out["index_read"] = seqs.sum(lambda kv: where(kv > C, kv, 0)) * buckets
        out["index_write"] = seqs.sum(lambda kv: where(kv + 1 > C, where(kv > C, 1, kv + 1), 0)) * buckets
    return out


# --- the plan and the checks --------------------------------------------------------------------------------------

def mixer_of(letter: str, layer_number: int, c):
    mixer = LETTERS.get(letter)
    return (mixer, 0, False, 0) if mixer else None


def label(mixer_label: str, row) -> str:
    return mixer_label


def check(c, letters: str, err) -> None:
    used = set(letters) & set(LETTERS)
    if not used:
        return
    if c["attention_type"] != "global":
        err("attention_type", f"{c['attention_type']!r} with Reformer ('E', 'O') layers: their projections are "
                              "multi-head (GQA with one KV head per query head)")
    if not c["causal"]:
        err("causal", "False: Reformer's layers ('E', 'O') are modelled causal (transformers' language model "
                      "asserts is_decoder)")
    if c["attention_impl"] == "blocked":
        err("attention_impl", "'blocked' with Reformer ('E', 'O') layers: they compute whole chunks ('dense') or "
                              "the attended pairs ('ideal')")
    if "E" in used and c["num_kv_heads"] != c["num_query_heads"]:
        err("num_kv_heads", f"{c['num_kv_heads']} with LSH ('E') layers: their queries are their keys, one per "
                            f"query head (num_query_heads={c['num_query_heads']})")
    for key in ("value_head_dim", "attention_output_gate", "attention_head_gate", "attention_sink_proj",
                "global_head_dim", "kv_conv_kernel", "cca_depthwise_kernel", "dynamic_mask_keys",
                "attention_differential", "attention_router_experts", "num_kv_shared_layers"):
        if c[key]:
            err(key, f"{c[key]!r} with Reformer ('E', 'O') layers: they are modelled as Reformer's plain multi-head "
                     "attention")


SCHEMA = {
    "lsh_chunk_length": field_of(64, int, "LSH attention ('E' layers, Reformer's lsh_attn_chunk_length): the chunk C "
                                          "the hash-sorted keys are split into; a sequence of at most C tokens runs "
                                          "standard causal attention.", minimum=1),
    "lsh_chunks_before": field_of(1, int, "LSH attention: the chunks before its own each query attends "
                                          "(lsh_num_chunks_before).", minimum=0),
    "lsh_num_hashes": field_of(1, int, "LSH attention: hashing rounds, each attending its own sorted chunks "
                                       "(num_hashes).", minimum=1),
    "lsh_hash_width": field_of(0, int, "LSH attention: the hash's random-rotation columns per round and head "
                                       "(num_buckets / 2, or the sum of its factors / 2); 0: transformers' rule for "
                                       "an unset num_buckets, from each sequence's length.", minimum=0),
    "lsh_max_positions": field_of(4096, int, "LSH attention with lsh_hash_width 0: max_position_embeddings, which "
                                             "sets where transformers' rule factorizes the buckets.", minimum=1),
    "local_chunk_length": field_of(64, int, "Chunked local attention ('O' layers, Reformer's "
                                            "local_attn_chunk_length): the chunk C; a sequence of at most C tokens "
                                            "runs standard causal attention.", minimum=1),
    "local_chunks_before": field_of(1, int, "Chunked local attention: the chunks before its own each query attends "
                                            "(local_num_chunks_before).", minimum=0),
}


FAMILY = Family(
    name="reformer",
    letters={"E": "LSH attention: hash-sorted chunks, shared queries and keys (Reformer)",
             "O": "chunked local attention looking back local_chunks_before chunks (Reformer)"},
    mixers={LSH: "LSH attention", LOCAL: "chunked local attention"},
    components=COMPONENTS,
    schema=SCHEMA,
    mixer_of=mixer_of,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    label=label,
    check=check,
    conventions=("exact",),
)
