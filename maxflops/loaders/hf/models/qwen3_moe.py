"""Qwen3-MoE: Qwen3MoeConfig, modeling_qwen3_moe; experts on Qwen's sparse step, no shared expert."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Qwen3MoeConfig (no head_dim field: the model uses hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 24,
    "num_attention_heads": 32, "num_key_value_heads": 4, "hidden_act": "silu", "moe_intermediate_size": 768,
    "num_experts_per_tok": 8, "num_experts": 128, "sliding_window": 4096,
}

TYPE = HFType(
    defaults=DEFAULTS, ffn=parts.qwen_moe, layers=parts.qwen_window(every_layer=True),
    no_effect={"shared_expert_intermediate_size": "no Qwen3MoeConfig field; Qwen3-MoE has no shared expert "
                                                  "(modeling_qwen3_moe never reads it)"},
)
