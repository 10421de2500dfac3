"""Formatting of a Breakdown as text (reports only format; they compute nothing new). The per-step trainer
report (TFLOP/s, MFU) is ``maxflops.reporter``."""

from __future__ import annotations

from .breakdown import Breakdown
from .components import kind_of
from .families import MIXER_FAMILY
from .families.base import NO_FFN, NO_MIXER
from .sequences import batch, program_batch

FFN_LABELS = {"dense": "dense FFN", "moe": "MoE FFN", NO_FFN: "no FFN"}



def _fmt_flops(x: int) -> str:
    return f"{x / 1e12:,.3f}"


def _ranges(names: list[str]) -> str:
    """Row numbers as runs ("1-3,7"); a hybrid MTP module's layers ("1.2": module 1, its layer 2) run within their
    module ("1.1-2")."""
    parts, start = [], None
    keys = [tuple(int(x) for x in n.split(".")) for n in names]
    for i, k in enumerate(keys):
        if start is None:
            start = k
        nxt = keys[i + 1] if i + 1 < len(keys) else None
        if nxt is None or nxt[:-1] != k[:-1] or nxt[-1] != k[-1] + 1:
            first = ".".join(map(str, start))
            parts.append(first if start == k else f"{first}-{k[-1]}")
            start = None
    text = ",".join(parts)
    return text if len(text) <= 28 else text[:25] + "..."


def _layer_groups(b: Breakdown):
    """Rows with identical structure and FLOPs -> (label, row, n), in order of first appearance."""
    groups: dict = {}
    for row in b.layers:
        key = (row.group, row.mixer, row.ffn, row.computes_index, tuple(row.widths.items()), row.patches,
               row.forward_only, tuple(row.components.items()))
        groups.setdefault(key, []).append(row)
    out = []
    for rows in groups.values():
        row = rows[0]
        if row.group == "head":
            label = "head"
        elif row.group == "decoder" and any("." in r.name for r in rows):  # passes of looped layers ('l.p')
            layers = sorted({int(r.name.split()[-1].split(".")[0]) for r in rows})
            label = f"layer {_ranges([str(layer) for layer in layers])}"
            if len(rows) > len(layers):
                label += f" +{len(rows) - len(layers)} passes"
        else:
            label = f"{row.group.replace('decoder', 'layer')} {_ranges([r.name.split()[-1] for r in rows])}"
        out.append((label, row, len(rows)))
    return out


def _describe(row) -> str:
    if row.group == "head":
        return "output head"
    if row.idle:
        return f"idle: {row.idle}"
    if row.mixer == NO_MIXER:
        mixer = "no mixer"
    else:
        family = MIXER_FAMILY[row.mixer]
        mixer = family.mixers[row.mixer]
        if family.label is not None:
            mixer = family.label(mixer, row)
    if row.parallel:
        mixer += " + " + MIXER_FAMILY[row.parallel].mixers[row.parallel]
    latent = "latent " if "moe_latent_proj" in row.components else ""  # experts behind a D -> latent projection
    own = f" ({', '.join(f'{k} {v}' for k, v in row.widths.items())})" if row.widths else ""  # layer_widths
    where = ", over the patches" if row.patches else ", then the patcher's head" if "patcher_logits" in \
        row.components else ""
    frozen = ", forward only (no gradient)" if row.forward_only else ""
    return f"{mixer}, {latent}{FFN_LABELS[row.ffn]}{where}{frozen}{own}"


