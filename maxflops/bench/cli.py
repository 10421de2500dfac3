"""``python -m maxflops.bench``: the command line."""

from __future__ import annotations

import argparse
import json
import sys

from .cases import PRESETS
from .output import table, write_csv
from .runner import run_bench
from ..peaks import check_peak_tflops


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m maxflops.bench",
                                 description="Time jitted kernels on TPU, GPU or CPU; analytic vs XLA vs measured.")
    ap.add_argument("--preset", choices=sorted(PRESETS), help="sizes (default: from the backend)")
    ap.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    ap.add_argument("--model", default="llama3.1-8b", help="config for the train-step row")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats after warm-up")
    ap.add_argument("--peak-tflops", type=float, default=None, help="override the peak (TFLOP/s per device)")
    ap.add_argument("--peak-gbps", type=float, default=None, help="override the HBM bandwidth (GB/s per device)")
    ap.add_argument("--mesh", default=None, help="shard over local devices, e.g. data=4,model=2")
    ap.add_argument("--distributed", action="store_true", help="jax.distributed.initialize() (multi-host TPU)")
    ap.add_argument("--json", dest="json_path", help="write every figure as JSON")
    ap.add_argument("--csv", dest="csv_path", help="write every figure as CSV")
    ap.add_argument("--silent", action="store_true", help="no progress on stderr")
    ap.add_argument("--verbose", action="store_true", help="tracebacks of failed kernels")
    ap.add_argument("--only", type=_indices, default=None, help="run these rows only, numbered from 1 (e.g. 3,7-9)")
    ap.add_argument("--list", dest="list_rows", action="store_true", help="print the rows as JSON and run none")
    ap.add_argument("--jsonl", default=None, help="append each row to this JSON-lines file as it finishes")
    return ap


def _indices(text: str) -> frozenset:
    out = set()
    for part in text.split(","):
        lo, dash, hi = part.strip().partition("-")
        if not lo.isdigit() or dash and not hi.isdigit() or int(lo) < 1 or dash and int(hi) < int(lo):
            raise argparse.ArgumentTypeError(f"{part!r} is not a row number or a range like 3-7")
        out.update(range(int(lo), int(hi if dash else lo) + 1))
    return frozenset(out)


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.repeats is None:
        args.repeats = 3 if args.quick else 10
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    if args.peak_tflops is not None:
        try:
            check_peak_tflops(args.peak_tflops, "--peak-tflops")
        except ValueError as e:
            ap.error(str(e))
    if args.peak_gbps is not None and not args.peak_gbps > 0:
        ap.error(f"--peak-gbps must be positive, got {args.peak_gbps}")
    for path in (args.json_path, args.csv_path):
        if path:
            try:
                open(path, "a").close()  # fail now, not after the run
            except OSError as e:
                ap.error(f"cannot write {path}: {e.strerror}")
    import maxflops

    if args.model not in maxflops.available_models():
        ap.error(f"--model: unknown model {args.model!r}; known: {', '.join(maxflops.available_models())}")
    if args.list_rows:
        from .runner import list_rows

        print(json.dumps(list_rows(args), indent=1))
        return 0
    try:
        result = run_bench(args)
    except ValueError as e:
        print(f"maxflops.bench: error: {e}", file=sys.stderr)
        return 2
    print(table(result))
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump(result, f, indent=1)
    if args.csv_path:
        write_csv(result, args.csv_path)
    failed = [r["kernel"] for r in result["rows"] if r["status"] == "failed"]
    unequal = [r["kernel"] for r in result["rows"] if r["status"] in ("ok", "counted") and r["xla_equal"] is False]
    bytes_off = [r["kernel"] for r in result["rows"] if r["status"] == "ok" and r.get("engine_bytes_equal") is False]
    for name in failed:
        print(f"maxflops.bench: error: kernel {name!r} failed", file=sys.stderr)
    for name in unequal:
        print(f"maxflops.bench: error: kernel {name!r}: hardware FLOPs != XLA's count", file=sys.stderr)
    for name in bytes_off:
        print(f"maxflops.bench: error: kernel {name!r}: the engine's HBM bytes != its arrays'", file=sys.stderr)
    return 1 if failed or unequal or bytes_off else 0



