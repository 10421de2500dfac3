"""Mistral: MistralConfig, modeling_mistral; as Llama, with a non-null sliding_window on every layer."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# MistralConfig (head_dim: post-init rule); a window on every layer unless null
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "sliding_window": 4096,
}

TYPE = HFType(defaults=DEFAULTS, layers=parts.window_every_layer)
