"""MPT: MptConfig, modeling_mpt; multi-head attention (a fused Wqkv D -> 3D, out_proj D -> D) with an ALiBi bias (no
matmul), a plain MLP 4 x d_model wide (up, exact GELU, down), LayerNorms, global attention."""

from __future__ import annotations

from typing import Any

from ...reader import Reader
from ..house import HFType

# MptConfig (attribute_map: hidden_size -> d_model, num_attention_heads -> n_heads, num_hidden_layers -> n_layers)
DEFAULTS = {
    "tie_word_embeddings": True, "vocab_size": 50368, "hidden_size": 2048, "num_attention_heads": 16,
    "num_hidden_layers": 24,
            "expansion_ratio": 4}


def _read(r: Reader, d) -> dict:
    o: dict[str, Any] = {}
    o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    D = o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    H = o["num_query_heads"] = o["num_kv_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    if D % H:
        raise r.fail("num_attention_heads", f"does not divide d_model={D}: MptAttention's heads are "
                                            "d_model // n_heads wide over a D -> 3D Wqkv, so transformers' model "
                                            "cannot run")
    o["head_dim"] = D // H
    # MptMLP: up_proj D -> 4D, nn.GELU(approximate="none"), down_proj 4D -> D, whatever expansion_ratio says
    ratio = r.int("expansion_ratio", d("expansion_ratio"), minimum=1)
    if ratio != 4:
        raise r.fail("expansion_ratio", "transformers' MptMLP is 4 x d_model wide whatever expansion_ratio says, so "
                                        "a checkpoint with another ratio does not load in it")
    o["mlp_activations"] = ("gelu",)
    o["mlp_dim"] = 4 * D
    o["attention_layer_pattern"] = "G"
    return o


TYPE = HFType(
    defaults=DEFAULTS, read=_read,
    attribute_map={"hidden_size": "d_model", "num_attention_heads": "n_heads", "num_hidden_layers": "n_layers"},
    no_effect={
        "attn_config": "MptAttention reads only softmax_scale, clip_qkv and attn_pdrop of it (a scale, a clamp, "
                       "dropout); attn_type, alibi, qk_ln, prefix_lm and attn_uses_sequence_id are not read (every "
                       "layer multi-head causal attention with ALiBi)",
        "learned_pos_emb": "transformers' MPT builds no learned position embedding (ALiBi only)",
        "max_seq_len": "the ALiBi table's length",
        "logit_scale": "not read by modeling_mpt",
        "no_bias": "biases (no matmul)", "embedding_fraction": "not read by modeling_mpt",
        "norm_type": "the LayerNorm's precision", "init_device": "where weights are initialised",
        "emb_pdrop": "dropout", "resid_pdrop": "dropout",
    },
)
