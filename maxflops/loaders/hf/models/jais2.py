"""Jais 2: Jais2Config, modeling_jais2; GQA with biases, a plain MLP (up, relu2, down) with biases, LayerNorms,
global attention."""

from __future__ import annotations

from ..house import HFType

# Jais2Config (num_key_value_heads, head_dim: post-init rules)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 150272, "hidden_size": 3328, "intermediate_size": 26624, "num_hidden_layers": 32,
    "num_attention_heads": 26, "hidden_act": "relu2",
}

TYPE = HFType(defaults=DEFAULTS, gated=False)
