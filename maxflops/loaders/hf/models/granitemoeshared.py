"""Granite MoE with a shared expert: GraniteMoeSharedConfig, modeling_granitemoeshared; Granite MoE plus, when
shared_intermediate_size is non-zero, one gated shared MLP of that width on every layer."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# GraniteMoeSharedConfig (num_key_value_heads: post-init rule; no head_dim field)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu", "num_local_experts": 8, "num_experts_per_tok": 2,
    "shared_intermediate_size": 0,
}


def granite_shared_moe(r: Reader, d, o: dict, n: int):
    """Every layer: num_local_experts gated experts of intermediate_size, top num_experts_per_tok, and (unless
    shared_intermediate_size is 0) a shared gated MLP (input_linear D -> 2S, output_linear S -> D)."""
    is_moe, key = parts.local_experts()(r, d, o, n)
    shared = r.int("shared_intermediate_size", d("shared_intermediate_size"), minimum=0)
    if shared:
        o["shared_experts"], o["shared_expert_mlp_dim"] = 1, shared
    return is_moe, key


TYPE = HFType(defaults=DEFAULTS, ffn=granite_shared_moe, dense_key=None)
