"""Aria's text model: AriaTextConfig, modeling_aria; GQA, every layer MoE: moe_num_experts experts of
intermediate_size, top moe_topk, and one shared MLP intermediate_size * moe_num_shared_experts wide."""

from __future__ import annotations

from ...reader import Reader
from ..house import HFType

# AriaTextConfig (num_key_value_heads, head_dim: post-init rules)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu", "moe_num_experts": 8, "moe_topk": 2,
    "moe_num_shared_experts": 2,
}


def _moe(r: Reader, d, o: dict, n: int):
    o["num_experts"] = r.int("moe_num_experts", d("moe_num_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("moe_topk", d("moe_topk"), minimum=1)
    o["moe_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    o["shared_experts"] = r.int("moe_num_shared_experts", d("moe_num_shared_experts"))
    return [True] * n, "moe_num_experts"


TYPE = HFType(defaults=DEFAULTS, ffn=_moe, dense_key=None)
