"""Falcon: FalconConfig, modeling_falcon; one fused q/k/v matrix with hidden_size // num_attention_heads per head and
num_kv_heads key/value heads (new_decoder_architecture), else one (multi_query), else one per head; a plain MLP
(dense_h_to_4h, act, dense_4h_to_h) of ffn_hidden_size (null: 4 * hidden_size), global attention; ALiBi or rotary,
parallel or sequential attention and MLP: the same matmuls."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType, read_decoder_4x

# FalconConfig (num_kv_heads: null, __post_init__ makes it num_attention_heads; ffn_hidden_size: null, 4 *
# hidden_size; hidden_size: the n_embed kwarg when given)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 65024, "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71,
    "activation": "gelu", "new_decoder_architecture": False, "multi_query": True,
}


def _flag(r: Reader, d, key: str) -> bool:
    """A switch the class types bool | None: the model tests it for truth, so null is false."""
    value = r.raw(key, d(key), none_ok=True)
    if value is not None and not isinstance(value, bool):
        raise r.fail(key, f"expected true, false or null, got {type(value).__name__}")
    return bool(value)


def _attention(r: Reader, d, o: dict) -> None:
    """FalconAttention: qkv_out_dim = (2 * num_kv_heads + heads) * head_dim with new_decoder_architecture, else
    hidden_size + 2 * head_dim with multi_query, else 3 * hidden_size."""
    parts.mha(r, d, o)
    heads = o["num_query_heads"]
    if _flag(r, d, "new_decoder_architecture"):
        kv = r.int("num_kv_heads", heads, minimum=1, none_ok=True)
        o["num_kv_heads"] = heads if kv is None else kv
        r.ignore("multi_query", "superseded: new_decoder_architecture sizes keys and values by num_kv_heads")
        return
    r.ignore("num_kv_heads", "unused: without new_decoder_architecture the keys and values are one head "
                             "(multi_query) or one per query head")
    if _flag(r, d, "multi_query"):
        o["num_kv_heads"] = 1


TYPE = HFType(
    defaults=DEFAULTS, read=read_decoder_4x, activation="activation", gated=False, attention=_attention,
    dense_key="ffn_hidden_size", attribute_map={"hidden_size": "n_embed"},
    no_effect={
        "alibi": "ALiBi biases instead of rotary embeddings (elementwise; the same matmuls)",
        "parallel_attn": "attention and MLP in parallel or in sequence: the same matmuls",
        "num_ln_in_parallel_attn": "layer norms before attention and MLP (no matmul)",
        "bias": "biases of the linear layers (no matmul)",
        "classifier_dropout": "dropout of the classification heads (not the causal LM)",
        "apply_residual_connection_post_layernorm": "a key of the original Falcon code that FalconConfig keeps and "
                                                    "the model never reads",
    })
