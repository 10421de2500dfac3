"""A.X K2: AXK2Config, modeling_axk2; DeepSeek-V3.2's MLA and DSA indexer on every layer, with A.X K2's own q path (no
q_b_proj: one q_gate_proj reads the q latent normed and raw side by side, 2 q_lora_rank -> heads x (qk + v), its
second part a sigmoid gate per value channel on the attention output: mla_q_latent_concat with
attention_output_gate), gated norms (the input norm of every layer and the FFN's norm of MoE layers scaled by a
sigmoid gate of a low-rank MLP, gated_norm_rank) and DeepSeek's MoE."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# AXK2Config (head_dim: __post_init__ sets qk_rope_head_dim; mlp_layer_types: from the first_k_dense_replace and
# moe_layer_freq kwargs, 1 and 1)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 163840, "hidden_size": 2048, "intermediate_size": 5120, "moe_intermediate_size": 512,
    "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 32, "n_shared_experts": 1,
    "n_routed_experts": 128, "kv_lora_rank": 128, "q_lora_rank": 384, "qk_rope_head_dim": 32, "v_head_dim": 64,
    "qk_nope_head_dim": 64, "num_experts_per_tok": 8, "hidden_act": "silu", "index_topk": 2048,
    "index_head_dim": 128, "index_n_heads": 16, "gated_norm_rank": 16, "first_k_dense_replace": 1,
}


def _gates(r: Reader, d, o: dict, pattern: str) -> None:
    """The q up-projection over the normed and raw q latent with the output gate, and the gated norms."""
    if not o["q_lora_rank"]:
        raise r.fail("q_lora_rank", "A.X K2 needs a q latent (AXK2Config refuses a null or zero q_lora_rank)")
    o["mla_q_latent_concat"] = o["attention_output_gate"] = True
    o["gated_norm_rank"] = r.int("gated_norm_rank", d("gated_norm_rank"), minimum=1)


TYPE = HFType(defaults=DEFAULTS, attention=parts.mla(dsa=True), ffn=parts.deepseek_moe(), extras=(_gates,))
