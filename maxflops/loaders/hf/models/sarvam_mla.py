"""Sarvam-105B: SarvamMLAConfig, built as modeling_deepseek_v3 (DeepseekV3ForCausalLM); MLA (head_dim and qk_head_dim
derived by the class), a dense gated MLP on the first first_k_dense_replace layers, then DeepSeek's MoE
(n_routed_experts of moe_intermediate_size, one shared MLP of n_shared_experts x moe_intermediate_size); MTP modules
(num_nextn_predict_layers; transformers builds none)."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# SarvamMLAConfig (num_key_value_heads: post-init rule; num_nextn_predict_layers: its field num_mtp_layers)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 262144, "hidden_size": 4096, "intermediate_size": 16384, "moe_intermediate_size": 2048,
    "num_hidden_layers": 32, "num_attention_heads": 64, "n_shared_experts": 1, "n_routed_experts": 128,
    "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
    "num_experts_per_tok": 8, "first_k_dense_replace": 1, "hidden_act": "silu", "num_nextn_predict_layers": 0,
}


def moe(r: Reader, d, o: dict, n: int):
    """Sarvam's MoE (DeepseekV3DecoderLayer / Glm4MoeDecoderLayer): MoE iff layer_idx >= first_k_dense_replace
    (moe_layer_freq is not read); the expert counts under the original checkpoints' names too."""
    o["num_experts"] = parts.aliased(r, d, "n_routed_experts", ("num_experts", "num_local_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = parts.aliased(r, d, "n_shared_experts", ("num_shared_experts",))
    k = r.int("first_k_dense_replace", d("first_k_dense_replace"))
    return [l >= k for l in range(n)], "first_k_dense_replace"


TYPE = HFType(
    defaults=DEFAULTS, attention=parts.mla(), ffn=moe, extras=(parts.mtp_layers,),
    no_effect={"q_head_dim": "an older file's name of qk_head_dim (SarvamMLAConfig pops it; the widths come from "
                             "qk_nope_head_dim + qk_rope_head_dim)",
               "moe_layer_freq": "not read by modeling_deepseek_v3 (MoE iff layer >= first_k_dense_replace)"},
)
