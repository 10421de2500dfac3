"""Aya Vision (multimodal): AyaVisionConfig, modeling_aya_vision; its text_config is any decoder (AutoConfig, cohere2
by default); the SigLIP vision tower and its pixel-shuffle projector are named, not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": True}, wrapper="cohere2", text_types=("*",),
              no_effect={"downsample_factor": "not counted: the vision projector's pixel shuffle",
                         "adapter_layer_norm_eps": "not counted: the vision projector's norm epsilon"})
