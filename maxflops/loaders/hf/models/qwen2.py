"""Qwen2 / Qwen2.5 (dense): Qwen2Config, modeling_qwen2; GQA (q, k, v with biases), a gated MLP, windows from
max_window_layers on with use_sliding_window and a non-null sliding_window."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Qwen2Config (no head_dim field: the model uses getattr(config, "head_dim", hidden_size // num_attention_heads))
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "hidden_act": "silu", "use_sliding_window": False,
    "sliding_window": 4096, "max_window_layers": 28,
}


TYPE = HFType(
    defaults=DEFAULTS, layers=parts.qwen_windows,
    no_effect={"use_mrope": "no Qwen2Config field (Qwen2.5 files carry it false); modeling_qwen2 never reads it"},
)
