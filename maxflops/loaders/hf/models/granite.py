"""Granite (3.x dense): GraniteConfig, modeling_granite; as Llama (GQA, a gated MLP, global attention), scaled by
multipliers (no matmul of their own)."""

from __future__ import annotations

from ..house import HFType

# GraniteConfig (num_key_value_heads: post-init rule; no head_dim field: the model reads a present one, else
# hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS)
