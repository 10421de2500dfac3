"""ERNIE 4.5 (dense): Ernie4_5Config, modeling_ernie4_5; as Llama (use_bias: biases only)."""

from __future__ import annotations

from ..house import HFType

# Ernie4_5Config (head_dim 128; null: hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 103424, "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 18,
    "num_attention_heads": 16, "num_key_value_heads": 2, "hidden_act": "silu", "head_dim": 128,
}

TYPE = HFType(defaults=DEFAULTS)
