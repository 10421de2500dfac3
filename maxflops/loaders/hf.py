"""A Hugging Face ``config.json`` -> schema overrides."""

from __future__ import annotations

import pathlib
from typing import Any

from ..families import FAMILIES
from ..maxtext.mapping import maxtext_quirks
from . import hf_ssm
from .quantization import weight_rules
from ..reader import (NO_EFFECT, NOT_UNDERSTOOD, VISION, MISSING, Loaded, Reader, fit_ffn,
                     fit_index, fit_pattern, read_file, refuse_unknown, validate_overrides)

# ------------------------------------------------------------------------------------------------------------
# Hugging Face config.json
# ------------------------------------------------------------------------------------------------------------

# Transformers config-class defaults (transformers 5.24; tests/test_hf_defaults.py checks each against the class) for
# the keys this loader reads. A key absent from the file takes its model type's default from here (the text_config of
# a multimodal checkpoint is saved as a diff against its class defaults, so Gemma 3's lacks vocab_size, for one); a
# key not listed here is required, except the post-init rules of the classes whose field is null by default (so not
# listed): head_dim = hidden_size // num_attention_heads and num_key_value_heads = num_attention_heads when absent or
# null. A class default that no model could run with (DeepseekV2Config's num_experts_per_tok: null) is not listed.
_HF_DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": {  # LlamaConfig (num_key_value_heads, head_dim: post-init rules)
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "hidden_act": "silu",
    },
    "qwen3": {  # Qwen3Config
        "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "hidden_act": "silu",
        "sliding_window": 4096, "max_window_layers": 28,
    },
    "qwen3_moe": {  # Qwen3MoeConfig (no head_dim field: the model uses hidden_size // num_attention_heads)
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 24,
        "num_attention_heads": 32, "num_key_value_heads": 4, "hidden_act": "silu", "moe_intermediate_size": 768,
        "num_experts_per_tok": 8, "num_experts": 128, "sliding_window": 4096,
    },
    "longcat_flash": {  # LongcatFlashConfig (saved names: num_layers, ffn_hidden_size, n_routed_experts, moe_topk)
        "vocab_size": 131072, "hidden_size": 6144, "num_layers": 28, "num_attention_heads": 64, "hidden_act": "silu",
        "ffn_hidden_size": 12288, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "moe_topk": 12, "n_routed_experts": 512, "zero_expert_num": 256,
        "expert_ffn_hidden_size": 2048,
    },
    "gemma4_text": {  # Gemma4TextConfig (global_head_dim 512 and num_global_key_value_heads: kwargs it pops)
        "vocab_size": 262144, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 30,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
        "sliding_window": 512, "hidden_size_per_layer_input": 256, "num_kv_shared_layers": 0,
        "attention_k_eq_v": False, "use_double_wide_mlp": False, "enable_moe_block": False,
    },
    "gemma3_text": {  # Gemma3TextConfig
        "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
        "hidden_activation": "gelu_pytorch_tanh", "sliding_window": 4096, "sliding_window_pattern": 6,
    },
    "llama4_text": {  # Llama4TextConfig
        "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
        "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
        "hidden_act": "silu", "num_experts_per_tok": 1, "num_local_experts": 16, "interleave_moe_layer_step": 1,
        "no_rope_layer_interval": 4, "attention_chunk_size": 8192,
    },
    "gpt_oss": {  # GptOssConfig
        "num_hidden_layers": 36, "num_local_experts": 128, "vocab_size": 201088, "hidden_size": 2880,
        "intermediate_size": 2880, "head_dim": 64, "num_attention_heads": 64, "num_key_value_heads": 8,
        "sliding_window": 128, "hidden_act": "silu", "num_experts_per_tok": 4,
    },
    "qwen3_next": {  # Qwen3NextConfig
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 48,
        "num_attention_heads": 16, "num_key_value_heads": 2, "hidden_act": "silu", "head_dim": 256,
        "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_num_key_heads": 16, "linear_num_value_heads": 32,
        "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "num_experts_per_tok": 10,
        "num_experts": 512, "full_attention_interval": 4,
    },
    "mistral": {  # MistralConfig (head_dim: post-init rule); a window on every layer unless null
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "sliding_window": 4096,
    },
    "mixtral": {  # MixtralConfig (head_dim: null, the model uses hidden_size // num_attention_heads)
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "num_local_experts": 8,
        "num_experts_per_tok": 2, "sliding_window": None,
    },
    "deepseek_v2": {  # DeepseekV2Config (num_key_value_heads: post-init rule; num_experts_per_tok: null, required)
        "vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 11008, "moe_intermediate_size": 1407,
        "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_act": "silu", "first_k_dense_replace": 0,
        "kv_lora_rank": 512, "q_lora_rank": 1536, "n_routed_experts": 64, "n_shared_experts": 2,
        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    },
    "deepseek_v3": {  # DeepseekV3Config (num_nextn_predict_layers: its field num_mtp_layers)
        "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
        "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "hidden_act": "silu",
        "first_k_dense_replace": 3, "kv_lora_rank": 512, "q_lora_rank": 1536, "n_routed_experts": 256,
        "n_shared_experts": 1, "num_experts_per_tok": 8, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
        "v_head_dim": 128, "num_nextn_predict_layers": 1,
    },
    "deepseek_v32": {  # DeepseekV32Config (no MTP key)
        "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
        "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "hidden_act": "silu",
        "first_k_dense_replace": 3, "kv_lora_rank": 512, "q_lora_rank": 1536, "n_routed_experts": 256,
        "n_shared_experts": 1, "num_experts_per_tok": 8, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
        "v_head_dim": 128, "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 64,
    },
    "glm_moe_dsa": {  # GlmMoeDsaConfig
        "vocab_size": 154880, "hidden_size": 6144, "intermediate_size": 12288, "moe_intermediate_size": 2048,
        "num_hidden_layers": 78, "num_attention_heads": 64, "num_key_value_heads": 64, "n_shared_experts": 1,
        "n_routed_experts": 256, "kv_lora_rank": 512, "q_lora_rank": 2048, "qk_rope_head_dim": 64,
        "v_head_dim": 256, "qk_nope_head_dim": 192, "num_experts_per_tok": 8, "hidden_act": "silu",
        "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 32, "first_k_dense_replace": 3,
    },
    "olmo3": {  # Olmo3Config (num_key_value_heads: post-init rule; layer_types: sliding but every 4th)
        "vocab_size": 50304, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "hidden_act": "silu", "sliding_window": 4096,
    },
    "glm4_moe": {  # Glm4MoeConfig (head_dim: the model's getattr rule, hidden_size // heads)
        "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 10944, "num_hidden_layers": 46,
        "num_attention_heads": 96, "num_key_value_heads": 8, "hidden_act": "silu", "moe_intermediate_size": 1408,
        "num_experts_per_tok": 8, "n_shared_experts": 1, "n_routed_experts": 128, "first_k_dense_replace": 1,
        "num_nextn_predict_layers": 1,
    },
    "minimax_m2": {  # MiniMaxM2Config
        "vocab_size": 200064, "hidden_size": 3072, "intermediate_size": 1536, "num_hidden_layers": 62,
        "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu",
        "num_experts_per_tok": 8, "num_local_experts": 256,
    },
    "qwen3_5_text": {  # Qwen3_5TextConfig (layer_types: linear but every full_attention_interval-th, default 4)
        "vocab_size": 248320, "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 32,
        "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256, "hidden_act": "silu",
        "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_num_key_heads": 16, "linear_num_value_heads": 32, "full_attention_interval": 4,
    },
    "qwen3_vl_text": {  # Qwen3VLTextConfig
        "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "hidden_act": "silu",
    },
    "qwen3_vl_moe_text": {  # Qwen3VLMoeTextConfig (head_dim: null, the model uses hidden_size // heads)
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
        "num_attention_heads": 16, "num_key_value_heads": 16, "hidden_act": "silu", "moe_intermediate_size": 1408,
        "num_experts_per_tok": 4, "num_experts": 60,
    },
    "qwen3_5_moe_text": {  # Qwen3_5MoeTextConfig (every layer MoE, with a gated shared expert)
        "vocab_size": 248320, "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16,
        "num_key_value_heads": 2, "head_dim": 256, "hidden_act": "silu", "linear_conv_kernel_dim": 4,
        "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
        "linear_num_value_heads": 32, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
        "num_experts_per_tok": 8, "num_experts": 256, "full_attention_interval": 4,
    },
    "mimo_v2_flash": {  # MiMoV2FlashConfig (MiMo-V2-Flash's values)
        "vocab_size": 152576, "hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 48,
        "num_attention_heads": 64, "num_key_value_heads": 4, "hidden_act": "silu", "moe_intermediate_size": 2048,
        "num_experts_per_tok": 8, "n_routed_experts": 256, "head_dim": 192, "v_head_dim": 128, "sliding_window": 129,
    },
    "olmo_hybrid": {  # OlmoHybridConfig (num_key_value_heads and the linear_* widths: post-init rules)
        "vocab_size": 100352, "hidden_size": 3840, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 30, "hidden_act": "silu", "linear_conv_kernel_dim": 4,
    },
    "minimax": {  # MiniMaxConfig (head_dim: null, the model uses hidden_size // num_attention_heads)
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "num_experts_per_tok": 2,
        "num_local_experts": 8, "sliding_window": None, "block_size": 256,
    },
    "kimi_linear": {  # KimiLinearConfig (saved names: num_experts, num_experts_per_token, num_shared_experts)
        "vocab_size": 163840, "hidden_size": 2304, "intermediate_size": 9216, "moe_intermediate_size": 1024,
        "num_hidden_layers": 27, "num_attention_heads": 32, "num_key_value_heads": 32, "num_shared_experts": 1,
        "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
        "num_experts_per_token": 8, "hidden_act": "silu", "num_experts": 256, "linear_head_dim": 128,
        "linear_num_heads": 32, "linear_conv_kernel_dim": 4,
    },
    "glm4_moe_lite": {  # Glm4MoeLiteConfig (head_dim: its attribute map reads qk_rope_head_dim)
        "vocab_size": 154880, "hidden_size": 2048, "intermediate_size": 10240, "moe_intermediate_size": 1536,
        "num_hidden_layers": 47, "num_attention_heads": 20, "num_key_value_heads": 20, "n_shared_experts": 1,
        "n_routed_experts": 64, "kv_lora_rank": 512, "q_lora_rank": 768, "qk_rope_head_dim": 64, "v_head_dim": 256,
        "qk_nope_head_dim": 192, "num_experts_per_tok": 4, "hidden_act": "silu",
    },
    "mamba2": {  # Mamba2Config
        "vocab_size": 32768, "hidden_size": 4096, "num_hidden_layers": 64, "num_heads": 128, "head_dim": 64,
        "state_size": 128, "n_groups": 8, "conv_kernel": 4, "chunk_size": 256, "expand": 2,
    },
    "bamba": {  # BambaConfig (mamba_d_head "auto": mamba_expand x hidden_size // mamba_n_heads)
        "vocab_size": 128000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "mamba_n_heads": 128,
        "mamba_d_head": "auto", "mamba_n_groups": 1, "mamba_d_state": 256, "mamba_d_conv": 4, "mamba_expand": 2,
        "mamba_chunk_size": 256,
    },
    "granitemoehybrid": {  # GraniteMoeHybridConfig (num_key_value_heads: post-init rule)
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "hidden_act": "silu", "num_local_experts": 8, "num_experts_per_tok": 2,
        "shared_intermediate_size": 1024, "mamba_n_heads": 128, "mamba_d_head": "auto", "mamba_n_groups": 1,
        "mamba_d_state": 256, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_chunk_size": 256,
    },
    "mamba": {  # MambaConfig (time_step_rank "auto": ceil(hidden_size / 16))
        "vocab_size": 50280, "hidden_size": 768, "state_size": 16, "num_hidden_layers": 32, "expand": 2,
        "conv_kernel": 4, "time_step_rank": "auto",
    },
    "falcon_mamba": {  # FalconMambaConfig
        "vocab_size": 50280, "hidden_size": 768, "state_size": 16, "num_hidden_layers": 32, "expand": 2,
        "conv_kernel": 4, "time_step_rank": "auto",
    },
    "jamba": {  # JambaConfig (mamba_dt_rank "auto": ceil(hidden_size / 16))
        "vocab_size": 65536, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "num_experts_per_tok": 2,
        "num_experts": 16, "expert_layer_period": 2, "expert_layer_offset": 1, "attn_layer_period": 8,
        "attn_layer_offset": 4, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_dt_rank": "auto",
    },
    "zamba2": {  # Zamba2Config (intermediate_size: null, 4 x hidden_size; num_key_value_heads: null, the heads)
        "vocab_size": 32000, "hidden_size": 2560, "num_hidden_layers": 54, "mamba_d_state": 64, "mamba_d_conv": 4,
        "mamba_expand": 2, "mamba_ngroups": 1, "n_mamba_heads": 8, "chunk_size": 256, "hidden_act": "gelu",
        "num_attention_heads": 32, "adapter_rank": 128, "use_shared_attention_adapter": False,
    },
    "falcon_h1": {  # FalconH1Config (mamba_d_head "auto": the Mamba width // mamba_n_heads)
        "vocab_size": 128000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "mamba_d_ssm": 1024,
        "mamba_n_heads": 128, "mamba_d_head": "auto", "mamba_n_groups": 1, "mamba_d_state": 256, "mamba_d_conv": 4,
        "mamba_expand": 2, "mamba_chunk_size": 256,
    },
    "nemotron_h": {  # NemotronHConfig (no published model: every key of a real file is given)
        "vocab_size": 131072, "hidden_size": 4096, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 21504, "mlp_hidden_act": "relu2",
        "ssm_state_size": 128, "mamba_num_heads": 128, "mamba_head_dim": 64, "n_groups": 8, "conv_kernel": 4,
        "chunk_size": 128, "mamba_ssm_cache_dtype": "float32", "n_routed_experts": 8, "num_experts_per_tok": 2,
        "moe_intermediate_size": 7688, "moe_shared_expert_intermediate_size": 7688, "num_nextn_predict_layers": 0,
    },
    "deepseek_v4": {  # DeepseekV4Config (DeepSeek-V4-Flash's values)
        "vocab_size": 129280, "hidden_size": 4096, "moe_intermediate_size": 2048, "num_hidden_layers": 43,
        "num_attention_heads": 64, "head_dim": 512, "q_lora_rank": 1024, "num_experts_per_tok": 6,
        "n_routed_experts": 256, "hidden_act": "silu", "hc_mult": 4, "sliding_window": 128, "o_groups": 8,
        "o_lora_rank": 1024, "index_n_heads": 64, "index_head_dim": 128, "index_topk": 512,
        "num_nextn_predict_layers": 1,
    },
}

