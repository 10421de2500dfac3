"""Runs `python -m maxflops.bench` and records its table in benchmarks/RESULTS.md (one section per backend).

    python benchmarks/bench_kernels.py            # this machine's backend, full preset
    python benchmarks/bench_kernels.py --quick
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


def main() -> None:
    extra = sys.argv[1:]
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d) / "bench.json"
        subprocess.run([sys.executable, "-m", "maxflops.bench", "--silent", "--json", str(out), *extra], check=False)
        result = json.loads(out.read_text())
    heading = f"## Kernels ({result['backend'].upper()}, {result['device_kind']})"
    section = "\n".join([heading, "", f"`python -m maxflops.bench {' '.join(extra)}`, {time.strftime('%Y-%m-%d')}, "
                         f"jax {result['jax']}, preset {result['preset']}{' quick' if result['quick'] else ''}.", "",
                         "```", table(result), "```", ""])
    print(section)
    _write_section(HERE / "RESULTS.md", heading, section)


if __name__ == "__main__":
    main()
