"""maxflops against MaxText's own FLOPs function, side by side in one process.

    python benchmarks/bench_vs_maxtext.py [--out PATH]     # writes its section of PATH (default: RESULTS.md beside it)

Where MaxText 0.2.5 is importable (its own Python 3.12 venv, with this repository on PYTHONPATH:
``PYTHONPATH=. /path/to/maxtext-venv/bin/python benchmarks/bench_vs_maxtext.py``), MaxText's config object of each
model is built with ``pyconfig.initialize`` and ``maxtext_utils.calculate_tflops_training_per_device`` is timed on
it beside maxflops on ``from_maxtext`` of the same object: warm (the same config again), cold (a new
``max_target_length`` each call), under every convention, and ``from_maxtext`` + count. Without MaxText, the
committed MaxText 0.2.5 config keys (tests/fixtures/maxtext_real) stand in for its objects and maxflops is timed
alone. Every function is timed in turn, 9 rounds of 300 calls; 131,072 tokens per step (batch 32 x 4096).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import statistics
import time

import maxflops
from maxflops.maxtext import from_maxtext

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = ("deepseek3.2-671b", "llama3.1-8b", "qwen3-next-80b-a3b", "gemma3-27b")
STEP = dict(per_device_batch_size=32, max_target_length=4096)  # 131,072 tokens
CONVENTIONS = tuple(maxflops.CONVENTIONS)


def per_call(fn, calls=300, repeats=7) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t) / calls)
    return statistics.median(times)


def interleaved(fns: dict, calls=300, rounds=9) -> dict:
    """{name: median seconds per call}, every function timed once per round, in turn: on a shared machine the
    speed drifts, and timing them side by side each round keeps their ratios (taken per round, then the median:
    ``ratio(name)``) honest."""
    for fn in fns.values():
        fn()
    rows = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            rows[name].append((time.perf_counter() - t) / calls)
    return rows


def maxtext_objects():
    """{model: (MaxText's config object, its FLOPs function)}; None without MaxText."""
    try:
        import maxtext
        from maxtext.configs import pyconfig
        from maxtext.utils import maxtext_utils
    except ImportError:
        return None
    base = str(pathlib.Path(maxtext.__file__).resolve().parent / "configs" / "base.yml")
    out = {}
    for name in MODELS:
        argv = ["bench", base, "skip_jax_distributed_system=True", f"model_name={name}",
                f"per_device_batch_size={STEP['per_device_batch_size']}",
                f"max_target_length={STEP['max_target_length']}"]
        try:
            out[name] = pyconfig.initialize(argv)
        except Exception:  # noqa: BLE001 - MaxText asks DSA models for its dot_product attention on CPU
            out[name] = pyconfig.initialize(argv + ["attention=dot_product"])
    return out, maxtext_utils.calculate_tflops_training_per_device


def stand_ins():
    """MaxText 0.2.5's recorded keys of each model, as plain mappings (what from_maxtext reads)."""
    fx = ROOT / "tests" / "fixtures" / "maxtext_real"
    base = json.loads((fx / "maxtext_base_keys.json").read_text())
    models = json.loads((fx / "maxtext_models.json").read_text())["models"]
    return {name: {**base, **models[name]["keys"], **STEP} for name in MODELS}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    ap.add_argument("--print-only", action="store_true", help="print the table, write nothing")
    args = ap.parse_args(argv)
    got = maxtext_objects()
    objects, fn = got if got else (stand_ins(), None)
    rows = []
    for name in MODELS:
        obj = objects[name]
        fns = {"maxtext": lambda: fn(obj, log=False)} if fn else {}
        refused = []
        for conv in CONVENTIONS:
            try:
                cfg = from_maxtext(obj, convention=conv)
            except ValueError:  # a convention without a rule for this model's layers
                refused.append(conv)
                continue
            lengths = iter(range(4096, 10 ** 9))
            fns[f"warm_{conv}"] = lambda cfg=cfg: maxflops.count(cfg)
            fns[f"cold_{conv}"] = lambda cfg=cfg, lengths=lengths: maxflops.count(cfg, max_target_length=next(lengths))
        times = interleaved(fns)
        row = {"model": name, "refused": refused}
        for key, ts in times.items():
            row[key] = statistics.median(ts)
            if fn and key != "maxtext":  # the ratio of each round, then their median
                row[key + "_ratio"] = statistics.median(t / m for t, m in zip(ts, times["maxtext"]))
        row["from_maxtext_count"] = per_call(lambda: maxflops.count(from_maxtext(obj)), calls=50)
        rows.append(row)
    head = (f"Machine: {platform.machine()}, Python {platform.python_version()}, "
            f"{'MaxText 0.2.5 ' + ('imported' if fn else 'not importable: maxflops alone')}; "
            "times per call, medians of 9 rounds of 300 calls, every function timed in turn each round; ratios to "
            "MaxText's function: the median of the rounds' ratios. Warm: the same config again; cold: a new "
            "max_target_length each call.")
    cols = ["model", "MaxText fn", "from_maxtext + count"] + [f"{c}: warm / cold" for c in CONVENTIONS]
    lines = ["## maxflops beside MaxText's function", "",
             "`PYTHONPATH=. <maxtext-0.2.5 venv>/bin/python benchmarks/bench_vs_maxtext.py` "
             f"({time.strftime('%Y-%m-%d')}; regenerates this section)", "", head, "", "| " + " | ".join(cols) + " |",
             "|" + "---|" * len(cols)]
    for r in rows:
        mt = r.get("maxtext")

        def cell(key):
            return f"{r[key] * 1e6:.1f} us" + (f" ({r[key + '_ratio']:.2f}x)" if mt else "")

        cells = [r["model"], f"{mt * 1e6:.1f} us" if mt else "n/a", f"{r['from_maxtext_count'] * 1e3:.3f} ms"]
        cells += ["refused" if c in r["refused"] else f"{cell('warm_' + c)} / {cell('cold_' + c)}"
                  for c in CONVENTIONS]
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.print_only:
        from bench_analytic import _write_section  # one way to replace a section of RESULTS.md

        _write_section(pathlib.Path(args.out), "## maxflops beside MaxText's function", text)


if __name__ == "__main__":
    main()
