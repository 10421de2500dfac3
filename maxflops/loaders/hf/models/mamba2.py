"""Mamba-2: Mamba2Config, modeling_mamba2; every layer one Mamba-2 mixer, no FFN."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader
from .. import ssm
from ..house import HFType

# Mamba2Config
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32768, "hidden_size": 4096, "num_hidden_layers": 64, "num_heads": 128, "head_dim": 64,
    "state_size": 128, "n_groups": 8, "conv_kernel": 4, "chunk_size": 256, "expand": 2,
}

def _read(r: Reader, d) -> dict:
    """Mamba2Config: num_hidden_layers Mamba-2 blocks (a norm, the mixer, the residual), no FFN. Its mixer's width
    is hidden_size x expand, which the config class requires to equal num_heads x head_dim."""
    o: dict[str, Any] = {"attention_layer_pattern": "M", "ffn_layer_pattern": "-"}
    o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    ssm.mamba2_widths(r, d, o, "num_heads", "head_dim", "state_size")
    expand = r.int("expand", d("expand"), minimum=1)
    if o["emb_dim"] * expand != o["mamba_num_heads"] * o["mamba_head_dim"]:
        raise r.fail("expand", f"hidden_size x expand = {o['emb_dim'] * expand} must equal num_heads x head_dim = "
                               f"{o['mamba_num_heads'] * o['mamba_head_dim']} (Mamba2Config refuses it)", expand)
    r.ignore("hidden_act", NO_EFFECT + ": the mixer's conv activation")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
