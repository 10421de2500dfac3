"""Llama 4 (multimodal): Llama4Config; its text_config is a llama4_text model."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="llama4_text")
