"""Kolibri-1: Kolibri1Config, modeling_kolibri1; GQA with q/k norms, sliding-window and full layers (layer_types;
absent: full every fifth layer), every layer MoE (a router D -> num_local_experts, gated experts of
moe_intermediate_size, top num_experts_per_tok) plus a gated shared MLP of shared_expert_intermediate_size."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# Kolibri1Config (attribute_map: num_experts -> num_local_experts; no intermediate_size: no dense FFN)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 128000, "hidden_size": 2560, "num_hidden_layers": 50, "num_attention_heads": 48,
    "num_key_value_heads": 4, "head_dim": 128, "hidden_act": "silu", "sliding_window": 513,
    "moe_intermediate_size": 512, "num_experts_per_tok": 6, "num_local_experts": 384,
    "shared_expert_intermediate_size": 512,
}


def _ffn(r: Reader, d, o: dict, n: int):
    is_moe, key = parts.local_experts("num_local_experts", "moe_intermediate_size", experts_alias="num_experts")(
        r, d, o, n)
    shared = r.int("shared_expert_intermediate_size", d("shared_expert_intermediate_size"), minimum=0)
    if shared:  # Kolibri1SparseMoeBlock.shared_experts: a gated MLP of this width, unscaled (0: a width-0 MLP)
        o["shared_experts"], o["shared_expert_mlp_dim"] = 1, shared
    return is_moe, key


TYPE = HFType(defaults=DEFAULTS, ffn=_ffn, dense_key=None,
              layers=parts.typed_layers("GL", lambda i, n: "G" if (i + 1) % 5 == 0 else "L"))
