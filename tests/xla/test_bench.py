"""python -m maxflops.bench: the quick CPU run, its JSON, the simulated 8-device mesh, and the peak table."""

import json
import os
import subprocess
import sys

import pytest

from maxflops import peaks
from repo import ROOT



def run_bench(tmp_path, *extra, devices=None):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    if devices:
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    out = tmp_path / "out.json"
    p = subprocess.run([sys.executable, "-m", "maxflops.bench", "--quick", "--json", str(out),
                        "--csv", str(tmp_path / "out.csv"), *extra], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(out.read_text()), p


@pytest.mark.slow
def test_quick_cpu_run_counts_equal_xla(tmp_path):
    result, p = run_bench(tmp_path)
    assert result["backend"] == "cpu" and result["jax"] and result["device_kind"]
    assert "--quick" in result["command"] and "measured" in result["peak_source"]
    ran = [r for r in result["rows"] if r["status"] == "ok"]
    checked = [r for r in ran if r["xla_matmul_flops"] is not None]
    assert len(checked) >= 11 and not [r for r in result["rows"] if r["status"] == "failed"]
    for r in checked:  # the engine's own figure, no bench-side arithmetic, equals XLA's count
        assert r["xla_matmul_flops"] == r["hardware_flops"], r
    for r in ran:
        assert r["model_flops"] <= r["hardware_flops"] and r["seconds"] > 0
        assert r["xla_matmul_flops"] is not None or r["note"], r  # no cross-check: the row says why
    assert any("ragged_dot" in r["kernel"] for r in checked)  # XLA-CPU's expansion, from the engine's knob
    skipped = {r["kernel"]: r["note"] for r in result["rows"] if r["status"] == "skipped"}
    assert all("needs" in note for note in skipped.values())  # only kernels for other backends
    counted = [r for r in result["rows"] if r["status"] == "counted"]  # TPU kernels: their TPU program counted here
    assert len(counted) >= 3 and all(r["xla_equal"] is True and r["hardware_flops"] > 0 for r in counted), counted
    assert any("splash" in r["kernel"] for r in counted) and "counted: TPU program, not timed" in p.stdout
    assert "train step: llama3.1-8b" in p.stdout and "% peak" in p.stdout
    for r in ran:  # bytes and the roofline: the larger of the FLOP time and the byte time, over the measured time
        assert r["hbm_bytes"] > 0 and r["bound"] in ("memory", "compute"), r
        flop_t, byte_t = r["hardware_flops"] / result["peak_flops"], r["hbm_bytes"] / result["peak_bytes_per_s"]
        assert r["pct_of_roofline"] == pytest.approx(100 * max(flop_t, byte_t) / r["seconds"], rel=1e-9)
    decode = [r for r in ran if r["kernel"].startswith("decode attention")]
    assert len(decode) == 1 and decode[0]["engine_bytes_equal"] is True  # the engine's KV read == the cache arrays
    assert "measured" in result["peak_bandwidth_source"] and "GB/s" in p.stdout
    header = (tmp_path / "out.csv").read_text().splitlines()[0]
    assert "hardware_tflops_per_s" in header and "device_kind" in header


@pytest.mark.slow
def test_simulated_eight_device_mesh_reports_per_device_figures(tmp_path):
    result, _ = run_bench(tmp_path, "--mesh", "data=2,model=2", devices=8)
    assert result["device_count"] == 8
    ran = [r for r in result["rows"] if r["status"] == "ok"]
    sharded = [r for r in ran if r.get("devices_sharing", 1) > 1]
    assert len(sharded) >= 4  # the attention kernels (batch and heads) and the train step (batch)
    for r in ran:
        assert r["xla_matmul_flops"] in (None, r["hardware_flops"]), r
    for r in sharded:
        assert r["hardware_flops"] * r["devices_sharing"] == r["global_hardware_flops"]


def test_bad_mesh_is_one_line_and_exit_2():
    p = subprocess.run([sys.executable, "-m", "maxflops.bench", "--quick", "--mesh", "data=64"], capture_output=True,
                       text=True, cwd=ROOT, env=dict(os.environ, JAX_PLATFORMS="cpu"), timeout=120)
    assert p.returncode == 2 and "needs 64 devices" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("kind,name,tflops", [
    ("TPU v4", "TPU v4", 275), ("TPU v5 lite", "TPU v5e", 197), ("TPU v5p", "TPU v5p", 459),
    ("TPU v6 lite", "TPU v6e", 918), ("TPU7x", "TPU v7 (Ironwood)", 2307),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100", 312), ("NVIDIA H100 80GB HBM3", "NVIDIA H100", 989),
    ("NVIDIA H200", "NVIDIA H200", 989), ("NVIDIA B200", "NVIDIA B200", 2250), ("NVIDIA GB200", "NVIDIA GB200", 2500),
    ("AMD Instinct MI300X", "AMD MI300X", 1307.4), ("AMD Instinct MI355X", "AMD MI355X", 2516.6),
])
def test_peak_table_matches_device_kinds(kind, name, tflops):
    found = peaks.lookup(kind)
    assert found[0] == name and found[1] == pytest.approx(tflops * 1e12, rel=1e-12) and found[2] == "bfloat16"


@pytest.mark.parametrize("kind,gbps", [
    ("TPU v4", 1200), ("TPU v5 lite", 819), ("TPU v5p", 2765), ("TPU v6 lite", 1640), ("TPU7x", 7370),
    ("NVIDIA A100-SXM4-40GB", 1555), ("NVIDIA A100-SXM4-80GB", 2039), ("NVIDIA H100 80GB HBM3", 3350),
    ("NVIDIA H100 PCIe", 2000), ("NVIDIA H200", 4800), ("NVIDIA B200", 8000), ("NVIDIA GB200", 8000),
    ("AMD Instinct MI300X", 5300), ("AMD Instinct MI355X", 8000),
])
def test_bandwidth_table_matches_device_kinds(kind, gbps):
    assert peaks.bandwidth(kind) == gbps * 1e9
    assert peaks.bandwidth("cpu") is None


def test_unknown_device_has_no_peak():
    assert peaks.lookup("cpu") is None and peaks.lookup("Some New Chip") is None


@pytest.mark.slow
@pytest.mark.parametrize("mask_name,span", [("causal", 0), ("local", 24), ("chunked", 40)])
def test_splash_kernel_masks_mean_what_the_engine_counts(mask_name, span):
    # The TPU splash kernel, run by the Pallas interpreter on CPU: its output equals the reference kernel's
    # with the same mask, so the masks the bench times are the ones the engine counts. (float32; the
    # tolerance covers the different summation order of the blocked softmax.)
    import jax.numpy as jnp
    import numpy as np

    from maxflops.bench import make_splash
    from maxflops.families.attention import proof as A

    B, L, H, d = 1, 256, 2, 128
    rng = np.random.default_rng(0)
    q, k, v = (jnp.asarray(rng.normal(size=(B, H, L, d)), jnp.float32) for _ in range(3))
    got = make_splash(mask_name, L, H, span, 128, interpret=True)(q, k, v)
    mixer = {"causal": "global", "local": "window", "chunked": "chunk"}[mask_name]
    t = lambda x: jnp.swapaxes(x, 1, 2)  # noqa: E731
    ref = A.attention(t(q), t(k), t(v), mixer, span, "dense")
    np.testing.assert_allclose(np.asarray(got), np.asarray(t(ref)), rtol=2e-4, atol=2e-4)


def test_a_kernel_that_fails_makes_the_run_fail_and_names_it(monkeypatch, capsys):
    import maxflops.bench as bench

    def broken(mesh):
        raise RuntimeError("out of device memory")

    cases = [bench.Case("a broken kernel", "B=1", broken, lambda: (0, 0)),
             bench.Case("a TPU-only kernel", "B=1", broken, lambda: (0, 0), only=("tpu",))]
    monkeypatch.setattr(bench.cases, "build_cases", lambda *a, **k: cases)
    assert bench.main(["--quick", "--silent", "--peak-tflops", "1"]) == 1
    captured = capsys.readouterr()
    assert "error: kernel 'a broken kernel' failed" in captured.err
    assert "failed: RuntimeError: out of device memory" in captured.out
    assert "skipped: needs TPU" in captured.out and "TPU-only" not in captured.err


@pytest.mark.slow
def test_device_check_script_runs_checks_and_records(tmp_path):
    """benchmarks/device_check.sh, the one command for an accelerator machine, on this CPU: exit 0, the run's
    JSON/CSV/log and the updated results file in $OUT, the repository's RESULTS.md untouched."""
    import shutil

    repo = ROOT
    results = tmp_path / "RESULTS.md"
    shutil.copy(repo / "benchmarks" / "RESULTS.md", results)
    before = (repo / "benchmarks" / "RESULTS.md").read_text()
    env = {**os.environ, "OUT": str(tmp_path / "out"), "MAXFLOPS_RESULTS": str(results), "PYTHON": sys.executable,
           "MAXFLOPS_DEVICE_ROWS": str(tmp_path / "none.jsonl")}
    script = str(repo / "benchmarks" / "device_check.sh")
    # three rows (a timed kernel, a TPU kernel counted here, the train step), each in its own process
    p = subprocess.run(["bash", script, "--quick", "--only", "1,7,48"], env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    out = {f.name for f in (tmp_path / "out").iterdir()}
    assert {"bench.json", "bench.csv", "bench.log", "RESULTS.md", "rows.jsonl"} == out   # at most 8 come back
    rows = [json.loads(line) for line in (tmp_path / "out" / "rows.jsonl").read_text().splitlines()]
    assert sorted(r["index"] for r in rows) == [1, 7, 48] and {r["row"]["status"] for r in rows} == {"ok", "counted"}
    assert "## Kernels (CPU" in results.read_text()
    assert (repo / "benchmarks" / "RESULTS.md").read_text() == before
    # resumed from that record: only row 2 runs; rows 1 and 7 keep the earlier run's figures
    env = {**env, "OUT": str(tmp_path / "again"), "MAXFLOPS_DEVICE_ROWS": str(tmp_path / "out" / "rows.jsonl")}
    p = subprocess.run(["bash", script, "--quick", "--only", "1,2,7"], env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    again = [json.loads(line) for line in (tmp_path / "again" / "rows.jsonl").read_text().splitlines()]
    assert [r["index"] for r in again] == [2]
    assert len(json.loads((tmp_path / "again" / "bench.json").read_text())["rows"]) == 3


@pytest.mark.skipif(not os.environ.get("MAXFLOPS_TOKAMAX_PYTHON"),
                    reason="opt-in: MAXFLOPS_TOKAMAX_PYTHON=/path/to/python of a venv with tokamax (Python >= 3.12) "
                           "runs the bench's tokamax rows")
def test_tokamax_rows_equal_xla_where_tokamax_installs(tmp_path):
    out = tmp_path / "tk.json"
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT))
    p = subprocess.run([os.environ["MAXFLOPS_TOKAMAX_PYTHON"], "-m", "maxflops.bench", "--quick", "--json", str(out)],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = [r for r in json.loads(out.read_text())["rows"] if "tokamax" in r["kernel"]]
    assert len(rows) == 5 and all(r["status"] == "ok" for r in rows), rows
    assert all(r["xla_matmul_flops"] == r["hardware_flops"] for r in rows)


def test_rows_are_listed_and_picked_by_number(tmp_path, capsys):
    """--list numbers the rows without running any; --only runs those, --jsonl appends each as it finishes; a row
    number the run does not have is one clear error."""
    import maxflops.bench as bench

    assert bench.main(["--quick", "--list"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [r["index"] for r in listing["rows"]] == list(range(1, len(listing["rows"]) + 1))
    assert any(r["kernel"].startswith("splash attention") for r in listing["rows"])
    jsonl = tmp_path / "rows.jsonl"
    assert bench.main(["--quick", "--silent", "--only", "1", "--jsonl", str(jsonl), "--peak-tflops", "1"]) == 0
    (line,) = jsonl.read_text().splitlines()
    assert json.loads(line)["row"]["kernel"] == listing["rows"][0]["kernel"]
    capsys.readouterr()
    assert bench.main(["--quick", "--silent", "--only", str(len(listing["rows"]) + 1)]) == 2
    assert "--only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--only", "0"])


def test_a_custom_kernel_rows_program_is_kept_in_one_archive(tmp_path, monkeypatch):
    """Rows of custom kernels keep the program the device compiled, every row in one programs.zip (a device run
    returns few files); without an output folder nothing is written."""
    import zipfile

    import jax

    from maxflops.bench.runner import _keep_program

    compiled = jax.jit(lambda x: x @ x).lower(jax.ShapeDtypeStruct((8, 8), "float32")).compile()
    monkeypatch.delenv("MAXFLOPS_BENCH_OUT", raising=False)
    _keep_program("attention causal (jax.nn.dot_product_attention, cudnn)", compiled)
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv("MAXFLOPS_BENCH_OUT", str(tmp_path))
    _keep_program("attention causal (jax.nn.dot_product_attention, cudnn)", compiled)
    _keep_program("splash causal", compiled)
    with zipfile.ZipFile(tmp_path / "programs.zip") as z:
        assert z.namelist() == ["attention_causal_jax.nn.dot_product_attention_cudnn.hlo", "splash_causal.hlo"]
        assert "HloModule" in z.read("splash_causal.hlo").decode()
