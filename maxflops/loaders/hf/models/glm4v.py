"""GLM-4.1V (multimodal): Glm4vConfig, modeling_glm4v; its text_config is a glm4v_text model; the vision tower and
its merger are named, not priced."""

from __future__ import annotations

from ..house import HFType

TOKENS = "a special token id of the image and video spans (no matmul)"

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="glm4v_text",
              no_effect={k: TOKENS for k in ("image_start_token_id", "image_end_token_id", "video_start_token_id",
                                             "video_end_token_id")})
