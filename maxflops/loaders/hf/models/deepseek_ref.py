"""DeepSeek-V4 in DeepSeek's own reference format (model_type deepseek_ref: the FP8 checkpoints' config.json, read by
DeepSeek's inference code, not by transformers): the keys of the deepseek_v4 checkpoint format (per-layer
compress_ratios with the MTP modules' entries past the layers, num_hash_layers, ...), read as the deepseek_v4 type
reads them. No transformers config class: no class defaults, so every key read is required."""

from __future__ import annotations

from ..house import HFType
from . import deepseek_v4

# no transformers config class: nothing is defaulted (a file lacking a key read is refused, naming it)
DEFAULTS: dict = {}



def _read(r, d) -> dict:
    """deepseek_v4's reader; the reference code's experts are SwiGLU whatever the file says (it has no hidden_act)."""
    return deepseek_v4.TYPE.read(r, lambda key: "silu" if key == "hidden_act" else d(key))


TYPE = HFType(defaults=DEFAULTS, read=_read,
              no_effect={"scoring_func": "the router's score function", "topk_method": "the router's top-k rule"})
