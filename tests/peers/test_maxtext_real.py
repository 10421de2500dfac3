"""maxflops against MaxText itself: the fixtures in tests/fixtures/maxtext_real/ were generated from MaxText 0.2.5
(its 82 model YAMLs, its resolved config objects, its FLOPs function's triples) by the script beside them.

- the key table classifies every key of MaxText's config object exactly once, and its base values are MaxText's;
- with convention='maxtext' every supported model reproduces MaxText's (total, learnable, attention) TFLOPs at
  every recorded (batch, length, accumulation) case, rel <= 1e-9 (float rounding of MaxText's own sums);
- the model YAML and the config object map to the same maxflops config;
- the decoder blocks and features maxflops does not price are refused with an error naming the key.

An opt-in live test reruns MaxText: MAXFLOPS_LIVE_MAXTEXT=/path/to/python-with-maxtext.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

import maxflops
from maxflops.loaders import load_maxtext_yaml
from maxflops.loaders.maxtext import keys as K
from maxflops.maxtext import from_maxtext
from repo import FIXTURES

HERE = FIXTURES / "maxtext_real"
BASE = json.loads((HERE / "maxtext_base_keys.json").read_text())
DATA = json.loads((HERE / "maxtext_models.json").read_text())
MODELS = DATA["models"]

PRICED = sorted(MODELS)  # every one of MaxText's 82 model files


def full_keys(name: str, case: dict | None = None) -> dict:
    return {**BASE, **MODELS[name]["keys"], **((case or {}).get("keys", {}))}


def test_every_maxtext_key_is_classified_once():
    groups = [K.MODEL_KEYS, K.IMPLEMENTATION_KEYS, frozenset(K.UNPRICED), K.NO_EFFECT]
    for i, a in enumerate(groups):
        for b in groups[i + 1:]:
            assert not a & b, sorted(a & b)
    assert set().union(*groups) == set(BASE) | K.RUN_KEYS, sorted((set(BASE) | K.RUN_KEYS) ^ set().union(*groups))


def test_base_values_are_maxtexts():
    assert K.BASE == {k: BASE[k] for k in K.BASE}


def test_fixture_versions():
    assert DATA["meta"]["maxtext"] == K.MAXTEXT_VERSION
    assert len(MODELS) == 82 and all(e["error"] is None for e in MODELS.values())


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("name", PRICED)
def test_maxtext_convention_reproduces_maxtext(name):
    for case in MODELS[name]["cases"]:
        want = case["tflops"]
        b = maxflops.count(from_maxtext(full_keys(name, case), convention="maxtext"))
        got = [b.total / 1e12, b.learnable_weight / 1e12, b.attention / 1e12]
        assert all(map(_close, got, want)), (case["args"], got, want)


@pytest.mark.parametrize("name", PRICED)
def test_yaml_and_config_object_agree(name):
    loaded = load_maxtext_yaml(HERE / "models" / f"{name}.yml")
    step = {"per_device_batch_size": 1, "max_target_length": 4096, "gradient_accumulation_steps": 1,
            "mtp_num_layers": full_keys(name)["mtp_num_layers"]}
    from_yaml = maxflops.model_config(**{**loaded.overrides, **step, "model_name": name})
    from_object = from_maxtext(full_keys(name), **step)
    a, b = from_yaml.to_dict(), from_object.to_dict()
    a.pop("model_name"), b.pop("model_name")
    if "attention" in MODELS[name]["args"]:  # MaxText needed another attention kernel to build this model
        for key in ("attention_impl", "dsa_impl", "not_priced"):
            a.pop(key), b.pop(key)
    assert {k: v for k, v in a.items() if a[k] != b[k]} == {}, {k: b[k] for k in a if a[k] != b[k]}


# --- MaxText's object as a trainer has it ---------------------------------------------------------------------

class HyperParameters:
    """Stands in for maxtext.configs.pyconfig.HyperParameters: attribute access and get_keys()."""

    def __init__(self, keys):
        object.__setattr__(self, "_flat", dict(keys))

    def __getattr__(self, name):
        try:
            return self._flat[name]
        except KeyError:
            raise AttributeError(name) from None

    def get_keys(self):
        return self._flat


DS32 = "deepseek3.2-671b"
DS32_CASE = MODELS[DS32]["cases"][0]  # batch 1, 4096 tokens


def test_attribute_object_dict_and_hyperparameters_agree_and_read_maxtext_names():
    import types

    keys = full_keys(DS32, DS32_CASE)
    want = DS32_CASE["tflops"]
    for obj in (keys, types.SimpleNamespace(**keys), HyperParameters(keys)):
        total, learnable, attention = maxflops.calculate_tflops_training_per_device(
            from_maxtext(obj, convention="maxtext"), log=False)
        assert _close(total, want[0]) and _close(learnable, want[1]) and _close(attention, want[2])
    # count() takes the object as it is (exact convention), the same as through from_maxtext
    assert maxflops.count(HyperParameters(keys)).total == maxflops.count(from_maxtext(keys)).total


def test_partial_maxtext_mapping_takes_base_defaults_and_keeps_the_indexer():
    """The issue's reproduction: MaxText names in a small object were silently dropped; now they count."""
    import types

    yaml_keys = {k: v for k, v in MODELS[DS32]["keys"].items() if k in K.MODEL_KEYS}
    obj = types.SimpleNamespace(**yaml_keys, per_device_batch_size=4, max_target_length=4096)
    on = maxflops.count(obj, convention="maxtext")
    off = maxflops.count(types.SimpleNamespace(**{**vars(obj), "use_indexer": False}), convention="maxtext")
    assert on.components["indexer_score"] > 0 and "indexer_score" not in off.components
    assert on.total / 1e12 == 4162.712368054272 and off.total / 1e12 == 4103.370952409088  # MaxText's figures


