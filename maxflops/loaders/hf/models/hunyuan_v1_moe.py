"""Hunyuan MoE (V1): HunYuanMoEV1Config, modeling_hunyuan_v1_moe; Hunyuan dense's attention, and on every layer a MoE
(a router D -> num_experts, gated experts of intermediate_size, top moe_topk) plus a gated shared MLP of
intermediate_size."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# HunYuanMoEV1Config (num_key_value_heads: post-init rule; head_dim: null, read as hunyuan_v1_dense reads it);
# attribute_map: num_experts_per_tok -> moe_topk, num_local_experts -> num_experts
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 290943, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu", "num_experts": 1, "num_experts_per_tok": 1,
}


def _ffn(r: Reader, d, o: dict, n: int):
    is_moe, key = parts.local_experts("num_experts", experts_alias="num_local_experts")(r, d, o, n)
    if o["num_experts"] == 1:  # HunYuanMoEV1Moe still routes: a router D -> 1 beside the expert and the shared MLP
        raise r.fail("num_experts", "one routed expert is not modelled (its router D -> 1 runs beside the expert "
                                    "and the shared MLP; maxflops' MoE needs 2 or more experts)", 1)
    o["shared_experts"] = 1  # HunYuanMoEV1Moe.shared_mlp: a gated MLP of intermediate_size, every layer
    return is_moe, key


TYPE = HFType(defaults=DEFAULTS, ffn=_ffn, dense_key=None, attribute_map={"num_experts_per_tok": "moe_topk"},
              no_effect={"eod_token_id": "a token id", "sep_token_id": "a token id"})
