"""Qwen4-Exp (multimodal): Qwen4ExpConfig; its text_config is a qwen4_exp_text model, beside Qwen3.5's vision tower,
named and not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="qwen4_exp_text")
