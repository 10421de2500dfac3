"""SmolLM3: SmolLM3Config, modeling_smollm3; GQA, a gated MLP, NoPE every no_rope_layer_interval-th layer (RoPE
only), sliding windows on the NoPE layers with use_sliding_window and a non-null sliding_window (absent
layer_types)."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# SmolLM3Config (head_dim: the model's getattr rule, hidden_size // heads)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36,
    "num_attention_heads": 16, "num_key_value_heads": 4, "hidden_act": "silu", "use_sliding_window": False,
    "sliding_window": None, "no_rope_layer_interval": 4,
}

_ROPE_ONLY = NO_EFFECT + ": which layers use RoPE"


def _layers(r: Reader, d, n: int):
    """SmolLM3Config.__post_init__: absent layer_types, layer i slides iff use_sliding_window, sliding_window is not
    null and layer i has no RoPE (no_rope_layers[i] == 0; absent: every no_rope_layer_interval-th layer). A sliding
    layer needs use_sliding_window and a window: without the first the eager mask slides and flash attention does not;
    without the second transformers' sliding mask refuses."""
    slide = r.bool("use_sliding_window", d("use_sliding_window"))
    window = r.raw("sliding_window", d("sliding_window"), none_ok=True, record=False)
    if parts.given(r, "layer_types"):
        for k in ("no_rope_layers", "no_rope_layer_interval"):
            r.ignore(k, _ROPE_ONLY + " (layer_types sets the attention kind)")
        letters = parts.layer_types(r, n, {"G", "L"})
        if "L" in letters and (not slide or window is None):
            raise r.fail("layer_types", "has sliding layers without use_sliding_window and a non-null "
                                        "sliding_window (transformers' eager and flash attention then disagree, or "
                                        "its sliding mask refuses)")
        if not slide:
            r.ignore("use_sliding_window", NO_EFFECT + " (false)")
        return letters, "layer_types"
    if not slide or window is None:
        for k in ("no_rope_layers", "no_rope_layer_interval"):
            r.ignore(k, _ROPE_ONLY + " (no sliding layers)")
        if not slide:
            r.ignore("use_sliding_window", NO_EFFECT + " (false)")
        return ["G"] * n, "num_hidden_layers"
    rope = r.list("no_rope_layers", int, None, none_ok=True, record=False)
    if rope is None:
        interval = r.int("no_rope_layer_interval", d("no_rope_layer_interval"), minimum=1)
        return ["L" if (i + 1) % interval == 0 else "G" for i in range(n)], "no_rope_layer_interval"
    if len(rope) < n:
        raise r.fail("no_rope_layers", f"has {len(rope)} entries for num_hidden_layers={n}")
    r.ignore("no_rope_layer_interval", "superseded by no_rope_layers")
    return ["G" if rope[i] else "L" for i in range(n)], "no_rope_layers"


TYPE = HFType(defaults=DEFAULTS, layers=_layers)
