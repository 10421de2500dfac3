"""GLM-4.5V's text model: Glm4vMoeTextConfig, modeling_glm4v_moe (Glm4vMoeTextModel); as GLM-4.5 (GQA, head_dim
by the model's getattr rule, DeepSeek's MoE from first_k_dense_replace on, global attention); transformers builds no
MTP module and the class has no num_nextn_predict_layers."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Glm4vMoeTextConfig (head_dim: the model's getattr rule, hidden_size // heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 151424, "hidden_size": 4096, "intermediate_size": 10944, "num_hidden_layers": 46,
    "num_attention_heads": 96, "num_key_value_heads": 8, "hidden_act": "silu", "moe_intermediate_size": 1408,
    "num_experts_per_tok": 8, "n_shared_experts": 1, "n_routed_experts": 128, "first_k_dense_replace": 1,
}

TYPE = HFType(defaults=DEFAULTS, ffn=parts.deepseek_moe())
