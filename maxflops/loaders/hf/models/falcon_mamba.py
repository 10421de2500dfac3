"""Falcon-Mamba: FalconMambaConfig, modeling_falcon_mamba; Mamba's layers (its extra RMS norms of dt, B and C are
elementwise)."""

from __future__ import annotations

from ..house import HFType
from . import mamba

# FalconMambaConfig
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 50280, "hidden_size": 768, "state_size": 16, "num_hidden_layers": 32, "expand": 2,
    "conv_kernel": 4, "time_step_rank": "auto",
}

TYPE = HFType(defaults=DEFAULTS, read=mamba.TYPE.read)
