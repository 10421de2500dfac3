"""DeepSeek-V3.2: DeepseekV32Config, modeling_deepseek_v32; MLA with the DSA indexer, DeepSeek's MoE."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# DeepseekV32Config (no MTP key)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
    "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "hidden_act": "silu",
    "first_k_dense_replace": 3, "kv_lora_rank": 512, "q_lora_rank": 1536, "n_routed_experts": 256,
    "n_shared_experts": 1, "num_experts_per_tok": 8, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128, "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 64,
}

TYPE = HFType(defaults=DEFAULTS, attention=parts.mla(dsa=True), ffn=parts.deepseek_moe())
