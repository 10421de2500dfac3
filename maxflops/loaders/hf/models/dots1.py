"""dots.llm1: Dots1Config, modeling_dots1; GQA, DeepSeek-V3's router and experts with n_shared_experts shared ones
on the layers from first_k_dense_replace on, sliding-window layers from max_window_layers on (absent layer_types)."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# Dots1Config (n_routed_experts, num_experts_per_tok, n_shared_experts: null, required; no head_dim field: the
# model's getattr rule, hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 152064, "hidden_size": 4608, "intermediate_size": 10944, "moe_intermediate_size": 1408,
    "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 32, "first_k_dense_replace": 0,
    "hidden_act": "silu", "sliding_window": 4096, "max_window_layers": 62,
}


def _moe(r: Reader, d, o: dict, n: int):
    """Dots1MoE: n_routed_experts (alias num_local_experts) of moe_intermediate_size, one shared MLP
    moe_intermediate_size * n_shared_experts wide, on layer l iff l >= first_k_dense_replace."""
    o["num_experts"] = parts.alias(r, "n_routed_experts", "num_local_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = r.int("n_shared_experts", d("n_shared_experts"))
    k = r.int("first_k_dense_replace", d("first_k_dense_replace"))
    return [l >= k for l in range(n)], "first_k_dense_replace"


def _layers(r: Reader, d, n: int):
    """layer_types, else Dots1Config's rule: sliding iff sliding_window is not null and i >= max_window_layers."""
    if parts.given(r, "layer_types"):
        r.ignore("max_window_layers", "superseded by layer_types")
        return parts.layer_types(r, n, {"G", "L"}), "layer_types"
    window = r.raw("sliding_window", d("sliding_window"), none_ok=True, record=False)
    if window is None:
        r.ignore("max_window_layers", "unused: sliding_window is null")
        return ["G"] * n, "sliding_window"
    start = r.int("max_window_layers", d("max_window_layers"))
    return ["L" if i >= start else "G" for i in range(n)], "max_window_layers"


TYPE = HFType(defaults=DEFAULTS, ffn=_moe, layers=_layers)