def test_unknown_and_unpriced_keys_are_errors_naming_them():
    keys = full_keys("llama2-7b")
    with pytest.raises(ValueError, match=r"unknown key 'frobnicate'.*unknown='warn'"):
        from_maxtext({**keys, "frobnicate": 1})
    with pytest.warns(UserWarning, match="frobnicate"):
        from_maxtext({**keys, "frobnicate": 1}, unknown="warn")
    with pytest.raises(ValueError, match=r"key 'moba' = True: MoBA"):
        from_maxtext({**keys, "moba": True})
    with pytest.raises(ValueError, match=r"key 'engram_layers' = \[1, 4\]: Engram"):  # llama2 has no Engram
        from_maxtext({**keys, "engram_layers": [1, 4]})
    with pytest.raises(ValueError, match=r"key 'decoder_block' = 'nope': unknown decoder block; supported: "):
        from_maxtext({**keys, "decoder_block": "nope"})


def test_implementation_keys_set_the_hardware_knobs():
    keys = full_keys("mixtral-8x7b")
    dropless = from_maxtext(keys)  # capacity_factor -1 with sparse_matmul: dropless grouped matmuls
    assert dropless.moe_impl == "ideal" and keys["capacity_factor"] == -1.0
    dense = from_maxtext({**keys, "sparse_matmul": False})
    assert dense.moe_impl == "dense"
    cap = from_maxtext({**keys, "sparse_matmul": False, "capacity_factor": 1.25})
    assert (cap.moe_impl, cap.capacity_factor) == ("capacity", 1.25)
    flash = from_maxtext({**keys, "attention": "flash", "sa_block_q": 256, "sa_block_kv": 1024})
    assert (flash.attention_impl, flash.attention_block_q, flash.attention_block_kv) == ("blocked", 256, 1024)
    assert flash.flash_backward_recompute
    assert from_maxtext({**keys, "attention": "dot_product"}).attention_impl == "dense"
    assert from_maxtext({**keys, "remat_policy": "full"}).remat_policy == "full"
    minimal = from_maxtext({**keys, "remat_policy": "minimal"})  # MoE with GQA: priced (checked on MaxText's step)
    assert minimal.remat_policy == "minimal" and not any("remat_policy" in p for p in minimal.not_priced)
    mla = from_maxtext({**full_keys("deepseek3-671b"), "remat_policy": "minimal"})  # MLA: checked too
    assert mla.remat_policy == "minimal" and not any("remat_policy" in p for p in mla.not_priced)
    gdn = from_maxtext({**full_keys("qwen3-next-80b-a3b"), "remat_policy": "minimal"})  # GDN: checked too
    assert gdn.remat_policy == "minimal" and gdn.qkv_norms == "qk" and not any("remat_policy" in p for p in
                                                                                gdn.not_priced)
    splash = from_maxtext({**full_keys("deepseek3.2-671b"), "attention": "flash"})  # the top-k as a dynamic mask
    assert splash.dsa_impl == "blocked" and any("upper bound" in p for p in splash.not_priced)
    v4 = from_maxtext({**full_keys("deepseek4-284b"), "remat_policy": "minimal"})  # compressed: not checked yet
    assert any("remat_policy='minimal'" in p for p in v4.not_priced)
    assert from_maxtext({**full_keys("qwen3-8b"), "use_qk_norm": True}).qkv_norms == "qk"
    assert from_maxtext({**full_keys("qwen3-8b"), "use_qk_norm": False}).qkv_norms == "none"


