"""Qwen3-VL-MoE (multimodal): Qwen3VLMoeConfig; its text_config is a qwen3_vl_moe_text model."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="qwen3_vl_moe_text")
