"""GPT-2 (and GPT-SW3, which saves a gpt2 config): GPT2Config, modeling_gpt2; multi-head attention of n_embd // n_head
per head (one fused q/k/v matrix), a plain MLP (c_fc, act, c_proj) of n_inner (null: 4 * n_embd), global attention;
learned positions."""

from __future__ import annotations

from ....reader import Reader
from ..house import HFType, get, read_decoder

# GPT2Config, under the readers' names (attribute_map); n_inner: null, the model uses 4 * n_embd
DEFAULTS = {
    "vocab_size": 50257, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "activation_function": "gelu_new",
}


def _mha(r: Reader, d, o: dict) -> None:
    """Multi-head attention, hidden_size // num_attention_heads per head: the attention reads neither head_dim nor
    num_key_value_heads (a head_dim the class keeps sizes at most a rotary embedding)."""
    o["head_dim"] = o["emb_dim"] // o["num_query_heads"]
    o["num_kv_heads"] = o["num_query_heads"]
    r.ignore("head_dim", "not read by the attention (hidden_size // num_attention_heads per head)")
    r.ignore("num_key_value_heads", "not read: every head has its own keys and values (multi-head attention)")


def _inner_or_4x(r: Reader, d) -> dict:
    """The pipeline, the dense FFN width (the type's dense_key: n_inner, intermediate_size, ffn_hidden_size) null or
    absent read as 4 * hidden_size, as the GPT-style blocks build it."""
    t = get(r.model_type)
    hidden = r.int("hidden_size", d("hidden_size"), minimum=1)
    return read_decoder(r, t, lambda key: 4 * hidden if key == t.dense_key else d(key))


SUMMARY = "the sequence-summary head of the double-heads model (not the causal LM)"

TYPE = HFType(
    defaults=DEFAULTS, read=_inner_or_4x, activation="activation_function", gated=False, attention=_mha,
    dense_key="n_inner",
    attribute_map={"hidden_size": "n_embd", "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"},
    no_effect={
        "n_positions": "the learned position table's length (a gather)",
        "resid_pdrop": "dropout", "embd_pdrop": "dropout", "attn_pdrop": "dropout",
        "summary_type": SUMMARY, "summary_use_proj": SUMMARY, "summary_activation": SUMMARY,
        "summary_proj_to_labels": SUMMARY, "summary_first_dropout": SUMMARY,
        "scale_attn_weights": "a scalar scale of the attention scores",
        "scale_attn_by_inverse_layer_idx": "a scalar scale of the attention scores",
        "reorder_and_upcast_attn": "the attention scores' dtype (the same matmuls)",
        "add_cross_attention": "the cross-attention it builds runs only on encoder_hidden_states (an "
                               "encoder-decoder's); a decoder-only LM passes none",
    })
