"""BLOOM: BloomConfig, modeling_bloom; multi-head attention of hidden_size // n_head per head (one fused q/k/v
matrix, dense) with an ALiBi bias (added by the score matmul, baddbmm), a plain MLP 4 * hidden_size wide (tanh GELU),
global attention."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# BloomConfig, under the readers' names (attribute_map)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 250880, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
}


def _read(r: Reader, d) -> dict:
    """BLOOM's blocks: the legacy n_embed kwarg, when given, is the width (BloomConfig.__post_init__); the MLP is
    dense_h_to_4h, BloomGelu, dense_4h_to_h (4 * hidden_size, no key); every layer global."""
    o = {"num_decoder_layers": r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)}
    if parts.given(r, "n_embed"):
        o["emb_dim"] = r.int("n_embed", minimum=1)
        if r.has("hidden_size"):
            r.raw("hidden_size", none_ok=True, record=False)
            r.ignore("hidden_size", "superseded by n_embed (BloomConfig's post-init makes it the width)")
    else:
        o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    heads = o["num_query_heads"] = o["num_kv_heads"] = r.int("num_attention_heads", d("num_attention_heads"),
                                                              minimum=1)
    o["head_dim"] = o["emb_dim"] // heads
    o["mlp_activations"] = ("gelu",)  # BloomGelu: the tanh approximation
    o["mlp_dim"] = 4 * o["emb_dim"]
    o["attention_layer_pattern"] = "G"
    return o


TYPE = HFType(
    defaults=DEFAULTS, read=_read, attribute_map={"num_hidden_layers": "n_layer", "num_attention_heads": "n_head"},
    no_effect={"apply_residual_connection_post_layernorm": "which tensor the residual adds (no matmul)",
               "slow_but_exact": "with pretraining_tp > 1, the dense projection summed in slices (the same FLOPs)",
               "bias_dropout_fusion": "a kernel choice",
               "n_inner": "not read by BloomConfig (the MLP is 4 * hidden_size)",
               "seq_length": "a context length (no matmul)", "masked_softmax_fusion": "a kernel choice",
               "offset_alibi": "the ALiBi bias's offset (no matmul)", "skip_bias_add": "a bias add (no matmul)",
               "skip_bias_add_qkv": "a bias add (no matmul)", "attention_softmax_in_fp32": "the softmax's dtype",
               "unk_token_id": "a token id"},
)
