"""StarCoder2: Starcoder2Config, modeling_starcoder2; GQA, a plain MLP (c_fc, act, c_proj), a non-null sliding_window
on every layer."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# Starcoder2Config (head_dim: the model's getattr rule, hidden_size // heads)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 49152, "hidden_size": 3072, "intermediate_size": 12288, "num_hidden_layers": 30,
    "num_attention_heads": 24, "num_key_value_heads": 2, "hidden_act": "gelu_pytorch_tanh", "sliding_window": None,
}

TYPE = HFType(
    defaults=DEFAULTS, gated=False, layers=parts.window_every_layer,
    no_effect={"use_bias": "biases of the projections (no matmul)", "norm_epsilon": "LayerNorm epsilon",
               "residual_dropout": "dropout (no matmul)", "embedding_dropout": "dropout (no matmul)"},
)