def text_report(b: Breakdown, config=None, traffic=None) -> str:
    tok = b.tokens
    lines = []
    title = f"maxflops: {b.model_name}, mode={b.mode}, convention={b.convention}"
    lines += [title, "=" * len(title)]
    for part in b.not_priced:  # 'model: ...' is missing from every figure, 'hardware: ...' from hardware FLOPs
        scope, _, what = part.partition(": ")
        lines.append({"model": f"NOT COUNTED: {what}", "traffic": f"decode bytes do not price: {what}",
                      "ignored": f"IGNORED: {what}"}.get(
            scope, f"hardware FLOPs do not price: {what}"))
    if config is not None:
        lines += _stated(config)
        if b.mode == "decode":
            lines.append(f"decode step: {tok} new token{'' if tok == 1 else 's'}, KV length {config['decode_kv_length']}")
        else:
            lines.append(f"per device per step: {config['per_device_batch_size']:g} x {config['max_target_length']} "
                         f"tokens x {config['gradient_accumulation_steps'] if b.mode == 'train' else 1} "
                         f"micro-batches = {tok:,} tokens")
    lines.append("")
    w = max(len(k) for k in b.components) if b.components else 10
    w = max(w, len("learnable weight"))
    hw = b.hardware_components
    show_hw = dict(hw) != dict(b.components)
    hw_head = f"  {'hardware TFLOPs':>15}" if show_hw else ""
    lines.append(f"{'component':<{w}}  {'TFLOPs':>14}  {'share':>6}  {'GFLOPs/token':>13}  {'kind':<9}{hw_head}")
    for name in dict.fromkeys(list(b.components) + list(hw)):
        v = b.components.get(name, 0)
        kind = kind_of(name)
        hw_col = f"  {_fmt_flops(hw.get(name, 0)):>15}" if show_hw else ""
        lines.append(f"{name:<{w}}  {_fmt_flops(v):>14}  {100 * v / b.total:5.1f}%  {v / tok / 1e9:13.3f}  "
                     f"{kind:<9}{hw_col}")
    lines.append("-" * (w + 50 + (17 if show_hw else 0)))
    for label, v in (("learnable weight", b.learnable_weight), ("attention", b.attention), ("total", b.total)):
        hw_col = f"  {'':9}  {_fmt_flops(b.hardware_flops):>15}" if show_hw and label == "total" else ""
        lines.append(f"{label:<{w}}  {_fmt_flops(v):>14}  {100 * v / b.total:5.1f}%  {v / tok / 1e9:13.3f}{hw_col}")
    lines.append("")
    lines.append("layers:")
    groups = [(label, row, n, _describe(row)) for label, row, n in _layer_groups(b)]
    dw = max([37] + [len(d) for *_, d in groups])
    for label, row, n, described in groups:
        each = "" if n == 1 else f"  ({n} x {row.total / 1e12:,.3f})"
        lines.append(f"  {label:<34} {described:<{dw}} {n * row.total / 1e12:>12,.3f} TFLOPs{each}")
    lines.append("")
    lines += parameters_table(b.parameters)
    lines.append("")
    lines.append(f"Total TFLOPs per device per step: {b.total / 1e12:,.3f}  "
                 f"({b.per_token / 1e9:,.3f} GFLOPs/token)")
    if show_hw:
        lines.append(f"Hardware TFLOPs per device per step: {b.hardware_flops / 1e12:,.3f}  "
                     f"(what the kernels execute: {_impl_knobs(config)})")
    else:
        lines.append(f"Hardware FLOPs equal model FLOPs ({_impl_knobs(config)})")
    lines.append(parameters_line(b.parameters))
    if traffic is not None:
        t = traffic.components
        parts = [f"{label} {t[key] / 1e9:,.3f}" for key, label in (
            ("weights", "weights"), ("kv_read", "KV read"), ("kv_write", "KV written"), ("index_read", "index keys read"),
            ("index_write", "index keys written"), ("state", "recurrent state"), ("embeddings", "embedding rows"))
            if t[key]]
        lines.append(f"HBM GB per device per step: {traffic.total / 1e9:,.3f} ({', '.join(parts)}); "
                     f"{b.hardware_flops / traffic.total:,.1f} hardware FLOPs per byte")
        if config is not None:
            sizes = [f"{key} {config[key]}" for key in ("weight_bytes", "kv_cache_bytes", "index_cache_bytes",
                                                        "state_bytes") if key in config]
            lines.append(f"bytes per element: {', '.join(sizes)}")
            if config.get("weight_bytes_rules"):
                lines.append(f"weight bytes per element by group (weight_bytes_rules, over weight_bytes): "
                             f"{', '.join(config['weight_bytes_rules'])}")
    return "\n".join(lines)


def _stated(config) -> list:
    """Lines for the inputs no config file holds, the count resting on a stated value (a data-dependent share)."""
    z = config.get("zero_experts", 0)
    if not z or not config.get("num_experts", 1) > 1:
        return []
    share = config["zero_expert_share"]
    said = (f"uniform, {z}/{config['num_experts'] + z} of them (zero_expert_share=-1)" if share < 0 else
            f"zero_expert_share={share:g}")
    return [f"STATED: the share of top-k slots the {z} zero-computation expert{'s take' if z > 1 else ' takes'}: {said}; "
            "the checkpoint's routing decides it (set zero_expert_share)"]


_IMPL_DEFAULTS = {"attention_impl": "ideal", "flash_backward_recompute": False, "flash_backward_split": False,
                  "mla_absorbed": False,
                  "moe_impl": "ideal", "dsa_impl": "ideal", "remat_policy": "none"}


def _impl_knobs(config) -> str:
    if config is None:
        return "see the implementation knobs"
    knobs = [f"{k}={config[k]}" for k, d in _IMPL_DEFAULTS.items() if config[k] != d]
    if config["moe_impl"] == "capacity":
        knobs.append(f"capacity_factor={config['capacity_factor']:g}")
    if config["attention_impl"] == "blocked":
        knobs.append(f"tiles {config['attention_block_q']}x{config['attention_block_kv']}")
    if config["mode"] == "train" and config["indexer_loss_scaling_factor"] > 0 and config["use_sparse_indexer"]:
        knobs.append("indexer KL-loss scores")
    knobs += _mesh_knobs(config)
    return ", ".join(knobs) or "ideal kernels: see attention_impl, moe_impl, remat_policy, ..."


