"""gpt-oss: GptOssConfig, modeling_gpt_oss; every layer MoE (intermediate_size is the expert width), sliding and full
layers alternating from layer 0."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# GptOssConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "num_hidden_layers": 36, "num_local_experts": 128, "vocab_size": 201088, "hidden_size": 2880,
    "intermediate_size": 2880, "head_dim": 64, "num_attention_heads": 64, "num_key_value_heads": 8,
    "sliding_window": 128, "hidden_act": "silu", "num_experts_per_tok": 4,
}

def _layers(r: Reader, d, n: int):
    if parts.given(r, "layer_types"):
        return parts.layer_types(r, n, {"G", "L"}), "layer_types"
    r.defaults[r.name("layer_types")] = "sliding/full alternating from layer 0 (GptOssConfig)"
    return ["L" if (i + 1) % 2 else "G" for i in range(n)], "num_hidden_layers"


TYPE = HFType(defaults=DEFAULTS, ffn=parts.local_experts(topk_alias="experts_per_token"), dense_key=None,
              layers=_layers)
