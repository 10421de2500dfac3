"""Engram (DeepSeek's n-gram memory): on the layers ``engram_layers`` names, before attention, n-gram embeddings (a
table lookup: a gather) of orders 2..n projected to keys (-> G x D, over mHC's G streams) and a value (-> D), a
per-stream gate (a dot product of each stream with its key: no matmul in transformers' model) and a causal
depthwise conv of ``engram_kernel_size`` taps dilated by the largest order, over the streams."""

from __future__ import annotations

from .. import masks, terms
from ..components import ATTENTION_KIND, Component, WEIGHT
from ..fields import Ints, field_of
from .base import Feature, register

SCHEMA = {
    "engram_layers": field_of((), Ints, "0-based decoder layers with an Engram block before attention: n-gram "
                                        "embeddings (a gather) projected to keys (-> expansion x D) and a value "
                                        "(-> D), a per-stream gate (a dot product) and a causal depthwise conv."),
    "engram_num_heads": field_of(8, int, "Engram embedding heads per n-gram order.", minimum=1),
    "engram_head_dim": field_of(1280, int, "Engram embedding width per head.", minimum=1),
    "engram_max_ngram_size": field_of(3, int, "Engram's largest n-gram: orders 2..n, and the conv's dilation.",
                                      minimum=2),
    "engram_kernel_size": field_of(4, int, "Engram's depthwise conv width.", minimum=1),
}


def check(c, err) -> None:
    for layer in c["engram_layers"]:
        if layer >= c["num_decoder_layers"]:
            err("engram_layers", f"layer {layer} is past the last decoder layer ({c['num_decoder_layers'] - 1})")


def price(p, kind, c, seqs, decode, tokens, hardware) -> None:
    if not kind.engram:
        return
    d, streams = c["emb_dim"], c["mhc_expansion_rate"]
    e_in = c["engram_num_heads"] * c["engram_head_dim"] * (c["engram_max_ngram_size"] - 1)
    p.out["engram_proj"] = terms.engram_proj(e_in, streams, d) * tokens
    if not (hardware and c["weighted_sum_impl"] != "einsum"):  # (the gate's dot products, a multiply and a sum
        p.out["engram_gate"] = 2 * streams * d * tokens       # in transformers' Qwen4-Exp: no matmul)
    k, dil = c["engram_kernel_size"], c["engram_max_ngram_size"]
    if c["gdn_conv_taps"] == "full" or (hardware and c["aux_conv_impl"] == "padded"):
        taps = k * tokens  # (every tap of every output: the sequence padded by (k - 1) x dil zeros before)
    elif decode:
        taps = seqs.sum(lambda kv: masks.dilated_taps(kv + 1, k, dil) - masks.dilated_taps(kv, k, dil))
    else:
        taps = seqs.sum(lambda L: masks.dilated_taps(L, k, dil))
    p.out["engram_conv"] = p.tail["engram_conv"] = 2 * streams * d * taps


def decode(kind, c, seqs, elements, cache) -> None:
    if kind.engram:  # the conv's kernel: G streams x D channels x its taps (a depthwise conv, no matmul)
        elements["engram_conv"] = c["mhc_expansion_rate"] * c["emb_dim"] * c["engram_kernel_size"]


def mark(c):
    if not c["engram_layers"]:
        return None
    layers = frozenset(c["engram_layers"])
    return lambda layer, p: {"engram": layer in layers}


FEATURE = register(Feature(
    "engram", "Engram's n-gram memory before attention on the layers it names (DeepSeek)", SCHEMA,
    switches=("engram_layers",), on=lambda c: bool(c["engram_layers"]), off="no layer runs Engram (engram_layers is "
    "empty)", order=20,
    components=(Component("engram_proj", WEIGHT, 10, "Engram: key and value projections of the n-gram embeddings"),
                Component("engram_gate", ATTENTION_KIND, 20, "Engram: the per-stream gate (mixes the sequence)"),
                Component("engram_conv", WEIGHT, 30, "Engram: the causal depthwise conv over the streams")),
    weight_components=("engram_proj",), check=check, price=price, decode=decode,
    flags={"engram": False}, mark=mark))  # engram: runs an Engram block before attention
