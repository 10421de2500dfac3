"""OPT: OPTConfig, modeling_opt; multi-head attention of hidden_size // num_attention_heads per head (q, k, v, out), a
plain MLP (fc1, act, fc2) of ffn_dim, global attention; learned positions. A word_embed_proj_dim other than
hidden_size (OPT-350m's project_in / project_out, its output head at that width) is refused."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# OPTConfig (word_embed_proj_dim: null, __post_init__ makes it hidden_size)
DEFAULTS = {
    "max_position_embeddings": 2048,
    "tie_word_embeddings": True,
    "vocab_size": 50272, "hidden_size": 768, "num_hidden_layers": 12, "ffn_dim": 3072, "num_attention_heads": 12,
    "activation_function": "relu", "layerdrop": 0.0,
}


def _attention(r: Reader, d, o: dict) -> None:
    """Multi-head attention; the embeddings' width word_embed_proj_dim must be hidden_size (no projections)."""
    parts.mha(r, d, o)
    width = r.int("word_embed_proj_dim", o["emb_dim"], none_ok=True)  # null: hidden_size (__post_init__)
    if width is not None and width != o["emb_dim"]:
        raise r.fail("word_embed_proj_dim", f"differs from hidden_size={o['emb_dim']}: OPT then projects the "
                                            "embeddings in and the last hidden state out (project_in, project_out) "
                                            "and its output head is that wide; maxflops' schema has no embedding "
                                            "projection")


TYPE = HFType(
    defaults=DEFAULTS, positions=("max_position_embeddings", 2),  # the learned position table
    activation="activation_function", gated=False, attention=_attention, dense_key="ffn_dim",
    extras=(parts.no_layerdrop,),
    no_effect={
        "dropout": "dropout", "init_std": "initialization",
        "do_layer_norm_before": "where the layer norms sit (no matmul)",
        "_remove_final_layer_norm": "whether the final layer norm is kept (no matmul)",
        "enable_bias": "biases of the linear layers (no matmul)",
        "layer_norm_elementwise_affine": "the layer norms' affine weights (no matmul)",
    })
