"""OLMoE: OlmoeConfig, modeling_olmoe; GQA (norms on q and k, no matmul), every layer MoE: num_experts (alias
num_local_experts) gated experts of intermediate_size, top num_experts_per_tok, no shared expert; global attention."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# OlmoeConfig (num_key_value_heads: post-init rule; head_dim: the model's getattr rule, hidden_size // heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 50304, "hidden_size": 2048, "intermediate_size": 2048, "num_hidden_layers": 16,
    "num_attention_heads": 16, "hidden_act": "silu", "num_experts_per_tok": 8, "num_experts": 64,
}

TYPE = HFType(
    defaults=DEFAULTS, ffn=parts.local_experts("num_experts", experts_alias="num_local_experts"), dense_key=None,
    no_effect={"clip_qkv": "clamps q, k and v elementwise (no matmul)"},
)
