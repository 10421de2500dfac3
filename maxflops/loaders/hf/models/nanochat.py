"""nanochat: NanoChatConfig, modeling_nanochat; GQA (parameter-free norms on q and k), a plain MLP (fc1, relu2, fc2),
global attention."""

from __future__ import annotations

from ..house import HFType

# NanoChatConfig (num_key_value_heads: post-init rule; head_dim: the model's getattr rule, hidden_size // heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 50304, "hidden_size": 768, "intermediate_size": 8192, "num_hidden_layers": 12,
    "num_attention_heads": 6, "hidden_act": "relu2",
}

TYPE = HFType(defaults=DEFAULTS, gated=False)
