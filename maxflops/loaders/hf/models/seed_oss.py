"""Seed-OSS: SeedOssConfig, modeling_seed_oss; as Llama (q, k, v biases; head_dim its own field), global attention."""

from __future__ import annotations

from ..house import HFType

# SeedOssConfig (num_key_value_heads, head_dim: null -> post-init rules)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 155136, "hidden_size": 4096, "intermediate_size": 27648, "num_hidden_layers": 64,
    "num_attention_heads": 80, "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu",
}

TYPE = HFType(
    defaults=DEFAULTS,
    no_effect={"attention_out_bias": "the o projection's bias (no matmul)",
               "residual_dropout": "dropout on the attention and MLP outputs (no matmul)"},
)
