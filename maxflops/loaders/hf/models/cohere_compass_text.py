"""Cohere Compass's text model: CohereCompassTextConfig, modeling_cohere_compass; Cohere 2's parallel block with
sliding-window layers where layer_types says (absent: every layer full attention)."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# CohereCompassTextConfig (num_key_value_heads: post-init rule; head_dim: set to hidden_size // num_attention_heads,
# a file's own head_dim replacing it)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 256000, "hidden_size": 8192, "intermediate_size": 22528, "num_hidden_layers": 40,
    "num_attention_heads": 64, "hidden_act": "silu", "sliding_window": 4096,
}

TYPE = HFType(
    defaults=DEFAULTS, layers=parts.typed_layers("GL", lambda i, n: "G"),
    no_effect={"logit_scale": "a scalar multiplying the logits (no matmul)",
               "pooling": "the embedding head's pooling (bos, eos, mean): a selection, no matmul in the causal LM",
               "sliding_window_pattern": "not read by CohereCompassTextConfig (absent layer_types: every layer full)"},
)
