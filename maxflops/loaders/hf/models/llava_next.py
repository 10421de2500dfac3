"""LLaVA-NeXT (multimodal): LlavaNextConfig, modeling_llava_next; its text_config is any decoder (AutoConfig, llama
by default); the CLIP vision tower, its projector and the image newline are named, not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="llama", text_types=("*",),
              no_effect={"image_seq_length": "not counted: the vision tower's image tokens per image",
                         "image_grid_pinpoints": "not counted: the vision tower's any-resolution tiling"})
