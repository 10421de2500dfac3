"""GOT-OCR 2.0: GotOcr2Config; its text_config is a qwen2 model (a SAM-style vision encoder and its projector beside
it, not priced)."""

from __future__ import annotations

from ..house import HFType

TYPE = HFType(defaults={"tie_word_embeddings": True}, wrapper="qwen2",
              no_effect={"image_seq_length": "the image tokens per image (the vision tower's; not priced)"})
