"""Qwen2-VL (multimodal): Qwen2VLConfig, modeling_qwen2_vl; its text_config is a qwen2_vl_text model (the class
builds it from Qwen2VLTextConfig whatever model_type it names); the vision tower and its merger are named, not
priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="qwen2_vl_text", flat_text=True)