def _mesh_knobs(config) -> list:
    """What the partitioned program adds per device: a padded batch, replicated matmuls, the pipeline's bubble."""
    out = []
    ran, asked = program_batch(config), batch(config)
    if ran != asked:
        out.append(f"sequences per device {float(ran):g}: the batch of {float(asked):g} padded per batch shard "
                   f"({config['batch_shards']} shards of {config['num_devices']} devices)")
    if config["moe_routing_replicas"] > 1:
        out.append(f"MoE routing whole on {config['moe_routing_replicas']} devices")
    if config["moe_down_grad_replicas"] > 1 and config["moe_impl"] == "capacity" and config["mode"] == "train":
        out.append(f"experts' down-projection input gradient on {config['moe_down_grad_replicas']} devices")
    if config["pipeline_stages"] > 1:
        micro = config["pipeline_microbatches"] or config["pipeline_stages"]
        out.append(f"pipeline of {config['pipeline_stages']} stages x {micro} microbatches x "
                   f"{config['pipeline_repeats']} repeats" + (" (delayed forwarding)" if config["pipeline_delay"] else ""))
    return out


# --- sweeps and comparisons ------------------------------------------------------------------------------

def sweep_table(key: str, values, runs, labels) -> str:
    """GFLOPs per token per component for each value of ``key``; with more settings (or models), each total and
    the first's ratio to it, as the first seed's table."""
    first = runs[0]
    names = [n for n in first[0].components if any(b.components.get(n) for b in first)]
    head = [key] + names + [f"total ({labels[0]})"]
    for label in labels[1:]:
        head += [f"total ({label})", "ratio" if len(runs) == 2 else f"vs {label}"]
    rows = []
    for i, v in enumerate(values):
        a = first[i]
        row = [f"{v:,}" if isinstance(v, int) else str(v)] + [f"{a.components.get(n, 0) / a.tokens / 1e9:,.2f}"
                                                              for n in names]
        row.append(f"{a.per_token / 1e9:,.1f}")
        for run in runs[1:]:
            b = run[i]
            row += [f"{b.per_token / 1e9:,.1f}", f"{a.per_token / b.per_token:.2f}x"]
        rows.append(row)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    lines = [f"GFLOPs per token ({first[0].model_name}, {first[0].mode}, convention {first[0].convention})",
             "  ".join(h.rjust(w) for h, w in zip(head, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(x.rjust(w) for x, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def compare_table(a, b, ca, cb, label_a: str, label_b: str, reasons=None) -> str:
    """Two breakdowns side by side per component (GFLOPs per token), with the difference and the config keys
    behind it (``reasons``: component -> keys, from ``maxflops.compare.keys_behind``)."""
    reasons = reasons or {}
    names = list(dict.fromkeys(list(a.components) + list(b.components)))
    head = ["component", label_a, label_b, "B - A", "B / A", "where it comes from"]
    rows = []
    for n in names + ["total"]:
        va = (a.total if n == "total" else a.components.get(n, 0)) / a.tokens / 1e9
        vb = (b.total if n == "total" else b.components.get(n, 0)) / b.tokens / 1e9
        ratio = f"{vb / va:.3f}" if va else ("" if not vb else "new")
        reason = "" if abs(vb - va) < 5e-7 or n == "total" else "; ".join(
            f"{k}: {ca.get(k)!r} -> {cb.get(k)!r}" if k in ca or k in cb else k for k in reasons.get(n, ()))
        rows.append([n, f"{va:,.3f}", f"{vb:,.3f}", f"{vb - va:+,.3f}", ratio, reason])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    fmt = lambda r: "  ".join((str(x).ljust(w) if i in (0, 5) else str(x).rjust(w))  # noqa: E731
                              for i, (x, w) in enumerate(zip(r, widths))).rstrip()
    lines = [f"GFLOPs per token: A = {label_a}, B = {label_b}", fmt(head), "  ".join("-" * w for w in widths[:5])]
    lines += [fmt(r) for r in rows]
    pa, pb = a.parameters, b.parameters
    lines += ["parameters (B): total A {:,.3f}, B {:,.3f}; active per token A {:,.3f}, B {:,.3f}".format(
        pa.total / 1e9, pb.total / 1e9, pa.active / 1e9, pb.active / 1e9)]
    return "\n".join(lines)


def parameters_table(p) -> list[str]:
    """The report's parameters by component, total and active per token, in billions."""
    w = max([len("parameters (B)")] + [len(k) for k in p.components])
    lines = [f"{'parameters (B)':<{w}}  {'total':>10}  {'active':>10}"]
    for k, v in p.components.items():
        lines.append(f"{k:<{w}}  {v / 1e9:>10,.3f}  {p.active_components.get(k, 0) / 1e9:>10,.3f}")
    return lines


def parameters_line(p) -> str:
    """The report's line of parameters: total, active per token, the embedding table and the head."""
    head = "tied to the embedding" if p.tied else "untied"
    return (f"Parameters: {p.total / 1e9:,.3f}B total, {p.active / 1e9:,.3f}B active per token (embedding table "
            f"{p.embeddings / 1e9:,.3f}B, output head {head}; matmul weights and tables, norms and biases not "
            "counted)")
