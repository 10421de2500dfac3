"""Cohere 2 MoE: Cohere2MoeConfig, modeling_cohere2_moe; Cohere 2's parallel block, num_experts experts of
intermediate_size with one shared MLP intermediate_size * num_shared_experts wide on the sparse layers, a dense MLP
prefix_dense_intermediate_size (null: intermediate_size) wide on the dense ones (mlp_layer_types; absent, the
first_k_dense_replace kwarg's prefix); sliding-window layers by layer_types (absent: sliding_window_pattern over the
MoE layers, prefix_dense_sliding_window_pattern over the prefix)."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# Cohere2MoeConfig (num_key_value_heads: post-init rule; first_k_dense_replace: a kwarg __post_init__ pops, 0)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 256000, "hidden_size": 8192, "intermediate_size": 22528, "num_hidden_layers": 40,
    "num_attention_heads": 64, "head_dim": 128, "hidden_act": "silu", "sliding_window": 4096,
    "num_experts_per_tok": 2, "num_experts": 8, "num_shared_experts": 0, "prefix_dense_sliding_window_pattern": 1,
    "prefix_dense_intermediate_size": None, "sliding_window_pattern": 4, "first_k_dense_replace": 0,
}


def _first_k(r: Reader, d) -> int:
    return r.int("first_k_dense_replace", d("first_k_dense_replace"))


def _moe(r: Reader, d, o: dict, n: int):
    o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    o["shared_experts"] = r.int("num_shared_experts", d("num_shared_experts"))
    if parts.given(r, "mlp_layer_types"):
        return parts.per_layer(r, "mlp_layer_types", n, {"dense": False, "sparse": True}), "mlp_layer_types"
    k = _first_k(r, d)
    return [l >= k for l in range(n)], "first_k_dense_replace"


def _layers(r: Reader, d, n: int):
    if parts.given(r, "layer_types"):
        for key in ("sliding_window_pattern", "prefix_dense_sliding_window_pattern"):
            r.ignore(key, "superseded by layer_types")
        if "first_k_dense_replace" not in r.used:
            r.ignore("first_k_dense_replace", "superseded by layer_types and mlp_layer_types")
        return parts.layer_types(r, n, {"G", "L"}), "layer_types"
    # Cohere2MoeConfig: the first_k_dense_replace kwarg's prefix follows prefix_dense_sliding_window_pattern, the
    # other layers sliding_window_pattern (mlp_layer_types given or not)
    k = min(_first_k(r, d), n)
    p0 = r.int("prefix_dense_sliding_window_pattern", d("prefix_dense_sliding_window_pattern"), minimum=1)
    p = r.int("sliding_window_pattern", d("sliding_window_pattern"), minimum=1)
    return (["L" if (i + 1) % p0 else "G" for i in range(k)]
            + ["L" if (i + 1) % p else "G" for i in range(n - k)]), "sliding_window_pattern"


def _dense_width(r: Reader, d, o: dict, pattern: str) -> None:
    """The dense layers' MLP: prefix_dense_intermediate_size wide, null: intermediate_size (which the pipeline
    reads for them; with every layer sparse it is the experts' width, read above)."""
    name = r.name("intermediate_size")
    if r.ignored.get(name, "").startswith("unused: every layer is MoE"):
        del r.ignored[name]  # the experts' width
        r.used.add("intermediate_size")
    width = r.int("prefix_dense_intermediate_size", d("prefix_dense_intermediate_size"), minimum=1, none_ok=True)
    if width is not None and "mlp_dim" in o:
        o["mlp_dim"] = width


TYPE = HFType(
    defaults=DEFAULTS, ffn=_moe, layers=_layers, extras=(_dense_width,),
    no_effect={"logit_scale": "a scalar multiplying the logits (no matmul)",
               "shared_expert_combination_strategy": "sums or averages the shared and routed outputs (no matmul)",
               "expert_selection_fn": "softmax or sigmoid router scores (no matmul)"},
)
