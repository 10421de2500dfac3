"""A MaxText model YAML -> schema overrides (through the same key mapping as MaxText's config object)."""

from __future__ import annotations

import pathlib
from typing import Any

from .reader import (NO_EFFECT, NOT_UNDERSTOOD, _VISION, Loaded, _Reader, _read, _validate)

# ------------------------------------------------------------------------------------------------------------
# MaxText model YAML
# ------------------------------------------------------------------------------------------------------------

# MaxText's src/maxtext/configs/base.yml (snapshot e591f30c) for the keys this loader reads: a key a model YAML
# does not set takes this value, as in MaxText.
MAXTEXT_BASE_DEFAULTS: dict[str, Any] = {
    "decoder_block": "llama2",
    "global_parameter_scale": 1,
    "base_emb_dim": 2048,
    "base_num_query_heads": 16,
    "base_num_kv_heads": 16,
    "base_mlp_dim": 7168,
    "base_moe_mlp_dim": -1,
    "base_num_decoder_layers": 16,
    "head_dim": 128,
    "mlp_activations": ["silu", "linear"],
    "vocab_size": 32000,
    "num_experts": 1,
    "num_experts_per_tok": 1,
    "shared_experts": 0,
    "first_num_dense_layers": 0,
    "interleave_moe_layer_step": 1,
    "attention_type": "global",
    "q_lora_rank": 0,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "sliding_window_size": 0,
    "chunk_attn_window_size": 0,
    "nope_layer_interval": -1,
    "inhomogeneous_layer_cycle_interval": 1,
    "use_indexer": False,
    "indexer_n_heads": 64,
    "indexer_head_dim": 128,
    "indexer_topk": 2048,
    "indexer_loss_scaling_factor": 0.0,
    "mtp_num_layers": 0,
    "gdn_num_key_heads": 16,
    "gdn_num_value_heads": 32,
    "gdn_key_head_dim": 128,
    "gdn_value_head_dim": 128,
    "gdn_conv_kernel_dim": 4,
}

# decoder_block -> (fixed attention pattern or None, note). Patterns hard-coded in MaxText's model files
# (snapshot e591f30c): gemma3.py GEMMA3_ATTENTION_PATTERN (5 local sliding : 1 global), gpt_oss.py
# GPT_OSS_ATTENTION_PATTERN (layer 0 sliding), olmo3.py OLMO3_ATTENTION_PATTERN (3 sliding : 1 global),
# gemma2.py (each MaxText layer is a local then a global attention+MLP block). llama4 and qwen3_next derive
# theirs from the YAML (see _maxtext_pattern). The other blocks run global causal attention on every layer.
MAXTEXT_DECODER_BLOCKS: dict[str, str | None] = {
    "llama2": "G", "mistral": "G", "mixtral": "G", "deepseek": "G", "gemma": "G", "qwen2": "G", "qwen3": "G",
    "qwen3_moe": "G", "gemma2": "LG", "gemma3": "LLLLLG", "gpt_oss": "LG", "olmo3": "LLLG",
    "llama4": None, "qwen3_next": None,
}

# DeepSeek sparse attention: (MaxText name, the earlier name also accepted, schema key).
_MAXTEXT_INDEXER = (("use_indexer", "use_sparse_indexer", "use_sparse_indexer"),
                    ("indexer_n_heads", "index_n_heads", "index_n_heads"),
                    ("indexer_head_dim", "index_head_dim", "index_head_dim"),
                    ("indexer_topk", "index_topk", "index_topk"))

# Keys of MaxText YAMLs that change no matmul.
_MAXTEXT_NO_EFFECT = frozenset("""
    model_name enable_dropout dropout_rate logits_via_embedding normalize_embedding_logits
    normalization_layer_epsilon use_qk_norm qk_norm_with_scale use_post_attn_norm use_post_ffw_norm
    attention_bias attention_sink mlp_bias routed_bias routed_scaling_factor routed_score_func norm_topk_prob
    n_routing_groups topk_routing_group load_balance_loss_weight mlp_activations_limit
    rope_type rope_max_timescale rope_min_timescale local_rope_max_timescale rope_linear_scaling_factor
    rope_use_scale rope_factor rope_interleave rope_truncate rope_attention_scaling beta_fast beta_slow mscale
    max_position_embeddings original_max_position_embeddings partial_rotary_factor temperature_tuning
    final_logits_soft_cap attn_logits_soft_cap float32_logits float32_qk_product float32_weight_sum
    float32_gate_logits dtype weight_dtype matmul_precision activations_in_float32 quantization
    tokenizer_type tokenizer_path logical_axis_rules mtp_loss_scaling_factor mtp_eval_target_module
    gdn_chunk_size use_qk_norm_in_gdn indexer_use_approx_top_k indexer_approx_top_k_recall
    indexer_mask_exact_topk megablox sparse_matmul scan_layers param_scan_axis
""".split())

_MAXTEXT_HARDWARE = frozenset("attention capacity_factor remat_policy".split())


