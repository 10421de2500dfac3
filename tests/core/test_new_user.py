"""What a new user hit (issue 17): silent wrong numbers and documented calls that failed. Each test failed before
its fix."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest

import maxflops
from maxflops.checks import InertKeyWarning
from maxflops import masks
from repo import ROOT

FIXTURES = ROOT / "tests" / "fixtures"


def cli(*args, check_rc=0):
    p = subprocess.run([sys.executable, "-m", "maxflops", *args], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert p.returncode == check_rc, (p.stdout[-2000:], p.stderr[-2000:])
    return p


# --- 1. a misspelled key in a MaxText YAML is an error, not a warning ------------------------------------------

def test_misspelled_maxtext_yaml_key_is_an_error_naming_it(tmp_path):
    text = (FIXTURES / "maxtext" / "deepseek3-671b.yml").read_text()
    assert "base_num_decoder_layers: 61" in text
    bad = tmp_path / "ds3.yml"
    bad.write_text(text.replace("base_num_decoder_layers", "base_num_decoder_layer"))
    with pytest.raises(ValueError, match=r"ds3\.yml: key not understood: 'base_num_decoder_layer' = 61 \(did you "
                                         r"mean 'base_num_decoder_layers'\?\)"):
        maxflops.load_config(str(bad))
    p = cli(f"--model={bad}", check_rc=2)
    assert "base_num_decoder_layer" in p.stderr and "Traceback" not in p.stderr
    # counted without it only when asked, and then said
    with pytest.warns(UserWarning, match="base_num_decoder_layer"):
        cfg = maxflops.load_config(str(bad), unknown="report")
    assert cfg.num_decoder_layers == 16  # base.yml's, as MaxText itself would run the misspelled file


# --- 3. the same MaxText YAML counts the same as a file and as MaxText's config keys -------------------------------

@pytest.mark.parametrize("name", ["llama3.1-8b", "deepseek3-671b", "qwen3-next-80b-a3b"])
def test_maxtext_yaml_and_its_keys_as_a_dict_count_the_same(name):
    import yaml

    path = FIXTURES / "maxtext" / f"{name}.yml"
    via_file = maxflops.load_config(str(path))
    via_dict = maxflops.from_maxtext(yaml.safe_load(path.read_text()))
    assert via_file.per_device_batch_size == via_dict.per_device_batch_size == 12.0  # base.yml
    assert via_file.max_target_length == via_dict.max_target_length == 2048
    assert maxflops.count(via_file).total == maxflops.count(via_dict).total


# --- 4, 7. the attention pattern is a cycle of any length; the MTP modules' mixers are said explicitly ------------

@pytest.mark.parametrize("name", ["gemma3-27b", "llama4-17b-128e", "qwen3-next-80b-a3b", "deepseek4-284b"])
def test_a_pattern_longer_than_the_model_is_a_cycle(name):
    full = maxflops.load_config(name)
    pattern = full.attention_layer_pattern
    assert len(pattern) > 2
    cut = maxflops.count(full, num_decoder_layers=2)
    explicit = maxflops.count(full, num_decoder_layers=2, attention_layer_pattern=pattern[:2])
    assert cut.total == explicit.total and cut.hardware_flops == explicit.hardware_flops
    assert [r.mixer for r in cut.layers[:2]] == [r.mixer for r in explicit.layers[:2]]


def test_gemma_with_five_layers_and_an_mtp_module_reads_its_pattern_as_a_cycle():
    b = maxflops.count(maxflops.load_config("gemma3-27b", num_decoder_layers=5, mtp_num_layers=1))
    assert maxflops.load_config("gemma3-27b").attention_layer_pattern == "LLLLLG"
    # layers 0-4 are the cycle's first five letters; the MTP module copies the last layer (a window), it does not
    # take the cycle's sixth letter
    assert [r.mixer for r in b.layers] == ["window"] * 5 + ["window", ""]
    own = maxflops.count(maxflops.load_config("gemma3-27b", num_decoder_layers=5, mtp_num_layers=1,
                                              mtp_layer_pattern="G"))
    assert [r.mixer for r in own.layers][5] == "global"


def test_deepseek4_mtp_module_is_window_only():
    b = maxflops.count(maxflops.load_config("deepseek4-284b", mtp_num_layers=1))
    mtp = [r for r in b.layers if r.group == "mtp"]
    assert [(r.mixer, r.computes_index) for r in mtp] == [("window", False)]
    assert "compressor" not in mtp[0].components and "indexer_score" not in mtp[0].components
    # the window-only MTP layer costs what a window-only decoder layer costs, plus its eh projection and head
    layer0 = b.layers[0]
    assert layer0.mixer == "window"
    extra = {"mtp_eh_proj", "logits", "mhc_head"}
    assert {k: v for k, v in mtp[0].components.items() if k not in extra} == dict(layer0.components)


def test_deepseek4_config_json_counts_without_its_mtp_module():
    """transformers builds no MTP module for DeepSeek-V4: its config.json must count with mtp_num_layers=0."""
    path = FIXTURES / "hf" / "deepseek4-284b.json"
    assert len(json.loads(path.read_text())["compress_ratios"]) == 44  # 43 layers + the MTP module
    none = maxflops.count(maxflops.load_config(str(path), mtp_num_layers=0))
    one = maxflops.count(maxflops.load_config(str(path)))
    shipped = maxflops.count(maxflops.load_config("deepseek4-284b", mtp_num_layers=1))
    assert none.total == maxflops.count(maxflops.load_config("deepseek4-284b")).total
    assert one.total == shipped.total > none.total


# --- 5. sweeps, tiny batches, NaN timings ----------------------------------------------------------------------

def test_sweep_axis_keeps_every_point_of_any_key():
    from maxflops.plot import axis

    assert axis([4096, 32768, 131072]) == ([4096, 32768, 131072], True)
    assert axis([False, True]) == ([0, 1], False)  # booleans are not numbers on a log axis
    assert axis(["ideal", "dense", "blocked"]) == ([0, 1, 2], False)
    assert axis([0, 1, 2]) == ([0, 1, 2], False)  # a zero has no place on a log axis


def test_sweep_plot_of_a_boolean_key_draws_both_points(tmp_path):
    pytest.importorskip("matplotlib", reason="the 'plot' extra (a test dependency) draws sweeps")
    out = tmp_path / "s.png"
    p = cli("sweep", "--model=glm5", "--vary=use_sparse_indexer", "--values=false,true", f"--plot={out}")
    assert out.stat().st_size > 0 and "plot written" in p.stdout


def test_sweep_lengths_in_decode_vary_the_cached_length():
    p = cli("sweep", "--model=llama3.1-8b", "--config.mode=decode", "--lengths=1024,65536", "--json")
    d = json.loads(p.stdout)
    assert d["key"] == "decode_kv_length"
    totals = [run["total"] for run in d["runs"][0]]
    assert totals[0] < totals[1]
    want = [maxflops.count(maxflops.load_config("llama3.1-8b", mode="decode", decode_kv_length=kv)).total
            for kv in (1024, 65536)]
    assert totals == want
    with pytest.raises(ValueError, match=r"'max_target_length': a decode step does not read it"):
        maxflops.sweep(maxflops.load_config("llama3.1-8b", mode="decode"), "max_target_length", [1024, 2048])


@pytest.mark.parametrize("batch", [1e-7, 2.0 ** -21])
def test_a_batch_too_small_or_not_a_fraction_is_refused(batch):
    with pytest.raises(ValueError, match=r"config key 'per_device_batch_size': .* is not a fraction of a sequence "
                                         r"with denominator up to 2\^20"):
        maxflops.load_config("llama3.1-8b", per_device_batch_size=batch)


def test_fractional_batches_still_count_exactly():
    cfg = maxflops.load_config("llama3.1-8b", per_device_batch_size=0.25, max_target_length=4096)
    assert maxflops.count(cfg).total * 4 == maxflops.count(cfg, per_device_batch_size=1).total


@pytest.mark.parametrize("seconds, peak, name", [(float("nan"), 989, "seconds"), (float("inf"), 989, "seconds"),
                                                 (1.0, float("nan"), "peak_tflops"), (1.0, float("inf"), "peak_tflops"),
                                                 (1.0, True, "peak_tflops"), (-1.0, 989, "seconds")])
def test_step_reporter_refuses_non_finite_times_and_peaks(seconds, peak, name):
    cfg = maxflops.load_config("llama3.1-8b")
    with pytest.raises(ValueError, match=rf"^{name}: "):
        maxflops.StepReporter(cfg, peak_tflops=peak).step(seconds)


# --- 6. documented names exist ---------------------------------------------------------------------------------

def test_from_maxtext_is_exported():
    assert "from_maxtext" in maxflops.__all__ and maxflops.from_maxtext is maxflops.maxtext.from_maxtext


# --- 8. natural calls end in one clear error, never a traceback from inside ---------------------------------------

def test_step_reporter_log_prints_its_line_in_a_plain_script():
    code = ("import maxflops\n"
            "r = maxflops.StepReporter(maxflops.load_config('llama3.1-8b'), peak_tflops=989)\n"
            "r.log(3, r.step(1.5))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.startswith("step 3: 1.500 s, 2048 tokens, ") and "model MFU" in out


def test_step_reporter_log_to_a_logger():
    seen = []
    r = maxflops.StepReporter(maxflops.load_config("llama3.1-8b"), peak_tflops=989)
    line = r.log(1, r.step(2.0), emit=seen.append)
    assert seen == [line] and line.startswith("step 1: 2.000 s")


def test_load_config_takes_a_pathlib_path():
    assert maxflops.load_config(ROOT / "configs" / "llama3.1-8b.py").model_name == "llama3.1-8b"
    assert maxflops.load_config(FIXTURES / "hf" / "llama3.1-8b.json").emb_dim == 4096


@pytest.mark.parametrize("arg, match", [
    (None, r"load_config: expected a model name .* got None"),
    (3, r"load_config: expected a model name .* got 3"),
    ("", r"load_config: expected a model name"),
    ("no/such/file.py", r"config file 'no/such/file.py' does not exist"),
    ("no/such/dir/model", r"no/such/dir/model: no such file"),
])
def test_load_config_bad_arguments(arg, match):
    with pytest.raises(ValueError, match=match):
        maxflops.load_config(arg)


def test_a_file_with_an_unknown_extension(tmp_path):
    p = tmp_path / "model.toml"
    p.write_text("x = 1\n")
    with pytest.raises(ValueError, match=r"model\.toml: cannot tell the format from the extension '\.toml'"):
        maxflops.load_config(str(p))
    err = cli(f"--config={p}", check_rc=2).stderr
    assert "extension '.toml'" in err and "Traceback" not in err


def test_a_json_or_yaml_given_to_config_is_loaded_as_such():
    out = cli(f"--config={FIXTURES / 'hf' / 'llama3.1-8b.json'}", "--json").stdout
    assert json.loads(out)["total"] == maxflops.count(maxflops.load_config(str(FIXTURES / "hf" / "llama3.1-8b.json"))).total
    out = cli(f"--config={FIXTURES / 'maxtext' / 'llama3.1-8b.yml'}", "--json").stdout
    assert json.loads(out)["config"]["per_device_batch_size"] == 12.0


def test_a_python_file_without_get_config(tmp_path):
    p = tmp_path / "x.py"
    p.write_text("x = 1\n")
    err = cli(f"--config={p}", check_rc=2).stderr
    assert "get_config" in err and "Traceback" not in err
    with pytest.raises(ValueError, match="has no get_config"):
        maxflops.load_config(str(p))


def test_install_without_maxtext_says_what_it_needs():
    pytest.importorskip  # noqa: B018 (maxtext is never a test dependency: this checks its absence)
    code = ("import maxflops.maxtext as m\n"
            "try:\n    m.install()\nexcept ImportError as e:\n    print('ImportError:', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    if "ImportError" not in out:
        pytest.fail(f"install() did not raise without MaxText: {out!r}")
    assert "MaxText is not importable here" in out and "maxflops.from_maxtext" in out


def test_from_maxtext_errors_name_maxtext_keys():
    with pytest.raises(ValueError, match=r"^MaxText config: the keys given make an invalid model: key "
                                         r"'base_num_kv_heads' \(maxflops' 'num_kv_heads'\): 2 does not divide"):
        maxflops.from_maxtext({"decoder_block": "llama2", "base_num_query_heads": 3, "base_num_kv_heads": 2})


def test_an_all_padding_batch_names_segment_ids():
    import numpy as np

    r = maxflops.StepReporter(maxflops.load_config("llama3.1-8b", max_target_length=8), peak_tflops=989)
    with pytest.raises(ValueError, match=r"^segment_ids: every id is 0 \(padding\)"):
        r.breakdown(segment_ids=np.zeros((1, 8), np.int32))
    # a step of padding only (a padded epoch tail) is zero work, not a crash of the training loop (issue 29)
    stats = r.step(1.0, segment_ids=np.zeros((1, 8), np.int32))
    assert (stats.tokens, stats.model_flops, stats.hardware_flops, stats.model_mfu) == (0, 0, 0, 0.0)


# --- 8. huge lengths: tiles priced in closed form, per-token figures in range ---------------------------------------

# the brute-force tile counts that prove the enumeration (every tile checked pair by pair) prove the folding too
# (the compressed family's tiles: tests/families/test_compressed.py)
from brute import brute_tiles  # noqa: E402


def test_folded_tiles_equal_brute_force(monkeypatch):
    monkeypatch.setattr(masks, "ENUMERATE_ROWS", -1)  # every length folded by its period
    rng = random.Random(17)
    for _ in range(300):
        kind = rng.choice(["global", "window", "chunk", "bidirectional"])
        L, bq, bkv, span = rng.randint(1, 90), rng.randint(1, 12), rng.randint(1, 12), rng.randint(1, 30)
        assert masks.blocked(kind, span, L, bq, bkv) == brute_tiles(kind, L, span, bq, bkv), (kind, L, span, bq, bkv)


def test_blocked_attention_at_a_trillion_tokens_in_closed_form():
    L, B = 2 ** 40, 512
    R = L // B
    # global causal, square tiles dividing L: row block r touches r + 1 full tiles
    assert masks.blocked("global", 0, L, B, B) == B * B * R * (R + 1) // 2
    assert masks.blocked("bidirectional", 0, L, B, B) == L * L
    # chunks of C = 16 tiles: within each chunk, row block j touches j + 1 tiles
    C = 16 * B
    assert masks.blocked("chunk", C, L, B, B) == (L // C) * B * B * 16 * 17 // 2
    # a window of W = 4 tiles: row block r touches min(r, 4) + 1 tiles (the W - 1 keys before its first row reach
    # back into a fifth tile once r >= 4)
    W = 4 * B
    assert masks.blocked("window", W, L, B, B) == B * B * sum(min(r, 4) + 1 for r in range(5)) + B * B * 5 * (R - 5)
    cfg = maxflops.load_config("llama3.1-8b", max_target_length=L, attention_impl="blocked", attention_block_q=B,
                               attention_block_kv=B)
    b = maxflops.count(cfg)
    assert b.hardware_flops > b.total > 0


def test_lengths_up_to_two_to_the_62_count_and_report():
    from maxflops.report import text_report

    for name in maxflops.available_models():
        cfg = maxflops.load_config(name, max_target_length=2 ** 62, attention_impl="blocked")
        b = maxflops.count(cfg)
        assert math.isfinite(b.per_token) and b.per_token > 0
        text_report(b, cfg)
    with pytest.raises(ValueError, match=r"config key 'max_target_length': must be at most 2\*\*62"):
        maxflops.load_config("llama3.1-8b", max_target_length=2 ** 63)


# --- found by the mutation run (tests/mutation) ------------------------------------------------------------------

def test_kv_shared_layers_are_refused_with_mla():
    """MLA layers would still project and cache their latent: KV sharing is modelled for GQA only."""
    with pytest.raises(ValueError, match=r"config key 'num_kv_shared_layers': 1 is not modelled with "
                                         r"attention_type='mla'"):
        maxflops.model_config(attention_type="mla", num_decoder_layers=2, num_kv_shared_layers=1, q_lora_rank=8,
                              kv_lora_rank=10, qk_nope_head_dim=4, qk_rope_head_dim=3, v_head_dim=6)


def test_decode_traffic_streams_the_engram_conv_kernel():
    """An Engram layer streams its key/value projections and its conv kernel: G streams x D x kernel taps."""
    base = dict(num_decoder_layers=2, emb_dim=32, mhc_expansion_rate=2, engram_num_heads=2, engram_head_dim=3,
                engram_max_ngram_size=3, engram_kernel_size=4, weight_bytes=1, mode="decode", decode_kv_length=5,
                mhc_flops=False)
    with pytest.warns(InertKeyWarning, match="no layer runs Engram"):   # (its keys alone change nothing)
        without = maxflops.decode_traffic(maxflops.model_config(**base)).components["weights"]
    with_engram = maxflops.decode_traffic(maxflops.model_config(**base, engram_layers=[1])).components["weights"]
    e_in = 2 * 3 * (3 - 1)  # heads x head_dim x (max n-gram - 1)
    key_value = e_in * (2 * 32 + 32)  # the key projection e_in -> G*D and the value projection e_in -> D
    assert with_engram - without == key_value + 2 * 32 * 4
