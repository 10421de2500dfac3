"""Persimmon: PersimmonConfig, modeling_persimmon; multi-head attention (a fused query_key_value, hidden_size wide
per projection), a plain MLP (dense_h_to_4h, relu2, dense_4h_to_h), global attention."""

from __future__ import annotations

from ...reader import Reader
from ..house import HFType

# PersimmonConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 262144, "hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 36,
    "num_attention_heads": 64, "hidden_act": "relu2",
}


def _attention(r: Reader, d, o: dict) -> None:
    """PersimmonAttention: num_attention_heads heads of hidden_size // heads (which must divide it), keys and values
    with every head; the class has neither num_key_value_heads nor head_dim, and the model reads neither."""
    heads, width = o["num_query_heads"], o["emb_dim"]
    if width % heads:
        raise r.fail("num_attention_heads", f"does not divide hidden_size={width} (PersimmonAttention refuses it)")
    o["head_dim"] = width // heads
    o["num_kv_heads"] = heads
    for key in ("num_key_value_heads", "head_dim"):
        r.ignore(key, "not read by modeling_persimmon (every head has its keys and values; head_dim is "
                      "hidden_size // num_attention_heads)")


TYPE = HFType(defaults=DEFAULTS, gated=False, attention=_attention,
              no_effect={"qk_layernorm": "LayerNorms on q and k (no matmul)"})
