"""Granite MoE SWA: GraniteMoeSWAConfig, modeling_granitemoe_swa; Granite MoE with the optional shared MLP
(shared_intermediate_size), attention sinks (no matmul) and sliding-window layers: layer_types (absent: full on
every fourth layer from layer 0, sliding elsewhere)."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# GraniteMoeSWAConfig (num_key_value_heads: post-init rule; no head_dim field)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu", "num_local_experts": 8, "num_experts_per_tok": 2,
    "shared_intermediate_size": 0, "sliding_window": 128,
}


def _ffn(r: Reader, d, o: dict, n: int):
    # as granitemoeshared: experts of intermediate_size, and a gated shared MLP unless shared_intermediate_size is 0
    is_moe, key = parts.local_experts()(r, d, o, n)
    shared = r.int("shared_intermediate_size", d("shared_intermediate_size"), minimum=0)
    if shared:
        o["shared_experts"], o["shared_expert_mlp_dim"] = 1, shared
    return is_moe, key


TYPE = HFType(
    defaults=DEFAULTS, ffn=_ffn, dense_key=None,
    layers=parts.typed_layers("GL", lambda i, n: "G" if i % 4 == 0 else "L"),
    no_effect={"layer_rope_theta": NO_EFFECT + ": each layer's RoPE base"},
)
