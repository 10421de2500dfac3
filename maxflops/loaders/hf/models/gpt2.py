"""GPT-2 (and GPT-SW3, which saves a gpt2 config): GPT2Config, modeling_gpt2; multi-head attention (one fused q/k/v
matrix), a plain MLP (c_fc, act, c_proj) of n_inner (null: 4 * n_embd), global attention; learned positions."""

from __future__ import annotations

import dataclasses

from ....reader import Reader
from ..house import HFType, read_decoder

# GPT2Config, under the readers' names (attribute_map); n_inner: null, the model uses 4 * n_embd
DEFAULTS = {
    "vocab_size": 50257, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "activation_function": "gelu_new",
}


def _read(r: Reader, d) -> dict:
    """The pipeline, with the MLP width n_inner: null (or absent) is 4 * hidden_size (GPT2Block)."""
    hidden = r.int("hidden_size", d("hidden_size"), minimum=1)
    return read_decoder(r, dataclasses.replace(TYPE, name=r.model_type),
                        lambda key: 4 * hidden if key == "n_inner" else d(key))


TYPE = HFType(
    defaults=DEFAULTS, read=_read, activation="activation_function", gated=False, dense_key="n_inner",
    attribute_map={"hidden_size": "n_embd", "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"},
    no_effect={
        "n_positions": "the learned position table's length (a gather)",
        "resid_pdrop": "dropout", "embd_pdrop": "dropout", "attn_pdrop": "dropout",
        "summary_type": "the sequence-summary head of GPT2DoubleHeadsModel (not the causal LM)",
        "summary_use_proj": "the sequence-summary head of GPT2DoubleHeadsModel (not the causal LM)",
        "summary_activation": "the sequence-summary head of GPT2DoubleHeadsModel (not the causal LM)",
        "summary_proj_to_labels": "the sequence-summary head of GPT2DoubleHeadsModel (not the causal LM)",
        "summary_first_dropout": "the sequence-summary head of GPT2DoubleHeadsModel (not the causal LM)",
        "scale_attn_weights": "a scalar scale of the attention scores",
        "scale_attn_by_inverse_layer_idx": "a scalar scale of the attention scores",
        "reorder_and_upcast_attn": "the attention scores' dtype (the same matmuls)",
        "add_cross_attention": "the cross-attention it builds runs only on encoder_hidden_states (an "
                               "encoder-decoder's); a decoder-only LM passes none",
    })
