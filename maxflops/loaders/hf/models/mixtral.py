"""Mixtral: MixtralConfig, modeling_mixtral; every layer MoE (intermediate_size is the expert width), a non-null
sliding_window on every layer."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# MixtralConfig (head_dim: null, the model uses hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "num_local_experts": 8,
    "num_experts_per_tok": 2, "sliding_window": None,
}

TYPE = HFType(defaults=DEFAULTS, ffn=parts.local_experts(), dense_key=None, layers=parts.window_every_layer)
