"""Runs `python -m maxflops.bench` and records its table in benchmarks/RESULTS.md (one section per backend).

    python benchmarks/bench_kernels.py            # this machine's backend, full preset, one process
    python benchmarks/bench_kernels.py --quick
    python benchmarks/bench_kernels.py --per-row [--budget 720] [--row-timeout 240] [--again] [bench flags]

``--per-row`` (what ``device_check.sh`` runs, for a device lent for minutes): each row in its own process with its
own time limit (compile included), each result appended to ``rows.jsonl`` as it finishes, rows already recorded for
this device kind, jax version and preset skipped (``--again`` reruns them), rows this device kind never ran first,
and no row started once ``--budget`` seconds are spent (the rows left are listed; the next run takes them). The
record of earlier device runs is ``benchmarks/device_rows.jsonl`` (``MAXFLOPS_DEVICE_ROWS`` names another): copy a
run's ``rows.jsonl`` lines into it and commit them.

MAXFLOPS_RESULTS names another results file; MAXFLOPS_BENCH_OUT a folder that keeps the run's JSON, CSV, log and
rows. The exit status is the bench's: non-zero when a kernel failed or a hardware figure differed from XLA's count.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_analytic import _write_section  # noqa: E402

from maxflops.bench import table, write_csv  # noqa: E402

OWN_FLAGS = {"--per-row": 0, "--again": 0, "--budget": 1, "--row-timeout": 1}


def _split_flags(argv):
    """(this script's flags, the bench's flags)."""
    own, extra, i = {}, [], 0
    while i < len(argv):
        a = argv[i]
        name, eq, value = a.partition("=")
        if name in OWN_FLAGS:
            if OWN_FLAGS[name] and not eq:
                i += 1
                value = argv[i]
            own[name] = value if OWN_FLAGS[name] else True
        else:
            extra.append(a)
        i += 1
    return own, extra


def _section(result: dict, extra, note: str = "") -> tuple[str, str]:
    heading = f"## Kernels ({result['backend'].upper()}, {result['device_kind']})"
    lines = [heading, "", f"`python -m maxflops.bench {' '.join(extra)}`, {time.strftime('%Y-%m-%d')}, "
             f"jax {result['jax']}, preset {result['preset']}{' quick' if result['quick'] else ''}.{note}", "",
             "```", table(result), "```", ""]
    failed = [r["kernel"] for r in result["rows"] if r["status"] == "failed"]
    section = "\n".join(lines)
    if failed:
        section = section.rstrip("\n") + "\n\nFailed: " + "; ".join(failed) + "\n"
    return heading, section


def _one_process(extra, folder: pathlib.Path) -> tuple[int, dict | None]:
    out = folder / "bench.json"
    cmd = [sys.executable, "-m", "maxflops.bench", "--verbose", "--json", str(out), "--csv",
           str(folder / "bench.csv"), *extra]
    with open(folder / "bench.log", "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
    return rc, json.loads(out.read_text()) if out.exists() else None


def _records(path: pathlib.Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _per_row(own, extra, folder: pathlib.Path) -> tuple[int, dict | None, str]:
    budget = float(own.get("--budget", 720))
    row_timeout = float(own.get("--row-timeout", 240))
    start = time.monotonic()
    listing = json.loads(subprocess.run([sys.executable, "-m", "maxflops.bench", "--list", *extra], check=True,
                                        capture_output=True, text=True).stdout)
    only, rest, i = None, [], 0                          # the bench's own --only restricts the plan
    while i < len(extra):
        if extra[i] == "--only" or extra[i].startswith("--only="):
            from maxflops.bench.cli import _indices

            spec = extra[i].split("=", 1)[1] if "=" in extra[i] else extra[i + 1]
            only = _indices(spec)
            i += 1 if "=" in extra[i] else 2
            continue
        rest.append(extra[i])
        i += 1
    extra = rest
    kind, jax_v, preset, quick = listing["device_kind"], listing["jax"], listing["preset"], listing["quick"]
    record = _records(pathlib.Path(os.environ.get("MAXFLOPS_DEVICE_ROWS", HERE / "device_rows.jsonl")))
    here = folder / "rows.jsonl"

    def same(r):
        return (r["device_kind"], r["jax"], r["preset"], r["quick"]) == (kind, jax_v, preset, quick)

    done = {r["row"]["kernel"]: r["row"] for r in record if same(r) and r["row"]["status"] in ("ok", "counted")}
    ever = {r["row"]["kernel"] for r in record if r["device_kind"] == kind}
    rows = [r for r in listing["rows"] if only is None or r["index"] in only]
    todo = [r for r in rows if own.get("--again") or r["kernel"] not in done]
    todo.sort(key=lambda r: (r["kernel"] in ever, r["index"]))  # never run on this device kind first
    if not todo:
        print(f"bench_kernels: every row is recorded for {kind}, jax {jax_v}, preset {preset} (--again reruns "
              "them)", file=sys.stderr)
        return 0, None, ""
    meta, rc, left = None, 0, []
    with open(folder / "bench.log", "a") as log:
        for r in todo:
            remaining = budget - (time.monotonic() - start)
            if remaining <= 0:
                left.append(r)
                continue
            out = folder / f"row{r['index']}.json"
            cmd = [sys.executable, "-m", "maxflops.bench", "--verbose", "--only", str(r["index"]), "--jsonl",
                   str(here), "--json", str(out), *extra]
            log.write(f"\n# row {r['index']}: {r['kernel']}\n")
            log.flush()
            try:
                p = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=min(row_timeout, remaining),
                                   check=False)
                rc = rc or p.returncode
            except subprocess.TimeoutExpired:
                rc = rc or 1
                with open(here, "a") as f:
                    f.write(json.dumps({"device_kind": kind, "jax": jax_v, "preset": preset, "quick": quick,
                                        "index": r["index"], "row": {"kernel": r["kernel"], "shapes": r["shapes"],
                                                                     "status": "failed", "note": "timed out after "
                                                                     f"{min(row_timeout, remaining):.0f} s"}}) + "\n")
            if out.exists():
                meta = json.loads(out.read_text())
                out.unlink()
    new = {r["row"]["kernel"]: r["row"] for r in _records(here)}
    result_rows = []
    for r in rows:
        got = new.get(r["kernel"]) or done.get(r["kernel"])
        if got is None:
            got = {"kernel": r["kernel"], "shapes": r["shapes"], "status": "not run",
                   "note": "the time budget ran out: the next run takes it"}
        elif r["kernel"] not in new:
            got = {**got, "note": (got.get("note") or "") + " [an earlier run's figures]"}
        result_rows.append(got)
    note = ""
    if left:
        note = f" Rows left for the next run (budget {budget:.0f} s): {', '.join(str(r['index']) for r in left)}."
        print(f"bench_kernels: budget spent; rows left: {[r['index'] for r in left]}", file=sys.stderr)
    if meta is None:
        return rc, None, note
    return rc, {**meta, "rows": result_rows}, note


def main() -> int:
    own, extra = _split_flags(sys.argv[1:])
    keep = os.environ.get("MAXFLOPS_BENCH_OUT")
    with tempfile.TemporaryDirectory() as d:
        folder = pathlib.Path(keep or d)
        folder.mkdir(parents=True, exist_ok=True)
        if own.get("--per-row"):
            rc, result, note = _per_row(own, extra, folder)
            if result is not None:
                (folder / "bench.json").write_text(json.dumps(result, indent=1))
                write_csv(result, str(folder / "bench.csv"))
        else:
            (rc, result), note = _one_process(extra, folder), ""
        if result is None:
            if own.get("--per-row") and rc == 0:            # nothing left to run
                return 0
            print((folder / "bench.log").read_text()[-4000:], file=sys.stderr)
            return rc or 1
    heading, section = _section(result, extra, note)
    print(section)
    _write_section(pathlib.Path(os.environ.get("MAXFLOPS_RESULTS", HERE / "RESULTS.md")), heading, section)
    return rc


if __name__ == "__main__":
    sys.exit(main())
