"""The documents run as written: every Python block and every command of README.md and the other docs.

- Python blocks are executed (each in a fresh namespace) after a preamble that defines the names a block leaves
  to the reader (``config``, ``step_seconds``, ``batch``, ``step``); ``from maxtext.configs import pyconfig`` gets
  a stand-in that returns MaxText 0.2.5's recorded ``base.yml`` keys with a model's YAML applied (MaxText is not
  a test dependency), and ``maxtext.utils.maxtext_utils`` one whose function ``install()`` replaces.
- Commands (shell blocks and inline ``python ...`` in the prose) run in a subprocess (``slow``), with the
  documented placeholder paths replaced by fixtures; a command that cannot run here (an accelerator, a MaxText
  venv) is listed in NOT_RUN with the reason, and its flags are still checked against the tool's ``--help``; a
  command another test runs is listed in RUN_ELSEWHERE with that test, whose source must hold it.
- Where a document shows output, the output is compared: the README's sample report line by line, the bench
  sample's deterministic columns, the trainer's logged line.
- Every ``maxflops.NAME`` a document mentions exists, and every key in a README table of config keys is a schema
  key.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import types

import pytest

import maxflops
from repo import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
DOCS = [ROOT / "README.md", ROOT / "configs" / "README.md", ROOT / "benchmarks" / "RESULTS.md",
        ROOT / "tests" / "fixtures" / "README.md", ROOT / "tests" / "fixtures" / "maxtext_real" / "README.md",
        *sorted((ROOT / "docs").rglob("*.md"))]  # the documentation site's pages


def _pages() -> str:
    """The README and the site's pages, one text: a section is found wherever the docs keep it."""
    return "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))])


def fenced(path: pathlib.Path):
    """(language, first line number, text) of each fenced block."""
    lines = path.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if m:
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            out.append((m.group(1), i + 2, "\n".join(lines[i + 1:j])))
            i = j
        i += 1
    return out


def python_blocks():
    return [(f"{p.name}:{line}", text) for p in DOCS for lang, line, text in fenced(p) if lang == "python"]


def commands():
    """Every command of a document: the lines of its bash blocks and the inline `python ...` / `bash ...` of its
    prose, each as (where, command)."""
    out = []
    for p in DOCS:
        text = p.read_text()
        for lang, line, block in fenced(p):
            if lang not in ("bash", "sh", "shell"):
                continue
            for k, raw in enumerate(block.splitlines()):
                cmd = re.sub(r"\s+#.*$", "", raw).strip()
                if cmd and not cmd.startswith("#"):
                    out.append((f"{p.name}:{line + k}", cmd))
        outside = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
        for m in re.finditer(r"`((?:[A-Z_]+=\S+ )*(?:python|bash|pip) [^`]+)`", outside):
            out.append((f"{p.name}:{outside.count(chr(10), 0, m.start()) + 1}", m.group(1).strip()))
    return out


# --- what a command needs that this machine has not ---------------------------------------------------------------

