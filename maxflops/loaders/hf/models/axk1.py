"""A.X K1: AXK1Config, modeling_axk1; DeepSeek-V3's MLA (a present head_dim is the rotary width) and DeepSeek's MoE
(n_routed_experts, n_shared_experts shared) on the layers mlp_layer_types calls sparse (absent: the
first_k_dense_replace and moe_layer_freq kwargs' rule, 1 and 1)."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# AXK1Config (first_k_dense_replace: a kwarg __post_init__ reads, 1; head_dim, qk_head_dim: derived)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 163840, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
    "num_hidden_layers": 61, "num_attention_heads": 64, "num_key_value_heads": 64, "n_shared_experts": 1,
    "n_routed_experts": 192, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "qk_nope_head_dim": 128, "num_experts_per_tok": 8, "hidden_act": "silu", "first_k_dense_replace": 1,
}

TYPE = HFType(defaults=DEFAULTS, attention=parts.mla(keeps_rotary_head_dim=True), ffn=parts.deepseek_moe())
