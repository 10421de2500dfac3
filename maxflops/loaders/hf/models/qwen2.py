"""Qwen2 / Qwen2.5 (dense): Qwen2Config, modeling_qwen2; GQA (q, k, v with biases), a gated MLP, windows from
max_window_layers on with use_sliding_window and a non-null sliding_window."""

from __future__ import annotations

from ....reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# Qwen2Config (no head_dim field: the model uses getattr(config, "head_dim", hidden_size // num_attention_heads))
DEFAULTS = {
    "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "hidden_act": "silu", "use_sliding_window": False,
    "sliding_window": 4096, "max_window_layers": 28,
}


def _layers(r: Reader, d, n: int):
    """Qwen2Config.__post_init__: sliding_window is nulled unless use_sliding_window; absent layer_types, the layers
    from max_window_layers on slide when the window is not null. A sliding layer without a window cannot run
    (transformers' sliding mask refuses a null sliding_window)."""
    slide = r.bool("use_sliding_window", d("use_sliding_window"))
    window = r.raw("sliding_window", d("sliding_window"), none_ok=True, record=False) if slide else None
    if not slide:
        r.ignore("use_sliding_window", NO_EFFECT + " (false)")
    if parts.given(r, "layer_types"):
        r.ignore("max_window_layers", "superseded by layer_types")
        letters = parts.layer_types(r, n, {"G", "L"})
        if "L" in letters and window is None:
            raise r.fail("layer_types", "has sliding layers but no window (Qwen2Config nulls sliding_window unless "
                                        "use_sliding_window; transformers' sliding mask then refuses)")
        return letters, "layer_types"
    if window is None:
        r.ignore("max_window_layers", "unused: no window (use_sliding_window false or sliding_window null)")
        return ["G"] * n, "num_hidden_layers"
    start = r.int("max_window_layers", d("max_window_layers"))
    return ["L" if i >= start else "G" for i in range(n)], "max_window_layers"


TYPE = HFType(
    defaults=DEFAULTS, layers=_layers,
    no_effect={"use_mrope": "no Qwen2Config field (Qwen2.5 files carry it false); modeling_qwen2 never reads it"},
)
