"""OLMo 2: Olmo2Config, modeling_olmo2; as Llama (with norms on q and k, no matmul), global attention."""

from __future__ import annotations

from ..house import HFType

# Olmo2Config (num_key_value_heads: post-init rule; head_dim: the model's getattr rule, hidden_size // heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 50304, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS)
