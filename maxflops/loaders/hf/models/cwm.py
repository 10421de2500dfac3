"""Code World Model: CwmConfig, modeling_cwm; as Llama with sliding-window layers where layer_types says (absent:
full attention every 4th layer from layer 0, sliding elsewhere)."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# CwmConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 128256, "hidden_size": 6144, "intermediate_size": 21504, "num_hidden_layers": 64,
    "num_attention_heads": 48, "num_key_value_heads": 8, "hidden_act": "silu", "head_dim": 128,
    "sliding_window": 8192,
}

TYPE = HFType(defaults=DEFAULTS, layers=parts.typed_layers("GL", lambda i, n: "G" if i % 4 == 0 else "L"))
