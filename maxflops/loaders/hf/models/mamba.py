"""Mamba: MambaConfig, modeling_mamba; every layer one Mamba-1 mixer, no FFN."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader
from .. import ssm
from ..house import HFType

# MambaConfig (time_step_rank "auto": ceil(hidden_size / 16))
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 50280, "hidden_size": 768, "state_size": 16, "num_hidden_layers": 32, "expand": 2,
    "conv_kernel": 4, "time_step_rank": "auto",
}

def _read(r: Reader, d) -> dict:
    """MambaConfig / FalconMambaConfig: num_hidden_layers Mamba-1 blocks (a norm, the mixer, the residual), no FFN;
    the mixer expand x hidden_size wide, dt rank time_step_rank. (Falcon-Mamba's extra RMS norms of dt, B and C are
    elementwise.)"""
    o: dict[str, Any] = {"attention_layer_pattern": "A", "ffn_layer_pattern": "-"}
    o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    # The class's __post_init__ sets intermediate_size = expand x hidden_size, then PreTrainedConfig's sets the
    # file's own intermediate_size over it: a present one is the mixer's width (falcon-mamba-7b: expand 16, 8192)
    expand = r.int("expand", d("expand"), minimum=1)
    o["mamba1_inner_dim"] = r.int("intermediate_size", expand * o["emb_dim"], minimum=1)
    o["mamba1_state_dim"] = r.int("state_size", d("state_size"), minimum=1)
    o["mamba1_conv_kernel"] = r.int("conv_kernel", d("conv_kernel"), minimum=1)
    o["mamba1_dt_rank"] = ssm.dt_rank(r, "time_step_rank", d, o["emb_dim"])
    r.ignore("hidden_act", NO_EFFECT + ": the mixer's conv activation")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
