"""Ministral 3: Ministral3Config, modeling_ministral3; as Mistral (GQA, a gated MLP), a non-null sliding_window on
every layer (null by default: global)."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Ministral3Config
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 34,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu",
    "sliding_window": None,
}

TYPE = HFType(defaults=DEFAULTS, layers=parts.window_every_layer)
