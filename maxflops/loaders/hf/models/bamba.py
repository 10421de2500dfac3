"""Bamba: BambaConfig, modeling_bamba; Mamba-2 or attention (attn_layer_indices) in every layer, each with a gated
MLP."""

from __future__ import annotations

from typing import Any

from ...reader import Reader
from .. import parts, ssm
from ..house import HFType

# BambaConfig (mamba_d_head "auto": mamba_expand x hidden_size // mamba_n_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 128000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "mamba_n_heads": 128,
    "mamba_d_head": "auto", "mamba_n_groups": 1, "mamba_d_state": 256, "mamba_d_conv": 4, "mamba_expand": 2,
    "mamba_chunk_size": 256,
}

def _read(r: Reader, d) -> dict:
    """BambaConfig: num_hidden_layers layers, attention at attn_layer_indices and Mamba-2 elsewhere, each followed by
    a gated MLP (intermediate_size)."""
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    attn = set(r.list("attn_layer_indices", int, none_ok=True) or []) if parts.given(r, "attn_layer_indices") else set()
    if any(not 0 <= i < n for i in attn):
        raise r.fail("attn_layer_indices", f"has a layer outside 0..{n - 1}", sorted(attn))
    ssm.hybrid_common(r, d, o, ["G" if i in attn else "M" for i in range(n)])
    o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
