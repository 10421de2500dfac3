"""Qwen2.5-VL (multimodal): Qwen2_5_VLConfig, modeling_qwen2_5_vl; its text_config is a qwen2_5_vl_text model (the
class builds it from Qwen2_5_VLTextConfig whatever model_type it names); the vision tower and its merger are named,
not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="qwen2_5_vl_text", flat_text=True)
