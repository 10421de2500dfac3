"""DeepSeek-V3: DeepseekV3Config, modeling_deepseek_v3; MLA (a present head_dim is the rotary width), DeepSeek's MoE,
MTP modules."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# DeepseekV3Config (num_nextn_predict_layers: its field num_mtp_layers)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
    "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "hidden_act": "silu",
    "first_k_dense_replace": 3, "kv_lora_rank": 512, "q_lora_rank": 1536, "n_routed_experts": 256,
    "n_shared_experts": 1, "num_experts_per_tok": 8, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128, "num_nextn_predict_layers": 1,
}

TYPE = HFType(defaults=DEFAULTS, attention=parts.mla(keeps_rotary_head_dim=True), ffn=parts.deepseek_moe())
