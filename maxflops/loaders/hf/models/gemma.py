"""Gemma: GemmaConfig, modeling_gemma; as Llama (GQA, a gated MLP, global attention), head_dim 256 by default."""

from __future__ import annotations

from ..house import HFType

# GemmaConfig (its __post_init__ reads hidden_act "gelu" as "gelu_pytorch_tanh": the same FLOPs)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576, "num_hidden_layers": 28,
    "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256, "hidden_act": "gelu_pytorch_tanh",
}


TYPE = HFType(defaults=DEFAULTS)
