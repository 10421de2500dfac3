"""Lara-mini: LaraMiniConfig, modeling_lara_mini; Qwen3.5's gated delta net (linear_attention layers), sliding-window
and full GQA layers with q/k norms and no output gate (layer_types; absent: linear, sliding, linear, full, sliding
repeating), every layer MoE (a router D -> num_experts, gated experts of moe_intermediate_size, top
num_experts_per_tok) plus an ungated shared MLP of shared_expert_intermediate_size."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# LaraMiniConfig (no intermediate_size: no dense FFN)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 151936, "hidden_size": 1024, "num_hidden_layers": 34, "num_attention_heads": 16,
    "num_key_value_heads": 4, "head_dim": 128, "hidden_act": "silu", "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 8,
    "linear_num_value_heads": 16, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
    "num_experts_per_tok": 4, "num_experts": 128, "sliding_window": 512,
}
_CYCLE = "DLDGL"  # LaraMiniConfig.__post_init__: linear, sliding, linear, full, sliding


def _ffn(r: Reader, d, o: dict, n: int):
    is_moe, key = parts.local_experts("num_experts", "moe_intermediate_size")(r, d, o, n)
    shared = r.int("shared_expert_intermediate_size", d("shared_expert_intermediate_size"), minimum=0)
    if shared:  # LaraMiniSparseMoeBlock.shared_expert: a gated MLP added in full, no gate (0: a width-0 MLP)
        o["shared_experts"], o["shared_expert_mlp_dim"] = 1, shared
    return is_moe, key


def _gdn(r: Reader, d, o: dict, pattern: str) -> None:
    """LaraMiniGatedDeltaNet's widths (linear_*), when the layers have one; the attention has no output gate."""
    keys = (("linear_num_key_heads", "gdn_num_key_heads"), ("linear_num_value_heads", "gdn_num_value_heads"),
            ("linear_key_head_dim", "gdn_key_head_dim"), ("linear_value_head_dim", "gdn_value_head_dim"),
            ("linear_conv_kernel_dim", "gdn_conv_kernel_dim"))
    for src, dst in keys:
        if "D" in pattern:
            o[dst] = r.int(src, d(src), minimum=1)
        else:
            r.ignore(src, "unused: no linear_attention layers")


TYPE = HFType(defaults=DEFAULTS, ffn=_ffn, dense_key=None,
              layers=parts.typed_layers("DLG", lambda i, n: _CYCLE[i % len(_CYCLE)]), extras=(_gdn,))
