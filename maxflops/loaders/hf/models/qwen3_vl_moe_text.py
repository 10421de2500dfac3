"""Qwen3-VL-MoE's text model: Qwen3VLMoeTextConfig; Qwen3-MoE's experts, global attention."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Qwen3VLMoeTextConfig (head_dim: null, the model uses hidden_size // heads)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
    "num_attention_heads": 16, "num_key_value_heads": 16, "hidden_act": "silu", "moe_intermediate_size": 1408,
    "num_experts_per_tok": 4, "num_experts": 60,
}

TYPE = HFType(defaults=DEFAULTS, ffn=parts.qwen_moe)
