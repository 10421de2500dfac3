"""EXAONE 4.0: Exaone4Config, modeling_exaone4; GQA (q/k norms), a gated MLP, sliding-window layers but every
sliding_window_pattern-th (absent layer_types), the global layers without RoPE."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# Exaone4Config (layer_types: from sliding_window_pattern; head_dim: no field, the model uses hidden_size //
# num_attention_heads unless the file keeps one)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "hidden_act": "silu", "sliding_window": 4096,
    "sliding_window_pattern": 4,
}


def pattern_layers(r: Reader, d, n: int):
    """layer_types, else sliding but every sliding_window_pattern-th layer (Exaone4Config / ExaoneMoeConfig
    .__post_init__); a null sliding_window leaves the sliding layers unwindowed (the attention passes
    sliding_window=None) and, without layer_types, derives none (the class's pattern 0 cannot run)."""
    window = r.raw("sliding_window", d("sliding_window"), none_ok=True, record=False)
    if parts.given(r, "layer_types"):
        r.ignore("sliding_window_pattern", "superseded by layer_types")
        letters = parts.layer_types(r, n, {"G", "L"})
        if window is None:
            return ["G"] * n, "sliding_window"
        return letters, "layer_types"
    if window is None:
        raise r.fail("sliding_window", "null without layer_types: the config class sets sliding_window_pattern to 0 "
                                       "and cannot derive layer_types")
    p = r.int("sliding_window_pattern", d("sliding_window_pattern"), minimum=1)
    return ["L" if (i + 1) % p else "G" for i in range(n)], "sliding_window_pattern"


TYPE = HFType(defaults=DEFAULTS, layers=pattern_layers)
