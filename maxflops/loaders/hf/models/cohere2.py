"""Command-R7B / Command A: Cohere2Config, modeling_cohere2; Cohere's parallel block with sliding-window layers
(layer_types; absent, three sliding to one full by the sliding_window_pattern kwarg, 4)."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# Cohere2Config (num_key_value_heads: post-init rule; head_dim: set to hidden_size // num_attention_heads, a file's
# own head_dim replacing it)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 256000, "hidden_size": 8192, "intermediate_size": 22528, "num_hidden_layers": 40,
    "num_attention_heads": 64, "hidden_act": "silu", "sliding_window": 4096, "sliding_window_pattern": 4,
}


def _layers(r: Reader, d, n: int):
    if parts.given(r, "layer_types"):
        r.ignore("sliding_window_pattern", "superseded by layer_types")
        return parts.layer_types(r, n, {"G", "L"}), "layer_types"
    # Cohere2Config: kwargs.pop("sliding_window_pattern", 4); layer i sliding iff (i + 1) % pattern
    p = r.int("sliding_window_pattern", d("sliding_window_pattern"), minimum=1)
    return ["L" if (i + 1) % p else "G" for i in range(n)], "sliding_window_pattern"


TYPE = HFType(defaults=DEFAULTS, layers=_layers,
              no_effect={"logit_scale": "a scalar multiplying the logits (no matmul)"})
