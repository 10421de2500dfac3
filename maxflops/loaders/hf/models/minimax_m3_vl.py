"""MiniMax-M3 (multimodal): MiniMaxM3VLConfig, modeling_minimax_m3_vl; its text_config is MiniMax-M3's text model
(``minimax_m3_vl_text``); the vision tower and its patch-merge projector are named, not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, 
    wrapper="minimax_m3_vl_text", text_types=("minimax_m3_vl_text", "minimax_m3"),
    no_effect={"projector_hidden_size": "not counted: the vision projector's width",
               "video_token_index": "the video placeholder token id (no matmul)",
               "merged_hidden_size": "not counted: the vision patch-merge MLP's input width"},
)
