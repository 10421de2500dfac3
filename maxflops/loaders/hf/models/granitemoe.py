"""Granite MoE (3.x): GraniteMoeConfig, modeling_granitemoe; Granite's attention, every layer MoE (a router
D -> num_local_experts, gated experts of intermediate_size, top num_experts_per_tok)."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# GraniteMoeConfig (num_key_value_heads: post-init rule; no head_dim field: the model reads a present one, else
# hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu", "num_local_experts": 8, "num_experts_per_tok": 2,
}

TYPE = HFType(defaults=DEFAULTS, ffn=parts.local_experts(), dense_key=None)
