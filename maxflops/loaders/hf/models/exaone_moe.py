"""EXAONE MoE (K-EXAONE): ExaoneMoeConfig, modeling_exaone_moe; attention as EXAONE 4.0 (sliding windows but every
sliding_window_pattern-th layer); a DeepSeek-style MoE: num_experts of moe_intermediate_size, top
num_experts_per_tok, and a shared expert num_shared_experts x moe_intermediate_size wide, on the layers
mlp_layer_types calls sparse (absent: from first_k_dense_replace on)."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType
from .exaone4 import pattern_layers

# ExaoneMoeConfig (layer_types, mlp_layer_types: derived by __post_init__)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "hidden_act": "silu", "sliding_window": 4096,
    "sliding_window_pattern": 4, "first_k_dense_replace": 1, "moe_intermediate_size": 1024, "num_experts": 64,
    "num_experts_per_tok": 8, "num_shared_experts": 1,
}


def _ffn(r: Reader, d, o: dict, n: int):
    o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    # ExaoneMoeMLP(intermediate_size=moe_intermediate_size * num_shared_experts): k shared experts' FLOPs
    o["shared_experts"] = r.int("num_shared_experts", d("num_shared_experts"))
    if parts.given(r, "mlp_layer_types"):
        r.ignore("first_k_dense_replace", "superseded by mlp_layer_types")
        return parts.per_layer(r, "mlp_layer_types", n, {"dense": False, "sparse": True}), "mlp_layer_types"
    k = r.int("first_k_dense_replace", d("first_k_dense_replace"))
    return [i >= k for i in range(n)], "first_k_dense_replace"


TYPE = HFType(defaults=DEFAULTS, ffn=_ffn, layers=pattern_layers)
