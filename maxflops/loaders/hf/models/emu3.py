"""Emu3 as its checkpoints publish it (Emu3-Chat-hf, Emu3-Gen-hf): Emu3Config, a composite of the text model
(text_config: Emu3TextConfig, counted as emu3_text_model, which is what Emu3ForCausalLM builds from this file) and the
image tokenizer (vq_config: a VQ-VAE that turns images into the tokens the decoder reads and generated image tokens
back into pixels), named, not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, 
    wrapper="emu3_text_model", class_towers=("vq_config",),
    towers={"vq_config": "image tokenizer (Emu3's VQ-VAE: images to the tokens the decoder reads, and back)"},
    no_effect={"vocabulary_map": "the image tokens' ids in the vocabulary (no matmul)",
               "image_token_id": "the image placeholder token id (no matmul)"})
