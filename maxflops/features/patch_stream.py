"""A byte stream and its patches (BLT): ``patch_layers`` run over the patch stream, not the tokens (its global
transformer: ``patches_per_sequence`` positions a sequence, causal among themselves; the patch family's 'Y' and 'U'
layers move between the streams); ``frozen_layers`` belong to a frozen model whose output no loss reads (its entropy
patcher), forward only in training; ``patcher_head_layer`` closes with that patcher's output head over the tokens."""

from __future__ import annotations

from .. import terms
from ..components import Component, WEIGHT
from ..fields import Ints, field_of
from ..sequences import uses_patches
from .base import Feature, register

SCHEMA = {
    "patch_layers": field_of((), Ints, "0-based decoder layers that run over the patch stream, not the tokens (BLT's "
                                       "global transformer): patches_per_sequence positions a sequence, causal among "
                                       "themselves; the patch family's 'Y' and 'U' layers move between the streams."),
    "patches_per_sequence": field_of(0, int, "Patches a sequence of max_target_length tokens makes (BLT's entropy "
                                             "patcher decides them from the data: a stated input); 0: one per token "
                                             "and one more (L + 1 a sequence or packed document), as transformers "
                                             "patches without its patcher and as a patcher that opens a patch at "
                                             "every byte gives.", minimum=0),
    "frozen_layers": field_of((), Ints, "0-based decoder layers of a frozen model whose output no loss reads (BLT's "
                                        "entropy patcher, eval and without gradient): forward only in training."),
    "patcher_head_layer": field_of(-1, int, "After this 0-based decoder layer, a patcher's output head (BLT: its norm "
                                            "and D -> vocab_size logits over the tokens, the layer's own width; "
                                            "component 'patcher_logits'), forward only in training when the layer "
                                            "is frozen; -1: none.", minimum=-1),
}


def check(c, err) -> None:
    n = c["num_decoder_layers"]
    for key in ("patch_layers", "frozen_layers"):
        for layer in c[key]:
            if layer >= n:
                err(key, f"layer {layer} is past the last decoder layer ({n - 1})")
    if c["patcher_head_layer"] >= n:
        err("patcher_head_layer", f"layer {c['patcher_head_layer']} is past the last decoder layer ({n - 1})")
    if c["patcher_head_layer"] >= 0 and c["convention"] != "exact":
        err("convention", f"{c['convention']!r} has no rule for a patcher's head (patcher_head_layer="
                          f"{c['patcher_head_layer']}); use 'exact'")
    if c["patch_layers"] or c["frozen_layers"] or c["patcher_head_layer"] >= 0:
        for key in ("layer_loops", "mtp_num_layers", "pipeline_stages", "prompt_tokens"):
            if c[key] and c[key] != 1:
                err(key, f"{c[key]!r} with a patch stream, frozen layers or a patcher's head (BLT's): not modelled")
    if c["mode"] == "decode" and c["patch_layers"]:
        err("mode", "'decode' with patch_layers: a byte model's decode step runs its patch layers only when a "
                    "byte opens a patch, which the patcher decides from the data; not modelled (count prefill or "
                    "train)")


def price(p, kind, c, seqs, decode, tokens, hardware) -> None:
    if kind.patcher_head:  # a patcher's output head over its tokens (BLT's entropy model: forward only when frozen)
        p.out["patcher_logits"] = terms.logits(c["emb_dim"], terms.head_vocab(c, hardware)) * tokens


def mark(c):
    on_patches, head = frozenset(c["patch_layers"]), c["patcher_head_layer"]
    if not on_patches and head < 0:
        return None
    return lambda layer, p: {"patches": layer in on_patches, "patcher_head": layer == head}


FEATURE = register(Feature(
    "patch_stream", "a byte stream and its patches: layers over the patches, a frozen patcher and its head (BLT)",
    SCHEMA, switches=("patch_layers", "frozen_layers", "patcher_head_layer"),
    on=lambda c: bool(c["patch_layers"] or c["frozen_layers"]) or c["patcher_head_layer"] >= 0, off="", order=110,
    components=(Component("patcher_logits", WEIGHT, 262, "a patcher's output head over the tokens (BLT's frozen "
                                                           "entropy model: forward only)"),),
    weight_components=("patcher_logits",), check=check, price=price,
    # patches: runs over the patch stream (patches_per_sequence positions a sequence); patcher_head: a patcher's
    # output head after it
    flags={"patches": False, "patcher_head": False}, mark=mark,
    reads={"patches_per_sequence": (uses_patches, "no layer runs over patches (patch_layers, or the patch family's "
                                                  "'Y' / 'U' layers)")}))
