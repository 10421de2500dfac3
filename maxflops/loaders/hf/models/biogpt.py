"""BioGPT: BioGptConfig, modeling_biogpt; multi-head attention of hidden_size // num_attention_heads per head (q, k,
v, out), a plain MLP (fc1, act, fc2) of intermediate_size, global attention; learned positions."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# BioGptConfig
DEFAULTS = {
    "max_position_embeddings": 1024,
    "tie_word_embeddings": True,
    "vocab_size": 42384, "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
    "intermediate_size": 4096, "hidden_act": "gelu", "layerdrop": 0.0,
}




TYPE = HFType(
    defaults=DEFAULTS, positions=("max_position_embeddings", 2),  # the learned position table
    gated=False, attention=parts.mha, extras=(parts.no_layerdrop,),
    no_effect={"hidden_dropout_prob": "dropout", "attention_probs_dropout_prob": "dropout",
               "activation_dropout": "dropout", "scale_embedding": "a scalar scale of the embeddings"},
)
