"""Mutation run: apply each hand-written mutant of ``mutants.py`` to a copy of the repository, one at a time, and run
the fast test suite there; a mutant is killed when the suite fails.

    python tests/mutation/run.py                     # every mutant, the whole fast suite, table + kill rate
    python tests/mutation/run.py --only causal_strict,capacity_floor
    python tests/mutation/run.py --ignore tests/core/test_formula_mutants.py     # the suite without a test file
    python tests/mutation/run.py --jobs 2 --json out.json --markdown RESULTS-table.md

The shared working tree is never written: the repository (without .git, .venv and caches) is copied to a
temporary directory per worker, the mutant is written into the copy, and pytest runs there with PYTHONPATH and the
working directory pointing at the copy (checked: ``import maxflops`` must resolve inside it). The suite is
``python -m pytest -x -q -m "not slow" -p no:randomly`` over every test file (no restriction by mutated file).
Before the mutants, the unmutated copy must pass the same suite.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from mutants import MUTANTS, Mutant  # noqa: E402

IGNORED = shutil.ignore_patterns(".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", "*.egg-info",
                                 "*.pyc", "build", "dist", "wheels", "device_out")
# (the house test that the list applies at HEAD fails on any applied mutant: it says nothing of the formulas)
PYTEST = [sys.executable, "-m", "pytest", "-x", "-q", "-m", "not slow", "-p", "no:randomly", "-p", "no:cacheprovider",
          "--ignore=tests/house/test_mutant_list.py"]


SHARED = ROOT.parent / "shared"  # the published config.json corpus (shared/hf-real) the fast suite reads beside it


def make_copy(parent: pathlib.Path, i: int) -> pathlib.Path:
    """A copy of the repository, with ``shared/`` beside it as CI lays it (a link to the checkout's): the tests that
    read the corpus run against each mutant instead of skipping."""
    dest = parent / f"repo{i}"
    shutil.copytree(ROOT, dest, ignore=IGNORED, symlinks=True)
    if SHARED.is_dir() and not (parent / "shared").exists():
        (parent / "shared").symlink_to(SHARED, target_is_directory=True)
    return dest


def env_for(copy: pathlib.Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no stale bytecode between a mutant and the restored file
    env.pop("MAXFLOPS_CONFIG_DIR", None)
    return env


def check_import(copy: pathlib.Path) -> None:
    out = subprocess.run([sys.executable, "-c", "import maxflops; print(maxflops.__file__)"], cwd=copy,
                         env=env_for(copy), capture_output=True, text=True, check=True).stdout.strip()
    if not pathlib.Path(out).resolve().is_relative_to(copy.resolve()):
        raise SystemExit(f"import maxflops resolves to {out}, not inside the copy {copy}")


def run_suite(copy: pathlib.Path, extra: list[str], timeout: float) -> tuple[int, str, float]:
    t0 = time.monotonic()
    try:
        proc = subprocess.run(PYTEST + extra, cwd=copy, env=env_for(copy), capture_output=True, text=True,
                              timeout=timeout)
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:
        rc, out = -1, f"timeout after {timeout:.0f} s\n{e.stdout or ''}"
    return rc, out, time.monotonic() - t0


def first_failure(out: str) -> str:
    m = re.search(r"^(?:FAILED|ERROR) (\S+)", out, re.M)
    return m.group(1) if m else out.strip().splitlines()[-1][:120] if out.strip() else ""


def run_mutant(m: Mutant, copy: pathlib.Path, extra: list[str], timeout: float) -> dict:
    path = copy / m.file
    text = path.read_text()
    found = text.count(m.original)
    row = {"name": m.name, "file": m.file, "description": m.description, "equivalent": m.equivalent}
    if found != 1:
        return {**row, "status": "stale", "detail": f"original snippet found {found} times", "seconds": 0.0}
    try:
        path.write_text(text.replace(m.original, m.replacement))
        rc, out, secs = run_suite(copy, extra, timeout)
    finally:
        path.write_text(text)
    if rc == 0:
        status = "equivalent" if m.equivalent else "survived"
        detail = m.equivalent
    elif rc in (1, 2, -1):
        status = "killed" if not m.equivalent else "killed-but-marked-equivalent"
        detail = first_failure(out)
    else:
        status, detail = "error", f"pytest exit {rc}: {first_failure(out)}"
    return {**row, "status": status, "detail": detail, "seconds": round(secs, 1)}


def table(rows: list[dict]) -> str:
    lines = ["| # | mutant | file | status | killed by / reason |", "|---|---|---|---|---|"]
    for i, r in enumerate(rows, 1):
        lines.append(f"| {i} | `{r['name']}`: {r['description']} | {r['file'].split('/')[-1]} | {r['status']} | "
                     f"{r['detail']} |")
    return "\n".join(lines)


def summary(rows: list[dict]) -> dict:
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    scored = sum(counts.get(k, 0) for k in ("killed", "survived"))
    killed = counts.get("killed", 0)
    return {"mutants": len(rows), **counts, "kill_rate": (killed / scored) if scored else None,
            "kill_rate_text": f"{killed}/{scored} = {100 * killed / scored:.1f}%" if scored else "n/a"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated mutant names")
    ap.add_argument("--file", help="only the mutants of this file (e.g. maxflops/traffic.py)")
    ap.add_argument("--ignore", action="append", default=[], help="a test file to leave out (pytest --ignore)")
    ap.add_argument("--tests", nargs="*", default=[], help="test paths to run instead of the whole fast suite")
    ap.add_argument("--jobs", type=int, default=1, help="parallel workers, each with its own copy")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per suite run")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated run")
    ap.add_argument("--json", help="write the rows and the summary here")
    ap.add_argument("--markdown", help="write the table and the summary here")
    args = ap.parse_args(argv)

    chosen = list(MUTANTS)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = set(names) - {m.name for m in MUTANTS}
        if unknown:
            raise SystemExit(f"unknown mutants: {', '.join(sorted(unknown))}")
        chosen = [m for m in MUTANTS if m.name in names]
    if args.file:
        chosen = [m for m in chosen if m.file == args.file]
    extra = [f"--ignore={p}" for p in args.ignore] + list(args.tests)

    with tempfile.TemporaryDirectory(prefix="maxflops-mutation-") as tmp:
        if not (SHARED / "hf-real").is_dir():
            print(f"mutation run: WARNING: {SHARED / 'hf-real'} is absent: the fast tests that read the published "
                  "config.json corpus skip in every copy, and the mutants they would kill may survive",
                  file=sys.stderr)
        copies = [make_copy(pathlib.Path(tmp), i) for i in range(max(1, args.jobs))]
        for copy in copies:
            check_import(copy)
        print(f"copies: {', '.join(map(str, copies))}; suite: {' '.join(PYTEST[1:] + extra)}", flush=True)
        if not args.no_baseline:
            rc, out, secs = run_suite(copies[0], extra, args.timeout)
            print(f"baseline (unmutated copy): exit {rc} in {secs:.0f} s", flush=True)
            if rc != 0:
                print(out[-3000:])
                raise SystemExit("the unmutated copy fails the suite: fix that first")
        free = list(copies)
        rows: dict[str, dict] = {}

        def work(m: Mutant) -> dict:
            copy = free.pop()
            try:
                return run_mutant(m, copy, extra, args.timeout)
            finally:
                free.append(copy)

        with concurrent.futures.ThreadPoolExecutor(max_workers=len(copies)) as pool:
            futures = {pool.submit(work, m): m for m in chosen}
            for n, fut in enumerate(concurrent.futures.as_completed(futures), 1):
                r = fut.result()
                rows[r["name"]] = r
                print(f"[{n}/{len(chosen)}] {r['status']:<10} {r['name']:<38} {r['seconds']:5.1f} s  {r['detail'][:90]}",
                      flush=True)
    ordered = [rows[m.name] for m in chosen]
    s = summary(ordered)
    print()
    print(table(ordered))
    print()
    print(json.dumps({k: v for k, v in s.items() if k != "kill_rate"}))
    stamp = datetime.datetime.now().isoformat(timespec="seconds")
    command = "python tests/mutation/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"date": stamp, "command": command, "summary": s,
                                                       "rows": ordered}, indent=1))
    if args.markdown:
        pathlib.Path(args.markdown).write_text(f"{stamp}, `{command.strip()}`\n\n{json.dumps(s)}\n\n{table(ordered)}\n")
    bad = [r for r in ordered if r["status"] in ("survived", "error", "stale", "killed-but-marked-equivalent")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