NOT_RUN = {
    "pip install -e . 'jax[tpu]'": "installs jax for a TPU VM",
    "python -m maxflops.bench --json tpu.json --csv tpu.csv": "a TPU VM (its preset sizes the kernels for TPU HBM)",
    "python -m maxflops.bench --distributed --mesh data=4,model=2 --model=glm5":
        "a multi-host TPU slice (jax.distributed)",
    "pip install -e . 'jax[cuda12]'": "installs jax for a GPU box",
    "python -m maxflops.bench --json gpu.json": "a GPU",
    "python -m maxflops.bench --mesh data=8 --peak-tflops 989":
        "8 accelerators (tests/xla/test_bench.py runs --mesh on 8 simulated CPU devices)",
    "python -m maxflops.bench": "the tool's name in a heading; its CPU run is `--quick`, below",
    "python -m maxflops.bench --quick": "the run of `python -m maxflops.bench --quick --json out.json`, which this "
                                        "test makes and holds the README's sample against",
    "bash benchmarks/device_prepare.sh": "downloads a wheel for the accelerator image (no network in CI)",
    "MAXFLOPS_LIVE_MAXTEXT=/path/to/python-with-maxtext python -m pytest tests/peers/test_maxtext_real.py -k live":
        "a Python 3.12 venv with MaxText 0.2.5 (the opt-in live test)",
    "MAXFLOPS_LIVE_MAXTEXT=... python -m pytest tests/peers/test_maxtext_sharded.py -k live":
        "a Python 3.12 venv with MaxText 0.2.5 (the opt-in live test: it compiles on 8 simulated devices)",
    'python -m pytest -q -m "not slow"': "the test suite itself",
    "python -m pytest -q -m slow -n 2": "the slow suite itself (CI's own step)",
    "python -m maxflops.xla.program step.mlir --json": "needs a program saved to a file (tests/xla/test_program.py "
                                                       "runs the same command's main on saved programs)",
    "bash .ci/maxtext-leg": "CI's second leg: it installs MaxText and tokamax from PyPI (CI runs it after the suite)",
    "python tests/mutation/run.py": "the whole mutation run (about 30 minutes on 2 cores, recorded in "
                                    "tests/mutation/RESULTS.md); test_one_mutant_is_killed runs one mutant",
    "PYTHON=python3 bash benchmarks/device_check.sh": "the accelerator check: a GPU or TPU machine (the H200 run "
                                                      "RESULTS.md records)",
    "bash benchmarks/device_check.sh --quick": "the accelerator check's short run: a GPU or TPU machine",
    "python tests/fixtures/hf_transformers/generate.py": "a venv with transformers 5.24 (the fixture it writes is "
                                                         "held by tests/loaders/test_hf_defaults.py)",
    "python tests/fixtures/hf_nulls/generate.py": "a venv with torch 2.13 and transformers 5.24 (the fixture and "
                                                   "the table it writes are held by tests/loaders/test_hf_nulls.py)",
    "python tests/fixtures/hf_zoo/generate.py": "a venv with torch 2.13 and transformers 5.24 (the fixture it writes "
                                                "is held by tests/loaders/test_hf_zoo.py)",
    "MAXFLOPS_REGENERATE=1 python -m pytest tests/loaders/test_hf_zoo.py -k coverage": "rewrites a committed page; "
                                                                              "tests/loaders/test_hf_zoo.py holds it current",
}

# commands another test runs as written (its source must hold the command)
RUN_ELSEWHERE = {
    "bash benchmarks/device_check.sh": ("xla/test_bench.py", "test_device_check_script_runs_checks_and_records"),
}

# documented placeholders -> runnable stand-ins
PATHS = {
    "path/to/config.json": str(FIXTURES / "hf" / "llama3.1-8b.json"),
    "path/to/maxtext/configs/models/x.yml": str(FIXTURES / "maxtext" / "deepseek3.2-671b.yml"),
}


def runnable(cmd: str, tmp: pathlib.Path) -> str:
    for placeholder, path in PATHS.items():
        cmd = cmd.replace(placeholder, path)
    cmd = re.sub(r"(--plot=|--json |--csv |--csv=)(\S+)", lambda m: m.group(1) + str(tmp / pathlib.Path(m.group(2)).name),
                 cmd)
    if cmd.startswith("pip install -e '.[test]' && "):  # CI installs exactly this (.ci/run); run what follows
        cmd = cmd.split("&& ", 1)[1]
    if re.fullmatch(r"python benchmarks/bench_\w+\.py", cmd) and "--out" in (ROOT / cmd.split()[1]).read_text():
        # their timings go to a copy, not the committed RESULTS.md
        cmd += f" --out {tmp / 'RESULTS.md'}"
    return re.sub(r"(^|\s)python(\s)", lambda m: f"{m.group(1)}{sys.executable}{m.group(2)}", cmd)


