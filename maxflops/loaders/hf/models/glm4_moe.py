"""GLM-4.5 / 4.6 / 4.7: Glm4MoeConfig, modeling_glm4_moe; GQA, DeepSeek's MoE with a dense prefix, MTP modules
(num_nextn_predict_layers; transformers builds none)."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Glm4MoeConfig (head_dim: the model's getattr rule, hidden_size // heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 10944, "num_hidden_layers": 46,
    "num_attention_heads": 96, "num_key_value_heads": 8, "hidden_act": "silu", "moe_intermediate_size": 1408,
    "num_experts_per_tok": 8, "n_shared_experts": 1, "n_routed_experts": 128, "first_k_dense_replace": 1,
    "num_nextn_predict_layers": 1,
}

TYPE = HFType(defaults=DEFAULTS, ffn=parts.deepseek_moe(), extras=(parts.mtp_layers,))
