"""DeepSeek sparse attention (DSA): MLA attention where query i attends its top-k keys, min(i+1, K), picked by an
indexer that scores every earlier key; 'G' layers of an MLA model with ``use_sparse_indexer``. With GLM-5's index
reuse a layer computes its own top-k iff the reuse rule says so (``computes_index``); the others reuse it.

Model FLOPs: MLA's projections (``maxflops.families.attention``), 2 * heads * (d_qk + d_v) per attended pair
under the convention's DSA rule (``pairs``), and on index-computing layers the indexer: its projections
(q from the q latent, k and the head weights from the input) per token and 2 * heads * (head_dim + 1) per scored
pair (``indexer_score``, ``indexer_head_reduction``). Hardware FLOPs: the pairs ``dsa_impl`` computes, the indexer's
pairs under ``indexer_impl`` and ``indexer_skip_short``, and the KL loss's detached target (``indexer_kl``).

The indexer is shared with the compressed family's CSA layers (``indexer_score``).
"""

from __future__ import annotations

from .. import masks, terms
from ..components import ATTENTION_KIND, WEIGHT, Component
from . import attention
from .attention import GLOBAL
from .base import Family, Priced

DSA = "dsa"

COMPONENTS = (
    Component("indexer_proj", WEIGHT, 100, "the indexer's projections (q, k, head weights)"),
    Component("indexer_proj_attn", ATTENTION_KIND, 110, "the compressed indexer's projections, counted as attention "
                                                        "(indexer_proj_split='attention', MaxText's DeepSeek-V4)"),
    Component("indexer_score", ATTENTION_KIND, 120, "the indexer's scoring: q.k per head and the weighted sum"),
    Component("indexer_kl", ATTENTION_KIND, 130, "hardware: the main scores over the indexer's pairs (its KL "
                                                 "loss's detached target)"),
)


def computes_index(layer_number: int, freq: int, offset: int) -> bool:
    """GLM-5 index reuse: layer ``layer_number`` (1-based) computes its own top-k iff
    max(layer_number - max(offset, 1), 0) % freq == 0. With freq 1 every layer does."""
    return max(layer_number - max(offset, 1), 0) % freq == 0


# --- pairs ----------------------------------------------------------------------------------------------------

def pairs(span: int, seqs, c, decode: bool):
    """Attended (query, key) pairs of a top-``span`` layer under the config's conventions."""
    if decode:
        return seqs.sum(lambda kv: masks.new_token_keys(DSA, span, kv))
    if c["dsa_pairs"] == "global":
        return attention.pairs(GLOBAL, 0, seqs, c, decode)
    if c["dsa_pairs"] == "maxtext":
        return masks.band_maxtext(seqs, span)
    if c["dsa_pairs"] == "megatron":
        return masks.dsa_megatron(seqs, span)
    if c["dsa_pairs"] == "megatron_floor":
        return masks.dsa_megatron_floor(seqs, span)
    return seqs.exact_pairs(DSA, span)


def hardware_pairs(span: int, seqs, c, decode: bool):
    """Pairs the kernels compute under ``dsa_impl``."""
    if c["dsa_impl"] == "dense":  # the full square with the top-k mask
        return attention.dense_pairs(seqs, decode)
    if c["dsa_impl"] == "blocked":  # a dynamic-mask tile kernel: every causally visible tile (an upper bound)
        bq, bkv = c["attention_block_q"], c["attention_block_kv"]
        if decode:
            return seqs.sum_scalar(lambda kv: masks.blocked_decode(GLOBAL, 0, kv, bkv))
        return seqs.sum(lambda L: masks.blocked(GLOBAL, 0, L, bq, bkv))
    if c["dsa_impl"] == "gather_k":  # exactly K keys gathered per query (all visible ones when fewer)
        if decode:
            return seqs.sum(lambda kv: masks.new_token_keys(DSA, span, kv))
        return seqs.sum(lambda L: masks.gathered(L, span))
    return seqs.sum(lambda kv: masks.new_token_keys(DSA, span, kv)) if decode else seqs.exact_pairs(DSA, span)


# --- the indexer ----------------------------------------------------------------------------------------------

def indexer_run(kind, seqs, c, decode: bool):
    """Model FLOPs: (tokens that run the indexer, scored pairs) under the conventions."""
    if decode:  # the new token scores every cached key and itself
        return seqs.count, seqs.sum(lambda kv: kv + 1)
    if c["indexer_skip_within_topk"]:  # only sequences longer than K run the indexer
        seqs = seqs.longer_than(kind.span)
        if seqs is None:
            return 0, 0
    if c["indexer_pairs"] == "half_square":
        return seqs.tokens, masks.half_square(seqs)
    return seqs.tokens, seqs.exact_pairs(GLOBAL, 0)


def hardware_indexer_run(p: Priced, kind, c, seqs, decode, kl_per_pair):
    """(tokens that run the indexer, pairs it scores) as a program runs it: the pairs its kernel computes, none
    for a sequence that fits in the top-k when the program skips those; with a KL loss in training, the main
    attention's scores over the same pairs (the loss's detached target) as ``indexer_kl``."""
    run = seqs.longer_than(kind.span) if c["indexer_skip_short"] and not decode else seqs
    idx_tokens = 0 if run is None else (run.count if decode else run.tokens)
    if run is None:
        scored = 0
    elif c["indexer_impl"] == "dense":  # plain einsums over the full square, whatever kernel runs the attention
        scored = attention.dense_pairs(run, decode)
    else:
        scored = attention.impl_pairs(GLOBAL, 0, run, c, decode)
    if c["mode"] == "train" and c["indexer_loss_scaling_factor"] > 0:
        p.out["indexer_kl"] = kl_per_pair * scored
    return idx_tokens, scored


