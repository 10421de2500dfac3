"""Granite SWA: GraniteSWAConfig, modeling_granite_swa; Granite with attention sinks (no matmul) and sliding-window
layers: layer_types (absent: full on every fourth layer from layer 0, sliding elsewhere)."""

from __future__ import annotations

from ...reader import NO_EFFECT
from .. import parts
from ..house import HFType

# GraniteSWAConfig (no head_dim field: the model reads a present one, else hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 100352, "hidden_size": 2560, "intermediate_size": 8192, "num_hidden_layers": 24,
    "num_attention_heads": 20, "num_key_value_heads": 4, "hidden_act": "silu", "sliding_window": 128,
}

TYPE = HFType(
    defaults=DEFAULTS, layers=parts.typed_layers("GL", lambda i, n: "G" if i % 4 == 0 else "L"),
    no_effect={"layer_rope_theta": NO_EFFECT + ": each layer's RoPE base"},
)
