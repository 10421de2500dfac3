"""Qwen3-Next: Qwen3NextConfig, modeling_qwen3_next; gated delta net layers and gated full attention every
full_attention_interval-th layer, MoE with a gated shared expert."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Qwen3NextConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 48,
    "num_attention_heads": 16, "num_key_value_heads": 2, "hidden_act": "silu", "head_dim": 256,
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
    "linear_num_key_heads": 16, "linear_num_value_heads": 32,
    "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "num_experts_per_tok": 10,
    "num_experts": 512, "full_attention_interval": 4,
}

TYPE = HFType(defaults=DEFAULTS, ffn=parts.qwen_moe_shared, layers=parts.interval_layers("D"),
              extras=(parts.gated_delta_net, parts.qwen_mtp))
