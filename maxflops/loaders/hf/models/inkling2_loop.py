"""Inkling 2 Loop (multimodal): Inkling2LoopConfig; its text_config an inkling2_loop_text model, beside Inkling 2's
vision tower, named and not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(wrapper="inkling2_loop_text")
