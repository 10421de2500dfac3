"""Command-R: CohereConfig, modeling_cohere; attention and a gated MLP run in parallel on one LayerNorm (the same
matmuls as Llama's sequential layer), the logits scaled by logit_scale."""

from __future__ import annotations

from ..house import HFType

# CohereConfig (num_key_value_heads: post-init rule; no head_dim field: the model's getattr rule,
# hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 256000, "hidden_size": 8192, "intermediate_size": 22528, "num_hidden_layers": 40,
    "num_attention_heads": 64, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS, no_effect={"logit_scale": "a scalar multiplying the logits (no matmul)"})