_FAMILY = {
    "llama": "dense", "mistral": "dense", "qwen3": "dense", "mixtral": "moe", "qwen3_moe": "moe",
    "gpt_oss": "moe", "qwen3_next": "qwen3_next", "gemma3_text": "dense", "llama4_text": "llama4",
    "deepseek_v2": "deepseek", "deepseek_v3": "deepseek", "deepseek_v32": "deepseek", "glm_moe_dsa": "deepseek",
    "deepseek_v4": "deepseek_v4", "mamba2": "mamba2", "nemotron_h": "nemotron_h", "bamba": "bamba",
    "granitemoehybrid": "granitemoehybrid", "mamba": "mamba", "falcon_mamba": "mamba", "jamba": "jamba",
    "falcon_h1": "falcon_h1", "zamba2": "zamba2", "olmo3": "dense", "glm4_moe": "glm4_moe", "minimax_m2": "moe",
    "qwen3_5_text": "qwen3_5", "qwen3_5_moe_text": "qwen3_next", "glm4_moe_lite": "deepseek",
    "kimi_linear": "kimi_linear", "minimax": "moe", "olmo_hybrid": "olmo_hybrid", "qwen3_vl_text": "dense",
    "qwen3_vl_moe_text": "moe", "mimo_v2_flash": "mimo", "gemma4_text": "gemma4", "longcat_flash": "longcat",
}
# multimodal wrapper model_type -> the model_type of its text_config
_WRAPPERS = {"gemma3": "gemma3_text", "gemma4": "gemma4_text", "llama4": "llama4_text", "qwen3_5": "qwen3_5_text",
             "qwen3_5_moe": "qwen3_5_moe_text", "qwen3_vl": "qwen3_vl_text", "qwen3_vl_moe": "qwen3_vl_moe_text"}
HF_MODEL_TYPES = tuple(sorted(set(_FAMILY) | set(_WRAPPERS)))

# Keys a type's published files carry that its config class keeps as a plain attribute and its modeling code never
# reads (transformers 5.24), with the reason.
_HF_TYPE_NO_EFFECT = {
    "qwen3_moe": {"shared_expert_intermediate_size": "no Qwen3MoeConfig field; Qwen3-MoE has no shared expert "
                                                     "(modeling_qwen3_moe never reads it)"},
    "glm_moe_dsa": {"num_experts": "no GlmMoeDsaConfig field (n_routed_experts, alias num_local_experts, sizes the "
                                   "experts; modeling_glm_moe_dsa never reads num_experts)"},
    "gemma4_text": {"_sliding_window_pattern": "an attribute saved beside layer_types; Gemma4TextConfig derives "
                                               "absent layer_types with a pattern of 6, whatever it says"},
}

_HF_NO_EFFECT = frozenset("""
    qkv_bias unsloth_fixed unsloth_version
    architectures _name_or_path auto_map transformers_version torch_dtype dtype use_cache initializer_range
    bos_token_id eos_token_id pad_token_id attention_bias mlp_bias attention_dropout hidden_dropout
    max_position_embeddings initial_context_length rms_norm_eps layer_norm_eps rope_theta rope_scaling
    rope_parameters rope_local_base_freq partial_rotary_factor rope_interleave indexer_rope_interleave
    tie_word_embeddings pretraining_tp quantization_config output_router_logits router_aux_loss_coef
    router_jitter_noise norm_topk_prob aux_loss_alpha seq_aux ep_size n_group topk_group topk_method
    scoring_func routed_scaling_factor moe_router_dtype query_pre_attn_scalar final_logit_softcapping
    attn_logit_softcapping cache_implementation swiglu_limit swiglu_alpha attn_temperature_tuning floor_scale
    attn_scale use_qk_norm for_llm_compressor _attn_implementation_autoset compress_rope_theta hc_eps
    hc_sinkhorn_iters chunk_size_feed_forward is_encoder_decoder id2label label2id output_attentions
    output_hidden_states problem_type return_dict rotary_dim mla_use_nope use_grouped_topk moe_router_activation_func
    num_expert_group moe_renormalize model_max_length full_attn_alpha_factor full_attn_beta_factor
    linear_attn_alpha_factor linear_attn_beta_factor mlp_alpha_factor mlp_beta_factor linear_a_log_min
    linear_a_log_max linear_dt_min linear_dt_max linear_dt_init_floor linear_allow_neg_eigval attention_value_scale
""".split()) | hf_ssm.NO_EFFECT_KEYS