def test_every_command_is_run_or_says_why_not():
    seen = set()
    for where, cmd in commands():
        seen.add(cmd)
        head = cmd.split(" && ")[0]
        if cmd in NOT_RUN or head in NOT_RUN or cmd in RUN_ELSEWHERE:
            continue
        assert cmd.startswith(("python ", "pip install -e '.[test]' && ", "XLA_FLAGS=")), \
            f"{where}: {cmd!r} is neither run by test_commands_run_as_written nor listed in NOT_RUN with a reason"
    for cmd, (module, test) in RUN_ELSEWHERE.items():
        source = (ROOT / "tests" / module).read_text()
        body = source.split(f"def {test}(", 1)
        assert len(body) == 2, f"{module}::{test} does not exist"
        assert cmd.split()[-1] in body[1].split("\ndef ", 1)[0], f"{module}::{test} does not run {cmd!r}"
    stale = [c for c in NOT_RUN if not any(c == s or s.startswith(c + " && ") or s.endswith("&& " + c) for s in seen)
             and c not in {s.split(" && ")[-1] for s in seen}]
    assert not stale, f"NOT_RUN lists commands no document has any more: {stale}"


def _flags(cmd: str) -> list[str]:
    return [f.split("=")[0] for f in cmd.split() if f.startswith("--")]


@pytest.mark.parametrize("cmd", sorted(c for c in NOT_RUN if c.startswith("python -m maxflops.bench")))
def test_commands_not_run_here_still_use_real_flags(cmd):
    from maxflops.bench.cli import build_parser

    known = set(build_parser()._option_string_actions)
    assert set(_flags(cmd)) <= known, (cmd, set(_flags(cmd)) - known)


RUN = sorted({(cmd.split(" && ")[-1] if cmd.startswith("pip install -e '.[test]'") else cmd)
              for _, cmd in commands()
              if cmd not in NOT_RUN and cmd.split(" && ")[0] not in NOT_RUN and cmd not in RUN_ELSEWHERE
              and "pip install -e . '" not in cmd})


def _sample_report() -> list[str]:
    """The lines of the README's sample report (abridged: '...' stands for omitted lines)."""
    text = (ROOT / "README.md").read_text()
    m = re.search(r"Sample \(`(python -m maxflops [^`]+)`, abridged\):\n\n```\n(.*?)```", text, re.S)
    assert m, "the README's sample report is gone"
    return m.group(1), [ln.rstrip() for ln in m.group(2).splitlines() if ln.strip() != "..."]


def _bench_sample() -> list[list[str]]:
    text = _pages()
    m = re.search(r"Sample \(`python -m maxflops.bench --quick`[^\n]*\n\n```\n(.*?)```", text, re.S)
    assert m, "the README's bench sample is gone"
    return m.group(1).splitlines()


@pytest.mark.slow
@pytest.mark.parametrize("cmd", RUN)
def test_commands_run_as_written(cmd, tmp_path):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    p = subprocess.run(runnable(cmd, tmp_path), shell=True, capture_output=True, text=True, cwd=ROOT, env=env,
                       timeout=900)
    assert p.returncode == 0, (cmd, p.stdout[-3000:], p.stderr[-3000:])
    shown, sample = _sample_report()
    if cmd == shown:  # every line the README shows is in the output, in order
        out = [ln.rstrip() for ln in p.stdout.splitlines()]
        pos = 0
        for line in sample:
            assert line in out[pos:], f"README sample line not in the output (in order): {line!r}"
            pos = out.index(line, pos) + 1
    if cmd == "python -m maxflops.bench --quick --json out.json":  # the sample's deterministic columns
        rows = {r["kernel"]: r for r in json.loads((tmp_path / "out.json").read_text())["rows"]}
        header, *lines = _bench_sample()
        for line in lines:
            cols = re.split(r"\s{2,}", line.strip())
            assert cols[0] in rows, f"README bench sample row {cols[0]!r} is not a row of the quick run"
            row = rows[cols[0]]
            equal = {True: "yes", False: "NO", None: "n/a"}[row["xla_equal"]]
            xla = [f"{row['xla_matmul_flops'] / 1e9:.3f}"] if row["xla_matmul_flops"] is not None else []
            assert cols[1:4 + len(xla)] == [row["shapes"], f"{row['hardware_flops'] / 1e9:.3f}", *xla, equal], \
                (cols, row)
    if "examples/jax_trainer.py" in cmd:  # the reconcile lines all equal, then one logged line per step
        steps = int(re.search(r"--steps=(\d+)", cmd).group(1))
        assert p.stderr.count("model MFU") == steps and "differs" not in p.stderr, p.stderr[-2000:]
        assert p.stderr.count(" analytic ") == 5, p.stderr[-2000:]
    if "examples/train_loop.py" in cmd:  # one logged line per step, through absl as the example asks
        steps = int(re.search(r"--steps=(\d+)", cmd).group(1))
        assert p.stderr.count("model MFU") == steps and "hardware MFU" in p.stderr, p.stderr[-2000:]
    if cmd.startswith("python -m maxflops sweep --model=deepseek4-284b --lengths=4096,16384"):
        _check_deepseek4_table()
    if cmd.startswith("python -m maxflops sweep --model=nemotron-h-8b --lengths=4096,16384"):
        _check_hybrid_table()
    if cmd.startswith("python -m maxflops sweep --model=kimi-linear-48b-a3b --lengths=4096,16384"):
        _check_linear_table()


