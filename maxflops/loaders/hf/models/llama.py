"""Llama (Llama 2, 3, 3.1): LlamaConfig, modeling_llama; GQA, a gated MLP, global attention."""

from __future__ import annotations

from ..house import HFType

# LlamaConfig (num_key_value_heads, head_dim: post-init rules)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS)
