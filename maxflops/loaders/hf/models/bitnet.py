"""BitNet b1.58: BitNetConfig, modeling_bitnet; as Llama (a gated ReLU^2 MLP; the sub-norms and the ternary weights
change no matmul's shape)."""

from __future__ import annotations

from ..house import HFType

# BitNetConfig (no head_dim field: the model's getattr rule, hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 128256, "hidden_size": 2560, "intermediate_size": 6912, "num_hidden_layers": 30,
    "num_attention_heads": 20, "num_key_value_heads": 5, "hidden_act": "relu2",
}

TYPE = HFType(defaults=DEFAULTS)
