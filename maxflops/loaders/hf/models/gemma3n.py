"""Gemma 3n (multimodal): Gemma3nConfig; its text_config is a gemma3n_text model, beside a vision tower (a timm
MobileNet-V5) and an audio tower (a conformer), named and not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": True}, wrapper="gemma3n_text",
              class_towers=("vision_config", "audio_config"))
