"""Qwen3.5-MoE's text model: Qwen3_5MoeTextConfig; Qwen3-Next's layers (every layer MoE with a gated shared expert)."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Qwen3_5MoeTextConfig (every layer MoE, with a gated shared expert)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 248320, "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16,
    "num_key_value_heads": 2, "head_dim": 256, "hidden_act": "silu", "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
    "linear_num_value_heads": 32, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
    "num_experts_per_tok": 8, "num_experts": 256, "full_attention_interval": 4,
}

TYPE = HFType(defaults=DEFAULTS, ffn=parts.qwen_moe_shared, layers=parts.interval_layers("D"),
              extras=(parts.gated_delta_net, parts.qwen_mtp))