def _check_linear_table():
    """The README's linear-attention table (GFLOPs per token, train, batch 1) against the engine."""
    text = _pages()
    rows = re.findall(r"^\| ([\d,]+) \| \*\*([\d.]+)\*\* \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)x \| ([\d.]+) \(([\d.]+)x\) \| "
                      r"\*\*([\d.]+)\*\* \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)x \|$", text, re.M)
    assert len(rows) == 7, rows
    for row in rows:
        L = int(row[0].replace(",", ""))
        k, km, kb, m, ms = (maxflops.count(maxflops.load_config(n, max_target_length=L, **kw)) for n, kw in (
            ("kimi-linear-48b-a3b", {}), ("kimi-linear-48b-a3b", {"attention_layer_pattern": "G"}),
            ("kimi-linear-48b-a3b", {"convention": "megatron_bridge"}), ("minimax-text-01", {}),
            ("minimax-text-01", {"attention_layer_pattern": "G"})))
        g = lambda b, x, n: f"{x / b.tokens / 1e9:.{n}f}"  # noqa: E731
        assert list(row[1:]) == [g(k, k.total, 1), g(k, k.attention, 2), g(km, km.total, 1),
                                 f"{k.total / km.total:.2f}", g(kb, kb.total, 1), f"{kb.total / k.total:.3f}",
                                 g(m, m.total, 1), g(m, m.attention, 2), g(ms, ms.total, 1),
                                 f"{m.total / ms.total:.2f}"], row


def _check_hybrid_table():
    """The README's hybrid table (GFLOPs per token, train, batch 1) against the engine."""
    text = _pages()
    rows = re.findall(r"^\| ([\d,]+) \| \*\*([\d.]+)\*\* \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)x \| "
                      r"([\d.]+) \(([\d.]+)x\) \| \*\*([\d.]+)\*\* \| ([\d.]+) \(([\d.]+)x\) \|$", text, re.M)
    assert len(rows) == 7, rows
    for row in rows:
        L = int(row[0].replace(",", ""))
        h, llama, hm, nano, nanom = (maxflops.count(maxflops.load_config(m, max_target_length=L, **kw)) for m, kw in (
            ("nemotron-h-8b", {}), ("llama3.1-8b", {}), ("nemotron-h-8b", {"convention": "megatron_main"}),
            ("nemotron-3-nano-30b-a3b", {}), ("nemotron-3-nano-30b-a3b", {"convention": "megatron_main"})))
        g = lambda b, x, n: f"{x / b.tokens / 1e9:.{n}f}"  # noqa: E731
        assert list(row[1:]) == [g(h, h.total, 1), g(h, h.attention, 2), g(llama, llama.total, 1),
                                 g(llama, llama.attention, 2), f"{h.total / llama.total:.2f}", g(hm, hm.total, 1),
                                 f"{hm.total / h.total:.3f}", g(nano, nano.total, 2), g(nanom, nanom.total, 2),
                                 f"{nanom.total / nano.total:.3f}"], row


