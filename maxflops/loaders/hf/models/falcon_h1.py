"""Falcon-H1: FalconH1Config, modeling_falcon_h1; attention and a Mamba-2 mixer side by side in every layer, then a
gated MLP."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader
from .. import ssm
from ..house import HFType

# FalconH1Config (mamba_d_head "auto": the Mamba width // mamba_n_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 128000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "mamba_d_ssm": 1024,
    "mamba_n_heads": 128, "mamba_d_head": "auto", "mamba_n_groups": 1, "mamba_d_state": 256, "mamba_d_conv": 4,
    "mamba_expand": 2, "mamba_chunk_size": 256,
}

def _read(r: Reader, d) -> dict:
    """FalconH1Config: num_hidden_layers layers, each GQA attention and a Mamba-2 mixer on the same normed input
    (their outputs summed; the multipliers scale elementwise), then a gated MLP (intermediate_size). The Mamba width
    is mamba_d_ssm (absent or null: mamba_expand x hidden_size) = mamba_n_heads x mamba_d_head; the attention head
    width is head_dim if the file gives one (the model reads it), else hidden_size // heads."""
    o: dict[str, Any] = {"attention_layer_pattern": "G", "parallel_layer_pattern": "M"}
    o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    # keys of earlier FalconH1 files that transformers 5.24's class no longer has: accepted at the values every
    # layer-has-both model carries, refused otherwise
    if r.has("attn_layer_indices"):
        if r.raw("attn_layer_indices", none_ok=True, record=False) is not None:
            raise r.fail("attn_layer_indices", "not modelled: attention on some layers only (transformers 5.24's "
                                               "FalconH1 puts attention beside Mamba in every layer)",
                         r.data["attn_layer_indices"])
        r.ignore("attn_layer_indices", NO_EFFECT + " (null: attention in every layer)")
    if r.has("mamba_use_mlp"):
        if r.bool("mamba_use_mlp", record=False) is not True:
            raise r.fail("mamba_use_mlp", "not modelled: layers without their MLP", r.data["mamba_use_mlp"])
        r.ignore("mamba_use_mlp", NO_EFFECT + " (true: every layer has its MLP)")
    if r.has("mlp_expansion_factor"):
        r.ignore("mlp_expansion_factor", "superseded by intermediate_size (the MLP width transformers builds)")
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    act = r.activation("hidden_act", d("hidden_act"))
    o["mlp_activations"] = (act, "linear")
    o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    heads = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    kv = r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1, none_ok=True)
    o["num_kv_heads"] = heads if kv is None else kv
    hd = r.int("head_dim", minimum=1, none_ok=True) if r.has("head_dim") else None
    o["head_dim"] = hd if hd is not None else o["emb_dim"] // heads
    if not r.has("head_dim"):  # FalconH1Attention: getattr(config, "head_dim", hidden_size // heads)
        r.defaults["head_dim"] = o["head_dim"]
    width = r.int("mamba_d_ssm", d("mamba_d_ssm"), minimum=1, none_ok=True)
    if width is None:
        width = r.int("mamba_expand", d("mamba_expand"), minimum=1) * o["emb_dim"]
    else:
        r.ignore("mamba_expand", f"superseded by mamba_d_ssm ({width})")
    n_heads = r.int("mamba_n_heads", d("mamba_n_heads"), minimum=1)
    ssm.mamba_heads(r, d, o, n_heads, width, f"the Mamba width {width} (FalconH1Config refuses it)")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