def test_a_partial_count_never_looks_whole():
    from maxflops.report import text_report

    cfg = from_maxtext(full_keys("qwen3-vl-30b-a3b"))
    b = maxflops.count(cfg)
    assert any("vision encoder" in p for p in b.not_priced)
    report = text_report(b, cfg)
    assert "NOT COUNTED: the vision encoder" in report
    assert "hardware FLOPs do not price: attention='autoselected'" in report
    assert any("vision" in p for p in b.to_dict()["not_priced"])
    assert maxflops.count(maxflops.load_config("llama3.1-8b")).not_priced == ()


def test_llama4_vision_encodes_twenty_tiles_exactly_and_one_as_maxtext_counts():
    case = next(c for c in MODELS["llama4-17b-16e"]["cases"] if c["args"].get("use_multimodal"))
    cfg = from_maxtext(full_keys("llama4-17b-16e", case))
    exact, mt = maxflops.count(cfg), maxflops.count(cfg, convention="maxtext")
    assert exact.components["vision_attention"] == 20 * mt.components["vision_attention"]
    assert mt.hardware_components["vision_attention"] == exact.components["vision_attention"]


def test_quirks_follow_the_convention():
    cfg = from_maxtext(full_keys("olmo3-7b"), max_target_length=32768)  # window 4096 < length
    exact, mt = maxflops.count(cfg), maxflops.count(cfg, convention="maxtext")
    assert cfg.convention_quirks == ("maxtext:window_pairs=global",)
    assert maxflops.count(from_maxtext(full_keys("olmo3-7b"), convention="maxtext", max_target_length=32768)).total \
        == mt.total
    assert exact.components["core_attention"] < mt.components["core_attention"]
    with pytest.raises(ValueError, match="convention_quirks"):
        maxflops.model_config(convention_quirks=("maxtext:frob=1",))


def test_install_replaces_maxtexts_function_and_uninstall_restores_it(monkeypatch):
    import types

    calls = []

    def original(config, log=True):
        calls.append(config)
        return (1.0, 0.5, 0.5)

    utils = types.ModuleType("maxtext.utils.maxtext_utils")
    utils.calculate_tflops_training_per_device = original
    logger = types.ModuleType("maxtext.utils.get_flops")
    logger.calculate_tflops_training_per_device = original  # imported by name elsewhere
    for name, mod in (("maxtext", types.ModuleType("maxtext")), ("maxtext.utils", types.ModuleType("maxtext.utils")),
                      ("maxtext.utils.maxtext_utils", utils), ("maxtext.utils.get_flops", logger)):
        monkeypatch.setitem(sys.modules, name, mod)
    from maxflops import maxtext as mt

    mt.install(convention="maxtext")
    try:
        got = utils.calculate_tflops_training_per_device(HyperParameters(full_keys(DS32, DS32_CASE)), log=False)
        assert logger.calculate_tflops_training_per_device is utils.calculate_tflops_training_per_device
        assert all(map(_close, got, DS32_CASE["tflops"])) and not calls
    finally:
        mt.uninstall()
    assert utils.calculate_tflops_training_per_device is original and logger.calculate_tflops_training_per_device is original


@pytest.mark.skipif(not os.environ.get("MAXFLOPS_LIVE_MAXTEXT"), reason="opt-in: MAXFLOPS_LIVE_MAXTEXT=/path/to/python "
                    "of a venv with maxtext 0.2.5 reruns the fixture generation and compares")
def test_live_maxtext_reproduces_the_fixtures(tmp_path):
    script = HERE / "generate.py"
    out = tmp_path / "live"
    out.mkdir()
    (out / "generate.py").write_text(script.read_text())
    subprocess.run([os.environ["MAXFLOPS_LIVE_MAXTEXT"], str(out / "generate.py")], check=True,
                   capture_output=True, timeout=1800)
    live = json.loads((out / "maxtext_models.json").read_text())["models"]
    assert {n: [c.get("tflops") for c in e["cases"]] for n, e in live.items()} == \
        {n: [c.get("tflops") for c in e["cases"]] for n, e in MODELS.items()}


