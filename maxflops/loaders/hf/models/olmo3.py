"""OLMo 3: Olmo3Config, modeling_olmo3; sliding windows on every layer but each 4th, absent layer_types."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Olmo3Config (num_key_value_heads: post-init rule; layer_types: sliding but every 4th)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 50304, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu", "sliding_window": 4096,
}

TYPE = HFType(defaults=DEFAULTS, layers=parts.typed_layers("GL", lambda i, n: "G" if (i + 1) % 4 == 0 else "L"))
