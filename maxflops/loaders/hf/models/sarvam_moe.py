"""Sarvam-30B: SarvamMoEConfig, built as modeling_glm4_moe (Glm4MoeForCausalLM); GQA (head_dim its own field), a
dense gated MLP on the first first_k_dense_replace layers, then DeepSeek-style MoE (n_routed_experts of
moe_intermediate_size, one shared MLP of n_shared_experts x moe_intermediate_size); MTP modules
(num_nextn_predict_layers; transformers builds none)."""

from __future__ import annotations

from .. import parts
from ..house import HFType
from . import sarvam_mla

# SarvamMoEConfig (num_nextn_predict_layers: its field num_mtp_layers, saved under this name)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 262144, "hidden_size": 4096, "intermediate_size": 8192, "num_hidden_layers": 19,
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 64, "hidden_act": "silu",
    "moe_intermediate_size": 1024, "num_experts_per_tok": 6, "n_shared_experts": 1, "n_routed_experts": 128,
    "first_k_dense_replace": 1, "num_nextn_predict_layers": 0,
}


TYPE = HFType(
    defaults=DEFAULTS, ffn=sarvam_mla.moe, extras=(parts.mtp_layers,),
    no_effect={"use_qkv_bias": "the original checkpoint's name of attention_bias (biases: no matmul)",
               "moe_layer_freq": "not read by modeling_glm4_moe (MoE iff layer >= first_k_dense_replace)"},
)
