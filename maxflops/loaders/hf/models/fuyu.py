"""Fuyu: FuyuConfig; its text_config is a persimmon model. Fuyu has no vision encoder: its image patches are projected
by one Linear (vision_embed_tokens: patch_size^2 x num_channels -> hidden_size), named, not priced."""

from __future__ import annotations

from ..house import HFType

PATCHES = "sizes the image patches' projection (vision_embed_tokens), run only on image patches; not priced"

TYPE = HFType(defaults={"tie_word_embeddings": False}, wrapper="persimmon",
              # the tower the class always builds: the patch projection (named by the key that sizes it)
              class_towers=("patch_size",),
              towers={"patch_size": "image patch projection (vision_embed_tokens, one Linear)"},
              no_effect={"image_size": PATCHES, "patch_size": PATCHES, "num_channels": PATCHES})
