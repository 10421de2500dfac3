"""Phi-3.5-MoE: PhimoeConfig, modeling_phimoe; GQA, every layer MoE (num_local_experts gated experts of
intermediate_size, top num_experts_per_tok, sparsemixer routing: no matmul), a non-null sliding_window on every
layer."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# PhimoeConfig (head_dim: the model's getattr rule, hidden_size // heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32064, "hidden_size": 4096, "intermediate_size": 6400, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "num_local_experts": 16,
    "num_experts_per_tok": 2, "sliding_window": None,
}

TYPE = HFType(
    defaults=DEFAULTS, ffn=parts.local_experts(), dense_key=None, layers=parts.window_every_layer,
    no_effect={"input_jitter_noise": "training noise on the MoE input (no matmul)",
               "lm_head_bias": "the output head's bias (no matmul)"},
)
