"""Qwen3-VL's text model: Qwen3VLTextConfig; as Qwen3 dense, global attention."""

from __future__ import annotations

from ..house import HFType

# Qwen3VLTextConfig
DEFAULTS = {
    "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS)
