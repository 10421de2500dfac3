"""Qwen3.5 (multimodal): Qwen3_5Config; its text_config is a qwen3_5_text model."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="qwen3_5_text", no_effect={
    "language_model_only": "a loading switch of Qwen's (whether the vision tower is loaded); the text decoder is "
                           "the same, and the tower is named, not priced"})