_HF_VISION = frozenset("""
    vision_config mm_tokens_per_image boi_token_index eoi_token_index image_token_index image_token_id
    boi_token_id eoi_token_id vision_feature_layer vision_feature_select_strategy projector_hidden_act
    multimodal_projector_bias video_token_id vision_start_token_id vision_end_token_id audio_config audio_token_id
    boa_token_id eoa_token_index eoa_token_id boa_token_index
""".split())


# the sub-configs of a multimodal file that are a model of their own, run beside the text decoder
_HF_TOWERS = {"vision_config": "vision encoder and its projector", "audio_config": "audio encoder and its projector"}


def _hf_classify(key: str) -> str:
    if key in _HF_NO_EFFECT:
        return NO_EFFECT
    if key in _HF_VISION:
        return VISION
    return NOT_UNDERSTOOD


# a layer_types entry -> its pattern letter, as each family declares it (maxflops.families)
_LETTERS = {t: letter for fam in FAMILIES for t, letter in fam.hf_layer_types.items()}


def _given(r: Reader, key: str) -> bool:
    """``key`` is present and not null. A null is read here (not reported as not understood): the config class's
    __post_init__ derives such a key (a per-layer list, compress_rates) as when it is absent."""
    if r.has(key) and r.data[key] is None:
        r.raw(key, none_ok=True, record=False)
        return False
    return r.has(key)


def _layer_letters(types: list, r: Reader, key: str, allowed: set) -> list:
    letters = []
    for t in types:
        letter = _LETTERS.get(t)
        if letter is None or letter not in allowed:
            raise r.fail(key, f"layer type {t!r} is not supported for this model type")
        letters.append(letter)
    return letters


# schema key -> the config.json key that usually sets it (named in errors about the schema key)
_HF_SOURCES = {
    "num_decoder_layers": "num_hidden_layers", "emb_dim": "hidden_size", "num_query_heads": "num_attention_heads",
    "num_kv_heads": "num_key_value_heads", "mlp_dim": "intermediate_size", "moe_mlp_dim": "moe_intermediate_size",
    "sliding_window_size": "sliding_window", "chunk_attn_window_size": "attention_chunk_size",
    "mtp_num_layers": "num_nextn_predict_layers", "shared_experts": "n_shared_experts",
    "mhc_expansion_rate": "hc_mult", "num_experts": "num_experts / n_routed_experts / num_local_experts",
}


def load_hf_config(path, *, unknown: str = "error") -> Loaded:
    """A Hugging Face ``config.json`` -> schema overrides.

    Model types: see ``HF_MODEL_TYPES`` (the multimodal wrappers, gemma3, gemma4, llama4, qwen3_5, qwen3_5_moe, qwen3_vl
    and qwen3_vl_moe, read their ``text_config``; the vision tower is listed in ``Loaded.ignored``, not priced). Keys absent from the
    file that the model type's transformers config class gives a default for take that default (listed in
    ``Loaded.defaults``); other absent keys the loader needs are a ValueError. A key the loader does not know is a
    ValueError naming it (``unknown='report'`` lists it in ``Loaded.ignored`` instead).
    """
    path = pathlib.Path(path)
    top = Reader(read_file(path, "json"), path)
    model_type = top.str("model_type")
    if model_type in _WRAPPERS:
        text_type = _WRAPPERS[model_type]
        text = top.mapping("text_config")
        r = Reader(text, path, prefix="text_config.")
        inner = r.raw("model_type", text_type, record=False)
        if inner != text_type:
            raise r.fail("model_type", f"expected {text_type!r} inside a {model_type!r} config", inner)
        # top-level keys of the wrapper: the vision tower and multimodal plumbing
        top.ignore("vision_config", VISION)
        if top.has("tie_word_embeddings"):
            top.ignore("tie_word_embeddings", NO_EFFECT)
    elif model_type in _FAMILY:
        text_type, r = model_type, top
    else:
        raise top.fail("model_type", "unsupported model type; supported: " + ", ".join(HF_MODEL_TYPES))

    defaults = _HF_DEFAULTS.get(text_type, {})

    def d(key):
        return defaults.get(key, MISSING)

    for key, why in _HF_TYPE_NO_EFFECT.get(text_type, {}).items():  # keys a type's published files carry
        if r.has(key):
            r.raw(key, none_ok=True, record=False)
            r.ignore(key, NO_EFFECT + ": " + why)
    o = _hf_model(r, text_type, d)

    if r is not top:
        r.finish(_hf_classify)
        top.ignored.update(r.ignored)
        top.defaults.update(r.defaults)
    top.finish(_hf_classify)
    known = set(_HF_NO_EFFECT) | set(_HF_VISION) | {k for table in _HF_DEFAULTS.values() for k in table}
    refuse_unknown(path, top.data, top.ignored, known, unknown)
    # a partial count never looks whole: the report's NOT COUNTED line names the towers the model also runs (a
    # wrapper's config class builds its vision tower when the file has no vision_config; a null audio_config is none)
    quant = next((x.get("quantization_config") for x in (top.data, r.data) if x.get("quantization_config")), None)
    if quant:  # FLOPs are the same; decode bytes read each weight as the file stores it
        expert_dtype = next((x["expert_dtype"] for x in (top.data, r.data) if x.get("expert_dtype")), None)
        rules = weight_rules(quant, o["num_decoder_layers"], expert_dtype) if isinstance(quant, dict) else None
        if rules:
            o["weight_bytes_rules"] = rules
        elif rules is None:
            method = (quant.get("quant_method") or quant.get("quant_algo") or "?") if isinstance(quant, dict) else "?"
            o["not_priced"] = tuple(o.get("not_priced", ())) + (
                f"traffic: the file's quantized weights (quantization_config: {method}, a method maxflops does not "
                f"read); decode weight bytes are priced at weight_bytes={o.get('weight_bytes', 2)} per element for "
                "every weight",)
    wrapper = r is not top
    towers = [k for k in _HF_TOWERS if isinstance(top.data.get(k), dict) or (k == "vision_config" and wrapper)]
    if towers:
        o["not_priced"] = tuple(o.get("not_priced", ())) + tuple(
            f"model: the {_HF_TOWERS[k]} ({k}{'' if top.has(k) else ': the class default'}); maxflops counts the "
            "text decoder only" for k in towers)
    validate_overrides(path, o, lambda key: _HF_SOURCES.get(key, key))
    return Loaded(overrides=o, source="hf-config", ignored=top.ignored, defaults=top.defaults)


def _hf_activation(r: Reader, text_type: str, d) -> tuple:
    if text_type == "gemma3_text":  # Gemma3TextConfig reads hidden_activation only (absent: its default)
        act = r.activation("hidden_activation", d("hidden_activation"))
        r.ignore("hidden_act", "not read by Gemma3TextConfig (hidden_activation is what Gemma 3 uses)")
    else:
        act = r.activation("hidden_act", d("hidden_act"))
    # Every supported model type has a gated (GLU) FFN: act(gate) * up.
    return act, "linear"


