"""Runs `python -m maxflops.bench` and records its table in benchmarks/RESULTS.md (one section per backend).

    python benchmarks/bench_kernels.py            # this machine's backend, full preset
    python benchmarks/bench_kernels.py --quick

MAXFLOPS_RESULTS names another results file; MAXFLOPS_BENCH_OUT a folder that keeps the run's JSON, CSV and log.
The exit status is the bench's: non-zero when a kernel failed or a hardware figure differed from XLA's count.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_analytic import _write_section  # noqa: E402

from maxflops.bench import table  # noqa: E402


def main() -> int:
    import os

    extra = sys.argv[1:]
    keep = os.environ.get("MAXFLOPS_BENCH_OUT")
    with tempfile.TemporaryDirectory() as d:
        folder = pathlib.Path(keep or d)
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / "bench.json"
        cmd = [sys.executable, "-m", "maxflops.bench", "--verbose", "--json", str(out), "--csv",
               str(folder / "bench.csv"), *extra]
        with open(folder / "bench.log", "w") as log:
            rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
        if not out.exists():
            print((folder / "bench.log").read_text()[-4000:], file=sys.stderr)
            return rc or 1
        result = json.loads(out.read_text())
    heading = f"## Kernels ({result['backend'].upper()}, {result['device_kind']})"
    section = "\n".join([heading, "", f"`python -m maxflops.bench {' '.join(extra)}`, {time.strftime('%Y-%m-%d')}, "
                         f"jax {result['jax']}, preset {result['preset']}{' quick' if result['quick'] else ''}.", "",
                         "```", table(result), "```", ""])
    failed = [r["kernel"] for r in result["rows"] if r["status"] == "failed"]
    if failed:
        section = section.rstrip("\n") + "\n\nFailed: " + "; ".join(failed) + "\n"
    print(section)
    _write_section(pathlib.Path(os.environ.get("MAXFLOPS_RESULTS", HERE / "RESULTS.md")), heading, section)
    return rc


if __name__ == "__main__":
    sys.exit(main())
