"""DeepSeek-V4's compressed attention: every layer of an ``attention_type='compressed'`` model. Each layer attends a
sliding window of ``sliding_window_size`` keys; a CSA layer ('S') also attends the top-k of the blocks of
``csa_compress_ratio`` tokens its indexer picks, an HCA layer ('H') every block of ``hca_compress_ratio`` tokens;
'L' (and 'G') layers attend the window (or every key) alone. One vector per cached entry is both key and value;
q comes through a latent, the output through ``o_groups`` low-rank groups.

Model FLOPs: the projections, each block's compressor, 2 * heads * head_dim * 2 per attended key (window keys and
blocks under the conventions: ``compressed_pairs``), and a CSA layer's indexer (its own compressor, the q/k/head
projections, the scoring over every visible block). Hardware FLOPs: the window under ``attention_impl``, the blocks
under ``dsa_impl`` (top-k) or ``attention_impl`` (every block), the indexer's skip of short sequences
(``indexer_skip_short``) and its KL loss's detached target.

Its closed forms are here: the projections, the compressor, the indexer's projections, the blocks a sequence forms and
the tiles a kernel computes over them, and MaxText's and Megatron-Bridge's block rules; the exact (query, block)
counts it shares with QSA are ``maxflops.masks``' ``compressed_visible`` and ``compressed_topk``.
"""

from __future__ import annotations

from fractions import Fraction

from ... import masks, terms
from ...components import WEIGHT, Component
from ...fields import field_of
from .. import attention, dsa
from ..attention import WINDOW
from ...sequences import priced_tokens, row_length
from ..base import Family, Priced, ffn_width

CSA, HCA = "csa", "hca"
COMPRESSED = frozenset({CSA, HCA})

COMPONENTS = (Component("compressor", WEIGHT, 80, "compressed attention: each block's compressor"),)


# --- closed forms: the projections, the compressor, the indexer's terms, blocks and tiles, the peers' rules ---

def compressed_qkv(d: int, n_q: int, head_dim: int, q_lora: int, n_kv: int) -> int:
    """DeepSeek-V4 attention projections: q D -> q_lora -> H*hd (D -> H*hd without q LoRA), and one projection
    D -> n_kv*hd whose output is both the keys and the values."""
    q = 2 * d * q_lora + 2 * q_lora * n_q * head_dim if q_lora else 2 * d * n_q * head_dim
    return q + 2 * d * n_kv * head_dim


def grouped_low_rank_out(n_q: int, head_dim: int, groups: int, rank: int, d: int) -> int:
    """Grouped low-rank output: the H*hd attention output in G groups of H*hd/G, each projected to ``rank``
    (G * (H*hd/G) * rank = H*hd*rank multiply-adds), then G*rank -> D."""
    return 2 * n_q * head_dim * rank + 2 * groups * rank * d


def compressor(d: int, width: int, overlap: bool) -> int:
    """A compressor's kv and gate projections per token, D -> width each (2*width with overlapping blocks, whose
    two halves feed the block and the next one); the gated pooling inside a block is elementwise."""
    w = 2 * width if overlap else width
    return 2 * (2 * d * w)


def compressed_indexer_proj(d: int, q_lora: int, n_heads: int, head_dim: int) -> int:
    """A compressed layer's indexer per token: q from the q latent (D without q LoRA) to n_heads*head_dim, head
    weights D -> n_heads, and its own overlapping compressor of width head_dim for the block keys."""
    q_in = q_lora if q_lora else d
    return 2 * q_in * n_heads * head_dim + 2 * d * n_heads + compressor(d, head_dim, True)


def compressed_blocks(L, m):
    """Blocks a length-L sequence forms (the partial last one is not formed)."""
    return L // m


