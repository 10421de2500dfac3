"""Mistral 3 / Mistral Small 3.1 (multimodal): Mistral3Config, modeling_mistral3; its text_config is any decoder
(AutoConfig, mistral by default); the Pixtral vision tower and its patch-merging projector are named, not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": True}, wrapper="mistral", text_types=("*",),
              no_effect={"spatial_merge_size": "not counted: the vision projector's patch merging"})
