"""Ministral: MinistralConfig, modeling_ministral; as Mistral, the window on the layers layer_types calls sliding
(absent: every layer when sliding_window is non-null, else none)."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# MinistralConfig (head_dim: null; the model reads config.head_dim, so a file without one builds no model, and
# hidden_size // num_attention_heads is read, as the rotary embedding does)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "sliding_window": 4096,
}


def _layers(r: Reader, d, n: int):
    if parts.given(r, "layer_types"):
        return parts.layer_types(r, n, {"G", "L"}), "layer_types"
    # MinistralConfig.__post_init__: every layer sliding iff sliding_window is non-null
    window = r.raw("sliding_window", d("sliding_window"), none_ok=True, record=False)
    return ["L" if window is not None else "G"] * n, "sliding_window"


TYPE = HFType(defaults=DEFAULTS, layers=_layers)