def blocked_compressed(L, m, block_q: int, block_kv: int):
    """Compressed keys a tiled kernel computes for a sequence of length L (an int or an int64 array): the L // m
    blocks form their own key axis, tiled by block_kv; row block [a0, a1) touches the tiles up to its last
    visible block, (a1 // m) - 1 (a top-k kernel with a dynamic mask is assumed to touch them all)."""
    def cols(a0, a1, Lr):
        return masks._minimum(-(-(a1 // m) // block_kv) * block_kv, Lr // m)

    def moves(a0, a1, L):
        return False, -(-(a1 // m) // block_kv) * block_kv < L // m

    return masks._tiled(L, block_q, m * block_kv, m, cols, moves)


def compressed_maxtext(seqs, m):
    """MaxText's DeepSeek-V4 visible blocks: half the L x L/m rectangle, L^2/(2m)."""
    return masks._ratio(seqs.sum(lambda L: L * L), 2 * m)


def compressed_topk_maxtext(seqs, m, K):
    """MaxText's DeepSeek-V4 top-k blocks: L^2/m * (k/N - (k/N)^2/2) with N = L // m and k = min(K, N) (0 for a
    sequence shorter than m, where MaxText would divide by zero)."""
    def one(L):
        N = L // m
        k = min(K, N)
        return Fraction(L * L * k * (2 * N - k), 2 * m * N * N) if N else Fraction(0)

    return seqs.sum_scalar(one)


def csa_topk_bridge(seqs, m, K, tokens, length):
    """Megatron-Bridge's DeepSeek-V4 top-k blocks over ``tokens`` priced: every token attends k - m k^2/(2S) blocks at
    the configured row length S = ``length`` (k = min(K, S // m)), the mean of a causal ramp of S/m blocks capped at
    k, whatever the documents."""
    return seqs.whole(_csa_topk_bridge, m, K, tokens, length)


def _csa_topk_bridge(seqs, m, K, tokens, length):
    k = min(K, length // m)
    return tokens * k - masks._ratio(m * k * k * tokens, 2 * length)


def compressed_indexer_bridge(seqs, m):
    """Megatron-Bridge's DeepSeek-V4 indexer: the full L x L/m rectangle of (query, block) scores, sum L^2 / m."""
    return masks._ratio(seqs.sum(lambda L: L * L), m)


# --- (query, block) pairs -------------------------------------------------------------------------------------

def blocks(seqs, m: int, K: int, c, decode: bool, indexer: bool = False):
    """(query, compressed block) pairs attended (K > 0: at most K per query) or, for the indexer, scored, under
    the config's conventions."""
    if decode:
        return seqs.sum(lambda kv: masks.new_token_blocks(kv, m, K))
    if indexer and c["indexer_pairs"] == "bridge":
        return compressed_indexer_bridge(seqs, m)
    if not indexer and c["compressed_pairs"] == "bridge":
        if K:
            return csa_topk_bridge(seqs, m, K, priced_tokens(seqs, c)[0], row_length(seqs, c))
        return compressed_maxtext(seqs, m)
    if indexer and c["indexer_pairs"] == "half_square" or not indexer and c["compressed_pairs"] == "maxtext":
        return compressed_topk_maxtext(seqs, m, K) if K else compressed_maxtext(seqs, m)
    return exact_blocks(seqs, m, K)


def hardware_blocks(seqs, m: int, K: int, c, decode: bool):
    """(query, compressed block) pairs the kernels compute. Top-k blocks (K > 0) follow ``dsa_impl``: 'dense'
    every formed block, masked; 'gather_k' min(blocks, K) gathered for every query; 'ideal' the top-k. Every
    visible block (K = 0, also the indexer's scoring) follows ``attention_impl``: 'dense' every formed block,
    future ones included; 'blocked' the tiles up to the last visible block; 'ideal' the visible ones."""
    impl = c["dsa_impl"] if K else c["attention_impl"]
    if decode:  # every cached block is visible; dense and blocked read them all (tiles stop at the last one)
        return seqs.sum(lambda kv: masks.new_token_blocks(kv, m, 0 if impl in ("dense", "blocked") else K))
    if impl == "dense":
        return seqs.sum(lambda L: L * compressed_blocks(L, m))
    if impl == "gather_k":
        return seqs.sum(lambda L: L * masks._minimum(compressed_blocks(L, m), K))
    if impl == "blocked":
        return seqs.sum(lambda L: blocked_compressed(L, m, c["attention_block_q"], c["attention_block_kv"]))
    return exact_blocks(seqs, m, K)


def exact_blocks(seqs, m: int, K: int):
    """The exact (query, block) pairs: each query's visible blocks, at most K of them when K > 0."""
    if K:
        return seqs.sum(lambda L: masks.compressed_topk(L, m, K))
    return seqs.sum(lambda L: masks.compressed_visible(L, m))


# --- a layer ----------------------------------------------------------------------------------------------------

def project(p: Priced, kind, c, tokens, norms: bool = False) -> tuple:
    """q through its latent, one K=V projection (none on a KV-shared layer), the (grouped low-rank) output; with
    ``norms`` the q latent's and the KV entry's RMS norms (one multiply-add per element, a convention's)."""
    d, h, d_out = c["emb_dim"], c["num_query_heads"], ffn_width(c)
    hd = c["head_dim"]
    n_kv = 0 if kind.kv_shared else c["num_kv_heads"]
    p.out["qkv_proj"] = (compressed_qkv(d, h, hd, c["q_lora_rank"], n_kv)
                         + (2 * (c["q_lora_rank"] + n_kv * hd) if norms else 0)) * tokens
    if c["o_groups"]:
        p.out["out_proj"] = grouped_low_rank_out(h, hd, c["o_groups"], c["o_lora_rank"], d_out) * tokens
        p.closing["out_proj"] = 2 * c["o_groups"] * c["o_lora_rank"] * d_out * tokens  # wo_b, after the groups
    else:
        p.out["out_proj"] = p.closing["out_proj"] = terms.attention_out(h, hd, d_out) * tokens
    return h, hd, hd


def _indexer_run(kind, c, seqs, decode, skip: bool):
    """The sequences a CSA layer's indexer runs on (``skip``: only those with more blocks than the top-k), and its
    tokens; (None, 0) if none."""
    K, m = kind.span, kind.ratio
    run = seqs.longer_than((K + 1) * m - 1) if skip and not decode else seqs
    if run is None:
        return None, 0
    return run, run.count if decode else run.tokens


def _indexer_proj(p: Priced, c, idx_tokens) -> None:
    n, hd_i = c["index_n_heads"], c["index_head_dim"]
    name = "indexer_proj_attn" if c["indexer_proj_split"] == "attention" else "indexer_proj"
    p.out[name] = compressed_indexer_proj(c["emb_dim"], c["q_lora_rank"], n, hd_i) * idx_tokens


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    """A compressed layer's model FLOPs: its projections, then for CSA and HCA its compressor, its indexer (CSA, where
    ``indexer_flops``), and the keys each query attends under the conventions (the sliding window's plus the
    compressed blocks'); the core over them."""
    h, d_qk, d_v = project(p, kind, c, tokens, c["compressed_norm_flops"])
    if kind.mixer not in COMPRESSED:  # a window-only (or global) layer
        attention.core(p, h, d_qk, d_v, window_pairs(kind.mixer, kind.span, seqs, c, decode, tokens))
        return
    m, K = kind.ratio, kind.span
    p.out["compressor"] = compressor(c["emb_dim"], c["head_dim"], kind.mixer == CSA) * tokens
    if kind.computes_index and c["indexer_flops"]:
        run, idx_tokens = _indexer_run(kind, c, seqs, decode, c["indexer_skip_within_topk"])
        _indexer_proj(p, c, tokens if run is seqs else idx_tokens)  # (every sequence runs it: the priced tokens)
        scored = 0 if run is None else blocks(run, m, 0, c, decode, indexer=True)
        dsa.indexer_score(p, c, c["index_n_heads"], c["index_head_dim"], scored, hardware=False)
    window = window_pairs(WINDOW, c["sliding_window_size"], seqs, c, decode, tokens)
    attention.core(p, h, d_qk, d_v, window + blocks(seqs, m, K, c, decode))


def window_pairs(mixer: str, span: int, seqs, c, decode: bool, tokens):
    """A compressed model's window (or global) pairs under the conventions: Megatron-Bridge's DeepSeek-V4 rule
    (``compressed_pairs='bridge'``) prices every priced token at the whole window, from the first token on."""
    if c["compressed_pairs"] == "bridge" and mixer == WINDOW and not decode:
        return tokens * span
    return attention.pairs(mixer, span, seqs, c, decode)


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    """What the kernels run: the window under ``attention_impl``, the blocks under ``dsa_impl`` (top-k) or
    ``attention_impl`` (``hardware_blocks``), a CSA layer's indexer always (skipping short sequences under
    ``indexer_skip_short``) and, training with its loss, the main scores over its pairs (its KL target). Where no
    sequence of the step forms a block, nothing reads the compressor (nor a CSA layer's indexer): ``dead_compressor``
    says whether the program drops it or runs it forward only."""
    h, d_qk, d_v = project(p, kind, c, tokens)
    if kind.mixer not in COMPRESSED:
        attention.core(p, h, d_qk, d_v, attention.impl_pairs(kind.mixer, kind.span, seqs, c, decode))
        return
    m, K = kind.ratio, kind.span
    window = attention.impl_pairs(WINDOW, c["sliding_window_size"], seqs, c, decode)
    if not decode and seqs.longer_than(m - 1) is None:  # no sequence forms a block: nothing reads the compressor
        if c["dead_compressor"] == "eliminated":
            attention.core(p, h, d_qk, d_v, window)
            return
        p.forward_only.update(("compressor", "indexer_proj", "indexer_proj_attn", "indexer_score", "indexer_kl"))
    p.out["compressor"] = compressor(c["emb_dim"], c["head_dim"], kind.mixer == CSA) * tokens
    if kind.computes_index:
        run, idx_tokens = _indexer_run(kind, c, seqs, decode, c["indexer_skip_short"])
        scored = 0 if run is None else hardware_blocks(run, m, 0, c, decode)
        if c["mode"] == "train" and c["indexer_loss_scaling_factor"] > 0:
            p.out["indexer_kl"] = terms.attention_per_pair(h, c["head_dim"], 0) * scored  # detached target
        _indexer_proj(p, c, idx_tokens)
        dsa.indexer_score(p, c, c["index_n_heads"], c["index_head_dim"], scored, hardware=True)
    attention.core(p, h, d_qk, d_v, window + hardware_blocks(seqs, m, K, c, decode))


def decode_cache(kind, c, seqs) -> dict:
    """The window's entries and the attended blocks read, the new entry (and a block closing at this token)
    written; a CSA layer's indexer reads every cached block's index key and writes a closing block's."""
    n = c["num_kv_heads"] * c["head_dim"]
    entry, write, kb = n, 0 if kind.kv_shared else n, c["kv_cache_bytes"]
    if kind.mixer not in COMPRESSED:
        return {"kv_read": seqs.sum(lambda kv: masks.new_token_keys(kind.mixer, kind.span, kv)) * entry * kb,
                "kv_write": seqs.count * write * kb}
    m, W = kind.ratio, c["sliding_window_size"]
    window = seqs.sum(lambda kv: masks.new_token_keys(WINDOW, W, kv))
    attended = seqs.sum(lambda kv: masks.new_token_blocks(kv, m, kind.span))
    completes = seqs.sum(lambda kv: (kv + 1) % m == 0)  # a block closes at this token
    out = {"kv_read": (window + attended) * entry * kb, "kv_write": (seqs.count + completes) * write * kb}
    if kind.computes_index and kind.mixer == CSA:
        hd_i, ib = c["index_head_dim"], c["index_cache_bytes"]
        out["index_read"] = seqs.sum(lambda kv: masks.new_token_blocks(kv, m, 0)) * hd_i * ib
        out["index_write"] = completes * hd_i * ib
    return out


def mixer_of(letter: str, layer_number: int, c):
    if letter == "S":
        indexed = c["use_sparse_indexer"]
        return CSA, c["index_topk"] if indexed else 0, indexed, c["csa_compress_ratio"]
    if letter == "H":
        return HCA, 0, False, c["hca_compress_ratio"]
    return None


# The letters a model of attention_type='compressed' is built of (DeepSeek-V4: its own two and plain attention's
# global and window layers)
BUILT_WITH = "GLSH"


def check(c, letters: str, err) -> None:
    compressed = c["attention_type"] == "compressed"
    if ("S" in letters or "H" in letters) and not compressed:
        err("attention_layer_pattern", f"{letters!r}: 'S' and 'H' layers are compressed attention; set "
                                       f"attention_type='compressed' (got {c['attention_type']!r})")
    if compressed:
        if not c["causal"]:
            err("causal", "False: compressed attention (attention_type='compressed') is causal")
        for ch in letters:
            if ch not in BUILT_WITH:
                err("attention_layer_pattern", f"{letters!r}: {ch!r} layers are not built with "
                                               f"attention_type='compressed' (letters: {', '.join(BUILT_WITH)})")
        for key in ("global_head_dim", "global_num_kv_heads", "num_kv_shared_layers"):
            if c[key]:
                err(key, f"{c[key]} is not modelled with attention_type='compressed'")
        if c["share_kv_projections"]:
            err("share_kv_projections", "True: compressed attention's keys are its values already")
    if bool(c["o_groups"]) != bool(c["o_lora_rank"]):
        err("o_groups" if not c["o_groups"] else "o_lora_rank",
            f"o_groups={c['o_groups']} and o_lora_rank={c['o_lora_rank']}: set both (a grouped low-rank output) or "
            "neither")
    if c["o_groups"]:
        if not compressed:
            err("o_groups", f"{c['o_groups']}: the grouped low-rank output belongs to attention_type='compressed'")
        width = c["num_query_heads"] * c["head_dim"]
        if width % c["o_groups"]:
            err("o_groups", f"{c['o_groups']} does not divide num_query_heads x head_dim = {width}")
    windowed = "".join(ch for ch in "SH" if ch in letters)
    if windowed and c["sliding_window_size"] < 1:
        err("sliding_window_size", f"must be >= 1 when attention_layer_pattern={letters!r} has "
                                   f"{', '.join(map(repr, windowed))} layers, got {c['sliding_window_size']}")


# --- its config keys (its section of maxflops.schema.SCHEMA) -------------------------------------------------

SCHEMA = {
    "o_groups": field_of(0, int, "Compressed attention: grouped low-rank output. The H*head_dim attention output is "
                           "split into G groups, each projected to o_lora_rank (H*head_dim*o_lora_rank per token in "
                           "all), then G*o_lora_rank -> D. 0 means the plain H*head_dim -> D projection.",
                   minimum=0),
    "o_lora_rank": field_of(0, int, "Compressed attention: the rank of each output group (see o_groups).", minimum=0),
    "csa_compress_ratio": field_of(4, int, "'S' layers: each compressed block pools m tokens, from a window of 2m "
                                     "overlapping the previous block (kv and gate projections D -> 2*head_dim). "
                                     "Block b (tokens up to (b+1)m-1) is visible to query t iff (b+1)m-1 <= t; a "
                                     "partial last block is not formed. With use_sparse_indexer an indexer (its "
                                     "own overlapping compressor of index_head_dim) scores every visible block "
                                     "and the query attends the index_topk best; without it every visible "
                                     "block.", minimum=1),
    "hca_compress_ratio": field_of(128, int, "'H' layers: blocks of m tokens, not overlapping (kv and gate projections "
                                       "D -> head_dim); every visible block is attended (same visibility as "
                                       "'S').", minimum=1),
    "compressed_pairs": field_of("exact", str, "(query, compressed block) pairs 'S' and 'H' layers attend: 'exact' (see "
                                         "csa_compress_ratio), or 'maxtext' (MaxText's DeepSeek-V4 function: "
                                         "L^2/(2m) visible blocks; top-k L^2/m * (k/N - (k/N)^2/2) with N = L // m, "
                                         "k = min(index_topk, N)), or 'bridge' (Megatron-Bridge's DeepSeek-V4 "
                                         "rule: each priced token attends the whole window, every layer, and "
                                         "k - m k^2/(2S) top-k blocks at the configured length S, k = min(index_topk, "
                                         "S // m); every visible block as 'maxtext'). The blocks the indexer scores "
                                         "follow indexer_pairs ('bridge': the L x L/m rectangle).",
                           choices=("exact", "maxtext", "bridge")),
    "compressed_norm_flops": field_of(False, bool, "Model FLOPs: count the RMS norms of the q latent and the KV entry of a "
                                             "compressed layer, 2 x (q_lora_rank + KV width) per token "
                                             "(Megatron-Bridge's DeepSeek-V4 rule)."),
    "dead_compressor": field_of("eliminated", str, "Hardware: a compressed layer's compressor (and a CSA layer's indexer) "
                                             "where no sequence of the step reaches its ratio, so no block forms and "
                                             "nothing reads it: 'eliminated' (a compiled program drops it, forward and "
                                             "backward: XLA) or 'forward' (an eager program projects every token and, "
                                             "training, runs no backward: transformers' DeepSeek-V4 modules, whose "
                                             "empty result is a new zero tensor).",
                          choices=("eliminated", "forward")),
    "indexer_proj_split": field_of("weights", str, "Where the indexer's projections count: 'weights' (learnable-weight "
                                             "FLOPs, as component indexer_proj) or 'attention' (component "
                                             "indexer_proj_attn: MaxText's DeepSeek-V4 function).",
                             choices=("weights", "attention")),
}


FAMILY = Family(
    name="compressed",
    letters={"S": "compressed sparse attention (window + the top-k blocks an indexer picks)",
             "H": "heavily compressed attention (window + every block)"},
    mixers={CSA: "compressed sparse (CSA)", HCA: "heavily compressed (HCA)"},
    components=COMPONENTS,
    schema=SCHEMA,
    mixer_of=mixer_of,
    plan_keys=("use_sparse_indexer", "index_topk", "csa_compress_ratio", "hca_compress_ratio"),
    projection="compressed",
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    check=check,
    claims=10,
)
