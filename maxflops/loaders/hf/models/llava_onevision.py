"""LLaVA-OneVision (multimodal): LlavaOnevisionConfig, modeling_llava_onevision; its text_config is any decoder
(AutoConfig, qwen2 by default); the SigLIP vision tower, its projector and the image newline are named, not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="qwen2", text_types=("*",),
              no_effect={"image_grid_pinpoints": "not counted: the vision tower's any-resolution tiling",
                         "vision_aspect_ratio": "not counted: the vision tower's tile budget (anyres_max_N)",
                         "video_token_index": "the video placeholder token id (no matmul)"})
