"""Looped depth (Dory's recurrent section, HRM's cycles, Inkling 2 Loop): ``layer_loops`` rules run a block of layers
several passes in a row, its weights shared and its work repeated (``maxflops.plan`` numbers the rows 'layer l.p'),
a rule 'a-b*k/g' running k - g passes without a gradient. With messages (``loop_message_rank``, Inkling 2 Loop), each
pass after the first reads the previous pass's messages: every looped layer gates its query, key, value and FFN
inputs by them, each gate 2D -> r -> two r -> D."""

from __future__ import annotations

from typing import Any, Mapping

from ..components import Component, WEIGHT
from ..fields import field_of
from ..weights import layer_spans
from .base import Feature, register

SCHEMA = {
    "layer_loops": field_of((), tuple, "Looped depth: rules '<first>-<last>*<passes>' (0-based decoder layers), each "
                                       "block of layers run that many passes in a row, its weights shared and its "
                                       "work repeated (Dory's recurrent section), e.g. '8-27*2'. Rows 'layer l.p'. "
                                       "'<first>-<last>*<passes>/<g>': only g of the passes carry a gradient, the "
                                       "others run forward only in training (HRM's L_bp_cycles; the order of the "
                                       "passes does not change the count, and those without come first)."),
    "loop_message_rank": field_of(0, int, "Looped depth with messages (Inkling 2 Loop's loop_gate_rank), with "
                                          "layer_loops and attention residuals: every pass restarts from the "
                                          "snapshots and residual its loop began with, and on each pass after the "
                                          "first every looped layer reads the previous pass's messages (an "
                                          "aggregate of four queries over that pass's snapshots after its first "
                                          "and its output, in attn_res) and gates its query, key, value and FFN "
                                          "inputs by them, each gate 2D -> r -> two r -> D (8 D r FLOPs per gate "
                                          "and token, component message_gate); 0: passes without messages.",
                                  minimum=0),
}


def parse_loop_rule(rule) -> tuple:
    """(first layer, last layer, passes, passes with a gradient) of one layer_loops rule 'a-b*k' (or 'a*k'), or
    'a-b*k/g' where only g of the k passes carry a gradient (HRM's L_bp_cycles); ValueError names what is wrong."""
    block, star, times = rule.partition("*") if isinstance(rule, str) else ("", "", "")
    spans = layer_spans(block) if star else ()
    times, slash, grads = times.partition("/")
    grads = grads if slash else times
    if not star or len(spans) != 1 or not times.strip().isdigit() or int(times) < 1 or not grads.strip().isdigit() \
            or int(grads) > int(times):
        raise ValueError(f"{rule!r} is not '<first>-<last>*<passes>' (e.g. '8-27*2': layers 8 to 27 run twice), or "
                         "'<first>-<last>*<passes>/<passes with a gradient>' (at most the passes)")
    return spans[0][0], spans[0][1], int(times), int(grads)


def layer_order(c: Mapping[str, Any]) -> list:
    """[(layer, pass)] in execution order: each looped block (layer_loops) run its passes in a row, pass 1 first."""
    return [(layer, p) for layer, p, _ in execution_order(c)]


def execution_order(c: Mapping[str, Any]) -> list:
    """[(layer, pass, no gradient)] in execution order; a block's passes without a gradient come first."""
    n = c["num_decoder_layers"]
    blocks = sorted(parse_loop_rule(r) for r in c["layer_loops"])
    for (a, b, _, _), (a2, _, _, _) in zip(blocks, blocks[1:]):
        if a2 <= b:
            raise ValueError(f"blocks {a}-{b} and one from {a2} overlap")
    if blocks and blocks[-1][1] >= n:
        raise ValueError(f"layer {blocks[-1][1]} is past the last decoder layer ({n - 1})")
    order, layer = [], 0
    for a, b, k, g in blocks:
        order += [(l, 1, False) for l in range(layer, a)]
        order += [(l, p, p <= k - g) for p in range(1, k + 1) for l in range(a, b + 1)]
        layer = b + 1
    return order + [(l, 1, False) for l in range(layer, n)]


