"""AFMoE (Arcee Trinity): AfmoeConfig, modeling_afmoe; GQA with a sigmoid output gate (gate_proj, hidden_size ->
heads * head_dim), sliding-window layers but every global_attn_every_n_layers-th (absent layer_types), dense FFN on the
first num_dense_layers layers, then num_experts experts of moe_intermediate_size with one shared MLP
moe_intermediate_size * num_shared_experts wide."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# AfmoeConfig (num_key_value_heads: post-init rule)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 200192, "hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 1408,
    "num_hidden_layers": 32, "num_dense_layers": 1, "num_attention_heads": 16, "head_dim": 128, "hidden_act": "silu",
    "num_experts": 64, "num_experts_per_tok": 6, "num_shared_experts": 2, "global_attn_every_n_layers": 4,
    "sliding_window": 1024,
}


def _moe(r: Reader, d, o: dict, n: int):
    o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = r.int("num_shared_experts", d("num_shared_experts"))
    k = r.int("num_dense_layers", d("num_dense_layers"))
    return [l >= k for l in range(n)], "num_dense_layers"


def _layers(r: Reader, d, n: int):
    if parts.given(r, "layer_types"):
        r.ignore("global_attn_every_n_layers", "superseded by layer_types")
        return parts.layer_types(r, n, {"G", "L"}), "layer_types"
    every = r.int("global_attn_every_n_layers", d("global_attn_every_n_layers"), minimum=1)
    return ["L" if (i + 1) % every else "G" for i in range(n)], "global_attn_every_n_layers"


def _gate(r: Reader, d, o: dict, pattern: str) -> None:
    """AfmoeAttention's gate_proj (hidden_size -> heads * head_dim, sigmoid, times the attention output): the FLOPs
    of a q projection twice as wide (the schema's attention_output_gate)."""
    o["attention_output_gate"] = True


TYPE = HFType(
    defaults=DEFAULTS, ffn=_moe, layers=_layers, extras=(_gate,),
    no_effect={"route_scale": "a scalar on the routing weights (no matmul)",
               "mup_enabled": "scales the input embeddings by sqrt(hidden_size) (no matmul)"},
)
