"""Every input read as its author meant it (issue 29): which vocabulary a mapping is read in, the values each key
takes, and what a loaded file also holds. Each test failed before its fix; the input-path matrix at the end gives
one model, one misspelled key, one inert override and one bad value on every path and wants the same answer."""

from __future__ import annotations

import json
from fractions import Fraction
import subprocess
import sys
import types

import pytest

import maxflops
from maxflops import loaders
from maxflops.checks import InertKeyWarning
from maxflops.schema import ACTIVATION_NAMES
from repo import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
HF_REAL = ROOT.parent / "shared" / "hf-real"

LLAMA = dict(num_decoder_layers=32, emb_dim=4096, vocab_size=128256, num_query_heads=32, num_kv_heads=8,
             mlp_dim=14336, head_dim=128, max_target_length=2048)


def cli(*args, rc=0):
    p = subprocess.run([sys.executable, "-m", "maxflops", *args], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert p.returncode == rc, (p.stdout[-2000:], p.stderr[-2000:])
    return p


# --- 1. a mapping's vocabulary does not flip on one trainer key ------------------------------------------------

@pytest.mark.parametrize("extra", [dict(learning_rate=1e-4), dict(steps=10), dict(dtype="bfloat16"),
                                   dict(run_name="x"), dict(scan_layers=True)])
def test_a_trainer_key_beside_maxflops_keys_is_an_error_naming_it(extra):
    ((key, value),) = extra.items()
    want = maxflops.count(maxflops.model_config(**LLAMA)).total
    assert maxflops.count(dict(LLAMA)).total == want
    for given in ({**LLAMA, **extra}, types.SimpleNamespace(**LLAMA, **extra)):
        with pytest.raises(ValueError, match=rf"config key '{key}' = {value!r}: MaxText's, not maxflops'.*"
                                             r"decoder_block or a base_\* width"):
            maxflops.count(given)
    with pytest.raises(ValueError, match=key):
        maxflops.sweep({**LLAMA, **extra}, "max_target_length", [1024])
    with pytest.raises(ValueError, match=key):
        maxflops.StepReporter({**LLAMA, **extra}, peak_tflops=989.0)


def test_a_user_configdict_follows_the_same_rule():
    from ml_collections import config_dict

    with pytest.raises(ValueError, match="'learning_rate' = 0.0001: MaxText's"):
        maxflops.count(config_dict.ConfigDict({**LLAMA, "learning_rate": 1e-4}))


def test_a_mapping_naming_decoder_block_or_a_base_width_is_maxtexts():
    from maxflops.maxtext import is_maxtext_config

    assert is_maxtext_config({"decoder_block": "llama2", "learning_rate": 1e-4})
    assert is_maxtext_config({"base_emb_dim": 4096})
    assert not is_maxtext_config({**LLAMA, "learning_rate": 1e-4})
    # MaxText's keys beside its signature are read in MaxText's vocabulary (base.yml for the rest: batch 12)
    mt = {"decoder_block": "llama2", "base_emb_dim": 4096, "base_num_query_heads": 32, "base_num_kv_heads": 8,
          "base_mlp_dim": 14336, "base_num_decoder_layers": 32, "head_dim": 128, "vocab_size": 128256,
          "learning_rate": 1e-4}
    assert maxflops.count(mt).tokens == 12 * 2048


# --- 2. activation names are checked on every path -------------------------------------------------------------

BAD_ACTIVATIONS = [(("swiglu",), "'swiglu'.*a gated FFN is two entries: \\['silu', 'linear'\\]"),
                   (("silu", "linaer"), "'linaer'.*did you mean 'linear'"), (["banana"], "'banana'")]


@pytest.mark.parametrize("value,msg", BAD_ACTIVATIONS)
def test_an_unknown_activation_is_refused_naming_the_key_and_the_value(value, msg):
    cfg = maxflops.load_config("llama3.1-8b")
    with pytest.raises(ValueError, match=f"config key 'mlp_activations': {msg}"):
        maxflops.count(cfg, mlp_activations=value)
    with pytest.raises(ValueError, match=msg):
        maxflops.model_config(**LLAMA, mlp_activations=value)
    with pytest.raises(ValueError, match=msg):  # MaxText's vocabulary
        maxflops.from_maxtext({"decoder_block": "llama2", "mlp_activations": list(value)})
    assert maxflops.count(cfg, mlp_activations=("gelu", "linear")).total == maxflops.count(cfg).total


def test_the_activation_names_are_flaxs_shape_keeping_ones_and_the_elementwise_extras():
    import flax.linen as nn
    import flax.linen.activation as act
    import jax.numpy as jnp

    x = jnp.ones((2, 3))
    flax_names = set(ACTIVATION_NAMES[1:ACTIVATION_NAMES.index("tanh") + 1])
    for name in flax_names:
        assert getattr(nn, name)(x).shape == x.shape, name  # MaxText's getattr(flax.linen, name) runs it
    shape_keeping = set()
    for name in dir(act):
        fn = getattr(act, name)
        if name.startswith("_") or isinstance(fn, type) or not callable(fn) or name in ("compact",):
            continue
        try:
            if fn(x).shape == x.shape:
                shape_keeping.add(name)
        except Exception:  # noqa: BLE001 (not an activation of one array)
            pass
    assert shape_keeping == flax_names
    assert ACTIVATION_NAMES[0] == "linear"  # MaxText's identity


def test_a_hugging_face_activation_transformers_lacks_is_refused(tmp_path):
    data = json.loads((FIXTURES / "hf" / "llama3.1-8b.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**data, "hidden_act": "gelu_fastt"}))
    with pytest.raises(ValueError, match=r"key 'hidden_act' = 'gelu_fastt': not an activation transformers 5.24 builds.*"
                                         r"did you mean 'gelu_fast'"):
        maxflops.load_config(str(path))
    path.write_text(json.dumps({**data, "hidden_act": "gelu_pytorch_tanh"}))
    assert maxflops.load_config(str(path)).mlp_activations == ("gelu", "linear")


# --- 3. a multimodal Hugging Face file says what it does not count ----------------------------------------------

@pytest.mark.parametrize("name", ["gemma3-27b", "llama4-17b-128e"])
def test_a_multimodal_hugging_face_file_names_its_towers(name):
    cfg = maxflops.load_config(str(FIXTURES / "hf" / f"{name}.json"))
    assert any("vision encoder" in p and p.startswith("model: ") for p in cfg.not_priced), cfg.not_priced
    assert "NOT COUNTED: the vision encoder" in cli(f"--config={FIXTURES / 'hf' / f'{name}.json'}").stdout
    text = maxflops.load_config(str(FIXTURES / "hf" / "llama3.1-8b.json"))
    assert text.not_priced == ()


def test_a_wrapper_without_vision_config_has_its_class_default_tower(tmp_path):
    data = json.loads((FIXTURES / "hf" / "llama4-17b-128e.json").read_text())
    data.pop("vision_config", None)
    (tmp_path / "config.json").write_text(json.dumps(data))
    cfg = maxflops.load_config(str(tmp_path / "config.json"))
    assert cfg.not_priced == ("model: the vision encoder and its projector (vision_config: the class default); "
                              "maxflops counts the text decoder only",)


@pytest.mark.skipif(not HF_REAL.is_dir(), reason="../shared/hf-real (real published config.json files) is absent")
def test_published_multimodal_files_name_their_towers_and_a_null_audio_config_none():
    for name in ("qwen3-vl-8b-instruct", "qwen3-vl-30b-a3b-instruct", "llama-4-scout-17b-16e-instruct"):
        cfg = maxflops.load_config(str(HF_REAL / name / "config.json"))
        assert [p for p in cfg.not_priced if "vision encoder" in p], name


# --- 5. a key the file gives is read as transformers' config class reads it -------------------------------------

@pytest.mark.skipif(not HF_REAL.is_dir(), reason="../shared/hf-real (real published config.json files) is absent")
def test_falcon_mamba_as_published_keeps_its_intermediate_size():
    """FalconMambaConfig.__post_init__ derives intermediate_size = expand x hidden_size, then PreTrainedConfig's sets
    the file's intermediate_size over it: transformers 5.24 builds in_proj 4096 -> 16384 from this file, 7,272,665,088
    parameters on the meta device (published 7.27B) = 64 layers x 105,312,256 + two 65024 x 4096 tables + a norm."""
    cfg = maxflops.load_config(str(HF_REAL / "falcon-mamba-7b" / "config.json"))
    D, E, R, N, K, V, L, T = 4096, 8192, 256, 16, 4, 65024, 64, 2048
    per_layer = D * 2 * E + E * (R + 2 * N) + R * E + E * D + E * K + E + E + E * N + E + D  # in, x, dt, out, conv..
    assert L * per_layer + 2 * V * D + D == 7_272_665_088
    assert cfg.mamba1_inner_dim == E
    b = maxflops.count(cfg, mode="prefill", max_target_length=T)
    matmul_and_conv = L * (D * 2 * E + E * (R + 2 * N) + R * E + E * D) + D * V  # per token; the conv below
    causal_conv = L * E * sum(min(t + 1, K) for t in range(T))  # the first K - 1 tokens see fewer taps
    assert b.learnable_weight == 2 * (matmul_and_conv * T + causal_conv)


def test_mamba_without_intermediate_size_derives_it(tmp_path):
    data = json.loads((HF_REAL / "falcon-mamba-7b" / "config.json").read_text()) if HF_REAL.is_dir() else {
        "model_type": "falcon_mamba", "hidden_size": 4096, "num_hidden_layers": 64, "vocab_size": 65024,
        "expand": 16, "intermediate_size": 8192}
    data.pop("intermediate_size")
    (tmp_path / "config.json").write_text(json.dumps(data))
    assert maxflops.load_config(str(tmp_path / "config.json")).mamba1_inner_dim == 16 * 4096



# --- 7 and 10. the trainer's step line: how packed rows are priced, an MFU over 100%, a padding-only step -----

def test_step_reporter_prices_packed_rows_as_maxtexts_trainer_and_says_so():
    import numpy as np

    cfg = maxflops.load_config("llama3.1-8b", max_target_length=8192, per_device_batch_size=4)
    ids = np.zeros((4, 8192), np.int32)
    for row in range(4):
        ids[row, :5500] = 1  # rows 67% filled
    docs = [5500] * 4
    row = maxflops.StepReporter(cfg, peak_tflops=989)
    varlen = maxflops.StepReporter(cfg, peak_tflops=989, packed_kernel="varlen")
    a, b = row.step(10.0, segment_ids=ids), varlen.step(10.0, segment_ids=ids)
    assert a.hardware_flops == maxflops.count(cfg, docs, packed_kernel="row").hardware_flops
    assert b.hardware_flops == maxflops.count(cfg, docs, packed_kernel="varlen").hardware_flops
    assert a.hardware_flops > b.hardware_flops and a.model_flops == b.model_flops
    assert (a.packed_kernel, b.packed_kernel, row.step(10.0).packed_kernel) == ("row", "varlen", None)
    assert row.format(1, a).endswith("(packed rows priced whole)")
    assert varlen.format(1, b).endswith("(packed documents priced varlen)")
    assert "packed" not in row.format(1, row.step(10.0))
    with pytest.raises(ValueError, match="packed_kernel: 'thd'"):
        maxflops.StepReporter(cfg, peak_tflops=989, packed_kernel="thd")


def test_an_mfu_over_100_percent_is_flagged_once():
    cfg = maxflops.load_config("llama3.1-8b", max_target_length=4096)
    r = maxflops.StepReporter(cfg, peak_tflops=0.989)  # a peak entered 1000x off
    with pytest.warns(UserWarning, match=r"over 100%: is peak_tflops=0.989 the device's dense peak"):
        s = r.step(1.0)
    assert s.over_peak and "[MFU over 100%: check peak_tflops" in r.format(1, s)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r.step(1.0)  # said once
    fine = maxflops.StepReporter(cfg, peak_tflops=989).step(1.0)
    assert not fine.over_peak and "over 100%" not in r.format(1, fine)


def test_step_lengths_are_the_whole_steps_and_segment_lengths_one_micro_batchs():
    cfg = maxflops.load_config("llama3.1-8b", max_target_length=64, per_device_batch_size=2,
                               gradient_accumulation_steps=2)
    r = maxflops.StepReporter(cfg, peak_tflops=100)
    docs = [64, 20, 30, 7, 64]
    one = maxflops.load_config("llama3.1-8b", max_target_length=64, per_device_batch_size=1)
    assert r.step(1.0, step_lengths=docs).model_flops == sum(maxflops.count(one, [L]).total for L in docs)
    with pytest.raises(ValueError, match=r"segment_lengths: in count\(\) the documents of one micro-batch.*"
                                         "step_lengths="):
        r.step(1.0, segment_lengths=docs)
    single = maxflops.StepReporter(maxflops.load_config("llama3.1-8b", max_target_length=64), peak_tflops=100)
    assert single.step(1.0, segment_lengths=[64]).model_flops == single.step(1.0, step_lengths=[64]).model_flops
    assert single.step(1.0, step_lengths=[]).tokens == 0  # padding only: zero work
    assert single.step(1.0, step_lengths=(n for n in [64])).model_flops == single.step(1.0, [64]).model_flops


# --- 8. a grid sweep says its size and refuses a typo's ----------------------------------------------------------

def test_a_grid_past_the_limit_is_refused_naming_the_flags_before_it_starts():
    p = cli("sweep", "--model=llama3.1-8b", "--lengths=1:100000000:1", "--batches=1:100:1", rc=2)
    assert ("--lengths=1:100000000:1 x --batches=1:100:1 is 100,000,000 x 100 = 10,000,000,000 points, over the "
            "limit of 10,000,000") in p.stderr and "Traceback" not in p.stderr
    head = cli("sweep", "--model=llama3.1-8b", "--lengths=1024:2048:1", "--batches=1:2:1").stdout.splitlines()[0]
    assert head.endswith("1,025 lengths x 2 batches = 2,050 points")


# --- 11. errors that help ----------------------------------------------------------------------------------------

def test_errors_name_what_to_do():
    cfg = maxflops.load_config("llama3.1-8b")
    with pytest.raises(ValueError, match=r"sweep: values of 'max_target_length': expected a list of values, got "
                                         r"4096 \(int\); for one value, pass \[4096\]"):
        maxflops.sweep(cfg, "max_target_length", 4096)
    with pytest.raises(ValueError, match=r"got a 311-digit number \(about 2\*\*1030\)$"):
        maxflops.count(cfg, max_target_length=2 ** 1030)
    # a generator of lengths is lengths
    assert maxflops.count(cfg, segment_lengths=(n for n in (100, 200))).total == \
        maxflops.count(cfg, segment_lengths=[100, 200]).total
    # MLA's FLOPs never read num_kv_heads: GQA's divisibility rule does not refuse it
    ds = maxflops.load_config("deepseek3-671b")
    assert maxflops.count(ds, num_kv_heads=7).total == maxflops.count(ds).total
    with pytest.raises(ValueError, match="'num_kv_heads': 7 does not divide"):
        maxflops.count(cfg, num_kv_heads=7)


def test_cli_length_ranges_without_batches_and_unknown_report(tmp_path):
    out = cli("sweep", "--model=llama3.1-8b", "--lengths=1024:4096:1024", "--json").stdout
    assert json.loads(out)["values"] == [1024, 2048, 3072, 4096]
    data = json.loads((FIXTURES / "hf" / "llama3.1-8b.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**data, "frob": 1}))  # a key no transformers code reads: counted, and said
    assert "IGNORED: the file's frob (no transformers llama code reads it)" in cli(f"--config={path}").stdout
    path.write_text(json.dumps({**data, "is_causal": False}))  # a key it reads, not understood: refused
    err = cli(f"--config={path}", rc=2).stderr
    assert "'is_causal' = False" in err and "--unknown=report" in err
    p = cli(f"--config={path}", "--unknown=report")
    assert "is_causal" in p.stderr and "total" in p.stdout
    assert "--unknown=maybe" in cli(f"--config={path}", "--unknown=maybe", rc=2).stderr
    # every subcommand reads a file with the same flags: compare and sweep's --compare=MODEL take --unknown too
    err = cli("compare", str(path), "llama3.1-8b", rc=2).stderr
    assert "'is_causal' = False" in err and "--unknown=report" in err
    p = cli("compare", str(path), "llama3.1-8b", "--unknown=report")
    assert "is_causal" in p.stderr and "qkv_proj" in p.stdout
    assert "--unknown=maybe" in cli("compare", str(path), "llama3.1-8b", "--unknown=maybe", rc=2).stderr
    p = cli("sweep", "--model=llama3.1-8b", "--lengths=1024", f"--compare={path}", "--unknown=report")
    assert "is_causal" in p.stderr and "1,024" in p.stdout
    assert "--unknown=error|report" in cli("--help").stdout


def test_a_nemotron_h_file_with_sliding_window_counts_as_transformers_runs_it(tmp_path):
    """NemotronHConfig has a sliding_window field; transformers 5.24's modeling_nemotron_h never reads it."""
    data = json.loads((FIXTURES / "hf" / "nemotron-h-8b.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**data, "sliding_window": 1024}))
    want = maxflops.count(maxflops.load_config(str(FIXTURES / "hf" / "nemotron-h-8b.json"))).total
    assert maxflops.count(maxflops.load_config(str(path))).total == want


# --- 9. an explicit key the model does not read is said, on every path -------------------------------------------

INERT = [("sliding_window_size", 1024, "no layer of attention_layer_pattern"),
         ("chunk_attn_window_size", 512, "no layer is chunked"),
         ("shared_experts", 1, "no routed experts"), ("moe_mlp_dim", 2048, "no routed experts"),
         ("kv_lora_rank", 256, "attention_type is not 'mla'"), ("index_topk", 64, "runs no indexer"),
         ("moe_latent_size", 1024, "no routed experts"), ("short_conv_kernel", 4, "no layer is a short conv"),
         ("indexer_loss_pairs", "selected", "the DSA indexer's KL loss")]


@pytest.mark.parametrize("key,value,why", INERT, ids=[k for k, _, _ in INERT])
def test_an_inert_override_is_said_on_every_path(tmp_path, key, value, why):
    want = rf"config key '{key}' = {value!r} changes nothing here: .*{why}"
    cfg = maxflops.load_config("llama3.1-8b")
    with pytest.warns(InertKeyWarning, match=want):
        maxflops.count(cfg, **{key: value})
    with pytest.warns(InertKeyWarning, match=want):
        maxflops.load_config("llama3.1-8b", **{key: value})
    with pytest.warns(InertKeyWarning, match=want):
        maxflops.model_config(**LLAMA, **{key: value})
    with pytest.warns(InertKeyWarning, match=want):
        maxflops.from_maxtext({"decoder_block": "llama2"}, **{key: value})
    file = tmp_path / "mine.py"
    file.write_text("import maxflops\n\ndef get_config():\n"
                    f"    return maxflops.model_config(num_decoder_layers=2, {key}={value!r})\n")
    with pytest.warns(InertKeyWarning, match=want):
        maxflops.load_config(str(file))
    err = cli("--model=llama3.1-8b", f"--config.{key}={value}").stderr
    assert err.startswith(f"maxflops: warning: config key '{key}' = {value!r} changes nothing here") and \
        "Traceback" not in err and err.count("\n") == 1


def test_a_key_that_is_read_or_a_files_own_key_is_not_said():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", InertKeyWarning)
        maxflops.count(maxflops.load_config("gpt-oss-120b"), sliding_window_size=256)  # it has windowed layers
        maxflops.count(maxflops.load_config("deepseek3.2-671b"), index_topk=1024, kv_lora_rank=256)
        maxflops.count(maxflops.load_config("deepseek4-284b"), q_lora_rank=512)  # compressed attention reads it
        for path in sorted((FIXTURES / "hf").glob("*.json")) + sorted((FIXTURES / "maxtext").glob("*.yml")):
            maxflops.load_config(str(path))  # a file's keys are not overrides
        for name in maxflops.available_models():
            maxflops.load_config(name)  # the shipped configs set no key their model does not read


# --- the input-path matrix: one model on every path, and the same mistakes on each --------------------------------

STEP = dict(per_device_batch_size=1, max_target_length=2048, remat_policy="full")
MAXTEXT_STEP = dict(per_device_batch_size=1, max_target_length=2048)  # (base.yml's remat_policy is 'full')


class RecordedObject:
    """MaxText's HyperParameters as recorded by tests/fixtures/maxtext_real/generate.py (get_keys and attributes)."""

    def __init__(self, keys):
        self._keys = dict(keys)

    def __getattr__(self, name):
        try:
            return self.__dict__["_keys"][name]
        except KeyError:
            raise AttributeError(name) from None

    def get_keys(self):
        return self._keys


def _maxtext_yaml_keys():
    import yaml

    return yaml.safe_load((FIXTURES / "maxtext" / "llama3.1-8b.yml").read_text())


def _py_file(tmp_path, body: str) -> str:
    path = tmp_path / "model.py"
    path.write_text(f"import maxflops\n\n\ndef get_config():\n    return maxflops.model_config({body})\n")
    return str(path)


def _cli_json(*flags):
    return json.loads(cli(*flags, "--json").stdout)


def test_one_model_counts_the_same_on_every_path(tmp_path):
    keys = dict(num_decoder_layers=32, emb_dim=4096, vocab_size=128256, num_query_heads=32, num_kv_heads=8,
                mlp_dim=14336, head_dim=128)
    want = maxflops.count(maxflops.model_config(**keys, **STEP))
    recorded = json.loads((FIXTURES / "maxtext_real" / "maxtext_base_keys.json").read_text())
    recorded.update(json.loads((FIXTURES / "maxtext_real" / "maxtext_models.json").read_text())["models"]
                    ["llama3.1-8b"]["keys"])
    recorded.update(MAXTEXT_STEP)
    body = ", ".join(f"{k}={v!r}" for k, v in {**keys, **STEP}.items())
    paths = {
        "python overrides": maxflops.count(keys, **STEP),
        "ml_collections file": maxflops.count(maxflops.load_config(_py_file(tmp_path, body))),
        "MaxText YAML": maxflops.count(maxflops.load_config(str(FIXTURES / "maxtext" / "llama3.1-8b.yml"),
                                                            **MAXTEXT_STEP)),
        "MaxText dict": maxflops.count({**_maxtext_yaml_keys(), **MAXTEXT_STEP}),
        "MaxText object (recorded)": maxflops.count(RecordedObject(recorded)),
        "Hugging Face config.json": maxflops.count(maxflops.load_config(str(FIXTURES / "hf" / "llama3.1-8b.json"),
                                                                        **STEP)),
    }
    for where, b in paths.items():
        assert (b.total, b.learnable_weight, b.attention, b.hardware_flops) == (
            want.total, want.learnable_weight, want.attention, want.hardware_flops), where
    flags = [f"--config.{k}={v}" for k, v in {**keys, **STEP}.items()]
    got = _cli_json(f"--config={_py_file(tmp_path, '')}", *flags)
    assert (got["total"], got["hardware_flops"]) == (want.total, want.hardware_flops)


def test_the_same_mistakes_get_the_same_answer_on_every_path(tmp_path):
    yml, hf = FIXTURES / "maxtext" / "llama3.1-8b.yml", FIXTURES / "hf" / "llama3.1-8b.json"
    # a misspelled key: an error naming it, on every path
    bad = {"max_target_lenght": 4096}
    text = yml.read_text() + "\nmax_target_lenght: 4096\n"
    (tmp_path / "typo.yml").write_text(text)
    (tmp_path / "typo").mkdir()
    (tmp_path / "typo" / "config.json").write_text(json.dumps({**json.loads(hf.read_text()), **bad}))
    attempts = {
        "python": lambda: maxflops.count(maxflops.load_config("llama3.1-8b"), **bad),
        "model_config": lambda: maxflops.model_config(**bad),
        "ml_collections file": lambda: maxflops.load_config(_py_file(tmp_path, "max_target_lenght=4096")),
        "MaxText YAML": lambda: maxflops.load_config(str(tmp_path / "typo.yml")),
        "MaxText dict": lambda: maxflops.count({**_maxtext_yaml_keys(), **bad}),
    }
    for where, attempt in attempts.items():
        with pytest.raises(ValueError, match="max_target_lenght") as e:
            attempt()
        assert "4096" in str(e.value) or "unknown config key" in str(e.value), where
    assert "max_target_lenght" in cli("--model=llama3.1-8b", "--config.max_target_lenght=4096", rc=2).stderr
    # a Hugging Face file is read as transformers reads it: no code reads that key, so it is counted without and said
    said = maxflops.load_config(str(tmp_path / "typo" / "config.json")).not_priced
    assert said == ("ignored: the file's max_target_lenght (no transformers llama code reads it)",)
    # an inert override: said on every path that takes one (a value no other test gives: count() says it once per
    # distinct override set, as it caches what it resolved)
    inert = {"sliding_window_size": 777}
    for where, attempt in {
        "python": lambda: maxflops.count(maxflops.load_config("llama3.1-8b"), **inert),
        "ml_collections file": lambda: maxflops.load_config(_py_file(tmp_path, "sliding_window_size=777")),
        "MaxText YAML": lambda: maxflops.load_config(str(yml), **inert),
        "MaxText dict": lambda: maxflops.from_maxtext(_maxtext_yaml_keys(), **inert),
        "Hugging Face file": lambda: maxflops.load_config(str(hf), **inert),
    }.items():
        with pytest.warns(InertKeyWarning, match="'sliding_window_size' = 777 changes nothing here"):
            attempt()
    assert "changes nothing here" in cli("--model=llama3.1-8b", "--config.sliding_window_size=777").stderr
    # a bad value: an error naming the key and the value
    (tmp_path / "act.yml").write_text(yml.read_text().replace('["silu","linear"]', '["banana"]'))
    (tmp_path / "act").mkdir()
    (tmp_path / "act" / "config.json").write_text(json.dumps({**json.loads(hf.read_text()), "hidden_act": "banana"}))
    for where, attempt in {
        "python": lambda: maxflops.count(maxflops.load_config("llama3.1-8b"), mlp_activations=["banana"]),
        "ml_collections file": lambda: maxflops.load_config(_py_file(tmp_path, "mlp_activations=['banana']")),
        "MaxText YAML": lambda: maxflops.load_config(str(tmp_path / "act.yml")),
        "MaxText dict": lambda: maxflops.count({**_maxtext_yaml_keys(), "mlp_activations": ["banana"]}),
        "Hugging Face file": lambda: maxflops.load_config(str(tmp_path / "act" / "config.json")),
    }.items():
        with pytest.raises(ValueError, match=r"'(mlp_activations|hidden_act)'.*'banana'"):
            attempt()
    err = cli("--model=llama3.1-8b", "--config.mlp_activations=banana", rc=2).stderr
    assert "'mlp_activations': 'banana'" in err


# --- 4. a quantized file's decode bytes read each weight as the file stores it --------------------------------------

def test_a_quantized_file_prices_its_weights_as_stored(tmp_path):
    """Llama 3.1 8B with DeepSeek's FP8 layout (e4m3, a float32 scale per 128 x 128 block): every decoder matrix at
    1 + 4/16384 bytes, the head kept at bfloat16 (transformers' FP8 quantizer keeps it when the file names nothing
    to skip), the embedding rows too. The bytes, from the widths by hand."""
    data = json.loads((FIXTURES / "hf" / "llama3.1-8b.json").read_text())
    data["quantization_config"] = {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}
    (tmp_path / "config.json").write_text(json.dumps(data))
    cfg = maxflops.load_config(str(tmp_path / "config.json"), mode="decode", decode_kv_length=4096)
    assert cfg.not_priced == ()
    assert cfg.weight_bytes_rules == tuple(f"{g}=4097/4096" for g in ("attention", "mlp", "moe_routed", "moe_shared"))
    D, L, H, KV, hd, F, V = 4096, 32, 32, 8, 128, 14336, 128256
    layer = D * H * hd + 2 * D * KV * hd + H * hd * D + 3 * D * F  # q, k, v, o; gate, up, down
    t = maxflops.decode_traffic(cfg)
    assert t.components["weights"] == -(-L * layer * Fraction(4097, 4096) // 1) + D * V * 2
    plain = maxflops.decode_traffic(maxflops.load_config(str(FIXTURES / "hf" / "llama3.1-8b.json"), mode="decode",
                                                         decode_kv_length=4096))
    assert plain.components["weights"] == L * layer * 2 + D * V * 2
    out = cli(f"--config={tmp_path / 'config.json'}", "--config.mode=decode", "--config.decode_kv_length=4096").stdout
    assert "weight_bytes_rules, over weight_bytes): attention=4097/4096, mlp=4097/4096" in out
    assert "bytes per element: weight_bytes 2, kv_cache_bytes 2" in out
    plain_cfg = maxflops.load_config(str(FIXTURES / "hf" / "llama3.1-8b.json"))
    assert maxflops.count(cfg, mode="train").total == maxflops.count(plain_cfg).total  # FLOPs are the same
    # a method maxflops does not read is said, and every weight priced at weight_bytes
    data["quantization_config"] = {"quant_method": "hqq", "nbits": 4}
    (tmp_path / "config.json").write_text(json.dumps(data))
    cfg = maxflops.load_config(str(tmp_path / "config.json"))
    assert cfg.weight_bytes_rules == () and cfg.not_priced[0].startswith(
        "traffic: the file's quantized weights (quantization_config: hqq, a method maxflops does not read)")
    # a method read whose skip list keeps every weight: no rule, and nothing to say
    data["quantization_config"] = {"quant_method": "fp8", "weight_block_size": [128, 128],
                                   "modules_to_not_convert": ["model.layers", "lm_head"]}
    (tmp_path / "config.json").write_text(json.dumps(data))
    cfg = maxflops.load_config(str(tmp_path / "config.json"))
    assert cfg.weight_bytes_rules == () and cfg.not_priced == ()


def test_maxtext_quantization_is_said_on_the_decode_bytes():
    """MaxText's quantization and quantize_kvcache change what a decode step reads, not the FLOPs: said, by value."""
    keys = {**_maxtext_yaml_keys(), "quantization": "int8", "quantize_kvcache": True, "kv_quant_dtype": "int4"}
    cfg = maxflops.maxtext.from_maxtext(keys)
    assert "traffic: MaxText's quantization='int8'; decode weight bytes are priced at weight_bytes=2 (set " \
           "weight_bytes_rules for the stored sizes)" in cfg.not_priced
    assert "traffic: MaxText's quantize_kvcache (kv_quant_dtype='int4'); the KV cache is priced at kv_cache_bytes=2" \
        in cfg.not_priced
    assert maxflops.count(keys).total == maxflops.count(_maxtext_yaml_keys()).total
    assert not [n for n in maxflops.maxtext.from_maxtext(_maxtext_yaml_keys()).not_priced if n.startswith("traffic")]


def test_weight_byte_rules_by_group_and_layer():
    """Rules apply in order over weight_bytes, by group and by 0-based layer; each group's bytes from the widths."""
    cfg = maxflops.model_config(num_decoder_layers=4, emb_dim=16, num_query_heads=2, num_kv_heads=1, head_dim=8,
                                mlp_dim=24, num_experts=4, num_experts_per_tok=2, moe_mlp_dim=12, shared_experts=1,
                                first_num_dense_layers=1, vocab_size=50, mode="decode", decode_kv_length=5,
                                per_device_batch_size=1)
    D, attn, dense, expert, router, head = 16, 16 * 16 + 2 * 16 * 8 + 16 * 16, 3 * 16 * 24, 3 * 16 * 12, 16 * 4, 16 * 50
    reached = 2  # one new token, top-2: two experts read
    per_layer = {0: {"attention": attn, "mlp": dense}}
    for i in (1, 2, 3):
        per_layer[i] = {"attention": attn, "moe_routed": reached * expert, "moe_shared": expert,
                        "moe_router": router}
    rules = ("*=1", "moe_routed=17/32", "attention@0+2-3=9/16")
    size = {"*": Fraction(1), "moe_routed": Fraction(17, 32)}
    want = Fraction(0)
    for i, groups in per_layer.items():
        for g, n in groups.items():
            want += n * (Fraction(9, 16) if g == "attention" and i in (0, 2, 3) else size.get(g, size["*"]))
    want += head + D  # the head and the new token's embedding row: '*' (every layer and what is no layer's)
    t = maxflops.decode_traffic(cfg, weight_bytes_rules=rules)
    assert t.components["weights"] + t.components["embeddings"] == -(-want // 1)
    base = maxflops.decode_traffic(cfg)
    assert base.components["weights"] + base.components["embeddings"] == 2 * (
        sum(sum(g.values()) for g in per_layer.values()) + head + D)


@pytest.mark.parametrize("rule, match", [
    ("experts=1", r"'experts' is not one of 'attention'"), ("mlp@3-1=1", r"'3-1' runs backwards"),
    ("mlp@x=1", r"layers 'x': write 0-based layer numbers"), ("mlp=half", r"'half' is not a number of bytes"),
    ("mlp=0", r"bytes per element must be positive"), ("mlp", r"is not '<component>\[@<layers>\]=<bytes>'")])
def test_bad_weight_byte_rules_are_one_line(rule, match):
    with pytest.raises(ValueError, match=r"config key 'weight_bytes_rules': .*" + match):
        maxflops.model_config(weight_bytes_rules=(rule,))


@pytest.mark.skipif(not HF_REAL.is_dir(), reason="../shared/hf-real (real published config.json files) is absent")
def test_published_quantized_files_read_their_storage():
    """What the published files say, read: DeepSeek-V3's FP8 blocks with float32 scales and V3.1's with ue8m0 ones,
    gpt-oss's MXFP4 experts (attention, routers, embeddings and head excluded by name), Kimi-K2.5's int4 experts
    (a bfloat16 scale per 32; attention, shared experts and dense MLPs ignored by regex), GLM-5.1's NVFP4 experts and
    MLPs past the first three layers (ModelOpt globs), DeepSeek-V4's FP4 experts beside FP8 (expert_dtype) and its
    NVFP4 build's experts (ModelOpt's quantized_layers), Qwen3.6's FP8 attention and NVFP4 MLP and head."""
    want = {"deepseek-v3": tuple(f"{g}=4097/4096" for g in ("attention", "mlp", "moe_routed", "moe_shared")),
            "deepseek-v3.1": tuple(f"{g}=16385/16384" for g in ("attention", "mlp", "moe_routed", "moe_shared")),
            "gpt-oss-120b": ("moe_routed=17/32",), "kimi-k2.5": ("moe_routed=9/16",),
            "glm-5.1-nvfp4": ("mlp@3-77=9/16", "moe_routed@3-77=9/16"),
            "deepseek-v4-flash": ("attention=16385/16384", "mlp=16385/16384", "moe_routed=17/32",
                                  "moe_shared=16385/16384"),
            "deepseek-v4-flash-nvfp4": ("attention=16385/16384", "mlp=16385/16384", "moe_routed=9/16",
                                        "moe_shared=16385/16384"),
            "qwen3.6-27b-nvfp4": ("attention=1", "mlp=9/16", "logits=9/16")}
    from maxflops.loaders.quantization import weight_rules

    for name, rules in want.items():
        data = json.loads((HF_REAL / name / "config.json").read_text())
        text = data.get("text_config") or {}
        quant = data.get("quantization_config") or text["quantization_config"]
        layers = data.get("num_hidden_layers") or text["num_hidden_layers"]
        assert weight_rules(quant, layers, data.get("expert_dtype")) == rules, name
    # through the loader: the rules land in the config, the FLOPs do not move
    cfg = maxflops.load_config(str(HF_REAL / "gpt-oss-120b" / "config.json"), mode="decode")
    assert cfg.weight_bytes_rules == ("moe_routed=17/32",) and cfg.not_priced == ()
    t, bf16 = maxflops.decode_traffic(cfg), maxflops.decode_traffic(cfg, weight_bytes_rules=())
    assert t.components["weights"] < bf16.components["weights"]


@pytest.mark.skipif(not HF_REAL.is_dir(), reason="../shared/hf-real (real published config.json files) is absent")
def test_published_files_with_keys_transformers_does_not_read_load():
    """DeepSeek-V4's published files carry expert_dtype (DeepseekV4Config moves it into quantization_config: storage,
    no FLOPs); AI21's Jamba file carries sliding_window: null (no JambaConfig field; modeling_jamba never reads it)."""
    for name in ("deepseek-v4-flash", "deepseek-v4-flash-nvfp4", "deepseek-v4-pro", "deepseek-v4-pro-nvfp4"):
        cfg = maxflops.load_config(str(HF_REAL / name / "config.json"))
        assert "moe_routed=17/32" in cfg.weight_bytes_rules or "moe_routed=9/16" in cfg.weight_bytes_rules, name
    maxflops.count(maxflops.load_config(str(HF_REAL / "ai21-jamba-1.5-mini" / "config.json")))
    # keys the hub and the authors' tooling add that the config classes keep and the models never read: Qwen3-Coder's
    # qkv_bias and shared_expert_intermediate_size 0, GLM-5.2-NVFP4's num_experts, unsloth's unsloth_fixed
    for name in ("qwen3-coder-480b-a35b-instruct", "glm-5.2-nvfp4", "gpt-oss-20b-unsloth"):
        loaded = maxflops.load_config(str(HF_REAL / name / "config.json"))
        assert maxflops.count(loaded).total > 0, name
    coder = loaders.load_hf_config(HF_REAL / "qwen3-coder-480b-a35b-instruct" / "config.json")
    assert coder.ignored["shared_expert_intermediate_size"].startswith("no FLOPs effect: no Qwen3MoeConfig field")


# --- 4. a count that rests on a stated share says so ----------------------------------------------------------------

def test_a_report_states_the_zero_experts_share_it_rests_on(tmp_path):
    """ZAYA's skip expert (and LongCat-Flash's zero experts) take a share of the top-k slots that no file holds: the
    report names the share it used and the key that sets it."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "zaya", "num_hidden_layers": 2}))
    out = cli(f"--model={path}").stdout
    assert "STATED: the share of top-k slots the 1 zero-computation expert takes: uniform, 1/17 of them" in out
    out = cli(f"--model={path}", "--config.zero_expert_share=0.25").stdout
    assert "zero_expert_share=0.25" in out
    assert "STATED" not in cli("--model=llama3.1-8b").stdout
