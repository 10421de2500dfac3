"""Apertus 1.5's text model: Apertus1p5TextConfig, modeling_apertus1p5; as Apertus (a plain xIELU MLP, q/k norms), its
output head output_vocab_size wide when given (the input embeddings keep vocab_size)."""

from __future__ import annotations

from ...reader import Reader
from ..house import HFType

# Apertus1p5TextConfig (num_key_value_heads: post-init rule; no head_dim field: the model's getattr rule,
# hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 266752, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "xielu", "output_vocab_size": None,
}


def _output_vocab(r: Reader, d, o: dict, pattern: str) -> None:
    """Apertus1p5TextForCausalLM: lm_head is hidden_size -> output_vocab_size or vocab_size (a pruned head)."""
    width = r.int("output_vocab_size", d("output_vocab_size"), minimum=1, none_ok=True)
    if width is not None:
        if width > o["vocab_size"]:
            raise r.fail("output_vocab_size", f"must be at most vocab_size={o['vocab_size']} (the class refuses it)")
        o["vocab_size"] = width


TYPE = HFType(defaults=DEFAULTS, gated=False, extras=(_output_vocab,))
