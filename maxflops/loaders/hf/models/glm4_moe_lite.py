"""GLM-4.7-Flash: Glm4MoeLiteConfig, modeling_glm4_moe_lite; MLA (a present head_dim is the rotary width), DeepSeek's
MoE on every layer but the first."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Glm4MoeLiteConfig (head_dim: its attribute map reads qk_rope_head_dim)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 154880, "hidden_size": 2048, "intermediate_size": 10240, "moe_intermediate_size": 1536,
    "num_hidden_layers": 47, "num_attention_heads": 20, "num_key_value_heads": 20, "n_shared_experts": 1,
    "n_routed_experts": 64, "kv_lora_rank": 512, "q_lora_rank": 768, "qk_rope_head_dim": 64, "v_head_dim": 256,
    "qk_nope_head_dim": 192, "num_experts_per_tok": 4, "hidden_act": "silu",
}

TYPE = HFType(defaults=DEFAULTS, attention=parts.mla(keeps_rotary_head_dim=True),
              ffn=parts.deepseek_moe(first_dense=1))
