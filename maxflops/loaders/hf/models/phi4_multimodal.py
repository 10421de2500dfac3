"""Phi-4-multimodal: Phi4MultimodalConfig, modeling_phi4_multimodal; the text decoder's keys at the top level (no
text_config) beside vision_config and audio_config (towers: named, not priced); the decoder as Phi-3: GQA (a fused
qkv_proj), a gated MLP (a fused gate_up_proj), a non-null sliding_window on every layer."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Phi4MultimodalConfig (head_dim: the model's getattr rule, hidden_size // heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 200064, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "sliding_window": None,
}

TYPE = HFType(
    defaults=DEFAULTS, layers=parts.window_every_layer,
    no_effect={"resid_pdrop": "dropout (training regularisation, no matmul)",
               "embd_pdrop": "dropout (training regularisation, no matmul)",
               "original_max_position_embeddings": "LongRoPE's switch between short and long factors (RoPE only)"},
)