def test_packed_steps_are_counted_per_document_per_device():
    import numpy as np

    from maxflops.maxtext import packed_tflops_per_device

    keys = {**full_keys("llama2-7b"), "max_target_length": 64, "per_device_batch_size": 1.0,
            "global_batch_size_to_train_on": 4}
    ids = np.zeros((5, 64), np.int32)  # 5 rows loaded, 4 trained; row 4 must be ignored
    ids[0, :40], ids[0, 40:64] = 1, 2
    ids[1, :64] = 1
    ids[2, :10] = 3  # then padding
    ids[3, :] = 0
    ids[4, :] = 7
    got = packed_tflops_per_device(keys, ids, devices=2, hosts=1)
    cfg = from_maxtext(keys, per_device_batch_size=1, max_target_length=64)
    docs = [maxflops.count(cfg, max_target_length=L).total for L in (40, 24, 64, 10)]
    assert got == sum(docs) / 2 / 1e12


LIVE_PER_STEP = r"""
import json, sys, types
import numpy as np
import maxflops.maxtext as mm
mm.install()
from maxtext.common import data_loader, metric_logger
keys = {**json.load(open(sys.argv[1])), "max_target_length": 64, "per_device_batch_size": 2.0,
        "global_batch_size_to_train_on": 2, "rampup_end_step": 0}
ids = np.zeros((2, 64), np.int32); ids[0, :30] = 1; ids[0, 30:] = 2; ids[1, :] = 5
loader = types.SimpleNamespace(config=types.SimpleNamespace(reuse_example_batch=False, max_checkify=False),
                               last_batch=None, goodput_recorder=None, data_iterator=iter([{"inputs_segmentation": ids}]),
                               update_data_iterator=lambda: None, check_example_batch=lambda: None)
data_loader.DataLoader.load_next_batch_pre_sharding(loader)
logger = types.SimpleNamespace(config=types.SimpleNamespace(**keys), performance_metric_queue=None,
                               learning_rate_schedule=lambda s: 0.0,
                               metadata={metric_logger.MetadataKey.PER_DEVICE_TFLOPS: 1.0,
                                         metric_logger.MetadataKey.PER_DEVICE_TOKENS: 1.0})
metrics = {"scalar": {}}
metric_logger.MetricLogger.record_train_metrics(logger, metrics, 5, 0.5)
print(json.dumps([metrics["scalar"]["perf/per_device_tflops"], mm.packed_tflops_per_device(keys, ids, devices=1)]))
"""


@pytest.mark.skipif(not os.environ.get("MAXFLOPS_LIVE_MAXTEXT"), reason="opt-in: MAXFLOPS_LIVE_MAXTEXT=/path/to/python "
                    "of a venv with maxtext 0.2.5 runs MaxText's own data loader and metric logger with install()")
def test_live_install_recounts_each_step_from_its_segment_ids(tmp_path):
    script = tmp_path / "per_step.py"
    script.write_text(LIVE_PER_STEP)
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(maxflops.__file__).parent.parent), "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([os.environ["MAXFLOPS_LIVE_MAXTEXT"], str(script), str(HERE / "maxtext_base_keys.json")],
                         check=True, capture_output=True, text=True, timeout=600, env=env).stdout
    logged, direct = json.loads(out.strip().splitlines()[-1])
    assert logged == direct > 0


def test_an_object_s_nested_values_at_and_off_the_defaults_are_told_apart():
    """from_maxtext's cache is keyed on a snapshot of the values read (_hashable of each): base.yml's nested values
    (logical_axis_rules, some 400 entries) given as a config object gives them (tuples) are taken as they are, the
    same snapshot without the walk; a changed rule is another snapshot."""
    import types

    from maxflops.maxtext import objects

    keys = full_keys("llama2-7b")
    frozen = lambda x: tuple(map(frozen, x)) if isinstance(x, (list, tuple)) else x  # noqa: E731
    rules = frozen(keys["logical_axis_rules"])
    changed = frozen([[name, ["fsdp"] if name == "activation_embed" else axes]
                      for name, axes in keys["logical_axis_rules"]])
    snap = lambda v: objects._snapshot("logical_axis_rules", v)  # noqa: E731
    assert snap(rules) == objects._hashable(rules) == snap(keys["logical_axis_rules"]) == snap(list(rules))
    assert snap(changed) == objects._hashable(changed) != snap(rules)
    assert snap([list(r) for r in changed]) == snap(changed)
    base = types.SimpleNamespace(**{**keys, "logical_axis_rules": rules})
    assert objects.overrides_of(base) == objects.overrides_of(types.SimpleNamespace(**keys))
