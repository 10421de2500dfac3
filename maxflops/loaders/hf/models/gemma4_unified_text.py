"""Gemma 4 unified's text model: Gemma4UnifiedTextConfig, modeling_gemma4_unified; Gemma 4's sliding and global
layers of their own widths (per_layer_config) and KV sharing, without per-layer embeddings or the MoE block."""

from __future__ import annotations

from ..house import HFType
from .gemma4_text import read_gemma4

# Gemma4UnifiedTextConfig (global_head_dim 512 and num_global_key_value_heads: kwargs it pops)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 262144, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 30,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "sliding_window": 1024, "num_kv_shared_layers": 0, "attention_k_eq_v": False, "use_double_wide_mlp": False,
}

TYPE = HFType(
    defaults=DEFAULTS, read=lambda r, d: read_gemma4(r, d, unified=True),
    no_effect={"_sliding_window_pattern": "an attribute saved beside layer_types; Gemma4UnifiedTextConfig derives "
                                          "absent layer_types with a pattern of 6, whatever it says"},
)
