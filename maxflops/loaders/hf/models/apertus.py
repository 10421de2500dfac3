"""Apertus: ApertusConfig, modeling_apertus; as Llama with a plain MLP (up_proj, xIELU, down_proj) and q/k norms."""

from __future__ import annotations

from ..house import HFType

# ApertusConfig (num_key_value_heads: post-init rule; no head_dim field: the model's getattr rule,
# hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "xielu",
}

TYPE = HFType(defaults=DEFAULTS, gated=False)
