"""Which keys a model reads: every key set explicitly that moves no figure is said (InertKeyWarning), and a key said
inert never moves one. The oracle is a recount: the key at other values (its other choices, the other bool, larger
numbers), every figure compared (model and hardware FLOPs per component and per layer, and in decode the bytes a
step reads)."""

from __future__ import annotations

import warnings

import pytest

import maxflops
from maxflops.checks import READ_WHEN
from maxflops.config import validate
from maxflops.families import FAMILIES
from maxflops.features import FEATURES
from maxflops.schema import SCHEMA
from maxflops.traffic import decode_traffic


def _alternatives(key, value) -> list:
    f = SCHEMA[key]
    if f.choices and not isinstance(value, tuple):
        return [x for x in f.choices if x != value][:3]
    if f.kind is bool:
        return [not value]
    if f.kind is int and isinstance(value, int):
        return [value + 1, 2 * value + 3]
    if f.kind is float and isinstance(value, (int, float)):
        return [2 * value + 1]
    return []


def _figures(c):
    b = maxflops.count(c)
    return b.to_dict(), decode_traffic(c).to_dict() if b.mode == "decode" else None


def _moves(c, key) -> bool:
    """Whether some other value of ``key`` moves a figure of the resolved config ``c`` (a value the config's
    relations refuse, e.g. o_groups without o_lora_rank, is no evidence either way)."""
    base = _figures(c)
    for value in _alternatives(key, c[key]):
        try:
            if _figures({**c, key: value}) != base:
                return True
        except ValueError:
            continue
    return False


def _wrong_rules(names, modes) -> list:
    wrong = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            for mode in modes:
                c = validate(maxflops.load_config(name, mode=mode))
                for key, (reads, _) in READ_WHEN.items():
                    if not reads(c) and _moves(c, key):
                        wrong.append((name, mode, key))
    return wrong


# a dense GQA model, MLA with DSA, compressed attention, a Mamba-1 and a Mamba-2 hybrid, MiniMax's sparse attention,
# a gated delta net hybrid, Kimi's delta attention
SPREAD = ["llama3.1-8b", "deepseek3.2-671b", "deepseek4-284b", "jamba-1.5-large", "nemotron-h-8b", "minimax-m3",
          "qwen3-next-80b-a3b", "kimi-linear-48b-a3b"]


def test_a_key_said_inert_moves_no_figure():
    assert _wrong_rules(SPREAD, ("train",)) == []
    assert _wrong_rules(SPREAD[:3], ("decode",)) == []


@pytest.mark.slow
def test_a_key_said_inert_moves_no_figure_on_every_shipped_model():
    assert _wrong_rules(maxflops.available_models(), ("train", "prefill", "decode")) == []


# llama3.1-8b at a length no other test counts it at: count() says an inert key once per distinct override set (it
# caches what it resolved), so a base of this module's own keeps other tests' warnings theirs
def _llama():
    return maxflops.load_config("llama3.1-8b", max_target_length=4099)


def _said(cfg, **override) -> list:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        maxflops.count(cfg, **override)
    return [str(x.message) for x in w if issubclass(x.category, maxflops.InertKeyWarning)]


# what a new user set on llama3.1-8b and heard nothing about
SILENT = dict(first_num_dense_layers=2, interleave_moe_layer_step=2, shared_expert_mlp_dim=512, capacity_factor=1.5,
              moe_impl="capacity", indexer_loss_scaling_factor=0.5, dsa_impl="gather_k", mla_absorbed=True,
              mamba_num_heads=8)


@pytest.mark.parametrize("key", sorted(SILENT))
def test_the_keys_a_dense_gqa_model_does_not_read_are_said(key):
    said = _said(_llama(), **{key: SILENT[key]})
    assert len(said) == 1 and said[0].startswith(f"config key {key!r} = {SILENT[key]!r} changes nothing here: ")


def _said_on_llama(owners) -> list:
    """Each (owner, key) set alone on llama3.1-8b, at another of its values: the keys it was said of (a key that must
    be set with another, such as o_groups with o_lora_rank, raises and is passed over; a key with no other value
    too)."""
    cfg = _llama()
    c = validate(cfg)
    checked = []
    for owner, key in owners:
        value = (_alternatives(key, c[key]) or [None])[0]
        if value is None:
            continue
        try:
            said = _said(cfg, **{key: value})
        except ValueError:
            continue
        assert said and f"config key {key!r}" in said[0], (owner, key)
        checked.append(key)
    return checked


def test_every_key_of_a_family_with_letters_is_said_on_a_model_without_them():
    """From the registry: a family's keys (those no other family reads) on llama3.1-8b, whose layers are all 'G'."""
    keys = [(fam.name, key) for fam in FAMILIES if fam.letters and fam.name != "attention"
            for key in fam.keys if key not in fam.shared_keys]
    assert len(_said_on_llama(keys)) > 80


def test_every_key_of_a_feature_is_said_on_a_model_without_it():
    """From the registry: a trunk feature's keys (but those that turn it on, and those others read too) on
    llama3.1-8b, which runs no feature."""
    keys = [(f.name, key) for f in FEATURES for key in f.keys if key not in f.switches and key not in f.shared_keys]
    c = validate(_llama())
    assert not [key for _, key in keys if READ_WHEN[key][0](c)]
    checked = _said_on_llama(keys)
    assert len(checked) >= 8 and {"engram_num_heads", "mhc_plain_residual", "double_wide_kv_shared_mlp",
                                  "zero_expert_share", "patches_per_sequence"} <= set(checked)


def test_the_step_keys_of_another_mode_are_said():
    """A user who forgot mode='decode' gets a training count, and now a word; micro-batches outside training too."""
    cfg = _llama()
    said = _said(cfg, decode_kv_length=8191)
    assert said == ["config key 'decode_kv_length' = 8191 changes nothing here: mode is not 'decode': a training or "
                    "prefill step reads max_target_length (set mode='decode' to count a decode step)"]
    said = _said(cfg, mode="decode", gradient_accumulation_steps=4)
    assert said == ["config key 'gradient_accumulation_steps' = 4 changes nothing here: mode is not 'train': only a "
                    "training step accumulates micro-batches"]
    assert _said(cfg, mode="decode", decode_kv_length=8191) == []


def test_a_read_key_is_not_said():
    """On models that read them, the same keys are silent."""
    assert _said(maxflops.load_config("deepseek3.2-671b"), dsa_impl="gather_k", mla_absorbed=True,
                 first_num_dense_layers=2) == []
    assert _said(maxflops.load_config("nemotron-h-8b"), mamba_num_heads=64) == []
