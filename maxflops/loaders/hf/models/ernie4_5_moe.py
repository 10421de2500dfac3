"""ERNIE 4.5 MoE: Ernie4_5_MoeConfig, modeling_ernie4_5_moe; GQA, moe_num_experts experts of moe_intermediate_size and
one shared MLP moe_intermediate_size * moe_num_shared_experts wide, on layer l iff (l + 1) % moe_layer_interval == 0
and moe_layer_start_index <= l <= moe_layer_end_index (-1: the last layer)."""

from __future__ import annotations

from ...reader import Reader
from ..house import HFType

# Ernie4_5_MoeConfig, under the names read (its attribute_map: num_experts -> moe_num_experts, num_experts_per_tok ->
# moe_k); no head_dim field: the model's getattr rule, hidden_size // num_attention_heads
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 103424, "hidden_size": 2560, "intermediate_size": 12288, "num_hidden_layers": 28,
    "num_attention_heads": 20, "num_key_value_heads": 4, "hidden_act": "silu", "moe_intermediate_size": 1536,
    "num_experts_per_tok": 6, "num_experts": 64, "moe_num_shared_experts": 2, "moe_layer_start_index": 1,
    "moe_layer_end_index": -1, "moe_layer_interval": 1,
}


def _moe(r: Reader, d, o: dict, n: int):
    o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = r.int("moe_num_shared_experts", d("moe_num_shared_experts"))
    start = r.int("moe_layer_start_index", d("moe_layer_start_index"), minimum=None)
    end = r.int("moe_layer_end_index", d("moe_layer_end_index"), minimum=None)
    end = n - 1 if end == -1 else end  # Ernie4_5_MoeConfig.__post_init__
    step = r.int("moe_layer_interval", d("moe_layer_interval"), minimum=1)
    key = "moe_layer_interval" if step != 1 else "moe_layer_end_index" if end < n - 1 else "moe_layer_start_index"
    return [(l + 1) % step == 0 and start <= l <= end for l in range(n)], key


TYPE = HFType(
    defaults=DEFAULTS, ffn=_moe, attribute_map={"num_experts": "moe_num_experts", "num_experts_per_tok": "moe_k"},
    no_effect={"moe_norm_min": "the floor of the top-k weights' normalisation (no matmul)"},
)
