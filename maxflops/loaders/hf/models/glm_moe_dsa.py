"""GLM-5: GlmMoeDsaConfig, modeling_glm_moe_dsa; MLA with the DSA indexer and its sharing schedule, DeepSeek's MoE."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# GlmMoeDsaConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 154880, "hidden_size": 6144, "intermediate_size": 12288, "moe_intermediate_size": 2048,
    "num_hidden_layers": 78, "num_attention_heads": 64, "num_key_value_heads": 64, "n_shared_experts": 1,
    "n_routed_experts": 256, "kv_lora_rank": 512, "q_lora_rank": 2048, "qk_rope_head_dim": 64,
    "v_head_dim": 256, "qk_nope_head_dim": 192, "num_experts_per_tok": 8, "hidden_act": "silu",
    "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 32, "first_k_dense_replace": 3,
}

TYPE = HFType(
    defaults=DEFAULTS, attention=parts.mla(dsa=True), ffn=parts.deepseek_moe(),
    no_effect={"num_experts": "no GlmMoeDsaConfig field (n_routed_experts, alias num_local_experts, sizes the "
                              "experts; modeling_glm_moe_dsa never reads num_experts)"},
)
