"""GPT-2 (and GPT-SW3, which saves a gpt2 config): GPT2Config, modeling_gpt2; multi-head attention of n_embd // n_head
per head (one fused q/k/v matrix), a plain MLP (c_fc, act, c_proj) of n_inner (null: 4 * n_embd), global attention;
learned positions."""

from __future__ import annotations

from .. import parts
from ..house import HFType, read_decoder_4x

# GPT2Config, under the readers' names (attribute_map); n_inner: null, the model uses 4 * n_embd
DEFAULTS = {
    "n_positions": 1024,
    "tie_word_embeddings": True,
    "vocab_size": 50257, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "activation_function": "gelu_new",
}


SUMMARY = "the sequence-summary head of the double-heads model (not the causal LM)"

TYPE = HFType(
    defaults=DEFAULTS, positions=("n_positions", 0),  # the learned position table
    read=read_decoder_4x, activation="activation_function", gated=False, attention=parts.mha,
    dense_key="n_inner",
    attribute_map={"hidden_size": "n_embd", "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"},
    no_effect={
        "resid_pdrop": "dropout", "embd_pdrop": "dropout", "attn_pdrop": "dropout",
        "summary_type": SUMMARY, "summary_use_proj": SUMMARY, "summary_activation": SUMMARY,
        "summary_proj_to_labels": SUMMARY, "summary_first_dropout": SUMMARY,
        "scale_attn_weights": "a scalar scale of the attention scores",
        "scale_attn_by_inverse_layer_idx": "a scalar scale of the attention scores",
        "reorder_and_upcast_attn": "the attention scores' dtype (the same matmuls)",
        "add_cross_attention": "the cross-attention it builds runs only on encoder_hidden_states (an "
                               "encoder-decoder's); a decoder-only LM passes none",
    })
