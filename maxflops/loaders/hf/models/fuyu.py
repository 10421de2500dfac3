"""Fuyu: FuyuConfig; its text_config is a persimmon model (its image patches are projected by one Linear,
vision_embed_tokens, sized by patch_size and num_channels; not priced)."""

from __future__ import annotations

from ..house import HFType

PATCHES = "sizes the image patches' projection (vision_embed_tokens), run only on image patches; not priced"

TYPE = HFType(wrapper="persimmon",
              no_effect={"image_size": PATCHES, "patch_size": PATCHES, "num_channels": PATCHES})
