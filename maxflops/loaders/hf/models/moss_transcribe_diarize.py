"""MOSS Transcribe-Diarize (audio + text): MossTranscribeDiarizeConfig, modeling_moss_transcribe_diarize; its
text_config is a qwen3 model (the audio encoder and its projector are named, not priced)."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": True}, 
    wrapper="qwen3", class_towers=("audio_config",),
    no_effect={"audio_chunk_size": "the audio tower's input chunking (not priced)",
               "audio_merge_size": "the audio projector's frame merging (not priced)",
               "projector_bias": "the audio projector's bias (not priced)"},
)
