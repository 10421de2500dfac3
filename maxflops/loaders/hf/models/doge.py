"""Doge: DogeConfig, modeling_doge; dynamic-mask attention (each query attends at most keep_window_size of its
visible keys, picked by a score per KV head from the keys' values), and with is_moe the CDMoE: a gated dense MLP
beside single-neuron experts retrieved by product keys."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# DogeConfig (transformers 5.24; num_key_value_heads: absent or null, num_attention_heads; head_dim: the model's
# getattr rule, hidden_size // heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32768, "hidden_size": 1024, "intermediate_size": 2048, "num_hidden_layers": 32,
    "num_attention_heads": 8, "hidden_act": "silu", "sliding_window": None, "keep_window_size": 2048,
    "is_moe": False, "num_experts": 16384, "num_experts_per_tok": 64,
}


def _ffn(r: Reader, d, o: dict, n: int):
    """DogeMLP on every layer, or with is_moe DogeCDMoE: the MLP of intermediate_size (gated) as a shared expert
    beside num_experts single-neuron experts (act(x . down_i) up_i: ungated, width 1), top num_experts_per_tok of
    them scored by product keys (a router D -> 2 floor(sqrt(num_experts)))."""
    if not r.bool("is_moe", d("is_moe")):
        for key in ("num_experts", "num_experts_per_tok", "norm_topk_prob"):
            r.raw(key, None, none_ok=True, record=False)
            r.ignore(key, "unused: is_moe is false")
        return [False] * n, "is_moe"
    o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o.update(moe_mlp_dim=1, moe_router_product_keys=True, moe_experts_ungated=True, shared_experts=1,
             shared_expert_mlp_dim=r.int("intermediate_size", d("intermediate_size"), minimum=1))
    r.ignore("norm_topk_prob", NO_EFFECT + " (the routing weights renormalized: elementwise)")
    return [True] * n, "is_moe"


def _dynamic_mask(r: Reader, d, o: dict, pattern: str) -> None:
    """DogeAttention's dynamic mask: past keep_window_size visible keys, each query keeps that many."""
    o["dynamic_mask_keys"] = r.int("keep_window_size", d("keep_window_size"), minimum=1)


TYPE = HFType(
    defaults=DEFAULTS, ffn=_ffn, dense_key="intermediate_size", layers=parts.window_every_layer,
    extras=(_dynamic_mask,),
    no_effect={"hidden_dropout": "dropout", "mlp_bias": "biases on the MLP's matmuls (no matmul)",
               "output_router_logits": "the router's logits returned for an auxiliary loss",
               "router_aux_loss_coef": "an auxiliary loss's weight"},
)
