"""Arcee (AFM): ArceeConfig, modeling_arcee; as Llama with a plain MLP (up_proj, ReLU^2, down_proj)."""

from __future__ import annotations

from ..house import HFType

# ArceeConfig (num_key_value_heads, head_dim: post-init rules)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 2560, "intermediate_size": 18432, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "relu2",
}

TYPE = HFType(defaults=DEFAULTS, gated=False)
