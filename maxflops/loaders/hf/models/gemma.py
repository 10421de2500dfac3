"""Gemma: GemmaConfig, modeling_gemma; as Llama (GQA, a gated MLP, global attention), head_dim 256 by default."""

from __future__ import annotations

from ....reader import NO_EFFECT, Reader
from ..house import HFType

# GemmaConfig (its __post_init__ reads hidden_act "gelu" as "gelu_pytorch_tanh": the same FLOPs)
DEFAULTS = {
    "vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576, "num_hidden_layers": 28,
    "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256, "hidden_act": "gelu_pytorch_tanh",
}


def _bidirectional_null(r: Reader, d, o: dict, pattern: str) -> None:
    """use_bidirectional_attention: null (the class default; the model tests it for truth) is causal. The pipeline
    reads a present value as a bool after the extras (true refused, false causal), so a null is taken here."""
    key = "use_bidirectional_attention"
    if r.has(key) and r.data[key] is None:
        r.raw(key, none_ok=True)
        r.ignore(key, NO_EFFECT + " (null: causal, the class default)")
        del r.data[key]


TYPE = HFType(defaults=DEFAULTS, extras=(_bidirectional_null,))
