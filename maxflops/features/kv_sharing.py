"""KV sharing (Gemma 3n, Gemma 4 E2B/E4B): the last ``num_kv_shared_layers`` decoder layers reuse the keys and values
of an earlier layer, with no K/V projections of their own (they still attend; the attention family prices them,
``LayerKind.kv_shared``), their dense FFN twice as wide on Gemma 4 E2B (``double_wide_kv_shared_mlp``)."""

from __future__ import annotations

from ..fields import field_of
from .base import Feature, register

SCHEMA = {
    "num_kv_shared_layers": field_of(0, int, "The last N decoder layers reuse the keys and values of an earlier "
                                             "layer: no K/V projections of their own (they still attend).",
                                     minimum=0),
    "double_wide_kv_shared_mlp": field_of(False, bool, "The KV-shared layers run their dense FFN at twice mlp_dim "
                                                       "(Gemma 4 E2B)."),
}


def check(c, err) -> None:
    if c["num_kv_shared_layers"] >= c["num_decoder_layers"]:
        err("num_kv_shared_layers", f"{c['num_kv_shared_layers']} leaves no layer to share keys and values from "
                                    f"(num_decoder_layers={c['num_decoder_layers']})")


def mark(c):
    if not c["num_kv_shared_layers"]:
        return None
    first = c["num_decoder_layers"] - c["num_kv_shared_layers"]
    return lambda layer, p: {"kv_shared": layer >= first}


FEATURE = register(Feature(
    "kv_sharing", "the last layers reuse an earlier layer's keys and values (Gemma 3n, Gemma 4)", SCHEMA,
    switches=("num_kv_shared_layers",), on=lambda c: bool(c["num_kv_shared_layers"]),
    off="no layer shares keys and values (num_kv_shared_layers = 0)", check=check,
    flags={"kv_shared": False}, mark=mark,  # kv_shared: reuses an earlier layer's keys and values
    proof="maxflops.features.proofs.kv_sharing"))
