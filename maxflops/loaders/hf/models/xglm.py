"""XGLM: XGLMConfig, modeling_xglm; multi-head attention of d_model // attention_heads per head (q, k, v, out), a
plain MLP (fc1, act, fc2) of ffn_dim, global attention; sinusoidal positions."""

from __future__ import annotations

from .. import parts
from ..house import HFType

# XGLMConfig, under the readers' names (attribute_map)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 256008, "hidden_size": 1024, "ffn_dim": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
    "activation_function": "gelu", "layerdrop": 0.0,
}

TYPE = HFType(
    defaults=DEFAULTS, activation="activation_function", gated=False, attention=parts.mha, dense_key="ffn_dim",
    extras=(parts.no_layerdrop,),
    attribute_map={"hidden_size": "d_model", "num_attention_heads": "attention_heads",
                   "num_hidden_layers": "num_layers"},
    no_effect={
        "dropout": "dropout", "activation_dropout": "dropout", "init_std": "initialization",
        "scale_embedding": "a scalar scale of the embeddings",
        "decoder_start_token_id": "a token id",
        "add_cross_attention": "the cross-attention it builds runs only on encoder_hidden_states (an "
                               "encoder-decoder's); a decoder-only LM passes none",
    })
