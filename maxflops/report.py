"""Formatting of a Breakdown as text (reports only format; they compute nothing new)."""

from __future__ import annotations

from .breakdown import ATTENTION_COMPONENTS, Breakdown

_MIXER_LABEL = {"global": "global causal", "window": "sliding window", "chunk": "chunked",
                "dsa": "DSA top-k", "bidirectional": "bidirectional", "linear": "gated delta net"}


def _fmt_flops(x: int) -> str:
    return f"{x / 1e12:,.3f}"


def _ranges(numbers: list[int]) -> str:
    parts, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            parts.append(str(start) if start == n else f"{start}-{n}")
            start = None
    text = ",".join(parts)
    return text if len(text) <= 28 else text[:25] + "..."


def _layer_groups(b: Breakdown):
    """Rows with identical structure and FLOPs -> (label, row, n), in order of first appearance."""
    groups: dict = {}
    for row in b.layers:
        key = (row.group, row.mixer, row.ffn, row.computes_index, tuple(row.components.items()))
        groups.setdefault(key, []).append(row)
    out = []
    for rows in groups.values():
        row = rows[0]
        if row.group == "head":
            label = "head"
        else:
            label = f"{row.group.replace('decoder', 'layer')} {_ranges([int(r.name.split()[-1]) for r in rows])}"
        out.append((label, row, len(rows)))
    return out


def _describe(row) -> str:
    if row.group == "head":
        return "output head"
    mixer = _MIXER_LABEL.get(row.mixer, row.mixer)
    if row.mixer == "dsa":
        mixer += " + indexer" if row.computes_index else " (reuses index)"
    return f"{mixer}, {'MoE' if row.ffn == 'moe' else 'dense'} FFN"


def text_report(b: Breakdown, config=None) -> str:
    tok = b.tokens
    lines = []
    title = f"maxflops: {b.model_name}, mode={b.mode}, convention={b.convention}"
    lines += [title, "=" * len(title)]
    if config is not None:
        if b.mode == "decode":
            lines.append(f"decode step: {tok} new tokens, KV length {config['decode_kv_length']}")
        else:
            lines.append(f"per device per step: {config['per_device_batch_size']:g} x {config['max_target_length']} "
                         f"tokens x {config['gradient_accumulation_steps'] if b.mode == 'train' else 1} "
                         f"micro-batches = {tok:,} tokens")
    lines.append("")
    w = max(len(k) for k in b.components) if b.components else 10
    w = max(w, len("learnable weight"))
    lines.append(f"{'component':<{w}}  {'TFLOPs':>14}  {'share':>6}  {'GFLOPs/token':>13}  kind")
    for name, v in b.components.items():
        kind = "attention" if name in ATTENTION_COMPONENTS else ("mixed" if name == "mtp" else "weight")
        lines.append(f"{name:<{w}}  {_fmt_flops(v):>14}  {100 * v / b.total:5.1f}%  {v / tok / 1e9:13.3f}  {kind}")
    lines.append("-" * (w + 50))
    for label, v in (("learnable weight", b.learnable_weight), ("attention", b.attention), ("total", b.total)):
        lines.append(f"{label:<{w}}  {_fmt_flops(v):>14}  {100 * v / b.total:5.1f}%  {v / tok / 1e9:13.3f}")
    lines.append("")
    lines.append("layers:")
    for label, row, n in _layer_groups(b):
        each = "" if n == 1 else f"  ({n} x {row.total / 1e12:,.3f})"
        lines.append(f"  {label:<34} {_describe(row):<37} {n * row.total / 1e12:>12,.3f} TFLOPs{each}")
    lines.append("")
    lines.append(f"Total TFLOPs per device per step: {b.total / 1e12:,.3f}  "
                 f"({b.per_token / 1e9:,.3f} GFLOPs/token)")
    return "\n".join(lines)
