"""Qwen3.5 (multimodal): Qwen3_5Config; its text_config is a qwen3_5_text model."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(wrapper="qwen3_5_text")
