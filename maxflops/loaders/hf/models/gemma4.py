"""Gemma 4 (multimodal): Gemma4Config; its text_config is a gemma4_text model."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": True}, wrapper="gemma4_text")
