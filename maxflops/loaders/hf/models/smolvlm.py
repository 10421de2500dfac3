"""SmolVLM (multimodal): SmolVLMConfig, modeling_smolvlm; its text_config is any decoder (AutoConfig, llama by
default); the SigLIP-style vision tower and its pixel-shuffle connector are named, not priced."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="llama", text_types=("*",),
              no_effect={"scale_factor": "not counted: the vision connector's pixel shuffle",
                         "_pad_token_id": "a token id kept by the class (no matmul)"})
