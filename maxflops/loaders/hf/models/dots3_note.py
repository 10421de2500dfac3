"""Dots 3 Note (multimodal): Dots3NoteConfig; its text_config is a dots3_note_text model."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="dots3_note_text")
