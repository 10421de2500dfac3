"""OLMo-hybrid: OlmoHybridConfig, modeling_olmo_hybrid; gated delta net layers and GQA attention on each 4th layer (the
last if none), a dense MLP."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# OlmoHybridConfig (num_key_value_heads and the linear_* widths: post-init rules)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 100352, "hidden_size": 3840, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 30, "hidden_act": "silu", "linear_conv_kernel_dim": 4,
}

def _layers(r: Reader, d, n: int):
    if parts.given(r, "layer_types"):
        return parts.layer_types(r, n, {"G", "D"}), "layer_types"
    letters = ["G" if i % 4 == 3 else "D" for i in range(n)]
    if "G" not in letters:
        letters[-1] = "G"
    return letters, "num_hidden_layers"


def _gated_delta_net(r: Reader, d, o: dict, pattern: str) -> None:
    """OlmoHybridGatedDeltaNet: separate q, k (key heads), v and the output gate g (value heads), a and b (value
    heads), the same FLOPs as Qwen3-Next's fused projections; no output gate on its attention. Absent or null
    widths take OlmoHybridConfig's rules: heads = num_attention_heads, key width int(0.75 x hidden / key heads),
    value width twice the key width."""
    keys = ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
            "linear_conv_kernel_dim")
    if "D" not in pattern:
        for key in keys:
            r.ignore(key, "unused: no gated-delta-net layers")
        return
    heads = o["num_query_heads"]

    def width(key, rule):
        value = r.int(key, None, minimum=1, none_ok=True, record=False) if r.has(key) else None
        if value is None:
            value = rule()
            r.defaults[r.name(key)] = f"{value} (OlmoHybridConfig's rule)"
        return value

    o["gdn_num_key_heads"] = nk = width("linear_num_key_heads", lambda: heads)
    o["gdn_num_value_heads"] = width("linear_num_value_heads", lambda: heads)
    o["gdn_key_head_dim"] = dk = width("linear_key_head_dim", lambda: int(0.75 * o["emb_dim"] / nk))
    o["gdn_value_head_dim"] = width("linear_value_head_dim", lambda: 2 * dk)
    o["gdn_conv_kernel_dim"] = r.int("linear_conv_kernel_dim", d("linear_conv_kernel_dim"), minimum=1)


TYPE = HFType(defaults=DEFAULTS, layers=_layers, extras=(_gated_delta_net,))
