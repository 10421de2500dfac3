"""Gemma 3 (multimodal): Gemma3Config; its text_config is a gemma3_text model."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": True}, wrapper="gemma3_text")
