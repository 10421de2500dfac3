"""Inkling 2 (multimodal): Inkling2Config; its text_config an inkling2_text model, beside a vision tower (a ViT and
its merger MLP), named and not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(wrapper="inkling2_text")
