"""Prompt tokens (CPM-Ant's prompt_length): tokens the model runs ahead of every sequence; each sequence's layers see
them and its own tokens (a decode step's cache holds them too), the output head its own tokens only
(``maxflops.sequences``)."""

from __future__ import annotations

from ..fields import field_of
from .base import Feature, register

SCHEMA = {
    "prompt_tokens": field_of(0, int, "Tokens the model runs ahead of every sequence (CPM-Ant's prompt_length): "
                                      "each sequence's layers see these and its own tokens (decode: its cache holds "
                                      "them too), the output head its own tokens only.", minimum=0),
}


def check(c, err) -> None:
    if c["prompt_tokens"]:
        for key in ("mtp_num_layers", "batch_shards", "vision_layers"):
            if c[key]:
                err(key, f"{c[key]!r} with prompt_tokens={c['prompt_tokens']}: not modelled")


FEATURE = register(Feature(
    "prompt_tokens", "tokens run ahead of every sequence (CPM-Ant)", SCHEMA, switches=("prompt_tokens",),
    on=lambda c: bool(c["prompt_tokens"]), off="", check=check))
