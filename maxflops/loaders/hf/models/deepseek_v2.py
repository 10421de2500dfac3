"""DeepSeek-V2: DeepseekV2Config, modeling_deepseek_v2; MLA, DeepSeek's MoE (num_key_value_heads: the post-init rule;
num_experts_per_tok: null by default, required)."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# DeepseekV2Config (num_key_value_heads: post-init rule; num_experts_per_tok: null, required)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 11008, "moe_intermediate_size": 1407,
    "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_act": "silu", "first_k_dense_replace": 0,
    "kv_lora_rank": 512, "q_lora_rank": 1536, "n_routed_experts": 64, "n_shared_experts": 2,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
}

TYPE = HFType(defaults=DEFAULTS, attention=parts.mla(), ffn=parts.deepseek_moe())
