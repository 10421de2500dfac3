"""VaultGemma: VaultGemmaConfig, modeling_vaultgemma; as Gemma 2 without the post-norms: GQA (head_dim its own
field), a gated MLP with the activation read from hidden_activation, sliding and full layers alternating from layer 0
(absent layer_types)."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# VaultGemmaConfig (layer_types: sliding but every 2nd)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "sliding_window": 4096,
}

TYPE = HFType(defaults=DEFAULTS, activation="hidden_activation",
              layers=parts.typed_layers("GL", lambda i, n: "L" if (i + 1) % 2 else "G"))
