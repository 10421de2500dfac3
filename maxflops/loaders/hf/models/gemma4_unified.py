"""Gemma 4 unified (multimodal): Gemma4UnifiedConfig; its text_config is a gemma4_unified_text model, its vision and
audio embedders project their own tokens (text tokens count the same)."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": True}, wrapper="gemma4_unified_text", class_towers=())
