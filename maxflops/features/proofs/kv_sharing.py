"""KV sharing's part of the Flax model: its reduction (the attention family's layers build the shared ones)."""

from __future__ import annotations


def reduce(c, out):
    """The last layers of the reduced depth reuse keys and values: one pattern's worth (a looped model keeps its
    depth, and its count)."""
    if c["layer_loops"]:
        return {}
    return {"num_kv_shared_layers": min(c["num_kv_shared_layers"], len(out["attention_layer_pattern"]),
                                        out["num_decoder_layers"] - 1)}
