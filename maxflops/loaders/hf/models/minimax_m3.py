"""MiniMax-M3 as MiniMax publishes it (remote code, model_type minimax_m3): its text model's file, read as transformers'
MiniMaxM3VLTextConfig reads MiniMax's checkpoint (``minimax_m3_vl_text``: the legacy sparse_attention_config and
moe_layer_freq, the checkpoint's own keys checked by name). No class of transformers has this type, so no class
default stands in for a key the file lacks: every key is required."""

from __future__ import annotations

import dataclasses

from . import minimax_m3_vl_text

TYPE = dataclasses.replace(minimax_m3_vl_text.TYPE, defaults={})
