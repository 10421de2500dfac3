"""Bytes per weight element, by component and layer: the ``weight_bytes_rules`` of a config (decode traffic).

A rule is ``"<component>=<bytes>"`` or ``"<component>@<layers>=<bytes>"``:

- ``component``: a weight group of the decode traffic (``GROUPS``: ``attention``, ``mlp``, ``moe_routed``,
  ``moe_shared``, ``moe_router``, ``logits``, ``embeddings``, ``other``) or ``*`` (every group);
- ``layers``: 0-based layer numbers, ``3`` or ``0-2`` (inclusive), several joined by ``+`` (``0-2+5``); the MTP
  modules number on after the decoder layers; without ``@`` every layer (and the head and the embeddings);
- ``bytes``: a decimal or a fraction, ``1``, ``0.5``, ``17/32`` (MXFP4: half a byte per element and a one-byte
  scale per 32), the block or group scales included.

Rules apply in order, a later one over an earlier one; what no rule names is ``weight_bytes``. Pure Python: the
loaders write these rules from a file's ``quantization_config`` (``maxflops.loaders.quantization``).
"""

from __future__ import annotations

from fractions import Fraction

# The weight groups of the decode traffic, and the components of maxflops' pricing each holds.
GROUPS = {
    "attention": ("qkv_proj", "out_proj", "compressor", "indexer_proj", "indexer_proj_attn"),
    "mlp": ("mlp",),
    "moe_routed": ("moe_routed", "moe_latent_proj"),
    "moe_shared": ("moe_shared",),
    "moe_router": ("moe_router",),
    "logits": ("logits", "mhc_head"),
    "embeddings": ("embeddings", "per_layer_global"),
    "other": ("layer_up_proj", "per_layer_emb", "engram_proj", "norm_gate", "laurel", "altup", "altup_proj"),
}
GROUP_OF = {component: group for group, members in GROUPS.items() for component in members}


def _number(text: str) -> Fraction:
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{text.strip()!r} is not a number of bytes (e.g. 2, 0.5, 17/32)") from None
    if value <= 0:
        raise ValueError(f"{text.strip()!r}: bytes per element must be positive")
    return value


def layer_spans(text: str) -> tuple:
    """((first, last), ...) of a layer list: 0-based numbers, 3 or 0-2 (inclusive), joined by '+'."""
    spans = []
    for part in text.split("+"):
        lo, sep, hi = part.strip().partition("-")
        if not lo.isdigit() or sep and not hi.isdigit():
            raise ValueError(f"layers {text!r}: write 0-based layer numbers, 3 or 0-2, joined by '+'")
        lo_i = int(lo)
        hi_i = int(hi) if sep else lo_i
        if hi_i < lo_i:
            raise ValueError(f"layers {text!r}: {part.strip()!r} runs backwards")
        spans.append((lo_i, hi_i))
    return tuple(spans)


def parse_rule(rule: str) -> tuple:
    """(group or '*', layer spans or None for every layer, bytes as a Fraction) of one rule; ValueError names what
    is wrong."""
    if not isinstance(rule, str) or "=" not in rule:
        raise ValueError(f"{rule!r} is not '<component>[@<layers>]=<bytes>' (e.g. 'moe_routed=17/32')")
    target, _, value = rule.partition("=")
    group, at, layers = target.strip().partition("@")
    if group != "*" and group not in GROUPS:
        raise ValueError(f"{rule!r}: {group!r} is not one of {', '.join(map(repr, (*GROUPS, '*')))}")
    return group, layer_spans(layers) if at else None, _number(value)


def parse_rules(rules) -> tuple:
    return tuple(parse_rule(r) for r in rules)


def bytes_of(parsed: tuple, default, component: str, layer: int | None) -> Fraction:
    """Bytes per element of ``component`` at ``layer`` (None: not a layer's, the head or the embeddings)."""
    group = GROUP_OF.get(component, "other")
    out = Fraction(default)
    for g, spans, value in parsed:
        if g not in ("*", group):
            continue
        if spans is not None and (layer is None or not any(lo <= layer <= hi for lo, hi in spans)):
            continue
        out = value
    return out


__all__ = ["GROUPS", "parse_rules", "bytes_of", "layer_spans"]
