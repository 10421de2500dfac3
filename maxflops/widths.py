"""Layers of their own widths (``layer_widths``): the rules '<key>@<layers>=<value>', parsed, and each decoder layer's
own widths. The plan gives them to its rows (``LayerKind.widths``); a family that reads another layer's width (the
patch family: the patch stream's) reads it here."""

from __future__ import annotations

from typing import Any, Mapping

from .weights import layer_spans


# The keys a layer may have its own value of (layer_widths): widths each layer's pricing reads from its config view
WIDTH_KEYS = ("num_query_heads", "num_kv_heads", "head_dim", "mlp_dim", "moe_mlp_dim", "q_lora_rank", "kv_lora_rank",
              "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "emb_dim", "sliding_window_size")


def parse_width_rule(rule) -> tuple:
    """(key, layer spans, value) of one layer_widths rule; ValueError names what is wrong."""
    target, eq, value = rule.partition("=") if isinstance(rule, str) else ("", "", "")
    key, at, layers = target.strip().partition("@")
    if not (eq and at):
        raise ValueError(f"{rule!r} is not '<key>@<layers>=<value>' (e.g. 'mlp_dim@0-2+5=4096')")
    if key not in WIDTH_KEYS:
        raise ValueError(f"{rule!r}: {key!r} is not one of {', '.join(map(repr, WIDTH_KEYS))}")
    if not value.strip().isdigit() or int(value) < 1:
        raise ValueError(f"{rule!r}: {value.strip()!r} is not a positive integer")
    return key, layer_spans(layers), int(value)


def width_rules(key: str, own: Mapping[int, int]) -> tuple:
    """layer_widths rules giving each layer of ``own`` (0-based layer -> value) its ``key``: one rule per value, its
    layers as runs ('mlp_dim@0+6-7+43=14336'), in order of each value's first layer."""
    by_value: dict = {}
    for layer in sorted(own):
        by_value.setdefault(own[layer], []).append(layer)
    rules = []
    for value, layers in by_value.items():
        runs = []
        for layer in layers:
            if runs and runs[-1][1] == layer - 1:
                runs[-1][1] = layer
            else:
                runs.append([layer, layer])
        spans = "+".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
        rules.append(f"{key}@{spans}={value}")
    return tuple(rules)


def layer_widths(c: Mapping[str, Any]) -> list:
    """Each decoder layer's own widths ({key: value}), from the ``layer_widths`` rules in order (a later rule over an
    earlier one)."""
    n = c["num_decoder_layers"]
    out = [{} for _ in range(n)]
    for rule in c["layer_widths"]:
        key, spans, value = parse_width_rule(rule)
        for lo, hi in spans:
            if hi >= n:
                raise ValueError(f"{rule!r}: layer {hi} is past the last decoder layer ({n - 1})")
            for layer in range(lo, hi + 1):
                out[layer][key] = value
    return out