def _check_deepseek4_table():
    """The README's DeepSeek-V4 table (GFLOPs per token, train, batch 1, exact) against the engine."""
    text = _pages()
    rows = re.findall(r"^\| ([\d,]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| \*\*([\d.]+)\*\* \| "
                      r"([\d.]+) \(([\d.]+)x\) \| ([\d.]+) \(([\d.]+)x\) \|$", text, re.M)
    assert len(rows) == 7, rows
    names = ("qkv_proj", "out_proj", "core_attention", "indexer_proj", "indexer_score")
    for row in rows:
        L = int(row[0].replace(",", ""))
        v4, v32, glm = (maxflops.count(maxflops.load_config(m, max_target_length=L))
                        for m in ("deepseek4-284b", "deepseek3.2-671b", "glm5"))
        per = lambda b, x: f"{x / b.tokens / 1e9:.2f}"  # noqa: E731
        assert list(row[1:6]) == [per(v4, v4.components[n]) for n in names], row
        assert row[6] == f"{v4.per_token / 1e9:.1f}" and row[7] == f"{v32.per_token / 1e9:.1f}", row
        assert row[9] == f"{glm.per_token / 1e9:.1f}", row
        assert row[8] == f"{v4.total / v32.total:.2f}" and row[10] == f"{v4.total / glm.total:.2f}", row


# --- Python blocks ---------------------------------------------------------------------------------------------

PREAMBLE = '''
import numpy as np
import maxflops
config = maxflops.load_config("llama3.1-8b", max_target_length=8192, per_device_batch_size=4)
step_seconds, step = 4.21, 12
_ids = np.zeros((4, 8192), np.int32)
_ids[:, :8192] = np.arange(1, 5)[:, None]          # four rows, one whole document each
batch = {"inputs_segmentation": _ids}
'''


def _maxtext_stand_in(monkeypatch):
    """``maxtext.configs.pyconfig`` returning MaxText 0.2.5's recorded base.yml keys with a model YAML applied, and
    ``maxtext.utils.maxtext_utils`` holding a FLOPs function for ``install()`` to replace."""
    real = FIXTURES / "maxtext_real"
    base = json.loads((real / "maxtext_base_keys.json").read_text())
    models = json.loads((real / "maxtext_models.json").read_text())["models"]

    def initialize(argv):  # [...] in the README: MaxText's resolved object of one recorded model
        args = dict(a.split("=", 1) for a in argv if isinstance(a, str) and "=" in a)
        keys = {**base, **models[args.get("model_name", "deepseek3.2-671b")]["keys"]}
        return types.SimpleNamespace(get_keys=lambda: dict(keys), **keys)

    def calculate_tflops_training_per_device(config, log=True):
        return (0.0, 0.0, 0.0)

    pkg = types.ModuleType("maxtext")
    configs = types.ModuleType("maxtext.configs")
    pyconfig = types.ModuleType("maxtext.configs.pyconfig")
    pyconfig.initialize = initialize
    utils = types.ModuleType("maxtext.utils")
    mu = types.ModuleType("maxtext.utils.maxtext_utils")
    mu.calculate_tflops_training_per_device = calculate_tflops_training_per_device
    configs.pyconfig, pkg.configs, utils.maxtext_utils, pkg.utils = pyconfig, configs, mu, utils
    for name, mod in (("maxtext", pkg), ("maxtext.configs", configs), ("maxtext.configs.pyconfig", pyconfig),
                      ("maxtext.utils", utils), ("maxtext.utils.maxtext_utils", mu)):
        monkeypatch.setitem(sys.modules, name, mod)
    return mu


@pytest.mark.parametrize("where, code", python_blocks(), ids=[w for w, _ in python_blocks()])
def test_python_blocks_run_as_written(where, code, monkeypatch, capsys):
    mu = _maxtext_stand_in(monkeypatch) if "maxtext" in code else None
    ns: dict = {}
    if "jitted_step" in code:  # a trainer's own objects: examples/jax_trainer.py's model, state, batch and config
        code = ("from repo import jax_trainer_example as _example\n"
                "config, params, opt_state, jitted_step, batch, _ = _example().setup()\n") + code
    try:
        exec(compile(PREAMBLE + code, where, "exec"), ns)
        if mu is not None and "install()" in code:  # install() replaced MaxText's function with maxflops'
            assert mu.calculate_tflops_training_per_device.__wrapped__.__name__ == "calculate_tflops_training_per_device"
            total, _, _ = mu.calculate_tflops_training_per_device(ns["cfg"], log=False)
            assert total * 1e12 == pytest.approx(maxflops.count(ns["cfg"]).total, rel=1e-15)  # float TFLOPs
    finally:
        if mu is not None:
            maxflops.maxtext.uninstall()
    out = capsys.readouterr().out
    for shown in re.findall(r'#[^"\n]*"(step \d+: [^"]*)"', code):  # a logged line the block shows
        prefix = shown.split("...")[0].rstrip(", ")
        assert prefix in out, (shown, out)


