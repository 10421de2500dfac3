"""GPT-NeoX-Japanese: GPTNeoXJapaneseConfig, modeling_gpt_neox_japanese; as GPT-NeoX (multi-head attention, one fused
q/k/v matrix, global attention), a plain MLP of hidden_size * intermediate_multiple_size."""

from __future__ import annotations

import dataclasses

from ...reader import Reader
from .. import parts
from ..house import HFType, read_decoder
from .gpt_neox import NO_EFFECT_KEYS

# GPTNeoXJapaneseConfig
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 32000, "hidden_size": 2560, "num_hidden_layers": 32, "num_attention_heads": 32,
    "intermediate_multiple_size": 4, "hidden_act": "gelu",
}


def _read(r: Reader, d) -> dict:
    """The pipeline, the MLP width int(hidden_size * intermediate_multiple_size) (GPTNeoXJapaneseMLP)."""
    o = read_decoder(r, dataclasses.replace(TYPE, name=r.model_type), d)
    o["mlp_dim"] *= o["emb_dim"]
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read, gated=False, attention=parts.mha, dense_key="intermediate_multiple_size",
              no_effect={**NO_EFFECT_KEYS,
                         "rotary_pct": "the rotary embedding's share of a head (no matmul)",
                         "rotary_emb_base": "the rotary embedding's base (no matmul)"})