def indexer_score(p: Priced, c, n: int, hd: int, scored, hardware: bool) -> None:
    """The indexer's scoring over ``scored`` pairs: q.k per head, and the weighted sum over heads where it is counted
    (model FLOPs: indexer_head_reduction; hardware: weighted_sum_impl='einsum'). The head weighting's gradient
    with respect to the scores is an outer product (the 'single' part)."""
    reduction = c["indexer_head_reduction"] and not (hardware and c["weighted_sum_impl"] == "elementwise")
    p.out["indexer_score"] = terms.indexer_per_pair(n, hd, reduction) * scored
    if reduction:
        p.single["indexer_score"] = 2 * n * scored


def _indexer(p: Priced, c, idx_tokens, scored, hardware: bool) -> None:
    n, hd_i = c["index_n_heads"], c["index_head_dim"]
    p.out["indexer_proj"] = terms.indexer_proj(c["emb_dim"], c["q_lora_rank"], n, hd_i) * idx_tokens
    indexer_score(p, c, n, hd_i, scored, hardware)


# --- a layer ----------------------------------------------------------------------------------------------------

def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    h, d_qk, d_v = attention.project(p, kind, c, tokens, hardware=False)
    if c["dsa_core_form"] == "absorbed":  # a convention: the latent's widths per pair
        d_qk, d_v = c["kv_lora_rank"] + c["qk_rope_head_dim"], c["kv_lora_rank"]
    attention.core(p, h, d_qk, d_v, pairs(kind.span, seqs, c, decode))
    if kind.computes_index and c["indexer_flops"]:
        _indexer(p, c, *indexer_run(kind, seqs, c, decode), hardware=False)


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    h, d_qk, d_v = attention.project(p, kind, c, tokens, hardware=True)
    if c["dsa_core_form"] == "absorbed" and not c["mla_absorbed"]:
        d_qk, d_v = c["kv_lora_rank"] + c["qk_rope_head_dim"], c["kv_lora_rank"]
    attention.core(p, h, d_qk, d_v, hardware_pairs(kind.span, seqs, c, decode))
    if kind.computes_index:
        run = hardware_indexer_run(p, kind, c, seqs, decode, terms.attention_per_pair(h, d_qk, 0))
        _indexer(p, c, *run, hardware=True)


def decode_cache(kind, c, seqs) -> dict:
    """MLA's latent cache over the attended top-k entries; an index-computing layer also reads every cached index
    key (the new one too) and writes the new one."""
    out = attention.decode_cache(kind, c, seqs)
    if kind.computes_index:
        hd_i, ib = c["index_head_dim"], c["index_cache_bytes"]
        out["index_read"] = seqs.sum(lambda kv: kv + 1) * hd_i * ib
        out["index_write"] = seqs.count * hd_i * ib
    return out


def mixer_of(letter: str, layer_number: int, c):
    if letter != "G" or not c["causal"] or not (c["use_sparse_indexer"] and c["attention_type"] == "mla"):
        return None
    if c["indexer_every_layer"]:
        return DSA, c["index_topk"], True, 0
    return DSA, c["index_topk"], computes_index(layer_number, c["index_topk_freq"], c["index_skip_offset"]), 0


def label(mixer_label: str, row) -> str:
    return mixer_label + (" + indexer" if row.computes_index else " (reuses index)")


def check(c, letters: str, err) -> None:
    if c["use_sparse_indexer"] and c["attention_type"] == "global":
        err("use_sparse_indexer", "DSA sparse attention needs attention_type='mla' (or 'compressed', whose 'S' "
                                  "layers pick blocks with the indexer)")
    if c["indexer_stage"] == "warmup" and not c["use_sparse_indexer"]:
        err("indexer_stage", "'warmup' trains the DSA indexer alone; it needs use_sparse_indexer=True")
    if c["use_sparse_indexer"] and not c["causal"]:
        err("causal", "False: DSA sparse attention (use_sparse_indexer=True) is causal")


FAMILY = Family(
    name="dsa",
    letters={},  # 'G' layers of an MLA model with use_sparse_indexer (the attention family's letter)
    mixers={DSA: "DSA top-k"},
    components=COMPONENTS,
    keys=("use_sparse_indexer", "index_n_heads", "index_head_dim", "index_topk", "index_topk_freq",
          "index_skip_offset", "indexer_every_layer", "indexer_loss_scaling_factor", "indexer_stage", "dsa_impl",
          "indexer_impl", "indexer_skip_short", "dsa_pairs", "indexer_pairs", "indexer_head_reduction",
          "indexer_skip_within_topk", "indexer_flops", "dsa_core_form", "index_cache_bytes"),
    mixer_of=mixer_of,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    label=label,
    check=check,
    kernels=("indexer_scores", "topk_indices", "dsa_attention", "indexer_kl_loss"),
    flax_layer="_attention",
    bench_cases=("DSA indexer", "top-k selection", "DSA sparse attention", "MaxText DSA"),
)
