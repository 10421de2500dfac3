"""Attention residuals (Kimi K3's AttnRes; Inkling 2's): every ``attn_res_block_size`` layers the running residual is
kept as a snapshot, and each layer's mixer and FFN inputs (and the model's output) are a softmax-weighted sum over
the snapshots and the running residual, each row scored by a D -> 1 projection (``maxflops.plan`` gives each layer
its rows, ``LayerKind.attn_res``); Inkling 2's full layers take three aggregates for their queries', keys' and
values' inputs (``attn_res_qkv_layers``)."""

from __future__ import annotations

from ..components import Component, WEIGHT
from ..families import letters_in_use
from ..families.attention import check_letters, lettered
from ..fields import field_of
from .base import Feature, register

SCHEMA = {
    "attn_res_block_size": field_of(0, int, "Attention residuals (Kimi K3's AttnRes): every this many layers the "
                                            "running residual is kept as a snapshot, and each layer's attention "
                                            "and FFN inputs (and the model's output) are a softmax-weighted sum "
                                            "over the snapshots and the running residual, scored per row by a "
                                            "D -> 1 projection (4 D FLOPs per row and token); a looped block's "
                                            "passes (layer_loops) each restart from the snapshots and residual "
                                            "the block began with (Inkling 2 Loop); 0: plain residuals.",
                                    minimum=0),
    "attn_res_qkv_layers": field_of("", str, "Attention residuals on attention layers, by pattern letter ('G', "
                                             "'L', 'C'), whose mixer input is three aggregates, one each for its "
                                             "queries', keys' and values' inputs, each scored by its own vector "
                                             "(Inkling 2's full layers: 'G'); '': one aggregate."),
}


def attn_res_rows(layer: int, block: int) -> tuple:
    """Attention residuals (Kimi K3's AttnRes, snapshots every ``block`` layers) at 0-based decoder layer ``layer``:
    (rows its mixer's input aggregates, rows its FFN's input aggregates). A layer l with l % block == 0 keeps the
    running residual as a snapshot after its mixer's input is formed; an input aggregates the snapshots kept so far
    and the running residual (layer 0's mixer input is the embedding itself: 0 rows)."""
    before = -(-layer // block)  # snapshots kept by the layers before
    after = before + (layer % block == 0)
    return (before + 1 if before else 0), after + 1


def attn_res_queries(kind, c) -> int:
    """Attention residuals: the aggregates a layer's mixer input is, 3 (its queries', keys' and values' inputs, each
    scored by its own vector: Inkling 2's full layers, attn_res_qkv_layers) or 1."""
    return 3 if lettered(kind, "attn_res_qkv_layers", c) else 1


def attn_res_output_rows(c) -> int:
    """Attention residuals: the rows the model's output aggregates (after the last layer)."""
    n = c["num_decoder_layers"]
    return attn_res_rows(n - 1, c["attn_res_block_size"])[1]


def check(c, err) -> None:
    if c["attn_res_qkv_layers"]:
        check_letters(c, "attn_res_qkv_layers", err)
        if not c["attn_res_block_size"]:
            err("attn_res_qkv_layers", f"{c['attn_res_qkv_layers']!r} with attn_res_block_size=0: the split inputs "
                                       "are attention residuals' aggregates")
    if c["attn_res_block_size"]:  # Kimi K3's layers: a mixer and an FFN each, in one decoder
        for key in ("mtp_num_layers", "parallel_layer_pattern", "prompt_tokens"):
            if c[key]:
                err(key, f"{c[key]!r} with attn_res_block_size={c['attn_res_block_size']}: not modelled")
        if c["mhc_expansion_rate"] > 1:
            err("mhc_expansion_rate", f"{c['mhc_expansion_rate']} with attn_res_block_size: two residual schemes at "
                                      "once are not modelled")
        if "-" in c["attention_layer_pattern"] + c["ffn_layer_pattern"]:
            err("attn_res_block_size", f"{c['attn_res_block_size']} with layers without a mixer or an FFN "
                                       "('-' in the patterns): attention residuals are modelled on layers of both")


def priced(c, hardware: bool) -> bool:
    """The aggregates count unless the convention leaves them out (attn_res_flops, a reporting knob: the hardware
    view holds it at its default) or, in hardware FLOPs, they run as a multiply and a sum (weighted_sum_impl=
    'elementwise', as Megatron-Bridge's Kimi K3 runs them: no matmul)."""
    return c["attn_res_flops"] and not (hardware and c["weighted_sum_impl"] != "einsum")


def price(p, kind, c, seqs, decode, tokens, hardware) -> None:
    if kind.attn_res and priced(c, hardware):
        # per input, a D -> 1 score per row and the weighted sum over the rows (a looped pass's messages: four
        # queries over the previous pass's rows)
        mixer_rows, ffn_rows = kind.attn_res
        p.out["attn_res"] = 4 * c["emb_dim"] * (attn_res_queries(kind, c) * mixer_rows + ffn_rows
                                                + 4 * kind.messages) * tokens


def head(c, tokens, hardware) -> dict:
    if not (c["attn_res_block_size"] and priced(c, hardware)):
        return {}
    return {"attn_res": 4 * c["emb_dim"] * attn_res_output_rows(c) * tokens}  # the output's aggregate


def decode(kind, c, seqs, elements, cache) -> None:
    if kind.attn_res:  # each aggregate's score vector (D), for the mixer's input and the FFN's
        mixer_rows, ffn_rows = kind.attn_res
        elements["attn_res"] = c["emb_dim"] * ((attn_res_queries(kind, c) if mixer_rows else 0) + (ffn_rows > 0))


def decode_head(c) -> dict:
    return {"attn_res": c["emb_dim"]} if c["attn_res_block_size"] else {}  # the output aggregate's score vector

def mark(c):
    block = c["attn_res_block_size"]
    return (lambda layer, p: {"attn_res": attn_res_rows(layer, block)}) if block else None


def _qkv_read(c) -> bool:
    return any(x in letters_in_use(c) for x in c["attn_res_qkv_layers"])


FEATURE = register(Feature(
    "attn_res", "attention residuals: each layer's inputs a softmax over block snapshots of the residual (Kimi K3)",
    SCHEMA, switches=("attn_res_block_size",), on=lambda c: bool(c["attn_res_block_size"]),
    off="the model has no attention residuals (attn_res_block_size = 0)", order=90,
    components=(Component("attn_res", WEIGHT, 45, "attention residuals: the depth-wise softmax over block "
                                                    "snapshots at each layer's inputs and the output (row scores "
                                                    "D -> 1, the weighted sum)"),),
    check=check, price=price, decode=decode, head=head, decode_head=decode_head,
    flags={"attn_res": ()}, mark=mark,  # attn_res: (rows at the mixer's input, rows at the FFN's input); () without
    reads={"attn_res_qkv_layers": (_qkv_read, "no layer has a letter it names")},
    proof="maxflops.features.proofs.attn_res"))
