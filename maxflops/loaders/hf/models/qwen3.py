"""Qwen3 (dense): Qwen3Config, modeling_qwen3; windows from max_window_layers on with use_sliding_window."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Qwen3Config
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "hidden_act": "silu",
    "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28,
}

TYPE = HFType(defaults=DEFAULTS, layers=parts.qwen_windows)
