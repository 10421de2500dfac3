"""Speed of the analytic engine, written to benchmarks/RESULTS.md (``--out PATH`` writes elsewhere).

    python benchmarks/bench_analytic.py            # prints and rewrites the "Analytic engine" section

Measures (median of repeats, this machine): count() for deepseek3.2-671b, glm5 and deepseek4-284b, a 1,000-point sweep over
sequence lengths, packed accounting of 100,000 documents, per-step cost with the same config object, the parameter
count, explain() of a published MFU on every shipped model, and the wall time of `python -c "import maxflops"`
against a bare interpreter.
"""

from __future__ import annotations

import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import maxflops

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
TARGETS = {"count": 200e-6, "sweep": 100e-3, "packed": 10e-3, "import": 100e-3, "load": 10e-3}


def median_time(fn, repeats: int, inner: int = 1) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t) / inner)
    return statistics.median(times)


def wall(cmd: list[str], repeats: int = 15, env=None) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    rows = []
    ds = maxflops.load_config("deepseek3.2-671b", per_device_batch_size=4, max_target_length=4096)
    maxflops.count(ds)
    t = median_time(lambda: maxflops.count(ds), repeats=30, inner=200)
    rows.append(("count(), deepseek3.2-671b, same config object", t, TARGETS["count"]))

    glm = maxflops.load_config("glm5", max_target_length=131072)
    t = median_time(lambda: maxflops.count(glm), repeats=30, inner=200)
    rows.append(("count(), glm5 (78 layers + MTP, index reuse)", t, TARGETS["count"]))

    v4 = maxflops.load_config("deepseek4-284b", max_target_length=1048576)
    t = median_time(lambda: maxflops.count(v4), repeats=30, inner=200)
    rows.append(("count(), deepseek4-284b at 1M (window, CSA, HCA layers, mHC)", t, TARGETS["count"]))

    dec = maxflops.load_config("deepseek3.2-671b", mode="decode", per_device_batch_size=64, decode_kv_length=32768)
    t = median_time(lambda: maxflops.decode_traffic(dec), repeats=20, inner=50)
    rows.append(("decode_traffic(), deepseek3.2-671b, batch 64 x 32K (HBM bytes of a decode step)", t,
                 TARGETS["count"]))

    # MaxText's config object as its trainer has it (856 keys, from the committed MaxText 0.2.5 fixture).
    import json

    fx = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "maxtext_real"
    mt_keys = {**json.loads((fx / "maxtext_base_keys.json").read_text()),
               **json.loads((fx / "maxtext_models.json").read_text())["models"]["deepseek3.2-671b"]["keys"]}
    from maxflops.maxtext import from_maxtext

    t = median_time(lambda: maxflops.count(from_maxtext(mt_keys)), repeats=20, inner=20)
    rows.append(("from_maxtext + count(), MaxText's deepseek3.2-671b object (856 keys)", t, 1e-3))
    t = median_time(lambda: maxflops.count(mt_keys), repeats=20, inner=50)
    rows.append(("count(MaxText's object) as it is (per-step path; no ConfigDict built)", t, 1e-3))

    lengths = np.linspace(1024, 262144, 1000).astype(int)

    t = median_time(lambda: maxflops.sweep(ds, "max_target_length", lengths.tolist()), repeats=5)
    rows.append(("1,000-point sequence-length sweep, deepseek3.2-671b (`maxflops.sweep`)", t, TARGETS["sweep"]))
    t = median_time(lambda: maxflops.sweep(glm, "max_target_length", lengths.tolist()), repeats=5)
    rows.append(("1,000-point sequence-length sweep, glm5", t, TARGETS["sweep"]))
    t = median_time(lambda: [maxflops.load_config("deepseek3.2-671b", max_target_length=int(L)) for L in
                             lengths[:100]], repeats=3) * 10
    rows.append(("for comparison: 1,000 x `load_config` (file + ConfigDict per point)", t, None))

    rng = np.random.default_rng(0)
    docs = rng.integers(1, 4097, size=100_000)
    packed_cfg = maxflops.load_config("glm5", max_target_length=4096,
                                      per_device_batch_size=int(docs.sum()) // 4096 + 1)
    maxflops.count(packed_cfg, segment_lengths=docs)
    t = median_time(lambda: maxflops.count(packed_cfg, segment_lengths=docs), repeats=20)
    rows.append(("packed: 100,000 documents (numpy array), glm5", t, TARGETS["packed"]))
    docs_list = docs.tolist()
    t = median_time(lambda: maxflops.count(packed_cfg, segment_lengths=docs_list), repeats=20)
    rows.append(("packed: 100,000 documents (Python list), glm5", t, None))

    reporter = maxflops.StepReporter(packed_cfg, peak_tflops=989)
    reporter.step(1.0, step_lengths=docs)
    t = median_time(lambda: reporter.step(1.0, step_lengths=docs), repeats=20)
    rows.append(("per-step StepReporter.step(), 100,000 documents (model + hardware MFU)", t, 2e-3))
    ids = np.zeros((64, 8192), np.int32)
    for r in range(64):  # rows packed with documents of 1..2000 tokens
        cuts = np.cumsum(rng.integers(1, 2001, size=20))
        cuts = cuts[cuts < 8192]
        ids[r] = np.searchsorted(cuts, np.arange(8192), side="right") + 1
    ids_cfg = maxflops.load_config("glm5", max_target_length=8192, per_device_batch_size=64)
    ids_reporter = maxflops.StepReporter(ids_cfg, peak_tflops=989)
    t = median_time(lambda: ids_reporter.step(1.0, segment_ids=ids), repeats=20)
    rows.append(("per-step StepReporter.step(), segment ids [64, 8192]", t, 2e-3))

    # A Hugging Face config.json read and counted, as a config review does (the file parsed each time; a published
    # quantized file's skip list of thousands of modules too, where ../shared/hf-real is beside the checkout)
    from maxflops import loaders

    def load_and_count(path):
        return maxflops.count(maxflops.model_config(**loaders.load_hf_config(path).overrides))

    hf_files = [("Llama-3.1-8B", ROOT / "tests" / "fixtures" / "hf" / "llama3.1-8b.json"),
                ("GLM-5 (MLA, DSA, index reuse)", ROOT / "tests" / "fixtures" / "hf" / "glm5.json"),
                ("Qwen3.5-397B-A17B (multimodal wrapper, gated delta net, MoE)",
                 ROOT.parent / "shared" / "hf-real" / "qwen3.5-397b-a17b" / "config.json"),
                ("GLM-5-FP8 (a skip list of the FP8 quantizer)",
                 ROOT.parent / "shared" / "hf-real" / "glm-5-fp8" / "config.json")]
    for what, path in hf_files:
        if path.is_file():
            load_and_count(path)
            t = median_time(lambda: load_and_count(path), repeats=9)
            rows.append((f"load_hf_config + count(), {what}", t, TARGETS["load"]))

    # A reviewer's questions: the parameters (warm, and on a count's first use of them), and explain() of a published
    # MFU on every shipped model, each call at a new length so that every convention's count is a new one
    maxflops.parameters(ds)
    t = median_time(lambda: maxflops.parameters(ds), repeats=9, inner=100)
    rows.append(("parameters(), deepseek3.2-671b, same config object", t, 1e-3))
    lengths_p = iter(range(5000, 10 ** 9))
    t = median_time(lambda: maxflops.count(ds, max_target_length=next(lengths_p)).parameters, repeats=9, inner=20)
    rows.append(("count(...).parameters on a new count, deepseek3.2-671b", t, 1e-3))
    lengths_e = iter(range(3000, 10 ** 9, 7))
    per_model = {}
    for name in maxflops.available_models():
        cfg = maxflops.load_config(name)
        maxflops.explain(cfg, mfu="40.0", peak_tflops="989", tokens_per_s="1000")
        per_model[name] = median_time(lambda: maxflops.explain(maxflops.load_config(name, max_target_length=next(
            lengths_e)), mfu="40.0", peak_tflops="989", tokens_per_s="1000"), repeats=3)
    slowest = max(per_model, key=per_model.get)
    rows.append((f"explain(), a published MFU: the slowest of the {len(per_model)} shipped models ({slowest}; every "
                 f"convention counted anew)", per_model[slowest], 1.0))
    rows.append(("explain(), the same: the median shipped model", statistics.median(per_model.values()), None))

    # As a user's install runs it: byte-compiled once (pip writes the .pyc files; a shell with
    # PYTHONDONTWRITEBYTECODE would compile every module at every import, about 80 ms here), into a temporary
    # cache, not the checkout
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        probe = ("import sys, time; t = time.perf_counter(); import maxflops; t = time.perf_counter() - t; "
                 "assert 'jax' not in sys.modules and 'numpy' not in sys.modules; print(t)")
        subprocess.run([sys.executable, "-c", "import maxflops"], check=True, env=env)
        inproc = statistics.median(float(subprocess.run([sys.executable, "-c", probe], check=True, env=env,
                                                        capture_output=True, text=True).stdout)
                                   for _ in range(15))
        bare = wall([sys.executable, "-c", "pass"], env=env)
        imp = wall([sys.executable, "-c", "import maxflops"], env=env)
    rows.append(("import maxflops (in the process; neither jax nor numpy imported)", inproc, TARGETS["import"]))
    rows.append(("python -c 'import maxflops' (wall, whole process)", imp, None))
    rows.append(("python -c 'pass' (bare interpreter, for reference)", bare, None))

    lines = ["## Analytic engine", "",
             f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}, "
             f"numpy {np.__version__}; {time.strftime('%Y-%m-%d')}. Median of repeats; "
             "`python benchmarks/bench_analytic.py` regenerates this section.", "",
             "| what | median | target | met |", "|---|---:|---:|:--:|"]
    for name, t, target in rows:
        tgt = "" if target is None else _fmt(target)
        met = "" if target is None else ("yes" if t <= target else "NO")
        lines.append(f"| {name} | {_fmt(t)} | {tgt} | {met} |")
    section = "\n".join(lines) + "\n"
    print(section)
    out = pathlib.Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv else HERE / "RESULTS.md"
    _write_section(out, "## Analytic engine", section)


def _fmt(t: float) -> str:
    return f"{t * 1e6:.1f} us" if t < 1e-3 else f"{t * 1e3:.2f} ms"


def _write_section(path: pathlib.Path, heading: str, section: str) -> None:
    """Replace one '## ' section of RESULTS.md, keeping the others."""
    text = path.read_text() if path.exists() else "# Benchmark results\n\n"
    if heading in text:
        start = text.index(heading)
        nxt = text.find("\n## ", start + len(heading))
        text = text[:start] + section + ("\n" + text[nxt + 1:] if nxt != -1 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


if __name__ == "__main__":
    main()
