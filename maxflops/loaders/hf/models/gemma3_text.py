"""Gemma 3's text model: Gemma3TextConfig, modeling_gemma3; five sliding layers to one global (sliding_window_pattern),
the activation read from hidden_activation."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# Gemma3TextConfig
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
    "hidden_activation": "gelu_pytorch_tanh", "sliding_window": 4096, "sliding_window_pattern": 6,
}

def _layers(r: Reader, d, n: int):
    if parts.given(r, "layer_types"):
        for k in ("sliding_window_pattern", "_sliding_window_pattern"):  # the second: as transformers saves it
            r.ignore(k, "superseded by layer_types")
        return parts.layer_types(r, n, {"G", "L"}), "layer_types"
    # Gemma3TextConfig derives layer_types from the sliding_window_pattern kwarg (absent: 6); the underscored
    # attribute it saves beside them is kept as given and never read again
    p = r.int("sliding_window_pattern", d("sliding_window_pattern"), minimum=1)
    if r.has("_sliding_window_pattern"):
        r.ignore("_sliding_window_pattern", NO_EFFECT + ": an attribute Gemma3TextConfig saves; layer_types come "
                                            "from the sliding_window_pattern kwarg")
    return ["L" if (i + 1) % p else "G" for i in range(n)], "sliding_window_pattern"


TYPE = HFType(defaults=DEFAULTS, activation="hidden_activation", layers=_layers)
