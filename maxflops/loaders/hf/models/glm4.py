"""GLM-4: Glm4Config, modeling_glm4; as Llama (GQA, a gated MLP with gate and up fused in one matrix, global
attention), with norms after attention and the MLP."""

from __future__ import annotations

from ..house import HFType

# Glm4Config
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 40,
    "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS)
