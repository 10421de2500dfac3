"""Qwen1.5-MoE / Qwen2-MoE: Qwen2MoeConfig, modeling_qwen2_moe; GQA, num_experts of moe_intermediate_size with one
sigmoid-gated shared expert of shared_expert_intermediate_size on Qwen's sparse step (dense MLPs of
intermediate_size elsewhere), windows on the even layers below max_window_layers with use_sliding_window."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# Qwen2MoeConfig (no head_dim field: the model uses getattr(config, "head_dim", hidden_size // num_attention_heads))
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
    "num_attention_heads": 16, "num_key_value_heads": 16, "hidden_act": "silu", "use_sliding_window": False,
    "sliding_window": 4096, "max_window_layers": 28, "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632, "num_experts_per_tok": 4, "num_experts": 60,
}


def _layers(r: Reader, d, n: int):
    """Qwen2MoeConfig.__post_init__: sliding_window is 0 unless use_sliding_window; absent layer_types, layer i slides
    iff use_sliding_window, i is even and i < max_window_layers. A sliding layer needs a window (0 or null: none)."""
    slide = r.bool("use_sliding_window", d("use_sliding_window"))
    window = r.raw("sliding_window", d("sliding_window"), none_ok=True, record=False) if slide else None
    if not slide:
        r.ignore("use_sliding_window", NO_EFFECT + " (false)")
    if parts.given(r, "layer_types"):
        r.ignore("max_window_layers", "superseded by layer_types")
        letters = parts.layer_types(r, n, {"G", "L"})
        if "L" in letters and not window:
            raise r.fail("layer_types", "has sliding layers but no window (Qwen2MoeConfig sets sliding_window to 0 "
                                        "unless use_sliding_window)")
        return letters, "layer_types"
    if not slide:
        r.ignore("max_window_layers", "unused: use_sliding_window is false")
        return ["G"] * n, "num_hidden_layers"
    start = r.int("max_window_layers", d("max_window_layers"))
    letters = ["L" if (i + 1) % 2 and i < start else "G" for i in range(n)]
    if "L" in letters and not window:
        raise r.fail("sliding_window", "the sliding layers need a window (transformers' sliding mask refuses a null "
                                       "or zero sliding_window)")
    return letters, "max_window_layers"


def _ffn(r: Reader, d, o: dict, n: int):
    """Qwen2MoeSparseMoeBlock: always a shared expert (Qwen2MoeMLP of shared_expert_intermediate_size) and its gate
    Linear(hidden, 1); a zero width would leave the gate alone, which the schema cannot say."""
    if r.int("shared_expert_intermediate_size", d("shared_expert_intermediate_size"), record=False) == 0:
        raise r.fail("shared_expert_intermediate_size", "0: the shared expert's gate (Linear(hidden, 1)) still runs "
                                                        "without a shared expert, which the schema cannot express")
    return parts.qwen_moe_shared(r, d, o, n)


TYPE = HFType(defaults=DEFAULTS, ffn=_ffn, layers=_layers)
