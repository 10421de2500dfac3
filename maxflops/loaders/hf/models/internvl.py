"""InternVL 3 (multimodal): InternVLConfig, modeling_internvl; its text_config is any decoder (AutoConfig, qwen2 by
default); the InternViT vision tower and its pixel-shuffle projector are named, not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": True}, wrapper="qwen2", text_types=("*",),
              no_effect={"image_seq_length": "not counted: the vision tower's image tokens per image",
                         "downsample_ratio": "not counted: the vision projector's pixel shuffle"})
