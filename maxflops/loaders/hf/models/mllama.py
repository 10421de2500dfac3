"""Mllama (Llama 3.2 Vision, multimodal): MllamaConfig, modeling_mllama; its text_config is Mllama's text model
(self-attention and cross-attention layers; the image tokens the cross-attention layers attend are a stated input,
``cross_attention_tokens``); the vision tower (tiles of 14 x 14 patches, its global layers) and its projector are
named, not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(wrapper="mllama_text_model", text_types=("mllama_text_model",))
