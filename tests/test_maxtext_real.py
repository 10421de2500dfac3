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
from maxflops.maxtext import from_maxtext, keys as K, mapping

HERE = pathlib.Path(__file__).parent / "fixtures" / "maxtext_real"
BASE = json.loads((HERE / "maxtext_base_keys.json").read_text())
DATA = json.loads((HERE / "maxtext_models.json").read_text())
MODELS = DATA["models"]

# What maxflops refuses, and the key the error names.
REFUSED = {name: "decoder_block" for name, e in MODELS.items() if e["keys"].get("decoder_block") in mapping.REFUSED}
REFUSED["deepseek-custom"] = "engram_layers"
PRICED = sorted(set(MODELS) - set(REFUSED))


def full_keys(name: str, case: dict | None = None) -> dict:
    return {**BASE, **MODELS[name]["keys"], **((case or {}).get("keys", {}))}


def test_every_maxtext_key_is_classified_once():
    groups = [K.MODEL_KEYS, K.IMPLEMENTATION_KEYS, frozenset(K.UNPRICED), K.NO_EFFECT]
    for i, a in enumerate(groups):
        for b in groups[i + 1:]:
            assert not a & b, sorted(a & b)
    assert set().union(*groups) == set(BASE), sorted(set(BASE) ^ set().union(*groups))


def test_base_values_are_maxtexts():
    assert {k: v for k, v in K.BASE.items()} == {k: BASE[k] for k in K.BASE}


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
        vision = case["args"].get("use_multimodal") and "vision" in " ".join(b.not_priced)
        if vision:  # MaxText adds a vision tower maxflops does not count; the Breakdown says so
            assert got[0] < want[0]
            continue
        assert all(map(_close, got, want)), (case["args"], got, want)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unpriced_models_are_refused_naming_the_key(name):
    with pytest.raises(ValueError, match=REFUSED[name]):
        from_maxtext(full_keys(name))


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
