"""Qwen3.5-MoE (multimodal): Qwen3_5MoeConfig; its text_config is a qwen3_5_moe_text model."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="qwen3_5_moe_text")
