"""Gemma 2: Gemma2Config, modeling_gemma2; as Gemma, sliding and full layers alternating from layer 0 (absent
layer_types), the activation read from hidden_activation."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Gemma2Config (layer_types: sliding but every 2nd)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "sliding_window": 4096,
}

TYPE = HFType(defaults=DEFAULTS, activation="hidden_activation",
              layers=parts.typed_layers("GL", lambda i, n: "L" if (i + 1) % 2 else "G"),
              no_effect={"sliding_window_size": "an older Gemma2Config's copy of sliding_window (kept as given; the "
                                                "model reads sliding_window)"})
