"""The plan is cached on ``resolve.PLAN_KEYS`` (sweeps over any other key reuse it): the plan must read no other key,
or a sweep over that key would reuse a stale plan. Here ``build_plan`` runs on a resolved config that records every
key it reads (``[]``, ``get``, ``in``), for every shipped config under every variant of the behaviour fixture and
every model type of the Hugging Face zoo, and each key read must be one of PLAN_KEYS."""

from __future__ import annotations

import json
import sys

import pytest

import maxflops
from maxflops.config import resolve
from maxflops.loaders import hf, load_hf_config
from maxflops.plan import build_plan
from maxflops.resolve import PLAN_KEYS
from repo import ROOT

sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "behaviour"))
from generate import BASE, VARIANTS  # noqa: E402

# every family's and implementation's keys are set on every base, the bases without those layers included
# (the inert rule is held by tests/core/test_inert_keys.py)
pytestmark = pytest.mark.filterwarnings("ignore::maxflops.InertKeyWarning")


class Recording(dict):
    """A resolved config that remembers the keys read."""

    def __init__(self, data):
        super().__init__(data)
        self.read = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)


def _reads(config) -> set:
    c = Recording(resolve(dict(config)))
    build_plan(c)
    return c.read


def test_each_family_declares_the_keys_its_layers_read(tmp_path):
    """Each family's mixer_of and idle rule, over every shipped config and variant, read only the trunk's keys and its own
    plan_keys (so PLAN_KEYS, composed from them, is declared where the reading is), and each declared key is read."""
    from maxflops.families import FAMILIES
    from maxflops.resolve import TRUNK_PLAN_KEYS

    read = {f.name: set() for f in FAMILIES}
    originals = {f.name: (f.mixer_of, f.idle) for f in FAMILIES}

    def recording(fam, slot):
        def rule(*args):
            rec = Recording(args[-1])
            got = originals[fam.name][slot](*args[:-1], rec)
            read[fam.name] |= rec.read
            return got
        return rule

    try:
        for f in FAMILIES:
            object.__setattr__(f, "mixer_of", recording(f, 0))
            if f.idle is not None:
                object.__setattr__(f, "idle", recording(f, 1))
        for name in maxflops.available_models():
            for knobs in VARIANTS.values():
                build_plan(resolve(dict(maxflops.load_config(name, **BASE, **knobs))))
        for config in _zoo_configs(tmp_path):  # (the zoo's Mllama: cross-attention layers)
            build_plan(resolve(dict(config)))
    finally:
        for f in FAMILIES:
            object.__setattr__(f, "mixer_of", originals[f.name][0])
            object.__setattr__(f, "idle", originals[f.name][1])
    for f in FAMILIES:
        assert read[f.name] - set(TRUNK_PLAN_KEYS) - set(f.plan_keys) == set(), f.name
        assert set(f.plan_keys) <= read[f.name], f.name


@pytest.mark.parametrize("name", maxflops.available_models())
def test_the_plan_of_every_shipped_config_reads_plan_keys_only(name):
    read = set()
    for knobs in VARIANTS.values():
        read |= _reads(maxflops.load_config(name, **BASE, **knobs))
    assert read - set(PLAN_KEYS) == set()


ZOO = json.loads((ROOT / "tests" / "fixtures" / "hf_zoo" / "cases.json").read_text())["cases"]


def _zoo_configs(tmp_path):
    """Every read type of the Hugging Face zoo, in each mode (a cross-attention model with and without image
    tokens)."""
    for name, case in sorted(ZOO.items()):
        if case.get("status") != "ok" or not hf.get(case["config"].get("model_type", "")):
            continue
        path = tmp_path / "config.json"
        path.write_text(json.dumps(case["config"]))
        o = load_hf_config(path).overrides
        for mode in ("train", "prefill", "decode"):
            if mode == "decode" and (o.get("causal") is False or o.get("patch_layers")):
                continue  # (bidirectional, CPM-Ant; a byte model's patches, BLT: no decode step to count)
            yield maxflops.model_config(**o, mode=mode, max_target_length=case["length"])
            if "X" in o.get("attention_layer_pattern", ""):
                yield maxflops.model_config(**o, mode=mode, max_target_length=case["length"],
                                            cross_attention_tokens=5)


def test_the_plan_of_every_zoo_model_reads_plan_keys_only(tmp_path):
    read = set()
    for config in _zoo_configs(tmp_path):
        read |= _reads(config)
    assert read - set(PLAN_KEYS) == set()


def test_every_plan_key_is_a_schema_key():
    assert set(PLAN_KEYS) <= set(maxflops.SCHEMA)
