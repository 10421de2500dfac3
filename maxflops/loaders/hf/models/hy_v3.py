"""Hunyuan V3 (HY-V3): HYV3Config, modeling_hy_v3; GQA with q/k norms, dense or MoE per mlp_layer_types (absent:
layer 0 dense, the rest MoE): a sigmoid router D -> num_experts, gated experts of moe_intermediate_size, top
num_experts_per_tok, and one gated shared MLP of num_shared_experts x moe_intermediate_size."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# HYV3Config (attribute_map: num_local_experts -> num_experts)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 120832, "hidden_size": 4096, "intermediate_size": 13312, "num_hidden_layers": 80,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu",
    "num_experts": 192, "num_experts_per_tok": 8, "num_shared_experts": 1, "moe_intermediate_size": 1536,
}


def _ffn(r: Reader, d, o: dict, n: int):
    parts.local_experts("num_experts", "moe_intermediate_size", experts_alias="num_local_experts")(r, d, o, n)
    k = r.int("num_shared_experts", d("num_shared_experts"), minimum=0)
    if k:  # HYV3MLP(intermediate_size=moe_intermediate_size * num_shared_experts)
        o["shared_experts"] = k
    else:  # HYV3MLP: `intermediate_size or config.intermediate_size`: a width of 0 builds one of intermediate_size
        o["shared_experts"] = 1
        o["shared_expert_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1, record=False)
    if parts.given(r, "mlp_layer_types"):
        return parts.per_layer(r, "mlp_layer_types", n, {"dense": False, "sparse": True}), "mlp_layer_types"
    # HYV3Config.__post_init__: layer 0 dense, the others sparse
    return [l >= 1 for l in range(n)], "num_hidden_layers"


TYPE = HFType(
    defaults=DEFAULTS, ffn=_ffn,
    no_effect={"router_scaling_factor": "scales the routed weights (no matmul)",
               "enable_moe_fp32_combine": "the dtype of the routed + shared sum"},
)