# --- names ---------------------------------------------------------------------------------------------------

def _resolve(dotted: str):
    import importlib

    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def test_every_documented_name_exists():
    missing = []
    for p in DOCS + [ROOT / "maxflops" / "__init__.py"]:
        for dotted in sorted(set(re.findall(r"\bmaxflops(?:\.[A-Za-z_]\w*)+", p.read_text()))):
            dotted = re.sub(r"\.(py|md|json|yml|png|csv)$", "", dotted)
            if (ROOT / (dotted.replace(".", "/") + ".py")).exists() or (ROOT / dotted.replace(".", "/")).is_dir():
                continue
            try:
                _resolve(dotted)
            except (AttributeError, ModuleNotFoundError):
                missing.append(f"{p.name}: {dotted}")
    assert not missing, missing


def test_every_key_in_a_readme_table_is_a_schema_key():
    """The written pages' tables of config keys (the generated reference and model-type pages are the code's own)."""
    from maxflops.schema import SCHEMA

    generated = {ROOT / "docs" / "hf-model-types.md", *(ROOT / "docs" / "reference").glob("*.md")}
    text = "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
                     if p not in generated)
    keys = set()
    for cell in re.findall(r"^\| ([^|]+) \|", text, re.M):
        keys.update(k for k in re.findall(r"`([a-z][a-z0-9_]+)`", cell) if "_" in k)
    assert keys, "no README table of config keys found"
    assert not sorted(keys - set(SCHEMA) - set(maxflops.CONVENTIONS)), sorted(keys - set(SCHEMA))


def test_every_config_flag_in_the_docs_is_a_schema_key():
    from maxflops.schema import SCHEMA

    flags = {m for p in DOCS for m in re.findall(r"--config\.([a-z0-9_]+)", p.read_text())}
    assert flags and flags <= set(SCHEMA), flags - set(SCHEMA)


def test_the_readme_lists_every_knob_that_lowers_hardware_below_model():
    from maxflops.conventions import HARDWARE_BELOW_MODEL

    text = _pages()
    start = text.index("Hardware can be below model FLOPs")
    paragraph = text[start:text.index("\n\n", start)]
    assert not [k for k in HARDWARE_BELOW_MODEL if f"`{k}" not in paragraph], paragraph


