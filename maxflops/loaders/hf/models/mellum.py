"""Mellum: MellumConfig, modeling_mellum; GQA, full or sliding-window layers (layer_types; absent: all full), each
FFN a MoE (a router D -> num_local_experts, gated experts of moe_intermediate_size, top num_experts_per_tok) or a
gated dense MLP of intermediate_size (mlp_layer_types; absent: all MoE); the checkpoint's MTP layer
(num_nextn_predict_layers, which transformers does not build) counted in training."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# MellumConfig (attribute_map: num_experts -> num_local_experts, num_mtp_layers -> num_nextn_predict_layers)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 98304, "hidden_size": 2304, "intermediate_size": 7168, "num_hidden_layers": 28,
    "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "hidden_act": "silu",
    "sliding_window": 1024, "moe_intermediate_size": 896, "num_experts_per_tok": 8, "num_local_experts": 64,
}
_MLP = {"dense": False, "sparse": True}


def _ffn(r: Reader, d, o: dict, n: int):
    parts.local_experts("num_local_experts", "moe_intermediate_size", experts_alias="num_experts")(r, d, o, n)
    if parts.given(r, "mlp_layer_types"):
        return parts.per_layer(r, "mlp_layer_types", n, _MLP), "mlp_layer_types"
    return [True] * n, "num_hidden_layers"  # MellumConfig.__post_init__: every layer sparse


def _mtp(r: Reader, d, o: dict, pattern: str) -> None:
    key = "num_mtp_layers" if r.has("num_mtp_layers") and not r.has("num_nextn_predict_layers") \
        else "num_nextn_predict_layers"
    k = r.int(key, None, none_ok=True, minimum=0)
    if not k:
        for other in ("mtp_layer_types", "mtp_mlp_layer_types"):
            if r.has(other):
                r.raw(other, none_ok=True, record=False)
                r.ignore(other, "unused: no MTP layers")
        return
    o["mtp_num_layers"] = k
    # MellumConfig.__post_init__: the MTP layers sliding, their FFNs sparse, unless given
    if parts.given(r, "mtp_layer_types"):
        letters = parts.per_layer(r, "mtp_layer_types", k, {"full_attention": "G", "sliding_attention": "L"})
    else:
        letters = ["L"] * k
    o["mtp_layer_pattern"] = "".join(letters)
    if "L" in letters and "sliding_window_size" not in o:
        r.ignored.pop(r.name("sliding_window"), None)
        span = r.int("sliding_window", d("sliding_window"), minimum=1, none_ok=True)
        if span is None:
            raise r.fail("sliding_window", "the MTP layers include sliding-window attention, so sliding_window is "
                                           "needed")
        o["sliding_window_size"] = span
    mlp = parts.per_layer(r, "mtp_mlp_layer_types", k, _MLP) if parts.given(r, "mtp_mlp_layer_types") else [True] * k
    types = r.list("mlp_layer_types", str, None, none_ok=True, record=False)
    last = _MLP.get(types[-1], True) if types else True
    if any(m != last for m in mlp):  # maxflops' MTP module runs the last decoder layer's FFN kind
        raise r.fail("mtp_mlp_layer_types", "an MTP layer whose FFN kind differs from the last decoder layer's is "
                                            "not modelled")


TYPE = HFType(defaults=DEFAULTS, ffn=_ffn, layers=parts.typed_layers("GL", lambda i, n: "G"), extras=(_mtp,))
