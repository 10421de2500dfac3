"""The benchmark's outputs: a text table, CSV (JSON is the result dict itself)."""

from __future__ import annotations

import csv


def _short(row):
    if row["status"] == "counted":
        eq = {True: "== the TPU program", False: "!= the TPU program", None: "TPU program not priced"}
        return f"counted, not timed: hardware {eq[row['xla_equal']]} ({row['note']})"
    if row["status"] != "ok":
        return f"{row['status']}: {row['note']}"
    eq = {True: "== XLA", False: "!= XLA", None: "XLA n/a"}[row["xla_equal"]]
    return (f"{row['seconds'] * 1e3:.3f} ms, {row['hardware_tflops_per_s']:.2f} hw TFLOP/s, "
            f"{row['pct_of_peak']:.1f}% of peak, {row['gbytes_per_s']:.1f} GB/s, {row['bound']}-bound, "
            f"{row['pct_of_roofline']:.1f}% of roofline, hardware {eq}")


def table(result: dict) -> str:
    head = ["kernel", "shapes", "model GFLOP", "hw GFLOP", "XLA GFLOP", "hw==XLA", "HBM MB", "ms", "model TF/s",
            "hw TF/s", "% peak", "GB/s", "% BW", "bound", "% roof"]
    lines = []
    for r in result["rows"]:
        if r["status"] == "counted":                     # a TPU kernel's program counted on CPU: no timing
            eq = {True: "yes", False: "NO", None: "n/a"}[r["xla_equal"]]
            xla = "" if r["xla_matmul_flops"] is None else f"{r['xla_matmul_flops'] / 1e9:,.3f}"
            lines.append([r["kernel"], r["shapes"], f"{r['model_flops'] / 1e9:,.3f}",
                          f"{r['hardware_flops'] / 1e9:,.3f}", xla, eq] + [""] * (len(head) - 7)
                         + ["counted: TPU program, not timed"])
            continue
        if r["status"] != "ok":
            lines.append([r["kernel"], r["shapes"]] + [""] * (len(head) - 3) + [f"{r['status']}: {r['note']}"])
            continue
        eq = {True: "yes", False: "NO", None: "n/a"}[r["xla_equal"]]
        xla = "" if r["xla_matmul_flops"] is None else f"{r['xla_matmul_flops'] / 1e9:,.3f}"
        lines.append([r["kernel"], r["shapes"], f"{r['model_flops'] / 1e9:,.3f}", f"{r['hardware_flops'] / 1e9:,.3f}",
                      xla, eq, f"{r['hbm_bytes'] / 1e6:,.1f}", f"{r['seconds'] * 1e3:,.3f}",
                      f"{r['model_tflops_per_s']:.2f}", f"{r['hardware_tflops_per_s']:.2f}", f"{r['pct_of_peak']:.1f}",
                      f"{r['gbytes_per_s']:,.1f}", f"{r['pct_of_bandwidth']:.1f}", r["bound"],
                      f"{r['pct_of_roofline']:.1f}"])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
    fmt = lambda row: "  ".join(str(x).ljust(w) if i < 2 else str(x).rjust(w)  # noqa: E731
                                for i, (x, w) in enumerate(zip(row, widths)))
    out = [f"device: {result['device_kind']} x {result['device_count']} ({result['backend']}), jax "
           f"{result['jax']}, {result['dtype']}; peak {result['peak_flops'] / 1e12:.1f} TFLOP/s "
           f"({result['peak_source']}), {result['peak_bytes_per_s'] / 1e9:,.0f} GB/s "
           f"({result['peak_bandwidth_source']})", fmt(head), "  ".join("-" * w for w in widths)]
    out += [fmt(r) for r in lines]
    notes = [f"- {r['kernel']}: " + (f"counted by the program counter ({r['note']})" if r["xla_module"] == "none"
                                     else f"XLA count on the {r['xla_module']} module ({r['note']})")
             for r in result["rows"] if r["status"] == "ok" and r["note"]]
    notes += [f"- {r['kernel']}: {r['note']}" for r in result["rows"] if r["status"] == "counted"]
    notes += [f"- {r['kernel']}: the engine's HBM bytes ({r['engine_bytes']:,}) "
              f"{'equal' if r['engine_bytes_equal'] else 'DIFFER FROM'} the bytes of the arrays it streams"
              for r in result["rows"] if r["status"] == "ok" and "engine_bytes" in r]
    notes.append("HBM bytes: each row's arguments read once and results written once (a lower bound); roofline: "
                 "max(hw FLOPs / peak, bytes / bandwidth); % roof: that bound over the measured time.")
    return "\n".join(out + [""] + notes)


def write_csv(result: dict, path: str) -> None:
    keys = ["kernel", "shapes", "status", "model_flops", "hardware_flops", "xla_matmul_flops", "xla_module",
            "xla_equal", "seconds", "model_tflops_per_s", "hardware_tflops_per_s", "pct_of_peak", "hbm_bytes",
            "gbytes_per_s", "pct_of_bandwidth", "bound", "pct_of_roofline", "engine_bytes", "engine_bytes_equal",
            "devices_sharing", "note"]
    meta = {k: result[k] for k in ("jax", "jaxlib", "backend", "device_kind", "device_count", "dtype", "peak_flops",
                                   "peak_source", "peak_bytes_per_s", "peak_bandwidth_source", "command")}
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys + list(meta), extrasaction="ignore")
        w.writeheader()
        for r in result["rows"]:
            w.writerow({**r, **meta})


