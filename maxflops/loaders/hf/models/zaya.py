"""ZAYA: ZayaConfig, modeling_zaya; compressed convolutional attention (CCA: GQA whose q and k channels pass a
depthwise and a per-head grouped causal conv, the values half from the token and half from the one before) on
global ('hybrid') or sliding ('hybrid_sliding') layers, and a MoE on every layer: top-1 of num_experts gated experts
or a skip expert that computes nothing, picked by an MLP router."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# ZayaConfig (transformers 5.24)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 262272, "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 8,
    "num_key_value_heads": 2, "head_dim": 128, "hidden_act": "silu", "moe_intermediate_size": 2048,
    "num_experts_per_tok": 1, "num_experts": 16, "router_hidden_size": 256, "cca_time0": 2, "cca_time1": 2,
}


def _ffn(r: Reader, d, o: dict, n: int):
    """ZayaSparseMoeBlock on every layer: num_experts experts of moe_intermediate_size, top num_experts_per_tok (1: the
    class refuses any other), and one skip expert among the router's classes (zero_experts; which share of the
    tokens it takes is the checkpoint's routing: zero_expert_share says it); the router an MLP of
    router_hidden_size."""
    o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    k = o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    if k != 1:
        raise r.fail("num_experts_per_tok", "ZayaConfig supports top-1 routing only")
    o["zero_experts"] = 1
    o["moe_router_mlp_dim"] = r.int("router_hidden_size", d("router_hidden_size"), minimum=1)
    return [True] * n, "num_experts"


def _layers(r: Reader, d, n: int):
    """layer_types of 'hybrid' (global) and 'hybrid_sliding' (sliding_window) layers; absent: every layer global."""
    if parts.given(r, "layer_types"):
        return parts.layer_types(r, n, {"hybrid": "G", "hybrid_sliding": "L"}), "layer_types"
    return ["G"] * n, "num_hidden_layers"


def _cca(r: Reader, d, o: dict, pattern: str) -> None:
    """ZayaCCAProjection's convs: cca_time0 depthwise taps, then cca_time1 grouped taps (one group per head); the
    values split in two halves of each KV head (the head width must be even)."""
    o["cca_depthwise_kernel"] = r.int("cca_time0", d("cca_time0"), minimum=1)
    o["cca_grouped_kernel"] = r.int("cca_time1", d("cca_time1"), minimum=1)
    if o["head_dim"] % 2:
        raise r.fail("head_dim", "must be even: each KV head's values are half the token's, half the previous one's")
    if o["num_query_heads"] % o["num_kv_heads"]:
        raise r.fail("num_attention_heads", f"must be a multiple of num_key_value_heads={o['num_kv_heads']}")


TYPE = HFType(
    defaults=DEFAULTS, ffn=_ffn, dense_key=None,
    layers=_layers, extras=(_cca,),
    no_effect={"lm_head_bias": "a bias on the head's output (no matmul)",
               "output_router_logits": "the router's logits returned for an auxiliary loss",
               "router_aux_loss_coef": "an auxiliary loss's weight"},
)
