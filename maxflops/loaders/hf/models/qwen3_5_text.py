"""Qwen3.5's text model: Qwen3_5TextConfig; gated delta net layers and gated full attention every
full_attention_interval-th layer, a dense MLP."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Qwen3_5TextConfig (layer_types: linear but every full_attention_interval-th, default 4)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 248320, "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 32,
    "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256, "hidden_act": "silu",
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
    "linear_num_key_heads": 16, "linear_num_value_heads": 32, "full_attention_interval": 4,
}

TYPE = HFType(
    defaults=DEFAULTS, layers=parts.interval_layers("D"), extras=(parts.gated_delta_net, parts.qwen_mtp),
    no_effect={"mlp_only_layers": "no Qwen3_5TextConfig field; every layer's MLP is dense already (Qwen's dense "
                                  "files write it empty)",
               "output_gate_type": "the attention output gate's activation (Qwen3.6: swish), elementwise"},
)
