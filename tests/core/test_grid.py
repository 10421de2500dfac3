"""maxflops.sweep_grid: the same integers as ``count`` at every point of a grid of lengths and batches."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

import maxflops
from maxflops.conventions import convention_defined
from strategies import config_kwargs

# random configs draw every schema key, the inert ones included (the inert rule is held by
# tests/core/test_input_paths.py)
pytestmark = pytest.mark.filterwarnings("ignore::maxflops.InertKeyWarning")

CASES = [(name, conv) for name in maxflops.available_models() for conv in ("exact", "maxtext", "megatron_main")
         if convention_defined(dict(maxflops.load_config(name)), conv)]


def check(cfg, lengths, batches, points=None, **overrides):
    grid = maxflops.sweep_grid(cfg, lengths, batches, **overrides)
    pairs = [(i, j) for i in range(len(lengths)) for j in range(len(batches))]
    for i, j in pairs if points is None else random.Random(0).sample(pairs, points):
        key = "decode_kv_length" if grid.mode == "decode" else "max_target_length"
        b = maxflops.count(cfg, **{**overrides, key: lengths[i], "per_device_batch_size": batches[j]})
        assert (grid.total[i][j], grid.hardware[i][j], grid.tokens[i][j]) == (b.total, b.hardware_flops, b.tokens), \
            (lengths[i], batches[j])
    return grid


@pytest.mark.parametrize("name,convention", CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_every_shipped_model_and_convention(name, convention):
    cfg = maxflops.load_config(name)
    check(cfg, [1, 7, 100, 4097, 131071], [1, 2, 3, 17, 1000], points=12, convention=convention)


def test_modes_knobs_and_batches_that_are_not_whole_rows():
    cfg = maxflops.load_config("deepseek3.2-671b")
    check(cfg, [1, 2049], [1, 4], mode="prefill", attention_impl="blocked", moe_impl="capacity", remat_policy="full")
    check(cfg, [0, 5, 9000], [1, 3, 64], mode="decode", moe_impl="capacity")  # decode: every point counted
    check(cfg, [64, 100], [0.5, 1.5, 2])  # a batch that is not a whole number of rows: every point counted
    check(maxflops.load_config("gemma3-27b"), [1000, 1001], [1, 2, 5], gradient_accumulation_steps=3,
          convention="maxtext")


@settings(max_examples=25, deadline=None, derandomize=True)
@given(kw=config_kwargs(mode="train", integer_batch=True) | config_kwargs(mode="prefill", integer_batch=True),
       lengths=st.lists(st.integers(1, 80), min_size=1, max_size=3),
       batches=st.lists(st.integers(1, 9), min_size=1, max_size=3))
def test_random_configs(kw, lengths, batches):
    kw = {k: v for k, v in kw.items() if k not in ("max_target_length", "per_device_batch_size")}
    check(maxflops.model_config(**kw, max_target_length=max(lengths), per_device_batch_size=1), lengths, batches)


def test_the_cli_grid(tmp_path, capsys):
    from maxflops import cli

    out = tmp_path / "grid.csv"
    assert cli.main(["maxflops", "sweep", "--model=llama3.1-8b", "--lengths=1024:4096:1024", "--batches=1,2,8",
                     f"--csv={out}"]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "max_target_length,per_device_batch_size,tokens,model_flops,hardware_flops"
    assert len(lines) == 1 + 4 * 3
    L, b, tokens, model, hw = lines[-1].split(",")
    assert int(model) == maxflops.count(maxflops.load_config("llama3.1-8b", max_target_length=4096,
                                                             per_device_batch_size=8)).total
    assert "4 lengths x 3 batches = 12 points" in capsys.readouterr().out
    assert cli.main(["maxflops", "sweep", "--model=llama3.1-8b", "--lengths=10:5:1", "--batches=1"]) == 2
