"""What the three users run: sweeps, comparisons and plots (config reviews), per-step MFU (trainers)."""

import re
import subprocess
import sys

import numpy as np
import pytest

import maxflops
from maxflops import cli
from repo import ROOT



def test_sweep_reproduces_the_first_seed_table(capsys):
    argv = ["maxflops", "sweep", "--model=glm5", "--lengths=4096,32768,131072,262144", "--config.convention=megatron",
            "--compare=use_sparse_indexer=false"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in out[3:]}
    # The seed's "after" / "before" GFLOPs per token, and before/after = its overcount column inverted.
    expect = {"4,096": ("275.3", "280.9"), "32,768": ("290.0", "503.6"), "131,072": ("317.3", "1,267.0"),
              "262,144": ("352.9", "2,284.9")}
    for length, (after, before) in expect.items():
        assert rows[length][-3:-1] == [after, before]
    assert rows["262,144"][-1] == f"{352.880 / 2284.905:.2f}x"


def test_sweep_any_key_and_json(capsys):
    assert cli.main(["maxflops", "sweep", "--model=deepseek3.2-671b", "--vary=index_topk", "--values=512,2048",
                     "--config.max_target_length=32768", "--json"]) == 0
    import json

    d = json.loads(capsys.readouterr().out)
    assert d["key"] == "index_topk" and len(d["runs"][0]) == 2
    assert d["runs"][0][0]["total"] < d["runs"][0][1]["total"]


