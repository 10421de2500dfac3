"""MTP's part of the Flax model: its reduction (the Decoder runs the modules' layers, the plan's MTP rows, and their
heads)."""

from __future__ import annotations


def reduce(c, out):
    """One module; a module numbered as its own layer keeps the last decoder layer's letter (the reduced pattern
    need not end in it; a looped model keeps its depth, and its pattern)."""
    got = {"mtp_num_layers": 1}
    if not c["layer_loops"] and not c["mtp_layer_pattern"] and c["mtp_layer_numbering"] == "own":
        pattern, n = c["attention_layer_pattern"], c["num_decoder_layers"]
        got["mtp_layer_pattern"] = pattern[(n - 1) % len(pattern)]
    return got