def _maxtext_classify(key: str) -> str:
    if key in _MAXTEXT_NO_EFFECT:
        return NO_EFFECT
    if key in _MAXTEXT_HARDWARE:
        return ("not modelled: a MaxText implementation choice; set maxflops' hardware knobs (attention_impl, "
                "moe_impl, capacity_factor, remat_policy) yourself")
    if key.endswith("_for_vit") or key.startswith(("vision_", "image_")) or key in ("use_multimodal",):
        return _VISION
    return NOT_UNDERSTOOD


def _scales(r: _Reader) -> tuple[int, int, int, int]:
    """MaxText's get_individual_scales(global_parameter_scale): (emb, heads, mlp, layers) powers of two."""
    scale = r.int("global_parameter_scale", MAXTEXT_BASE_DEFAULTS["global_parameter_scale"], minimum=1,
                  record=False)
    if scale & (scale - 1):
        raise r.fail("global_parameter_scale", "must be a power of two (MaxText's rule)")
    log2 = scale.bit_length() - 1
    base, rem = divmod(log2, 3)
    heads = base + int(rem > 0)
    return base + int(rem > 1), heads, heads, base


def load_maxtext_yaml(path) -> Loaded:
    """A MaxText model YAML (``src/maxtext/configs/models/*.yml`` style) -> schema overrides.

    Keys the YAML does not set take MaxText's ``base.yml`` value (``MAXTEXT_BASE_DEFAULTS``). The attention
    pattern comes from ``decoder_block`` (MaxText hard-codes it in the model files) and, for llama4 and
    qwen3_next, from ``nope_layer_interval`` / ``inhomogeneous_layer_cycle_interval``.
    """
    path = pathlib.Path(path)
    r = _Reader(_read(path, "yaml"), path)
    base = MAXTEXT_BASE_DEFAULTS
    o: dict[str, Any] = {}

    block = r.str("decoder_block", base["decoder_block"])
    if block not in MAXTEXT_DECODER_BLOCKS:
        raise r.fail("decoder_block", "unsupported decoder block; supported: "
                                      + ", ".join(sorted(MAXTEXT_DECODER_BLOCKS)), block)

    es, hs, ms, ls = _scales(r)
    o["emb_dim"] = r.int("base_emb_dim", base["base_emb_dim"], minimum=1) << es
    o["num_query_heads"] = r.int("base_num_query_heads", base["base_num_query_heads"], minimum=1) << hs
    o["num_kv_heads"] = r.int("base_num_kv_heads", base["base_num_kv_heads"], minimum=1) << hs
    o["mlp_dim"] = r.int("base_mlp_dim", base["base_mlp_dim"], minimum=1) << ms
    layers = r.int("base_num_decoder_layers", base["base_num_decoder_layers"], minimum=1) << ls
    # gemma2: one MaxText layer is a local and a global attention+MLP block (gemma2.py), i.e. two decoder layers.
    o["num_decoder_layers"] = 2 * layers if block == "gemma2" else layers
    o["vocab_size"] = r.int("vocab_size", base["vocab_size"], minimum=1)
    acts = r.list("mlp_activations", str, base["mlp_activations"])
    if not 1 <= len(acts) <= 2:
        raise r.fail("mlp_activations", "give one activation (plain FFN) or two (gated FFN)", acts)
    o["mlp_activations"] = tuple(acts)

    # --- MoE ----------------------------------------------------------------------------------------------
    o["num_experts"] = r.int("num_experts", base["num_experts"], minimum=1, record=False)
    if o["num_experts"] > 1:
        moe_dim = r.int("base_moe_mlp_dim", base["base_moe_mlp_dim"], minimum=None)
        if moe_dim <= 0:
            raise r.fail("base_moe_mlp_dim", "must be positive for a MoE model (num_experts > 1), as MaxText "
                                             "requires (base.yml default: -1)")
        o["moe_mlp_dim"] = moe_dim << ms
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", base["num_experts_per_tok"], minimum=1)
        for key in ("shared_experts", "first_num_dense_layers", "interleave_moe_layer_step"):
            o[key] = r.int(key, base[key], record=False)  # base.yml's values mean "none" / "every layer"
    else:
        for key in ("base_moe_mlp_dim", "num_experts_per_tok", "shared_experts", "first_num_dense_layers",
                    "interleave_moe_layer_step"):
            r.ignore(key, "unused: num_experts is 1 (no MoE layers)")

    # --- attention ----------------------------------------------------------------------------------------
    attention_type = r.str("attention_type", base["attention_type"], record=False)
    if attention_type not in ("global", "full", "mla"):
        raise r.fail("attention_type", "supported: 'global', 'full' or 'mla' (other MaxText attention types are "
                                       "set per layer by the decoder block, or are not modelled)")
    o["attention_type"] = "mla" if attention_type == "mla" else "global"
    mla_keys = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
    if o["attention_type"] == "mla":
        for key in mla_keys:
            o[key] = r.int(key, base[key])
        r.ignore("head_dim", "unused: MLA widths come from qk_nope_head_dim, qk_rope_head_dim and v_head_dim")
    else:
        o["head_dim"] = r.int("head_dim", base["head_dim"], minimum=1)
        for key in mla_keys:
            r.ignore(key, "unused: attention_type is not 'mla'")

    # DeepSeek sparse attention, under MaxText's names or the earlier ones.
    def indexer_value(new, old, getter, **kw):
        if r.has(new) and r.has(old):
            a, b = getter(new), getter(old)
            if a != b:
                raise r.fail(old, f"disagrees with {new}={a!r}", b)
            r.ignore(old, f"superseded: same as {new}")
            return a
        return getter(old if r.has(old) else new, base[new], **kw)

    if indexer_value("use_indexer", "use_sparse_indexer", r.bool, record=False):
        o["use_sparse_indexer"] = True
        for new, old, key in _MAXTEXT_INDEXER[1:]:
            o[key] = indexer_value(new, old, lambda k, *a, **kw: r.int(k, *a, minimum=1, **kw))
    else:
        for new, old, _ in _MAXTEXT_INDEXER[1:]:
            for k in (new, old):
                r.ignore(k, "unused: the indexer is off (use_indexer false)")
    if r.has("indexer_sparse_training"):
        r.ignore("indexer_sparse_training",
                 "not modelled: the indexer loss over the top-k keys only (maxflops' hardware indexer_kl is the "
                 "dense warm-up, over every scored pair); no effect on model FLOPs"
                 if r.bool("indexer_sparse_training") else NO_EFFECT + " (false: the dense warm-up)")

    pattern = _maxtext_pattern(r, block)
    o["attention_layer_pattern"] = pattern
    if "L" in pattern:
        o["sliding_window_size"] = r.int("sliding_window_size", base["sliding_window_size"], minimum=1)
    else:
        r.ignore("sliding_window_size", f"unused: decoder_block {block!r} has no sliding-window layers here")
    if "C" in pattern:
        o["chunk_attn_window_size"] = r.int("chunk_attn_window_size", minimum=1)
    else:
        r.ignore("chunk_attn_window_size", f"unused: decoder_block {block!r} has no chunked layers here")

    if block == "qwen3_next":
        for key in ("gdn_num_key_heads", "gdn_num_value_heads", "gdn_key_head_dim", "gdn_value_head_dim",
                    "gdn_conv_kernel_dim"):
            o[key] = r.int(key, base[key], minimum=1)
        # qwen3.py: the q projection also emits a per-head output gate; the shared experts have a sigmoid gate.
        o["attention_output_gate"] = True
        o["shared_expert_gate"] = o.get("shared_experts", 0) > 0
    else:
        for key in ("gdn_num_key_heads", "gdn_num_value_heads", "gdn_key_head_dim", "gdn_value_head_dim",
                    "gdn_conv_kernel_dim"):
            r.ignore(key, f"unused: decoder_block {block!r} has no gated-delta-net layers")

    # --- MTP, indexer loss, the step ---------------------------------------------------------------------------
    if r.has("mtp_num_layers"):
        o["mtp_num_layers"] = r.int("mtp_num_layers")
    if r.has("indexer_loss_scaling_factor"):
        o["indexer_loss_scaling_factor"] = r.float("indexer_loss_scaling_factor")
    if r.has("per_device_batch_size"):
        o["per_device_batch_size"] = r.float("per_device_batch_size")
    for key in ("max_target_length", "gradient_accumulation_steps"):
        if r.has(key):
            o[key] = r.int(key, minimum=1)

    r.finish(_maxtext_classify)
    _validate(path, o)
    return Loaded(overrides=o, source="maxtext-yaml", ignored=r.ignored, defaults=r.defaults)


