"""Qwen4-Exp's text model: Qwen4ExpTextConfig, modeling_qwen4_exp. Qwen3.5's gated delta nets ('linear_attention')
and gated attention, whose full layers ('indexed_attention'; a checkpoint's 'full_attention' is the same) are QSA
layers: an indexer scores mean-pooled blocks of indexer_compress_ratio keys and each query attends the
indexer_budget tokens of its best blocks and its tail (qsa_*); every layer a MoE with a gated shared expert;
hc_count residual streams under gated hyper-connections (hc_lowrank: mhc_lowrank, the streams kept, a hyper head
before the final norm); per-layer embeddings on ple_layer_ids (1-based, linear layers only): hashed n-gram embeddings
of ple_embed_dim projected to a key per stream and a value, a gate per stream and a dilated depthwise conv over the
streams: Engram's block (engram_*)."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType
from .qwen3_5_moe_text import DEFAULTS as QWEN3_5_MOE

# Qwen4ExpTextConfig
DEFAULTS = {**QWEN3_5_MOE, "tie_word_embeddings": False,
            "num_experts": 512, "num_experts_per_tok": 10, "hc_count": 4, "hc_lowrank": 320,
            "ple_conv_kernel_size": 4, "ngram_size": 3, "heads_per_ngram": 8}
_QSA = ("indexer_n_heads", "indexer_kv_heads", "indexer_head_dim", "indexer_budget", "indexer_compress_ratio")


def _layers(r: Reader, d, n: int):
    """Qwen4ExpTextConfig.__post_init__: layer_types ('full_attention' read as 'indexed_attention'), else an indexed
    layer every full_attention_interval-th (4)."""
    if parts.given(r, "layer_types"):
        r.ignore("full_attention_interval", "superseded by layer_types")
        return parts.layer_types(r, n, {"linear_attention": "D", "indexed_attention": "Q", "full_attention": "Q"}), \
            "layer_types"
    interval = r.int("full_attention_interval", d("full_attention_interval"), minimum=1)
    return ["D" if (i + 1) % interval else "Q" for i in range(n)], "full_attention_interval"


def _qsa(r: Reader, d, o: dict, pattern: str) -> None:
    """The indexed layers' indexer: every field set (the model builds one on each), one key head, the budget whole
    blocks (validate_architecture's rules)."""
    given = {k: r.int(k, None, none_ok=True, minimum=1) for k in _QSA}
    if "Q" not in pattern:
        for k in _QSA:
            r.ignore(k, "unused: no indexed_attention layer")
        return
    missing = [k for k, v in given.items() if v is None]
    if missing:
        raise r.fail(missing[0], "missing: every indexed_attention layer builds a QSA indexer, which needs "
                                 + ", ".join(_QSA), None)
    if given["indexer_kv_heads"] != 1:
        raise r.fail("indexer_kv_heads", "Qwen4-Exp's QSA has one indexer key head")
    if given["indexer_budget"] % given["indexer_compress_ratio"]:
        raise r.fail("indexer_budget", f"not a multiple of indexer_compress_ratio={given['indexer_compress_ratio']}")
    o.update(index_n_heads=given["indexer_n_heads"], index_head_dim=given["indexer_head_dim"],
             qsa_block_size=given["indexer_compress_ratio"], qsa_budget=given["indexer_budget"])


def _streams(r: Reader, d, o: dict, pattern: str) -> None:
    """Gated hyper-connections over hc_count streams (hc_lowrank), and the per-layer embeddings into them."""
    G = r.int("hc_count", d("hc_count"))
    if G <= 1:
        raise r.fail("hc_count", "Qwen4-Exp needs more than one residual stream", G)
    o.update(mhc_expansion_rate=G, mhc_plain_residual=True, mhc_hyper_head=True,
             mhc_lowrank=r.int("hc_lowrank", d("hc_lowrank"), minimum=1))
    ids = r.list("ple_layer_ids", int, [], none_ok=True) or []
    keys = ("ple_embed_dim", "ple_conv_kernel_size", "ngram_size", "heads_per_ngram")
    if not ids:
        for k in keys:
            r.ignore(k, "unused: no PLE layer (ple_layer_ids)")
    else:
        n = o["num_decoder_layers"]
        layers = sorted(set(ids))
        if layers[0] < 1 or layers[-1] > n:
            raise r.fail("ple_layer_ids", f"one-indexed layer ids in [1, {n}]")
        not_linear = [l for l in layers if pattern[(l - 1) % len(pattern)] != "D"]
        if not_linear:
            raise r.fail("ple_layer_ids", f"layer {not_linear[0]} is not a linear_attention layer (Qwen4-Exp's PLE "
                                          "runs on those only)")
        if r.raw("eos_token_id", None, none_ok=True, record=False) in (None, []):
            raise r.fail("eos_token_id", "must be set with PLE layers (the n-gram context restarts at it)", None)
        r.ignore("eos_token_id", NO_EFFECT + " (where the n-gram context restarts)")
        ngram = r.int("ngram_size", d("ngram_size"), minimum=2)
        heads = r.int("heads_per_ngram", d("heads_per_ngram"), minimum=1)
        width = r.int("ple_embed_dim", o["emb_dim"], none_ok=True, minimum=1) or o["emb_dim"]
        if width % ((ngram - 1) * heads):
            raise r.fail("ple_embed_dim", f"not divisible by the {(ngram - 1) * heads} n-gram heads "
                                          "((ngram_size - 1) x heads_per_ngram)", width)
        o.update(engram_layers=tuple(l - 1 for l in layers), engram_num_heads=heads, engram_max_ngram_size=ngram,
                 engram_head_dim=width // ((ngram - 1) * heads),
                 engram_kernel_size=r.int("ple_conv_kernel_size", d("ple_conv_kernel_size"), minimum=1))
    gate = r.raw("output_gate_type", None, none_ok=True)
    if gate not in (None, "sigmoid", "silu"):
        raise r.fail("output_gate_type", "one of 'sigmoid', 'silu' (the linear attention's output gate)", gate)
    r.ignore("output_gate_type", NO_EFFECT + " (the linear attention's gate activation: elementwise)")
    for key in ("ngram_vocab_size_base", "make_ngram_vocab_size_divisible_by", "seed", "split_ngram_parts",
                "number_of_conv_states", "norm_topk_prob"):
        r.ignore(key, NO_EFFECT + " (the n-gram tables' sizes and hashing, the cache's conv states, the router's "
                                  "normalization: no matmul)")


TYPE = HFType(defaults=DEFAULTS, ffn=parts.qwen_moe_shared, layers=_layers,
              extras=(parts.gated_delta_net, _qsa, _streams))