def _hf_model(r: Reader, text_type: str, d) -> dict:
    family = _FAMILY[text_type]
    if family == "deepseek_v4":
        return _hf_deepseek_v4(r, d)
    if family in ("mamba2", "mamba"):
        return getattr(hf_ssm, family)(r, d)
    if family == "gemma4":
        return _gemma4(r, d)
    if family == "longcat":
        return _longcat(r, d)
    if family in ("nemotron_h", "bamba", "granitemoehybrid", "jamba", "falcon_h1", "zamba2"):
        return getattr(hf_ssm, family)(r, d, lambda key: _given(r, key))
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    heads = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    kv = r.int("num_key_value_heads", d("num_key_value_heads") if d("num_key_value_heads") is not MISSING
               else heads, minimum=1, none_ok=True)
    o["num_kv_heads"] = heads if kv is None else kv
    o["mlp_activations"] = _hf_activation(r, text_type, d)

    if family in ("deepseek", "kimi_linear"):
        _hf_mla(r, text_type, d, o)
    else:
        hd = r.int("head_dim", d("head_dim") if d("head_dim") is not MISSING else o["emb_dim"] // heads,
                   minimum=1, none_ok=True)
        o["head_dim"] = o["emb_dim"] // heads if hd is None else hd
    if family == "mimo":  # values narrower than queries and keys
        hv = r.int("v_head_dim", d("v_head_dim"), minimum=1)
        if hv != o["head_dim"]:
            o["value_head_dim"] = hv

    # --- FFN: per-layer MoE list (the model's own rule), then fitted --------------------------------------
    is_moe, ffn_key = _hf_ffn(r, text_type, family, d, o, n)
    if o.get("num_experts", 1) > 1:
        k, s = fit_ffn(is_moe, r, ffn_key)
        if k:
            o["first_num_dense_layers"] = k
        if s > 1:
            o["interleave_moe_layer_step"] = s
    # The dense FFN width. Mixtral and gpt-oss have no dense layer: their intermediate_size is the expert width.
    dense_key = {"llama4": "intermediate_size_mlp"}.get(family, "intermediate_size")
    if text_type in ("mixtral", "gpt_oss", "minimax_m2", "minimax"):
        dense_key = None
    if o.get("num_experts", 1) == 1 or not all(is_moe):
        if dense_key is None:
            raise r.fail("num_local_experts", f"{text_type} models have no dense FFN width for the dense layers")
        o["mlp_dim"] = r.int(dense_key, d(dense_key), minimum=1)
    elif dense_key:
        r.ignore(dense_key, "unused: every layer is MoE (no dense FFN layer)")

    # --- mixers ---------------------------------------------------------------------------------------------
    letters, key = _hf_layers(r, text_type, family, d, n)
    pattern = o["attention_layer_pattern"] = fit_pattern(letters, r, key)
    for letter, key, target, what in (("L", "sliding_window", "sliding_window_size", "sliding-window"),
                                      ("C", "attention_chunk_size", "chunk_attn_window_size", "chunked-attention")):
        if letter in pattern:
            span = r.int(key, d(key), minimum=1, none_ok=True)
            if span is None:
                raise r.fail(key, f"the layers include {what} attention, so {key} is needed")
            o[target] = span
        else:
            r.ignore(key, f"unused: no {what} layers")
    if family == "mimo":
        _mimo_attention(r, o, pattern)

    if family == "glm4_moe":  # its MTP modules (num_nextn_predict_layers; transformers builds none)
        key = "num_mtp_layers" if r.has("num_mtp_layers") and not r.has("num_nextn_predict_layers") \
            else "num_nextn_predict_layers"
        o["mtp_num_layers"] = r.int(key, d("num_nextn_predict_layers"), minimum=0)
    if family == "kimi_linear":
        _hf_kda(r, d, o, "K" in pattern)
    if text_type == "minimax_m2":
        _minimax_m2_checkpoint(r, o)
    if text_type == "minimax":
        if "N" in pattern:  # its heads and head width are the attention's (lightning_* left at 0)
            o["lightning_block_size"] = r.int("block_size", d("block_size"), minimum=1)
        else:
            r.ignore("block_size", "unused: no lightning attention layers")
    if family == "olmo_hybrid":
        _olmo_hybrid_gdn(r, d, o, "D" in pattern)
    if family in ("qwen3_next", "qwen3_5"):
        for src, dst in (("linear_num_key_heads", "gdn_num_key_heads"),
                         ("linear_num_value_heads", "gdn_num_value_heads"),
                         ("linear_key_head_dim", "gdn_key_head_dim"),
                         ("linear_value_head_dim", "gdn_value_head_dim"),
                         ("linear_conv_kernel_dim", "gdn_conv_kernel_dim")):
            o[dst] = r.int(src, d(src), minimum=1)
        # Qwen3NextAttention's q projection also emits a per-head sigmoid output gate (always on).
        o["attention_output_gate"] = r.bool("attn_output_gate", True, record=False)
    if r.has("use_bidirectional_attention"):
        if r.bool("use_bidirectional_attention"):
            raise r.fail("use_bidirectional_attention", "bidirectional sliding-window attention is not modelled")
        r.ignore("use_bidirectional_attention", NO_EFFECT + " (false)")
    return o


# DeepseekV4Config: per-layer attention types, and the legacy per-layer compress ratios of a checkpoint's file.
_V4_TYPES = {"sliding_attention": "L", "compressed_sparse_attention": "S", "heavily_compressed_attention": "H"}
_V4_RATIOS = {0: "L", 4: "S", 128: "H"}