def loop_message_rows(c) -> dict:
    """Looped depth with messages (Inkling 2 Loop): each looped layer -> the rows its message aggregate reads on a
    pass after the first: the snapshots the previous pass kept after its first (a loop's layers l with
    l % attn_res_block_size == 0), and that pass's output."""
    block, out = c["attn_res_block_size"], {}
    for rule in c["layer_loops"]:
        a, b, _, _ = parse_loop_rule(rule)
        kept = sum(1 for l in range(a, b + 1) if l % block == 0)  # (kept - 1 snapshots, and the output)
        out.update(dict.fromkeys(range(a, b + 1), kept))
    return out


def loops(c, repeated: bool = False) -> list:
    """(first, last, rule) of each well-formed layer_loops rule (``repeated``: of more than one pass); a malformed one
    is the layer_loops check's to report."""
    out = []
    for rule in c["layer_loops"]:
        try:
            a, b, k, _ = parse_loop_rule(rule)
        except ValueError:
            continue
        if k > 1 or not repeated:
            out.append((a, b, rule))
    return out


def check(c, err) -> None:
    """Each layer_loops rule parses, its blocks apart and within the decoder; what numbers rows by layer (remat
    units, the pipeline, the DSA warm-up's unrolled layers) is not modelled with loops. Messages need loops of whole
    blocks of attention residuals, after layer 0."""
    if c["layer_loops"]:
        try:
            layer_order(c)
        except ValueError as e:
            err("layer_loops", str(e))
        for key, ok in (("remat_block_layers", c["remat_block_layers"] == 1),
                        ("pipeline_stages", c["pipeline_stages"] == 1),
                        ("warmup_cse_layers", not c["warmup_cse_layers"]),
                        ("warmup_dead_last_layer", not c["warmup_dead_last_layer"])):
            if not ok:
                err(key, f"{c[key]!r} with layer_loops: not modelled (looped passes are not numbered by layer)")
    if c["loop_message_rank"]:  # Inkling 2 Loop: messages between the passes of a looped block of whole blocks
        block = c["attn_res_block_size"]
        if not (c["layer_loops"] and block):
            err("loop_message_rank", f"{c['loop_message_rank']} needs layer_loops and attn_res_block_size (messages "
                                     "are aggregates of a looped pass's attention-residual snapshots)")
        for a, b, rule in loops(c) if block else ():
            if a == 0 or a % block or (b + 1) % block:
                err("layer_loops", f"{rule!r} with loop_message_rank: a looped block with messages starts after "
                                   f"layer 0 and spans whole blocks of attn_res_block_size={block} layers")


def price(p, kind, c, seqs, decode, tokens, hardware) -> None:
    if kind.messages:  # the message gates of its query, key, value and FFN inputs: 2D -> r, r -> D twice, each
        p.out["message_gate"] = 4 * 8 * c["emb_dim"] * c["loop_message_rank"] * tokens


def decode(kind, c, seqs, elements, cache) -> None:
    if kind.messages:  # the gates' weights and the message aggregate's four queries
        elements["message_gate"] += 4 * c["emb_dim"]


def mark(c):
    if not c["loop_message_rank"]:
        return None
    rows = loop_message_rows(c)
    return lambda layer, p: {"messages": rows.get(layer, 0) if p > 1 else 0}


FEATURE = register(Feature(
    "layer_loops", "looped depth: a block of layers run several passes, with messages between them (Dory, HRM, "
    "Inkling 2 Loop)", SCHEMA, switches=("layer_loops",), on=lambda c: bool(c["layer_loops"]),
    off="no layer_loops rule", order=100,
    components=(Component("message_gate", WEIGHT, 50, "looped depth's message gates: a looped layer's query, key, "
                                                        "value and FFN inputs gated by the previous pass's messages, "
                                                        "2D -> r -> two r -> D each (Inkling 2 Loop)"),),
    weight_components=("message_gate",), check=check, price=price, decode=decode,
    # messages: on a looped pass after the first, the rows its message aggregate reads (0: none)
    flags={"messages": 0}, mark=mark,
    reads={"loop_message_rank": (lambda c: any(b >= a for a, b, _ in loops(c, repeated=True)),
                                 "no looped block runs more than one pass")}))