def test_sweep_against_other_models(capsys):
    """The DeepSeek-V4 review: GFLOPs/token from 4K to 1M against DeepSeek-V3.2 and GLM-5, the same settings
    (--config.*) applied to every model; each total is that model's own count at that length."""
    lengths = [4096, 131072, 1048576]
    argv = ["maxflops", "sweep", "--model=deepseek4-284b", "--lengths=" + ",".join(map(str, lengths)),
            "--compare=deepseek3.2-671b,glm5", "--config.per_device_batch_size=2"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert "total (deepseek3.2-671b)" in out[1] and "vs glm5" in out[1]
    for line, L in zip(out[3:], lengths):
        cells = line.split()
        want = [maxflops.count(maxflops.load_config(m, max_target_length=L, per_device_batch_size=2)).per_token / 1e9
                for m in ("deepseek4-284b", "deepseek3.2-671b", "glm5")]
        assert cells[-5:] == [f"{want[0]:,.1f}", f"{want[1]:,.1f}", f"{want[0] / want[1]:.2f}x", f"{want[2]:,.1f}",
                              f"{want[0] / want[2]:.2f}x"]
    assert cli.main(argv[:-2] + ["--compare=glm5,use_sparse_indexer=false"]) == 2
    assert "either KEY=VALUE settings or model names" in capsys.readouterr().err


def test_compare_says_where_each_difference_comes_from(capsys):
    assert cli.main(["maxflops", "compare", "glm5", "glm5:convention=megatron",
                     "--config.max_target_length=131072"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines()[3:]}
    assert "router_flops: True -> False" in lines["moe_router"]
    assert "indexer_train_factor: 0 -> 3" in lines["indexer_score"]
    assert "indexer_head_reduction: True -> False" in lines["indexer_score"]
    assert "mla_norm_flops: False -> True" in lines["qkv_proj"]
    assert lines["out_proj"].rstrip().endswith("1.000")  # no difference, no reason
    assert "317.322" in lines["total"]
    # Derived by recounting with each key flipped: glm5 has no windows and no gated delta net, so those knobs,
    # which differ between the bundles, are not named.
    assert "window_pairs" not in out and "gdn_core_state_ops" not in out and "causal_pairs" not in out


def test_compare_names_a_key_that_cannot_change_alone_where_it_acts():
    """Qwen2.5-7B (28 query heads, 4 K/V heads of 128) against Llama-3.2-3B (24 heads, 8 K/V): 8 K/V heads do not
    divide Qwen's 28 query heads, so num_kv_heads cannot move alone from A; tried from B (Llama with 4 K/V heads), it
    moves qkv_proj. Reversed, 28 query heads over Llama's 8 K/V heads are invalid; from the other side they move the
    projections and the core attention: named there, not left to emb_dim alone."""
    from maxflops.compare import keys_behind

    shape = dict(attention_layer_pattern="G", mlp_activations=("silu", "linear"), max_target_length=4096)
    qwen = maxflops.model_config(model_name="qwen2.5-7b", num_decoder_layers=28, emb_dim=3584, num_query_heads=28,
                                 num_kv_heads=4, head_dim=128, mlp_dim=18944, vocab_size=152064, **shape)
    llama = maxflops.model_config(model_name="llama3.2-3b", num_decoder_layers=28, emb_dim=3072, num_query_heads=24,
                                  num_kv_heads=8, head_dim=128, mlp_dim=8192, vocab_size=128256, **shape)
    forward = keys_behind(maxflops.config.validate(qwen), maxflops.config.validate(llama))
    assert "num_kv_heads" in forward["qkv_proj"] and "emb_dim" in forward["qkv_proj"]
    assert "num_kv_heads" not in forward["out_proj"]
    back = keys_behind(maxflops.config.validate(llama), maxflops.config.validate(qwen))
    assert {"emb_dim", "num_query_heads"} <= set(back["out_proj"])
    assert "num_query_heads" in back["qkv_proj"] and "num_query_heads" in back["core_attention"]
    assert not any("with others" in k for keys in back.values() for k in keys)


def test_compare_two_models_and_bad_input(capsys):
    assert cli.main(["maxflops", "compare", "deepseek3-671b", "deepseek3.2-671b"]) == 0
    assert "use_sparse_indexer: False -> True" in capsys.readouterr().out
    assert cli.main(["maxflops", "compare", "glm5"]) == 2
    assert "two configs" in capsys.readouterr().err
    assert cli.main(["maxflops", "compare", "glm5", "glm5:index_tpok=4"]) == 2
    assert "did you mean 'index_topk'" in capsys.readouterr().err
    assert cli.main(["maxflops", "sweep", "--model=glm5"]) == 2
    assert "--lengths" in capsys.readouterr().err


def test_sweep_the_peers_side_by_side(tmp_path, capsys):
    """--conventions: one run per convention of the same config; each total is count() under that convention, the
    ratio the exact count's to it; a plot of the totals; a bad name or a second comparison is one line."""
    lengths, names = [4096, 131072], ["maxtext", "megatron_main", "megatron_bridge"]
    argv = ["maxflops", "sweep", "--model=glm5", "--lengths=4096,131072", "--conventions=" + ",".join(names)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert all(f"total ({n})" in out[1] and f"vs {n}" in out[1] for n in names)
    for line, L in zip(out[3:], lengths):
        want = [maxflops.count(maxflops.load_config("glm5", max_target_length=L, convention=c)).per_token / 1e9
                for c in ["exact"] + names]
        cells = line.split()[-7:]
        assert cells == [f"{want[0]:,.1f}"] + [x for w in want[1:] for x in (f"{w:,.1f}", f"{want[0] / w:.2f}x")]
    path = tmp_path / "peers.png"
    assert cli.main(argv + [f"--plot={path}"]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()
    assert cli.main(argv[:-1] + ["--conventions=megatrn"]) == 2
    err = capsys.readouterr().err
    assert "unknown convention 'megatrn' (did you mean 'megatron'?)" in err and len(err.strip().splitlines()) == 1
    assert cli.main(argv + ["--compare=glm5"]) == 2
    assert "--compare or --conventions, not both" in capsys.readouterr().err


def test_plot_renders_a_png(tmp_path, capsys):
    path = tmp_path / "sweep.png"
    assert cli.main(["maxflops", "sweep", "--model=glm5", "--lengths=4096,16384,65536", f"--plot={path}",
                     "--compare=convention=maxtext"]) == 0
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def brute_runs(ids):
    out = []
    for row in ids:
        i = 0
        while i < len(row):
            j = i
            while j < len(row) and row[j] == row[i]:
                j += 1
            if row[i] != 0:
                out.append(j - i)
            i = j
    return out


def test_segment_ids_to_document_lengths():
    rng = np.random.default_rng(3)
    for _ in range(20):
        ids = np.sort(rng.integers(0, 6, size=(4, 50)), axis=1)[:, ::-1]  # ids, then padding zeros at the end
        ids = np.where(rng.random((4, 50)) < 0.05, 0, ids)  # and some padding holes
        assert maxflops.segment_lengths_from_ids(ids).tolist() == brute_runs(ids)


def test_step_reporter_mfu():
    cfg = maxflops.load_config("llama3.1-8b", max_target_length=4096, per_device_batch_size=2)
    rep = maxflops.StepReporter(cfg, peak_tflops=989)
    padded = rep.step(2.0)
    b = maxflops.count(cfg)
    assert padded.model_flops == b.total and padded.model_mfu == b.total / 2.0 / 989e12
    ids = np.zeros((2, 4096), np.int32)
    ids[0, :1000], ids[0, 1000:3000], ids[1, :4096] = 1, 2, 1
    packed = rep.step(2.0, segment_ids=ids)
    assert packed.model_flops == maxflops.count(cfg, segment_lengths=[1000, 2000, 4096]).total
    assert packed.tokens == 7096 and packed.model_mfu < padded.model_mfu
    assert "MFU" in rep.format(3, packed)
    with pytest.raises(ValueError, match="seconds"):
        rep.step(0)
    with pytest.raises(ValueError, match="peak_tflops"):
        maxflops.StepReporter(cfg, peak_tflops=0)


@pytest.mark.parametrize("peak,advice", [(989e12, "looks like FLOP/s; give 989 (TFLOP/s)"),
                                         (1.979e15, "give 1979 (TFLOP/s)"),
                                         (5e6, "give the peak in TFLOP/s"),
                                         (True, "positive finite number"), (float("inf"), "positive finite")])
def test_a_peak_in_another_unit_is_refused_saying_which(peak, advice):
    """A peak typed in FLOP/s (989e12) used to log MFU 0.00% with no word; the bench's flag reads the same."""
    cfg = maxflops.load_config("llama3.1-8b")
    with pytest.raises(ValueError, match=re.escape(advice)):
        maxflops.StepReporter(cfg, peak_tflops=peak)
    if peak is not True:
        p = subprocess.run([sys.executable, "-m", "maxflops.bench", "--peak-tflops", repr(peak), "--quick"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and advice in p.stderr, p.stderr
    assert maxflops.StepReporter(cfg, peak_tflops=20_000).peak == 20_000e12  # an FP4 peak is no slip


def test_loaded_files_count_like_the_shipped_configs():
    a = maxflops.count(maxflops.load_config(str(ROOT / "tests/fixtures/hf/glm5.json"), max_target_length=8192))
    b = maxflops.count(maxflops.load_config("glm5", max_target_length=8192))
    assert a.total == b.total


def test_step_reporter_counts_a_whole_accumulated_step_once():
    import numpy as np

    cfg = maxflops.load_config("llama3.1-8b", max_target_length=64, per_device_batch_size=2,
                               gradient_accumulation_steps=2)
    reporter = maxflops.StepReporter(cfg, peak_tflops=100)
    ids = np.zeros((4, 64), np.int32)  # two micro-batches of two rows
    ids[0, :64], ids[1, :20], ids[1, 20:50], ids[2, :7], ids[3, :64] = 1, 2, 3, 4, 5
    one = maxflops.load_config("llama3.1-8b", max_target_length=64, per_device_batch_size=1)
    docs = [64, 20, 30, 7, 64]
    assert reporter.breakdown(segment_ids=ids).total == sum(maxflops.count(one, [L]).total for L in docs)
    assert reporter.breakdown().total == 4 * maxflops.count(one).total  # padded: 4 full rows


def test_decode_kv_lengths_must_match_the_batch_and_one_token_is_singular():
    from maxflops.report import text_report

    cfg = maxflops.load_config("llama3.1-8b", mode="decode", decode_kv_length=100, per_device_batch_size=2)
    with pytest.raises(ValueError, match=r"3 sequences, but per_device_batch_size = 2"):
        maxflops.count(cfg, segment_lengths=[5, 6, 7])
    one = maxflops.load_config("llama3.1-8b", mode="decode", decode_kv_length=100, per_device_batch_size=1)
    assert "decode step: 1 new token, KV length 100" in text_report(maxflops.count(one), one)


def test_the_peak_read_from_the_device_and_the_compute_dtype(monkeypatch, capsys):
    """peak_tflops='auto': the table's dense peak for jax.devices()[0]'s kind and the step's compute dtype, said once
    in the log; a device not in the table is one error saying how to give the peak."""
    import types

    import jax

    from maxflops.peaks import device_peak
    from maxflops.reporter import _compute_dtype

    assert (device_peak("NVIDIA H100 80GB HBM3").tflops, device_peak("NVIDIA H100 80GB HBM3", "fp8").tflops) == \
        (989, 1979)
    assert device_peak("TPU v5 lite", "int8").tflops == 394
    # the PCIe cards of the same chips: their own, lower peaks (NVIDIA's datasheets, halved: dense), not the SXM's
    from maxflops.peaks import bandwidth
    assert [device_peak(k).tflops for k in ("NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA H200")] \
        == [756.5, 835.5, 835.5, 989]
    assert device_peak("NVIDIA H100 PCIe", "fp8").tflops == 1513 and "H100 PCIe" in device_peak("NVIDIA H100 PCIe").said
    assert [bandwidth(k) / 1e9 for k in ("NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H100 80GB HBM3")] == \
        [2000, 3900, 3350]
    v5e_fp8 = device_peak("TPU v5 lite", "fp8")                 # no fp8 units: its bf16 peak, said
    assert v5e_fp8.tflops == 197 and "no float8 peak for it" in v5e_fp8.said
    with pytest.raises(ValueError, match="give peak_tflops="):
        device_peak("Some New Chip")
    with pytest.raises(ValueError, match="compute dtype 'int4'"):
        device_peak("TPU v4", "int4")
    assert _compute_dtype({"quantization": "int8", "dtype": "bfloat16"}) == "int8"
    assert _compute_dtype(types.SimpleNamespace(quantization="", dtype=jax.numpy.bfloat16)) == "bfloat16"
    assert _compute_dtype(maxflops.load_config("llama3.1-8b")) == "bfloat16"

    cfg = maxflops.load_config("llama3.1-8b", per_device_batch_size=1)
    monkeypatch.setattr(jax, "devices", lambda *a: [types.SimpleNamespace(device_kind="NVIDIA H200")])
    rep = maxflops.StepReporter(cfg, peak_tflops="auto", compute_dtype="fp8")
    assert rep.peak_tflops == 1979 and "NVIDIA H200 dense float8 peak" in rep.peak_said
    s = rep.step(2.0)
    assert s.model_mfu == s.model_flops / 2.0 / 1979e12
    first, second = rep.log(1, s), rep.log(2, s)
    assert first.startswith("MFU against the NVIDIA H200 dense float8 peak") and second.startswith("step 2:")
    capsys.readouterr()
    with pytest.raises(ValueError, match="compute_dtype: read only with peak_tflops='auto'"):
        maxflops.StepReporter(cfg, peak_tflops=989, compute_dtype="fp8")
    with pytest.raises(ValueError, match="peak_tflops: 'H100'"):
        maxflops.StepReporter(cfg, peak_tflops="H100")
    monkeypatch.setattr(jax, "devices", lambda *a: [types.SimpleNamespace(device_kind="cpu")])
    with pytest.raises(ValueError, match="device 'cpu' is not in maxflops' peak table"):
        maxflops.StepReporter(cfg, peak_tflops="auto")
