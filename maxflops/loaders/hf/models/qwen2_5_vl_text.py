"""Qwen2.5-VL's text model: Qwen2_5_VLTextConfig, modeling_qwen2_5_vl (Qwen2_5_VLTextModel); the same layer and
config as Qwen2-VL's text model (qwen2_vl_text): Qwen2 with head_dim hidden_size // heads."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Qwen2_5_VLTextConfig (num_key_value_heads: a null one is num_attention_heads)
DEFAULTS = {
    "vocab_size": 152064, "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80,
    "num_attention_heads": 64, "num_key_value_heads": 8, "hidden_act": "silu", "use_sliding_window": False,
    "sliding_window": 4096, "max_window_layers": 80,
}

TYPE = HFType(defaults=DEFAULTS, attention=parts.split_heads, layers=parts.qwen_windows)
