"""Hunyuan dense (V1): HunYuanDenseV1Config, modeling_hunyuan_v1_dense; as Llama (GQA, a gated MLP, global
attention), with q/k RMSNorms (no matmul)."""

from __future__ import annotations

from ..house import HFType

# HunYuanDenseV1Config (num_key_value_heads: post-init rule; head_dim: null, which the attention reads as is (a
# file without one builds no model), read as hidden_size // num_attention_heads as the rotary embedding does)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 290943, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS, no_effect={"eod_token_id": "a token id"})
