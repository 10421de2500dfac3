"""Laguna (poolside): LagunaConfig, modeling_laguna; GQA layers of their own query-head counts
(num_attention_heads_per_layer: the schema's layer_widths), full or sliding-window (layer_types; absent: all full),
each with a softplus output gate g_proj (gating true or 'per-head': D -> one gate per head, the schema's
attention_head_gate; otherwise D -> heads * head_dim, attention_output_gate); each FFN a SiLU-gated MLP of
intermediate_size or an MoE (mlp_layer_types; absent: the first dense, the rest sparse) of num_experts experts of
moe_intermediate_size, top num_experts_per_tok, beside one shared MLP of shared_expert_intermediate_size."""

from __future__ import annotations

from ....plan import width_rules
from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# LagunaConfig (layer_types, mlp_layer_types, num_attention_heads_per_layer: post-init rules)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 100352, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 40,
    "num_attention_heads": 48, "num_key_value_heads": 8, "hidden_act": "silu", "sliding_window": 512,
    "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "num_experts_per_tok": 8,
    "num_experts": 256, "head_dim": 128, "gating": True, "moe_apply_router_weight_on_input": False,
}
_MLP = {"dense": False, "sparse": True}


def _ffn(r: Reader, d, o: dict, n: int):
    o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = 1  # LagunaSparseMoeBlock's shared_experts: one MLP, always built
    o["shared_expert_mlp_dim"] = r.int("shared_expert_intermediate_size", d("shared_expert_intermediate_size"),
                                       minimum=1)
    if r.bool("moe_apply_router_weight_on_input", d("moe_apply_router_weight_on_input")):
        raise r.fail("moe_apply_router_weight_on_input", "true: LagunaConfig refuses it (not implemented)")
    for key in ("moe_routed_scaling_factor", "moe_router_logit_softcapping"):
        r.ignore(key, NO_EFFECT + " (a scalar on the routing)")
    if parts.given(r, "mlp_layer_types"):
        return parts.per_layer(r, "mlp_layer_types", n, _MLP), "mlp_layer_types"
    return [i > 0 for i in range(n)], "num_hidden_layers"  # LagunaConfig: the first layer dense, the rest sparse


def _heads(r: Reader, d, o: dict, pattern: str) -> None:
    """Each layer's query heads (num_attention_heads_per_layer, absent or null: num_attention_heads everywhere) as
    layer_widths rules where a layer's differ; its softplus gate per head or per channel (gating)."""
    n, h = o["num_decoder_layers"], o["num_query_heads"]
    if parts.given(r, "num_attention_heads_per_layer"):
        heads = r.list("num_attention_heads_per_layer", int)
        if len(heads) != n or any(type(x) is not int or x < 1 for x in heads):
            raise r.fail("num_attention_heads_per_layer", f"expected {n} positive head counts, one per layer")
        rules = width_rules("num_query_heads", {i: x for i, x in enumerate(heads) if x != h})
        if rules:
            o["layer_widths"] = tuple(rules)
    gating = r.raw("gating", d("gating"))
    if gating not in (True, False, "per-head", "per-element"):
        raise r.fail("gating", "expected true, false, 'per-head' or 'per-element'")
    # LagunaAttention: a gate per head for true or 'per-head'; any other value, one per channel (heads * head_dim)
    o["attention_head_gate" if gating is True or gating == "per-head" else "attention_output_gate"] = True


TYPE = HFType(
    defaults=DEFAULTS, ffn=_ffn, layers=parts.typed_layers("GL", lambda i, n: "G"), extras=(_heads,),
    no_effect={"router_aux_loss_coef": "the router's auxiliary loss weight (no matmul)"},
)