def _hf_deepseek_v4(r: Reader, d) -> dict:
    """DeepseekV4Config -> schema overrides, as modeling_deepseek_v4 builds the model: one key/value head (the
    attention hard-codes it), one shared expert (n_shared_experts is not read), every layer MoE (hash-routed layers
    still run the router matmul), mHC streams collapsed by the hyper head. Layer types come from layer_types, else
    from the checkpoint's compress_ratios (0 sliding, 4 CSA, 128 HCA; its entries past num_hidden_layers are the MTP
    modules). The MTP modules (num_nextn_predict_layers; transformers does not build them) are window-only layers,
    as the checkpoint's mtp weights have no compressor."""
    # the experts' storage type (DeepseekV4Config moves it into quantization_config): decode bytes, not FLOPs
    r.ignore("expert_dtype", NO_EFFECT + ": the experts' storage type (DeepseekV4Config moves it into "
                             "quantization_config; decode bytes read it with that)")
    o: dict[str, Any] = {"attention_type": "compressed"}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    o["num_kv_heads"] = 1
    r.ignore("num_key_value_heads", "unused: DeepseekV4Attention has one key/value head whatever this says")
    o["mlp_activations"] = _hf_activation(r, "deepseek_v4", d)
    for key in ("head_dim", "q_lora_rank", "o_groups", "o_lora_rank"):
        o[key] = r.int(key, d(key), minimum=1)
    for key in ("qk_rope_head_dim", "partial_rotary_factor"):
        r.ignore(key, NO_EFFECT + ": the RoPE share of head_dim")
    o["num_experts"] = r.int("n_routed_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = 1
    r.ignore("n_shared_experts", "unused: DeepseekV4SparseMoeBlock always has one shared expert")
    if _given(r, "mlp_layer_types"):
        types = r.list("mlp_layer_types", str)
        if len(types) != n or any(t not in ("moe", "hash_moe") for t in types):
            raise r.fail("mlp_layer_types", f"expected {n} entries, each 'moe' or 'hash_moe'")
        r.ignored[r.name("mlp_layer_types")] = (NO_EFFECT + ": hash-routed layers ('hash_moe') still run the router "
                                                "matmul (its scores weigh the experts)")
    r.ignore("num_hash_layers", NO_EFFECT + ": hash-routed layers still run the router matmul")
    rates = {"S": 4, "H": 128}
    if _given(r, "compress_rates"):
        given = r.mapping("compress_rates")
        for name, letter in (("compressed_sparse_attention", "S"), ("heavily_compressed_attention", "H")):
            value = given.get(name, rates[letter])
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise r.fail("compress_rates", f"{name}: expected a positive integer", value)
            rates[letter] = value
    for key, letter in (("compress_rate_csa", "S"), ("compress_rate_hca", "H")):  # the legacy names
        if r.has(key):
            rates[letter] = r.int(key, minimum=1)
    mtp = r.int("num_nextn_predict_layers", d("num_nextn_predict_layers"), minimum=0)
    mtp_letters = ""
    if r.has("layer_types") and r.data["layer_types"] is not None:
        types = r.list("layer_types", str)
        if len(types) != n:
            raise r.fail("layer_types", f"has {len(types)} entries for num_hidden_layers={n}")
        bad = [t for t in types if t not in _V4_TYPES]
        if bad:
            raise r.fail("layer_types", f"layer type {bad[0]!r} is not one of {', '.join(_V4_TYPES)}")
        letters = "".join(_V4_TYPES[t] for t in types)
        if r.has("compress_ratios"):
            r.ignore("compress_ratios", "superseded by layer_types")
    elif r.has("compress_ratios"):
        ratios = r.list("compress_ratios", int)
        if len(ratios) < n:
            raise r.fail("compress_ratios", f"has {len(ratios)} entries for num_hidden_layers={n}")
        bad = [m for m in ratios if m not in _V4_RATIOS]
        if bad:  # DeepseekV4Config maps the legacy list by these three values (the rates come from compress_rates)
            raise r.fail("compress_ratios", f"ratio {bad[0]} is none of 0 (sliding window), 4 (CSA), 128 (HCA)",
                         ratios)
        letters = "".join(_V4_RATIOS[m] for m in ratios[:n])
        mtp_letters = "".join(_V4_RATIOS[m] for m in ratios[n:])  # the checkpoint's MTP modules
    else:
        raise r.fail("layer_types", "DeepSeek-V4 needs its per-layer attention types (layer_types or "
                                    "compress_ratios); DeepseekV4Config's own default matches no published model")
    if mtp:
        o["mtp_num_layers"] = mtp
    # the MTP modules' mixers: window-only unless the checkpoint's ratios say (kept when the count is overridden)
    o["mtp_layer_pattern"] = mtp_letters or "L"
    o["attention_layer_pattern"] = letters
    letters += mtp_letters
    if "S" in letters:
        o["csa_compress_ratio"] = rates["S"]
    if "H" in letters:
        o["hca_compress_ratio"] = rates["H"]
    o["sliding_window_size"] = r.int("sliding_window", d("sliding_window"), minimum=1)
    if "S" in letters:
        o["use_sparse_indexer"] = True
        for key in ("index_n_heads", "index_head_dim", "index_topk"):
            o[key] = r.int(key, d(key), minimum=1)
    else:
        for key in ("index_n_heads", "index_head_dim", "index_topk"):
            r.ignore(key, "unused: no compressed sparse attention layers")
    o["mhc_expansion_rate"] = r.int("hc_mult", d("hc_mult"), minimum=1)
    o["mhc_hyper_head"] = o["mhc_expansion_rate"] > 1
    o["convention_quirks"] = maxtext_quirks("deepseek4")  # how MaxText's function counts DeepSeek-V4
    return o


# MLA types whose config class keeps a present head_dim (no field, or no __post_init__ rule) and whose rotary
# embedding reads it (measured on transformers 5.24: the others replace it by qk_rope_head_dim, or never read it)
_MLA_KEEPS_ROTARY_HEAD_DIM = frozenset({"deepseek_v3", "glm4_moe_lite", "longcat_flash"})


def _hf_mla(r: Reader, text_type: str, d, o: dict, reads_qk_head_dim: bool = False) -> None:
    """MLA's widths. ``reads_qk_head_dim``: the modeling code sizes q by config.qk_head_dim (LongCat-Flash), which
    must then be qk_nope_head_dim + qk_rope_head_dim (its q splits into the two); the others derive it and never
    read a present one (the config class keeps it, the model does not use it)."""
    o["attention_type"] = "mla"
    q = r.int("q_lora_rank", d("q_lora_rank"), none_ok=True)
    o["q_lora_rank"] = 0 if q is None else q  # null: q projected directly from D (DeepSeek-V2-Lite)
    for key in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
        o[key] = r.int(key, d(key), minimum=1 if key in ("kv_lora_rank", "v_head_dim") else 0)
    if r.has("head_dim") and text_type in _MLA_KEEPS_ROTARY_HEAD_DIM and \
            r.int("head_dim", minimum=1, record=False) != o["qk_rope_head_dim"]:
        raise r.fail("head_dim", f"differs from qk_rope_head_dim={o['qk_rope_head_dim']}: {text_type}'s config class "
                                 "keeps a present head_dim and its rotary embedding is that wide, so transformers' "
                                 "model cannot run (the rope slice of q and k is qk_rope_head_dim wide)")
    r.ignore("head_dim", "unused: MLA widths come from qk_nope_head_dim, qk_rope_head_dim and v_head_dim")
    if r.has("qk_head_dim") and reads_qk_head_dim:
        qk = r.int("qk_head_dim")
        if qk != o["qk_nope_head_dim"] + o["qk_rope_head_dim"]:
            raise r.fail("qk_head_dim", f"is not qk_nope_head_dim + qk_rope_head_dim = "
                                        f"{o['qk_nope_head_dim'] + o['qk_rope_head_dim']} (the model splits q into "
                                        "the two)")
        r.ignore("qk_head_dim", "superseded: derived (qk_nope_head_dim + qk_rope_head_dim), checked")
    elif r.has("qk_head_dim"):
        r.ignore("qk_head_dim", NO_EFFECT + ": the model derives q's width from qk_nope_head_dim + qk_rope_head_dim "
                                "(the config class keeps a present value; the modeling code never reads it)")
    if r.has("num_nextn_predict_layers") or d("num_nextn_predict_layers") is not MISSING:
        o["mtp_num_layers"] = r.int("num_nextn_predict_layers", d("num_nextn_predict_layers"))

    # DeepSeek sparse attention: the index_* keys (DeepSeek-V3.2, GLM-5).
    if text_type in ("deepseek_v32", "glm_moe_dsa") or r.has("index_topk"):
        o["use_sparse_indexer"] = True
        o["index_n_heads"] = r.int("index_n_heads", d("index_n_heads"), minimum=1)
        o["index_head_dim"] = r.int("index_head_dim", d("index_head_dim"), minimum=1)
        o["index_topk"] = r.int("index_topk", d("index_topk"), minimum=1)
        full, key, prefer = _hf_index_schedule(r, o["num_decoder_layers"])
        freq, offset = fit_index(full, r, key, prefer)
        if freq != 1:  # with freq 1 every layer computes its own top-k, whatever the offset
            o["index_topk_freq"] = freq
            o["index_skip_offset"] = offset
    else:
        for key in ("index_n_heads", "index_head_dim", "index_topk_freq", "index_skip_topk_offset",
                    "indexer_types", "index_topk_pattern"):
            r.ignore(key, "unused: no index_topk, so no DSA indexer")
    if r.has("index_share_for_mtp_iteration"):
        r.raw("index_share_for_mtp_iteration")
        r.ignore("index_share_for_mtp_iteration",
                 "not modelled: index sharing across MTP iterations (maxflops applies its reuse rule to MTP "
                 "modules numbered from 1)")


def _hf_index_schedule(r: Reader, n: int):
    """Per-layer 'runs its own indexer' list, as GlmMoeDsaConfig builds it: indexer_types, else
    index_topk_pattern ('F'/'S'), else full iff max(i - offset + 1, 0) % freq == 0 (offset default 2)."""
    if _given(r, "indexer_types"):
        types = r.list("indexer_types", str)
        if len(types) != n or any(t not in ("full", "shared") for t in types):
            raise r.fail("indexer_types", f"expected {n} entries, each 'full' or 'shared'")
        for k in ("index_topk_freq", "index_skip_topk_offset", "index_topk_pattern"):
            r.ignore(k, "superseded by indexer_types")
        return [t == "full" for t in types], "indexer_types", None
    if _given(r, "index_topk_pattern"):
        pat = r.str("index_topk_pattern")
        if len(pat) != n or set(pat) - set("FS"):
            raise r.fail("index_topk_pattern", f"expected {n} letters, each F (full) or S (shared)")
        for k in ("index_topk_freq", "index_skip_topk_offset"):
            r.ignore(k, "superseded by index_topk_pattern")
        return [c == "F" for c in pat], "index_topk_pattern", None
    # absent: freq 1 (every layer computes) and GlmMoeDsaConfig's offset 2 (which matters only with freq > 1)
    freq = r.int("index_topk_freq", 1, minimum=1, record=False)
    offset = r.int("index_skip_topk_offset", 2, record=False)
    key = "index_skip_topk_offset" if r.has("index_skip_topk_offset") else "index_topk_freq"
    full = [max(i - offset + 1, 0) % freq == 0 for i in range(n)]
    return full, key, (freq, offset)


def _shared_count(r: Reader, key: str, width: int, moe_width: int) -> int:
    """A shared expert of width k * moe_width costs as k shared experts of moe_width (the schema's unit: the schema
    uses moe_mlp_dim for the shared experts too)."""
    if width % moe_width:
        raise r.fail(key, f"a shared expert of width {width} is not a whole number of experts of "
                          f"moe_intermediate_size={moe_width}; the schema sizes shared experts by moe_mlp_dim, so "
                          "it cannot express this width", width)
    k = width // moe_width
    if k != 1:  # used, but say how
        r.ignored[r.name(key)] = (f"used as {k} shared experts of moe_intermediate_size={moe_width}: the same "
                                  "FLOPs as one shared expert of this width (the schema sizes shared experts by "
                                  "moe_mlp_dim)")
    return k


def _hf_ffn(r: Reader, text_type: str, family: str, d, o: dict, n: int):
    """Set the MoE keys of ``o``; return (per-layer is-MoE list, the key that decided it)."""
    if family in ("dense", "qwen3_5", "olmo_hybrid"):
        return [False] * n, "num_hidden_layers"

    if family == "moe":  # mixtral, gpt_oss (intermediate_size is the expert width), qwen3_moe
        if text_type in ("qwen3_moe", "qwen3_vl_moe_text"):  # num_local_experts is num_experts's alias
            if r.has("num_local_experts") and not r.has("num_experts"):
                o["num_experts"] = r.int("num_local_experts", minimum=1)
            else:
                o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
                if r.has("num_local_experts"):
                    if r.int("num_local_experts") != o["num_experts"]:
                        raise r.fail("num_local_experts", f"disagrees with num_experts={o['num_experts']}")
                    r.ignore("num_local_experts", "superseded: same as num_experts")
            o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
        elif text_type == "minimax":  # MiniMaxConfig maps num_experts to num_local_experts
            o["num_experts"] = _alias(r, "num_local_experts", "num_experts", d("num_local_experts"), minimum=1)
            o["moe_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
        else:
            o["num_experts"] = r.int("num_local_experts", d("num_local_experts"), minimum=1)
            o["moe_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        if text_type == "gpt_oss" and r.has("experts_per_token"):
            alias = r.int("experts_per_token")
            if alias != o["num_experts_per_tok"]:
                raise r.fail("experts_per_token", f"disagrees with num_experts_per_tok={o['num_experts_per_tok']}")
            r.ignore("experts_per_token", "superseded: same as num_experts_per_tok")
        if text_type in ("qwen3_moe", "qwen3_vl_moe_text"):
            return _qwen_moe_layers(r, n)
        return [True] * n, "num_local_experts"

    if family == "qwen3_next":
        o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        moe = o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
        shared = r.int("shared_expert_intermediate_size", d("shared_expert_intermediate_size"))
        if shared:
            if shared % moe:  # one shared expert of its own width
                o["shared_experts"], o["shared_expert_mlp_dim"] = 1, shared
            else:
                o["shared_experts"] = _shared_count(r, "shared_expert_intermediate_size", shared, moe)
            o["shared_expert_gate"] = True  # Qwen3NextSparseMoeBlock.shared_expert_gate: Linear(hidden, 1), sigmoid
        return _qwen_moe_layers(r, n)

    if family == "llama4":
        o["num_experts"] = r.int("num_local_experts", d("num_local_experts"), minimum=1)
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        o["moe_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
        o["shared_experts"] = 1  # Llama4TextMoe always has one shared expert of intermediate_size
        step = r.int("interleave_moe_layer_step", d("interleave_moe_layer_step"), minimum=1)
        moe_layers = r.list("moe_layers", int, None, none_ok=True, record=False)
        if moe_layers is None:  # Llama4TextConfig: range(step - 1, n, step)
            return [(l + 1) % step == 0 for l in range(n)], "interleave_moe_layer_step"
        if any(not 0 <= l < n for l in moe_layers):
            raise r.fail("moe_layers", f"layer indices must be in 0..{n - 1}")
        r.ignore("interleave_moe_layer_step", "superseded by moe_layers")
        return [l in set(moe_layers) for l in range(n)], "moe_layers"

    if family == "kimi_linear":
        return _kimi_moe(r, d, o, n)
    if family == "mimo":
        return _mimo_moe(r, d, o, n)

    # deepseek family: n_routed_experts, n_shared_experts, first_k_dense_replace, moe_layer_freq
    o["num_experts"] = r.int("n_routed_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    # absent: the class default (DeepseekV2Config 2, V3/V32/GlmMoeDsa 1); null: none (DeepSeek's own modeling code)
    o["shared_experts"] = r.int("n_shared_experts", d("n_shared_experts"), none_ok=True) or 0
    if _given(r, "mlp_layer_types"):
        types = r.list("mlp_layer_types", str)
        if len(types) != n or any(t not in ("dense", "sparse") for t in types):
            raise r.fail("mlp_layer_types", f"expected {n} entries, each 'dense' or 'sparse'")
        for key in ("first_k_dense_replace", "moe_layer_freq"):
            r.ignore(key, "superseded by mlp_layer_types")
        return [t == "sparse" for t in types], "mlp_layer_types"
    if text_type == "glm4_moe_lite":  # Glm4MoeLiteConfig: mlp_layer_types, absent: the first layer dense
        for key in ("first_k_dense_replace", "moe_layer_freq"):
            r.ignore(key, "not read by Glm4MoeLiteConfig (its mlp_layer_types, absent: the first layer dense)")
        return [l >= 1 for l in range(n)], "num_hidden_layers"
    k = r.int("first_k_dense_replace", d("first_k_dense_replace"))
    freq = r.int("moe_layer_freq", 1, minimum=1, record=False)
    # DeepSeek's modeling code: MoE iff layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0
    key = "moe_layer_freq" if freq != 1 else "first_k_dense_replace"
    return [l >= k and l % freq == 0 for l in range(n)], key


def _qwen_moe_layers(r: Reader, n: int):
    """Qwen3-MoE / Qwen3-Next: MoE iff layer not in mlp_only_layers and (layer + 1) % decoder_sparse_step == 0."""
    # absent: every layer is MoE (the Qwen3MoeConfig / Qwen3NextConfig defaults 1 and [])
    step = r.int("decoder_sparse_step", 1, minimum=1, record=False)
    only = r.list("mlp_only_layers", int, [], none_ok=True, record=False) or []
    key = "mlp_only_layers" if only else "decoder_sparse_step"
    return [l not in set(only) and (l + 1) % step == 0 for l in range(n)], key


def _hf_layers(r: Reader, text_type: str, family: str, d, n: int):
    """Per-layer attention letters by the model type's rule; returns (letters, key that decided them)."""
    def given(key):
        return _given(r, key)

    def from_types(allowed):
        types = r.list("layer_types", str)
        if len(types) != n:
            raise r.fail("layer_types", f"has {len(types)} entries for num_hidden_layers={n}")
        return _layer_letters(types, r, "layer_types", allowed)

    if family == "deepseek":
        if given("layer_types"):
            return from_types({"G"}), "layer_types"
        return ["G"] * n, "num_hidden_layers"

    if family == "kimi_linear":
        return _kimi_layers(r, n)

    if family == "mimo":  # MiMoV2FlashConfig: full attention on layer 0 and every 6th, sliding elsewhere
        if given("layer_types"):
            return from_types({"G", "L"}), "layer_types"
        return ["G" if i == 0 or not (i + 1) % 6 else "L" for i in range(n)], "num_hidden_layers"

    if text_type == "gemma3_text":
        if given("layer_types"):
            for k in ("sliding_window_pattern", "_sliding_window_pattern"):  # the second: as transformers saves it
                r.ignore(k, "superseded by layer_types")
            return from_types({"G", "L"}), "layer_types"
        # Gemma3TextConfig derives layer_types from the sliding_window_pattern kwarg (absent: 6); the underscored
        # attribute it saves beside them is kept as given and never read again
        p = r.int("sliding_window_pattern", d("sliding_window_pattern"), minimum=1)
        if r.has("_sliding_window_pattern"):
            r.ignore("_sliding_window_pattern", NO_EFFECT + ": an attribute Gemma3TextConfig saves; layer_types come "
                                                "from the sliding_window_pattern kwarg")
        return ["L" if (i + 1) % p else "G" for i in range(n)], "sliding_window_pattern"

    if text_type == "gpt_oss":
        if given("layer_types"):
            return from_types({"G", "L"}), "layer_types"
        r.defaults[r.name("layer_types")] = "sliding/full alternating from layer 0 (GptOssConfig)"
        return ["L" if (i + 1) % 2 else "G" for i in range(n)], "num_hidden_layers"

    if family == "llama4":
        if given("layer_types"):
            for k in ("no_rope_layers", "no_rope_layer_interval"):
                r.ignore(k, NO_EFFECT + ": RoPE only (layer_types sets the attention kind)")
            return from_types({"G", "C"}), "layer_types"
        # Llama4TextConfig: no_rope_layers[i] == 1 means layer i USES RoPE (-> chunked attention),
        # 0 means a NoPE layer (-> full attention); default: NoPE every no_rope_layer_interval-th layer.
        nope = r.list("no_rope_layers", int, None, none_ok=True, record=False)
        if nope:
            if len(nope) < n or any(v not in (0, 1) for v in nope):
                raise r.fail("no_rope_layers", f"expected at least {n} entries, each 0 (NoPE) or 1 (RoPE)")
            r.ignore("no_rope_layer_interval", "superseded by no_rope_layers")
            return ["C" if v else "G" for v in nope[:n]], "no_rope_layers"
        interval = r.int("no_rope_layer_interval", d("no_rope_layer_interval"), minimum=1)
        return ["C" if (i + 1) % interval else "G" for i in range(n)], "no_rope_layer_interval"

    if family in ("qwen3_next", "qwen3_5"):
        if given("layer_types"):
            r.ignore("full_attention_interval", "superseded by layer_types")
            return from_types({"G", "D"}), "layer_types"
        interval = r.int("full_attention_interval", d("full_attention_interval"), minimum=1)
        return ["D" if (i + 1) % interval else "G" for i in range(n)], "full_attention_interval"

    if text_type == "minimax":
        return _minimax_layers(r, d, n)

    if family == "olmo_hybrid":  # OlmoHybridConfig: full attention on each 4th layer (the last if none)
        if given("layer_types"):
            return from_types({"G", "D"}), "layer_types"
        letters = ["G" if i % 4 == 3 else "D" for i in range(n)]
        if "G" not in letters:
            letters[-1] = "G"
        return letters, "num_hidden_layers"

    if text_type in ("mistral", "mixtral"):
        # MistralConfig / MixtralConfig: a non-null sliding_window applies to every layer (layer_types is not
        # read: transformers warns and points to the Ministral classes).
        r.ignore("layer_types", "not modelled: Mistral/Mixtral ignore layer_types (the window applies to every "
                                "layer)")
        window = r.raw("sliding_window", d("sliding_window"), none_ok=True)
        return ["L" if window is not None else "G"] * n, "sliding_window"

    if text_type == "olmo3":  # Olmo3Config: sliding on every layer but each 4th, absent layer_types
        if given("layer_types"):
            return from_types({"G", "L"}), "layer_types"
        return ["G" if (i + 1) % 4 == 0 else "L" for i in range(n)], "num_hidden_layers"

    if text_type in ("qwen3", "qwen3_moe"):
        if given("layer_types"):
            for k in ("use_sliding_window", "max_window_layers"):
                r.ignore(k, "superseded by layer_types")
            return from_types({"G", "L"}), "layer_types"
        if r.has("use_sliding_window") and r.bool("use_sliding_window"):
            if text_type == "qwen3_moe":  # Qwen3-MoE's attention windows every layer; it has no layer_types
                r.ignore("max_window_layers", "unused: Qwen3-MoE applies the window to every layer")
                return ["L"] * n, "use_sliding_window"
            # Qwen3Config: sliding iff sliding_window is set and layer >= max_window_layers
            start = r.int("max_window_layers", d("max_window_layers"))
            return ["L" if i >= start else "G" for i in range(n)], "max_window_layers"
        r.ignore("use_sliding_window", NO_EFFECT + " (false)")
        r.ignore("max_window_layers", "unused: use_sliding_window is false")
        return ["G"] * n, "num_hidden_layers"

    # llama
    if given("layer_types"):
        return from_types({"G"}), "layer_types"
    return ["G"] * n, "num_hidden_layers"




# --- Kimi-Linear (kimi_linear): Kimi delta attention and MLA layers, DeepSeek-style MoE ---------------------------------

# KimiLinearConfig reads these of the checkpoint's linear_attn_config (they win over its linear_* fields); a key of
# the dict it does not read is refused when it would change the FLOPs of the real model (e.g. a full-rank gate)
_KDA_KEYS = {"head_dim": "linear_head_dim", "num_heads": "linear_num_heads",
             "short_conv_kernel_size": "linear_conv_kernel_dim"}
_KDA_NO_EFFECT = {"gate_lower_bound"}  # a clamp of the forget gate: elementwise


def _linear_attn_config(r: Reader) -> dict:
    """The checkpoint's linear_attn_config dict ({} when absent or null), its unread keys refused by name."""
    if not _given(r, "linear_attn_config"):
        if not r.has("linear_attn_config"):
            r.defaults[r.name("linear_attn_config")] = {}  # KimiLinearConfig's: the linear_* fields decide
        return {}
    lac = dict(r.mapping("linear_attn_config"))
    for key in lac:
        if key not in _KDA_KEYS and key not in ("full_attn_layers", "kda_layers") and key not in _KDA_NO_EFFECT:
            raise r.fail("linear_attn_config", f"key {key!r} ({lac[key]!r}) is not read by transformers' "
                                               "KimiLinearConfig and not modelled here")
    return lac


def _kimi_layers(r: Reader, n: int):
    """KimiLinearConfig's layer types: layer_types, else the checkpoint's 1-based full_attn_layers / kda_layers,
    else full attention at every 0-based layer i > 0 with i % 4 == 0 (Kimi delta attention elsewhere)."""
    kinds = {"full_attention": "G", "linear_attention": "K"}
    lac = _linear_attn_config(r)
    if _given(r, "layer_types"):
        types = r.list("layer_types", str)
        if len(types) != n or any(t not in kinds for t in types):
            raise r.fail("layer_types", f"expected {n} entries, each 'full_attention' or 'linear_attention'")
        return [kinds[t] for t in types], "layer_types"
    if "full_attn_layers" in lac and "kda_layers" in lac:
        full, kda = lac["full_attn_layers"], lac["kda_layers"]
        numbers = list(full) + list(kda)
        if any(type(x) is not int or not 1 <= x <= n for x in numbers) or sorted(numbers) != list(range(1, n + 1)):
            raise r.fail("linear_attn_config", f"full_attn_layers and kda_layers must number the layers 1..{n} once "
                                               "each between them")
        return ["G" if i + 1 in set(full) else "K" for i in range(n)], "linear_attn_config"
    return ["G" if i and i % 4 == 0 else "K" for i in range(n)], "num_hidden_layers"


def _hf_kda(r: Reader, d, o: dict, used: bool) -> None:
    """The Kimi delta attention widths: linear_attn_config's, else the linear_* fields (both read by
    KimiLinearConfig, the dict winning). Its gates are low rank with rank head_dim (KimiLinearForgetGate, g_a_proj)."""
    lac = _linear_attn_config(r)
    for sub, field in _KDA_KEYS.items():
        if sub in lac:
            value = lac[sub]
            if type(value) is not int or value < 1:
                raise r.fail("linear_attn_config", f"{sub} must be a positive integer, got {value!r}")
            if r.has(field):
                r.raw(field, record=False)
                r.ignore(field, f"superseded by linear_attn_config.{sub}")
        elif used:
            value = r.int(field, d(field), minimum=1)
        else:
            r.ignore(field, "unused: no Kimi delta attention layers")
            continue
        if used:
            o[{"head_dim": "kda_head_dim", "num_heads": "kda_num_heads",
               "short_conv_kernel_size": "kda_conv_kernel"}[sub]] = value


def _alias(r: Reader, saved: str, field: str, default, minimum: int = 0):
    """A KimiLinearConfig field written under its saved name or its attribute-map alias (both build the model)."""
    if r.has(field) and not r.has(saved):
        return r.int(field, minimum=minimum)
    value = r.int(saved, default, minimum=minimum)
    if r.has(field):
        if r.int(field) != value:
            raise r.fail(field, f"disagrees with {saved}={value}")
        r.ignore(field, f"superseded: same as {saved}")
    return value


def _kimi_moe(r: Reader, d, o: dict, n: int):
    """KimiLinearMoE: a sigmoid router over num_experts gated experts of moe_intermediate_size, top
    num_experts_per_token, plus one gated shared MLP of moe_intermediate_size x num_shared_experts; MoE on the
    layers mlp_layer_types calls sparse, else on every layer from first_k_dense_replace (absent: 1)."""
    o["num_experts"] = _alias(r, "num_experts", "num_local_experts", d("num_experts"), minimum=1)
    o["num_experts_per_tok"] = _alias(r, "num_experts_per_token", "num_experts_per_tok", d("num_experts_per_token"),
                                      minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = _alias(r, "num_shared_experts", "n_shared_experts", d("num_shared_experts"))
    r.ignore("moe_layer_freq", "not read by KimiLinearConfig (mlp_layer_types, else first_k_dense_replace)")
    if _given(r, "mlp_layer_types"):
        types = r.list("mlp_layer_types", str)
        if len(types) != n or any(t not in ("dense", "sparse") for t in types):
            raise r.fail("mlp_layer_types", f"expected {n} entries, each 'dense' or 'sparse'")
        r.ignore("first_k_dense_replace", "superseded by mlp_layer_types")
        return [t == "sparse" for t in types], "mlp_layer_types"
    k = r.int("first_k_dense_replace", 1)
    return [l >= k for l in range(n)], "first_k_dense_replace"


# --- MiniMax-01 / M1 (minimax): lightning attention and softmax attention layers, MoE every layer -------------------


def _minimax_layers(r: Reader, d, n: int):
    """MiniMaxConfig's layer types: layer_types, else softmax attention on the even 0-based layers and lightning
    attention on the odd ones; the softmax layers are windowed on every layer when sliding_window is set (the
    model's mask; layer_types does not say)."""
    window = r.raw("sliding_window", d("sliding_window"), none_ok=True)
    full = "L" if window is not None else "G"
    kinds = {"full_attention": full, "linear_attention": "N"}
    if _given(r, "layer_types"):
        types = r.list("layer_types", str)
        if len(types) != n or any(t not in kinds for t in types):
            raise r.fail("layer_types", f"expected {n} entries, each 'full_attention' or 'linear_attention'")
        return [kinds[t] for t in types], "layer_types"
    return [full if (i + 1) % 2 else "N" for i in range(n)], "num_hidden_layers"


def _minimax_m2_checkpoint(r: Reader, o: dict) -> None:
    """Keys of MiniMax's own MiniMax-M2 checkpoint that transformers' MiniMaxM2Config keeps but does not read.
    attn_type_list (1: softmax attention) and shared_intermediate_size (0: no shared expert) are accepted at the
    values the transformers model builds and refused otherwise; the MTP modules (use_mtp, num_mtp_modules of
    mtp_transformer_layers layers each; transformers builds none) count as maxflops' MTP modules in training, each
    an eh projection, one layer like the last decoder layer and its own logits."""
    if r.has("attn_type_list"):
        kinds = r.list("attn_type_list", int)
        if any(k != 1 for k in kinds):
            raise r.fail("attn_type_list", "lightning-attention layers (0) in a minimax_m2 file are not built by "
                                           "transformers' MiniMaxM2 (load a 'minimax' file for MiniMax-01's hybrid)")
        r.ignore("attn_type_list", NO_EFFECT + " (every layer softmax attention)")
    if r.has("shared_intermediate_size"):
        if r.int("shared_intermediate_size"):
            raise r.fail("shared_intermediate_size", "a shared expert is not built by transformers' MiniMaxM2")
        r.ignore("shared_intermediate_size", NO_EFFECT + " (0: no shared expert)")
    for key in ("use_routing_bias", "qk_norm_type", "scoring_func"):
        if r.has(key):
            r.ignore(key, NO_EFFECT + " (routing bias, norm kind, router activation)")
    if r.has("use_mtp") and r.bool("use_mtp"):
        per = r.int("mtp_transformer_layers", 1, minimum=1)
        if per != 1:
            raise r.fail("mtp_transformer_layers", "MTP modules of more than one transformer layer are not modelled")
        o["mtp_num_layers"] = r.int("num_mtp_modules", minimum=0)
    else:
        for key in ("num_mtp_modules", "mtp_transformer_layers"):
            r.ignore(key, "unused: use_mtp is false or absent")


# --- OLMo-hybrid (olmo_hybrid): the gated delta net and GQA attention layers, a dense MLP ----------------------------


def _olmo_hybrid_gdn(r: Reader, d, o: dict, used: bool) -> None:
    """OlmoHybridGatedDeltaNet: separate q, k (key heads), v and the output gate g (value heads), a and b (value
    heads), the same FLOPs as Qwen3-Next's fused projections; no output gate on its attention. Absent or null
    widths take OlmoHybridConfig's rules: heads = num_attention_heads, key width int(0.75 x hidden / key heads),
    value width twice the key width."""
    keys = ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
            "linear_conv_kernel_dim")
    if not used:
        for key in keys:
            r.ignore(key, "unused: no gated-delta-net layers")
        return
    heads = o["num_query_heads"]

    def width(key, rule):
        value = r.int(key, None, minimum=1, none_ok=True, record=False) if r.has(key) else None
        if value is None:
            value = rule()
            r.defaults[r.name(key)] = f"{value} (OlmoHybridConfig's rule)"
        return value

    o["gdn_num_key_heads"] = nk = width("linear_num_key_heads", lambda: heads)
    o["gdn_num_value_heads"] = width("linear_num_value_heads", lambda: heads)
    o["gdn_key_head_dim"] = dk = width("linear_key_head_dim", lambda: int(0.75 * o["emb_dim"] / nk))
    o["gdn_value_head_dim"] = width("linear_value_head_dim", lambda: 2 * dk)
    o["gdn_conv_kernel_dim"] = r.int("linear_conv_kernel_dim", d("linear_conv_kernel_dim"), minimum=1)


# --- MiMo-V2-Flash (mimo_v2_flash): sliding-window and full GQA layers, DeepSeek-style MoE without a shared expert -----


def _mimo_attention(r: Reader, o: dict, pattern: str) -> None:
    """MiMoV2FlashAttention: a sliding-window layer has twice num_key_value_heads (and attention sinks, no matmul),
    a full layer num_key_value_heads; the window is sliding_window, or the checkpoint's sliding_window_size + 1
    (MiMoV2FlashConfig's rule)."""
    kv = o["num_kv_heads"]
    if "L" in pattern:
        o["num_kv_heads"] = 2 * kv
        if "G" in pattern:
            o["global_num_kv_heads"] = kv
    if r.has("sliding_window_size") and r.raw("sliding_window_size", none_ok=True) is not None:
        window = r.int("sliding_window_size", minimum=0) + 1  # wins over sliding_window, as in the class
        if "L" in pattern:
            o["sliding_window_size"] = window


def _mimo_moe(r: Reader, d, o: dict, n: int):
    """MiMoV2FlashMoE: DeepSeek-V3's router and experts without a shared expert, on the layers mlp_layer_types calls
    sparse (absent: every layer but the first)."""
    o["num_experts"] = r.int("n_routed_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    if _given(r, "mlp_layer_types"):
        types = r.list("mlp_layer_types", str)
        if len(types) != n or any(t not in ("dense", "sparse") for t in types):
            raise r.fail("mlp_layer_types", f"expected {n} entries, each 'dense' or 'sparse'")
        return [t == "sparse" for t in types], "mlp_layer_types"
    return [l >= 1 for l in range(n)], "num_hidden_layers"


# --- Gemma 4 (gemma4_text): sliding and global layers of their own widths, per-layer embeddings, KV sharing, MoE -------


def _gemma4(r: Reader, d) -> dict:
    """Gemma4TextConfig, as modeling_gemma4 builds the model: layer_types (absent: five sliding to one full; the last
    layer full whatever it says); the sliding layers' head_dim and num_key_value_heads; the full layers' own head
    width and KV heads (per_layer_config, as transformers saves them, else the kwargs global_head_dim, default 512,
    and num_global_key_value_heads, used with attention_k_eq_v), one projection as both K and V on the full layers
    with attention_k_eq_v; per-layer embeddings (hidden_size_per_layer_input: a gate and a projection per layer and
    one projection to every layer's input); the last num_kv_shared_layers layers reusing K and V (their MLP twice as
    wide with use_double_wide_mlp); with enable_moe_block, every layer's dense MLP beside top_k_experts of
    num_experts experts of moe_intermediate_size (the dense MLP as one shared expert)."""
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    heads = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    kv = o["num_kv_heads"] = r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1)
    hd = o["head_dim"] = r.int("head_dim", d("head_dim"), minimum=1)
    act = r.activation("hidden_activation", d("hidden_activation"))
    r.ignore("hidden_act", "not read by Gemma4TextConfig (hidden_activation is what Gemma 4 uses)")
    o["mlp_activations"] = (act, "linear")
    bidirectional = r.raw("use_bidirectional_attention", None, none_ok=True, record=False)
    if bidirectional == "all":
        raise r.fail("use_bidirectional_attention", "bidirectional attention on every token is not modelled")
    r.ignore("use_bidirectional_attention", NO_EFFECT + " (none, or the image tokens only)")
    # layers
    if _given(r, "layer_types"):
        types = r.list("layer_types", str)
        kinds = {"sliding_attention": "L", "full_attention": "G"}
        if len(types) != n or any(t not in kinds for t in types):
            raise r.fail("layer_types", f"expected {n} entries, each 'sliding_attention' or 'full_attention'")
        letters = [kinds[t] for t in types]
        key = "layer_types"
    else:
        letters, key = ["L" if (i + 1) % 6 else "G" for i in range(n)], "num_hidden_layers"
    letters[-1] = "G"  # Gemma4TextConfig forces the last layer to full attention
    o["attention_layer_pattern"] = fit_pattern(letters, r, key)
    if "L" in letters:
        o["sliding_window_size"] = r.int("sliding_window", d("sliding_window"), minimum=1)
    else:
        r.ignore("sliding_window", "unused: no sliding-window layers")
    # the full layers' widths
    k_eq_v = r.bool("attention_k_eq_v", d("attention_k_eq_v"))
    if _given(r, "per_layer_config"):
        plc = r.mapping("per_layer_config")
        full = {i for i, letter in enumerate(letters) if letter == "G"}
        widths = set()
        for idx, entry in plc.items():
            if not str(idx).isdigit() or int(idx) not in full or not isinstance(entry, dict) or \
                    set(entry) - {"head_dim", "num_key_value_heads"}:
                raise r.fail("per_layer_config", f"entry {idx!r}: {entry!r} is not a full-attention layer's head_dim "
                                                 "/ num_key_value_heads")
            widths.add((entry.get("head_dim", hd), entry.get("num_key_value_heads", kv)))
        if len(widths) > 1 or (widths and len(plc) != len(full)):
            raise r.fail("per_layer_config", "the full-attention layers do not all share one head_dim and KV heads")
        g_hd, g_kv = widths.pop() if widths else (hd, kv)
        for k in ("global_head_dim", "num_global_key_value_heads"):
            r.ignore(k, "superseded by per_layer_config")
    else:
        g_hd = r.int("global_head_dim", 512, minimum=1)
        g_kv = r.int("num_global_key_value_heads", None, minimum=1, none_ok=True) if k_eq_v else None
        if not k_eq_v:
            r.ignore("num_global_key_value_heads", "not read without attention_k_eq_v (Gemma4TextConfig)")
        if not r.has("per_layer_config"):  # what Gemma4TextConfig derives and saves
            entry = {"head_dim": g_hd} | ({"num_key_value_heads": g_kv} if g_kv is not None else {})
            r.defaults[r.name("per_layer_config")] = {str(i): dict(entry) for i, x in enumerate(letters) if x == "G"}
        g_kv = kv if g_kv is None else g_kv
    if "G" in letters:
        if g_hd != hd:
            o["global_head_dim"] = g_hd
        if g_kv != kv:
            o["global_num_kv_heads"] = g_kv
        o["share_kv_projections"] = k_eq_v
    # per-layer embeddings, KV sharing
    ple = r.int("hidden_size_per_layer_input", d("hidden_size_per_layer_input"), minimum=0, none_ok=True)
    if ple:
        o["per_layer_input_dim"] = ple
    r.ignore("vocab_size_per_layer_input", NO_EFFECT + " (a lookup table)")
    shared = r.int("num_kv_shared_layers", d("num_kv_shared_layers"), minimum=0)
    if shared:
        o["num_kv_shared_layers"] = shared
        o["double_wide_kv_shared_mlp"] = r.bool("use_double_wide_mlp", d("use_double_wide_mlp"))
    else:
        r.ignore("use_double_wide_mlp", "unused: no KV-shared layers")
    # FFN
    o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    if r.bool("enable_moe_block", d("enable_moe_block")):
        o["num_experts"] = r.int("num_experts", minimum=1)
        o["num_experts_per_tok"] = r.int("top_k_experts", minimum=1)
        o["moe_mlp_dim"] = r.int("moe_intermediate_size", minimum=1)
        o["shared_experts"], o["shared_expert_mlp_dim"] = 1, o["mlp_dim"]  # the dense MLP beside the experts
    else:
        for k in ("num_experts", "top_k_experts", "moe_intermediate_size"):
            r.raw(k, None, none_ok=True, record=False)
            r.ignore(k, "unused: enable_moe_block is false")
    return o


# --- LongCat-Flash (longcat_flash): two MLA + MLP sublayers per layer and a shortcut MoE with zero-computation experts


def _longcat(r: Reader, d) -> dict:
    """LongcatFlashConfig, as modeling_longcat_flash builds the model: each of num_layers layers holds two sublayers
    of MLA and a gated MLP (ffn_hidden_size) and one MoE on the first sublayer's normed input (the shortcut): a
    softmax router over n_routed_experts + zero_expert_num experts, top moe_topk, the zero experts an identity (no
    matmul). In maxflops' terms: 2 x num_layers layers of MLA ('G'), the first of each pair an MoE layer whose shared
    expert is that sublayer's MLP, the second a dense layer (ffn_layer_pattern 'EF'); zero_experts, with the share
    of slots they take a stated knob (zero_expert_share, not in the file)."""
    o: dict[str, Any] = {}
    layers = r.int("num_layers", d("num_layers"), minimum=1)
    if r.has("num_hidden_layers"):
        if r.int("num_hidden_layers") != 2 * layers:
            raise r.fail("num_hidden_layers", f"is 2 x num_layers = {2 * layers} in LongcatFlashConfig")
        r.ignore("num_hidden_layers", "superseded: 2 x num_layers")
    o["num_decoder_layers"] = 2 * layers
    o["attention_layer_pattern"], o["ffn_layer_pattern"] = "G", "EF"
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    heads = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    o["num_kv_heads"] = heads
    r.ignore("num_key_value_heads", "unused: MLA (every head's keys and values come from the latent)")
    act = r.activation("hidden_act", d("hidden_act"))
    o["mlp_activations"] = (act, "linear")
    _hf_mla(r, "longcat_flash", d, o, reads_qk_head_dim=True)
    width = o["mlp_dim"] = _alias(r, "ffn_hidden_size", "intermediate_size", d("ffn_hidden_size"), minimum=1)
    o["num_experts"] = _alias(r, "n_routed_experts", "num_local_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = _alias(r, "moe_topk", "num_experts_per_tok", d("moe_topk"), minimum=1)
    o["moe_mlp_dim"] = r.int("expert_ffn_hidden_size", d("expert_ffn_hidden_size"), minimum=1)
    zero = r.int("zero_expert_num", d("zero_expert_num"), minimum=0, none_ok=True) or 0
    if zero:
        o["zero_experts"] = zero
    if r.has("zero_expert_type"):
        if r.str("zero_expert_type") != "identity":
            raise r.fail("zero_expert_type", "only identity zero experts are modelled")
        r.ignore("zero_expert_type", NO_EFFECT + " (identity)")
    o["shared_experts"], o["shared_expert_mlp_dim"] = 1, width  # the first sublayer's MLP beside the MoE
    for key in ("router_bias", "mla_scale_q_lora", "mla_scale_kv_lora"):
        if r.has(key):
            r.ignore(key, NO_EFFECT + " (a bias or a scale)")
    return o
