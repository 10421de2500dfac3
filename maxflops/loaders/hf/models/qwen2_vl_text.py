"""Qwen2-VL's text model: Qwen2VLTextConfig, modeling_qwen2_vl (Qwen2VLTextModel); as Qwen2 (GQA with q, k, v biases,
a gated MLP, windows from max_window_layers on with use_sliding_window), head_dim always hidden_size // heads (the
attention never reads head_dim); M-RoPE has no matmul."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Qwen2VLTextConfig (num_key_value_heads: a null one is num_attention_heads)
DEFAULTS = {
    "vocab_size": 152064, "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80,
    "num_attention_heads": 64, "num_key_value_heads": 8, "hidden_act": "silu", "use_sliding_window": False,
    "sliding_window": 4096, "max_window_layers": 80,
}


TYPE = HFType(defaults=DEFAULTS, attention=parts.split_heads, layers=parts.qwen_windows)
