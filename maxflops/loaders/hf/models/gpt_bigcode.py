"""GPT-BigCode (SantaCoder, StarCoder): GPTBigCodeConfig, modeling_gpt_bigcode; as GPT-2 (one fused q/k/v matrix, a
plain MLP of n_inner, null: 4 * n_embd), with multi-query attention (one key/value head) when multi_query."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType, read_decoder_4x

# GPTBigCodeConfig, under the readers' names (attribute_map); n_inner: null, the model uses 4 * n_embd
DEFAULTS = {
    "n_positions": 1024,
    "tie_word_embeddings": True,
    "vocab_size": 50257, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "activation_function": "gelu_pytorch_tanh", "multi_query": True,
}


def _attention(r: Reader, d, o: dict) -> None:
    """n_embd // n_head per head; one key/value head when multi_query, else one per query head
    (GPTBigCodeAttention.kv_heads; __post_init__ sets num_key_value_heads from multi_query, whatever the file says)."""
    parts.mha(r, d, o)
    if r.bool("multi_query", d("multi_query")):
        o["num_kv_heads"] = 1
    r.ignore("num_key_value_heads", "superseded: GPTBigCodeConfig.__post_init__ sets it from multi_query (1 if "
                                    "multi_query else n_head)")


TYPE = HFType(
    defaults=DEFAULTS, positions=("n_positions", 0),  # the learned position table
    read=read_decoder_4x, activation="activation_function", gated=False, attention=_attention,
    dense_key="n_inner",
    attribute_map={"hidden_size": "n_embd", "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"},
    no_effect={
        "resid_pdrop": "dropout", "embd_pdrop": "dropout", "attn_pdrop": "dropout",
        "classifier_dropout": "dropout of the classification heads (not the causal LM)",
        "scale_attn_weights": "a scalar scale of the attention scores",
        "attention_softmax_in_fp32": "the softmax's dtype (the same matmuls)",
        "scale_attention_softmax_in_fp32": "the softmax's dtype (the same matmuls)",
        "add_cross_attention": "the cross-attention it builds runs only on encoder_hidden_states (an "
                               "encoder-decoder's); a decoder-only LM passes none",
    })
