"""Voxtral (audio): VoxtralConfig, modeling_voxtral; its text_config is a Llama-family decoder (the class's default
llama), which VoxtralConfig builds over its own text defaults (Voxtral Mini's widths: a file's text_config lacking a
key takes those, not LlamaConfig's); the audio encoder and its projector are named, not priced."""

from __future__ import annotations

from ..house import HFType

# VoxtralConfig.sub_configs_defaults["text_config"].init_kwargs (the FLOPs keys)
TEXT_DEFAULTS = {
    "vocab_size": 131072, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 30,
    "num_key_value_heads": 8, "head_dim": 128,
}

TYPE = HFType(wrapper="llama", text_types=("*",), class_towers=("audio_config",), text_defaults=TEXT_DEFAULTS,
              no_effect={"hidden_size": "VoxtralConfig copies its text model's hidden_size here",
                         "projector_hidden_act": "the audio projector's activation (not priced)"})
