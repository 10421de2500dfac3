"""Nemotron (Nemotron-4, Minitron): NemotronConfig, modeling_nemotron; GQA (head_dim: the file's, else
hidden_size // heads), a plain MLP (up, relu2, down), global attention."""

from __future__ import annotations

from ..house import HFType

# NemotronConfig (head_dim, num_key_value_heads: null, post-init / the model's rules)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 256000, "hidden_size": 6144, "intermediate_size": 24576, "num_hidden_layers": 32,
    "num_attention_heads": 48, "hidden_act": "relu2",
}

TYPE = HFType(defaults=DEFAULTS, gated=False)
