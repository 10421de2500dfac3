"""Kimi K2.5 / K2.6 (multimodal): Kimi_K25Config, modeling_kimi_k25; its text_config is any decoder (AutoConfig,
deepseek_v3 by default; Moonshot's files name it kimi_k2, which Kimi_K25Config.__post_init__ reads as deepseek_v3);
the MoonViT vision tower and its patch-merger projector are named, not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": True}, 
    wrapper="deepseek_v3", text_types=("*",),
    no_effect={
        "projection_hidden_size": "not counted: the vision projector's width",
        "projection_layer_norm_eps": "not counted: the vision projector's norm epsilon",
        "media_placeholder_token_id": "the media placeholder token id of Moonshot's files (no matmul)",
        "video_placeholder": "the video placeholder string of Moonshot's files (no matmul)",
        "use_unified_vision_chunk": "not counted: the vision tower's image/video chunking in Moonshot's files",
        "ignore_index": "the loss's ignored label id (no matmul)",
    },
)
