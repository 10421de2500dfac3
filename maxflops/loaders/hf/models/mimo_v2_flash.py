"""MiMo-V2-Flash: MiMoV2FlashConfig, modeling_mimo_v2_flash; sliding-window and full GQA layers (values narrower than
keys), DeepSeek-style MoE without a shared expert. Read as transformers saves it (layer_types, mlp_layer_types) and as
Xiaomi published it (hybrid_layer_pattern, a per-layer moe_layer_freq, the swa_* widths of the sliding layers, checked
against the widths transformers' model gives them)."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# MiMoV2FlashConfig (MiMo-V2-Flash's values)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 152576, "hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 48,
    "num_attention_heads": 64, "num_key_value_heads": 4, "hidden_act": "silu", "moe_intermediate_size": 2048,
    "num_experts_per_tok": 8, "n_routed_experts": 256, "head_dim": 192, "v_head_dim": 128, "sliding_window": 129,
}

def _layers(r: Reader, d, n: int):
    """layer_types, else Xiaomi's hybrid_layer_pattern (0 full attention, 1 sliding window), else the class's rule
    (full attention on layer 0 and every 6th)."""
    if parts.given(r, "layer_types"):
        r.ignore("hybrid_layer_pattern", "superseded by layer_types")
        return parts.layer_types(r, n, {"G", "L"}), "layer_types"
    if parts.given(r, "hybrid_layer_pattern"):
        kinds = r.list("hybrid_layer_pattern", int)
        if len(kinds) != n or set(kinds) - {0, 1}:
            raise r.fail("hybrid_layer_pattern", f"expected {n} entries, each 0 (full attention) or 1 (sliding window)")
        return ["L" if k else "G" for k in kinds], "hybrid_layer_pattern"
    return ["G" if i == 0 or not (i + 1) % 6 else "L" for i in range(n)], "num_hidden_layers"


# Xiaomi's names for the sliding layers' widths -> what transformers' MiMoV2FlashAttention gives those layers
_SWA_WIDTHS = {"swa_num_attention_heads": lambda o: o["num_query_heads"],
               "swa_num_key_value_heads": lambda o: o["num_kv_heads"],
               "swa_head_dim": lambda o: o["head_dim"],
               "swa_v_head_dim": lambda o: o.get("value_head_dim", o["head_dim"])}


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
    for key, width in _SWA_WIDTHS.items():
        if not r.has(key):
            continue
        if "L" not in pattern:
            r.ignore(key, "unused: no sliding-window layers")
        elif r.int(key, minimum=1) != width(o):
            raise r.fail(key, f"differs from {width(o)}, the width transformers' MiMoV2FlashAttention gives the "
                              "sliding layers (twice num_key_value_heads; the full layers' heads and head widths)")
        else:
            r.ignore(key, "superseded: the sliding layers' width transformers derives, checked")
    for key in ("add_swa_attention_sink_bias", "add_full_attention_sink_bias"):
        if r.has(key):
            r.bool(key)
            r.ignore(key, NO_EFFECT + ": attention sinks (a softmax column, no matmul)")


def _moe(r: Reader, d, o: dict, n: int):
    """MiMoV2FlashMoE: DeepSeek-V3's router and experts without a shared expert, on the layers mlp_layer_types calls
    sparse (absent: every layer but the first)."""
    o["num_experts"] = r.int("n_routed_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    if r.raw("n_shared_experts", None, none_ok=True, record=False):
        raise r.fail("n_shared_experts", "MiMoV2FlashMoE has no shared expert (Xiaomi's file writes null)")
    r.ignore("n_shared_experts", NO_EFFECT + " (null: no shared expert, as MiMoV2FlashMoE builds)")
    if parts.given(r, "mlp_layer_types"):
        if r.has("moe_layer_freq"):
            r.ignore("moe_layer_freq", "superseded by mlp_layer_types")
        return parts.per_layer(r, "mlp_layer_types", n, {"dense": False, "sparse": True}), "mlp_layer_types"
    if r.has("moe_layer_freq") and isinstance(r.data["moe_layer_freq"], list):  # Xiaomi's: 1 MoE, 0 dense per layer
        freq = r.list("moe_layer_freq", int)
        if len(freq) != n or set(freq) - {0, 1}:
            raise r.fail("moe_layer_freq", f"expected {n} entries, each 0 (dense) or 1 (MoE)")
        return [bool(f) for f in freq], "moe_layer_freq"
    return [l >= 1 for l in range(n)], "num_hidden_layers"


TYPE = HFType(defaults=DEFAULTS, attention=parts.gqa_value_head_dim, ffn=_moe,
              layers=_layers, extras=(_attention,),
              no_effect={"swa_rope_theta": "the sliding layers' RoPE base", "layernorm_epsilon": "a norm's epsilon"})
