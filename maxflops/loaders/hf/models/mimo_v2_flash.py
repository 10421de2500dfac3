"""MiMo-V2-Flash: MiMoV2FlashConfig, modeling_mimo_v2_flash; sliding-window and full GQA layers (values narrower than
keys), DeepSeek-style MoE without a shared expert."""

from __future__ import annotations

from ....reader import Reader
from .. import parts
from ..house import HFType

# MiMoV2FlashConfig (MiMo-V2-Flash's values)
DEFAULTS = {
    "vocab_size": 152576, "hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 48,
    "num_attention_heads": 64, "num_key_value_heads": 4, "hidden_act": "silu", "moe_intermediate_size": 2048,
    "num_experts_per_tok": 8, "n_routed_experts": 256, "head_dim": 192, "v_head_dim": 128, "sliding_window": 129,
}

def _attention(r: Reader, d, o: dict, pattern: str) -> None:
    """MiMoV2FlashAttention: a sliding-window layer has twice num_key_value_heads (and attention sinks, no matmul),
    a full layer num_key_value_heads; the window is sliding_window, or the checkpoint's sliding_window_size + 1
    (MiMoV2FlashConfig's rule)."""
    kv = o["num_kv_heads"]
    if "L" in pattern:
        o["num_kv_heads"] = 2 * kv
        if "G" in pattern:
            o["global_num_kv_heads"] = kv
    if r.has("sliding_window_size") and r.raw("sliding_window_size", none_ok=True) is not None:
        window = r.int("sliding_window_size", minimum=0) + 1  # wins over sliding_window, as in the class
        if "L" in pattern:
            o["sliding_window_size"] = window


def _moe(r: Reader, d, o: dict, n: int):
    """MiMoV2FlashMoE: DeepSeek-V3's router and experts without a shared expert, on the layers mlp_layer_types calls
    sparse (absent: every layer but the first)."""
    o["num_experts"] = r.int("n_routed_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    if parts.given(r, "mlp_layer_types"):
        return parts.per_layer(r, "mlp_layer_types", n, {"dense": False, "sparse": True}), "mlp_layer_types"
    return [l >= 1 for l in range(n)], "num_hidden_layers"


TYPE = HFType(defaults=DEFAULTS, attention=parts.gqa_value_head_dim, ffn=_moe,
              layers=parts.typed_layers("GL", lambda i, n: "G" if i == 0 or not (i + 1) % 6 else "L"),
              extras=(_attention,))