def _maxtext_pattern(r: _Reader, block: str) -> str:
    fixed = MAXTEXT_DECODER_BLOCKS[block]
    cycle_reason = "no FLOPs effect: scan grouping of the layer cycle"
    if block == "llama4":
        # llama4.py: layer l is NoPE iff nope_layer_interval > 0 and (l+1) % interval == 0; NoPE layers run global
        # attention, RoPE layers chunked attention (chunk_attn_window_size must be set).
        interval = r.int("nope_layer_interval", MAXTEXT_BASE_DEFAULTS["nope_layer_interval"], minimum=None)
        chunk = r.int("chunk_attn_window_size", 0, record=False)
        if chunk < 1:
            raise r.fail("chunk_attn_window_size", "the llama4 decoder block runs chunked attention on its RoPE "
                                                   "layers; set chunk_attn_window_size >= 1")
        r.ignore("inhomogeneous_layer_cycle_interval", cycle_reason)
        return "C" * (interval - 1) + "G" if interval > 0 else "C"
    if block == "qwen3_next":
        # decoders.py / qwen3.py: layer l is full attention iff (l+1) % inhomogeneous_layer_cycle_interval == 0,
        # the others gated-delta-net linear attention.
        interval = r.int("inhomogeneous_layer_cycle_interval",
                         MAXTEXT_BASE_DEFAULTS["inhomogeneous_layer_cycle_interval"], minimum=1)
        r.ignore("nope_layer_interval", "unused: only the llama4 decoder block reads it")
        return "D" * (interval - 1) + "G"
    r.ignore("inhomogeneous_layer_cycle_interval", cycle_reason)
    r.ignore("nope_layer_interval", "unused: only the llama4 decoder block reads it")
    return fixed


