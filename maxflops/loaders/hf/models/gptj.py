"""GPT-J: GPTJConfig, modeling_gptj; multi-head attention of n_embd // n_head per head (q, k, v, out), a plain MLP
(fc_in, act, fc_out) of n_inner (null: 4 * n_embd) beside it (a parallel residual), global attention."""

from __future__ import annotations

from .. import parts
from ..house import HFType, read_decoder_4x

# GPTJConfig, under the readers' names (attribute_map); n_inner: null, the model uses 4 * n_embd
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 50400, "hidden_size": 4096, "num_hidden_layers": 28, "num_attention_heads": 16,
    "activation_function": "gelu_new",
}

TYPE = HFType(
    defaults=DEFAULTS, read=read_decoder_4x, activation="activation_function", gated=False, attention=parts.mha,
    dense_key="n_inner",
    attribute_map={"hidden_size": "n_embd", "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"},
    no_effect={"n_positions": "the rotary table's length (no matmul)", "resid_pdrop": "dropout",
               "embd_pdrop": "dropout", "attn_pdrop": "dropout"})
