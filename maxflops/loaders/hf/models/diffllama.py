"""DiffLlama: DiffLlamaConfig, modeling_diffllama; Llama's layers with differential attention (the schema's
attention_differential): the values' two halves of KV heads side by side under each query head's map, heads
subtracted in pairs by a learned scalar. transformers runs it as two attention calls, one per value half
(differential_impl='two_calls' is how its eager model runs; maxflops' default is one call over both halves)."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from ..house import HFType

# DiffLlamaConfig (num_key_value_heads, head_dim: post-init rules)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
    "num_attention_heads": 32, "hidden_act": "silu", "attention_dropout": 0.0,
}


def _differential(r: Reader, d, o: dict, pattern: str) -> None:
    """DiffLlamaAttention refuses a dropout (its two calls share no softmax) and an odd number of KV heads."""
    o["attention_differential"] = True
    dropout = r.raw("attention_dropout", d("attention_dropout"), none_ok=True)
    if dropout:
        raise r.fail("attention_dropout", "DiffLlamaAttention refuses a dropout above 0")
    if o["num_kv_heads"] % 2:
        raise r.fail("num_key_value_heads", "DiffLlamaAttention needs an even number (the values split in two halves "
                                            "of KV heads)", o["num_kv_heads"])
    r.ignore("lambda_std_dev", NO_EFFECT + " (the initialization of the differential scalar)")


TYPE = HFType(defaults=DEFAULTS, extras=(_differential,))