@pytest.mark.slow
def test_one_mutant_is_killed():
    """The README's mutation run, one mutant of it (the whole run takes about 30 minutes): applied to a copy of the
    repository, the fast suite fails on it."""
    p = subprocess.run([sys.executable, "tests/mutation/run.py", "--only", "causal_strict", "--no-baseline"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert p.returncode == 0 and "1/1 = 100.0%" in p.stdout, (p.stdout[-2000:], p.stderr[-2000:])


def test_the_eager_table_is_the_fixture():
    """The README's table of transformers' eager models: each forward and training figure is the fixture's (and so
    maxflops')."""
    cases = json.loads((FIXTURES / "hf_eager" / "cases.json").read_text())["cases"]
    text = _pages().split("## Proof against transformers' eager models", 1)[1]
    table = text.split("## Proof against XLA", 1)[0]
    rows = {name: (forward, train, rest) for name, forward, train, rest in
            re.findall(r"^\| ([a-z0-9_]+) \| ([\d,]+)[^|]* \| ([\d,]+)(.*)$", table, re.M)}
    assert set(rows) == set(cases)
    for name, (forward, train, rest) in rows.items():
        assert int(forward.replace(",", "")) == cases[name]["total_flops"], name
        # the training step: torch's, less its depthwise conv's ops where the row says "+ the conv"
        ops = cases[name]["train_ops"]
        conv = ops.get("aten.convolution", 0) + ops.get("aten.convolution_backward", 0) if "+ the conv" in rest else 0
        assert int(train.replace(",", "")) == cases[name]["train_flops"] - conv, name


_NUMBERS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50}
_UNITS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def _number(words: str) -> int:
    tens, _, unit = words.partition("-")
    return int(words) if words.isdigit() else _NUMBERS[tens] + _UNITS.get(unit, 0)


def test_the_eager_fixtures_count_of_types_is_current():
    """Where the validation page says how many model types the eager fixture holds, it says the fixture's count."""
    cases = json.loads((FIXTURES / "hf_eager" / "cases.json").read_text())["cases"]
    types_ = {(c.get("config") or {}).get("model_type") or c.get("model_type") for c in cases.values()}
    text = (ROOT / "docs" / "validation.md").read_text()
    said = re.findall(r"builds tiny models of ([a-z-]+|\d+)\s+model types", text) + \
        re.findall(r"forward and training step, for ([a-z-]+|\d+) model types", text)
    assert said and all(_number(w) == len(types_) for w in said), (said, len(types_))


def _slug(heading: str) -> str:
    """The anchor mkdocs (python-markdown's toc) gives a heading."""
    text = re.sub(r"[^\w\s-]", "", heading.strip().lower())
    return re.sub(r"[\s]+", "-", text)


def test_every_see_and_every_anchor_resolves():
    """A 'see "Heading"' in plain text names a heading of its own page (a section elsewhere is a link), and every
    link to a section of a page names a heading that page has."""
    docs = ROOT / "docs"
    headings = {p.resolve(): [re.sub(r"^#+\s*", "", line).strip() for line in p.read_text().splitlines()
                              if line.startswith("#")] for p in docs.rglob("*.md")}
    bad = []
    for page, heads in headings.items():
        text = page.read_text()
        for m in re.finditer(r'see "([^"]+)"', text):
            if " ".join(m.group(1).split()) not in heads:
                bad.append(f"{page.name}: see {m.group(1)!r} (no such heading on this page: link it)")
        for m in re.finditer(r"\]\(([^)\s#]*\.md)?#([^)\s]+)\)", text):
            target = (page.parent / m.group(1)).resolve() if m.group(1) else page
            if target not in headings or m.group(2) not in {_slug(h) for h in headings[target]}:
                bad.append(f"{page.name}: link to {m.group(1) or ''}#{m.group(2)} (no such heading)")
    assert not bad, bad


def test_timings_are_written_in_one_place():
    """Issue 29: the README said a 100,000-document step costs 1.8 ms, 0.6 ms and (RESULTS.md) 589 us. Timings are
    written by the benchmark scripts into benchmarks/RESULTS.md alone; prose outside code blocks types none."""
    import re

    prose = re.sub(r"```.*?```", "", _pages(), flags=re.S)
    typed = re.findall(r"[^\n]*\b\d[\d.,-]* ?(?:us|ms|µs|seconds|minutes)\b[^\n]*", prose)
    assert not typed, typed


def test_the_layout_names_every_family():
    text = _pages()
    layout = text[text.index("## Layout"):text.index("## Adding a model family")]
    from maxflops.families import FAMILIES

    missing = [f.name for f in FAMILIES if f"{f.name}/" not in layout]
    assert not missing, missing


def test_the_layout_and_the_features_page_name_every_trunk_feature():
    text = _pages()
    layout = text[text.index("## Layout"):text.index("## Adding a model family")]
    adding = text[text.index("## Adding a trunk feature"):text.index("## Adding a peer's convention")]
    from maxflops.features import FEATURES

    missing = [f.name for f in FEATURES if f.name not in layout]
    assert not missing, missing
    assert "laurel.py" in adding and "register(Feature(" in adding


def test_every_documented_api_name_and_its_public_methods_have_a_docstring():
    """The API page renders each name of ``maxflops.__all__`` from its docstrings: a name or a public method without
    one is an empty entry on it."""
    import inspect

    missing = []
    for name in maxflops.__all__:
        obj = getattr(maxflops, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if not inspect.getdoc(obj):
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, Warning):
            for attr, member in vars(obj).items():
                fn = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
                if not attr.startswith("_") and inspect.isfunction(fn) and not fn.__doc__:
                    missing.append(f"{name}.{attr}")
    assert not missing, missing
