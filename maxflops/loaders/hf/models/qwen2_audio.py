"""Qwen2-Audio (audio + text): Qwen2AudioConfig, modeling_qwen2_audio; its text_config is any decoder (AutoConfig,
qwen2 by default); the Whisper-style audio encoder and its projector are named, not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(wrapper="qwen2", text_types=("*",), class_towers=("audio_config",),
              no_effect={"audio_token_index": "the audio placeholder token id (no matmul)"})
