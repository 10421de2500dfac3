"""Looped depth (``layer_loops``: Dory's recurrent section run several passes): a looped model counts as the same
layers unrolled, pass after pass, in every mode, component by component, model and hardware; decode reads a looped
layer's weights once and each pass's own cache; the Flax model with loops equals XLA (tests/xla); Dory equals torch
on transformers' eager model (the zoo)."""

from __future__ import annotations

import pytest

import maxflops
from maxflops.features.layer_loops import layer_order

BASE = dict(emb_dim=48, mlp_dim=80, num_query_heads=6, num_kv_heads=2, head_dim=8, vocab_size=300,
            max_target_length=36, per_device_batch_size=2, sliding_window_size=7)
# (layers, pattern, loops) -> the unrolled pattern: layers 0, 1, 2, 1, 2, 1, 2, 3 / 0, 0, 1, 2, 3, 2, 3
CASES = [(4, "LGLG", ("1-2*3",), "LGLGLGLG"), (4, "GLLG", ("0*2", "2-3*2"), "GGLLGLG"), (3, "LLG", ("0-2*1",), "LLG")]
MODES = {"train": {}, "prefill": {"mode": "prefill"}, "decode": {"mode": "decode", "decode_kv_length": 20},
         "remat": {"remat_policy": "full"}}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("n,pattern,loops,unrolled", CASES)
def test_a_looped_model_counts_as_its_layers_unrolled(n, pattern, loops, unrolled, mode):
    looped = maxflops.count(maxflops.model_config(**BASE, num_decoder_layers=n, attention_layer_pattern=pattern,
                                                  layer_loops=loops, **MODES[mode]))
    flat = maxflops.count(maxflops.model_config(**BASE, num_decoder_layers=len(unrolled),
                                                attention_layer_pattern=unrolled, **MODES[mode]))
    assert dict(looped.components) == dict(flat.components)
    assert dict(looped.hardware_components) == dict(flat.hardware_components)
    assert [dict(r.components) for r in looped.layers] == [dict(r.components) for r in flat.layers]


def test_rows_are_named_by_layer_and_pass():
    c = maxflops.model_config(**BASE, num_decoder_layers=4, attention_layer_pattern="LGLG", layer_loops=("1-2*2",))
    assert [r.name for r in maxflops.count(c).layers] == ["layer 0", "layer 1.1", "layer 2.1", "layer 1.2",
                                                          "layer 2.2", "layer 3", "head"]
    assert layer_order(c) == [(0, 1), (1, 1), (2, 1), (1, 2), (2, 2), (3, 1)]


@pytest.mark.parametrize("mode", list(MODES))
def test_passes_without_a_gradient_run_forward_only_in_training(mode):
    """'1-2*4/1': of four passes, three without a gradient (HRM's early L cycles, under torch.no_grad): in training
    they cost their forward, nothing recomputed; the one with a gradient three times it. Other modes: as '1-2*4'."""
    kw = dict(BASE, num_decoder_layers=4, attention_layer_pattern="LGLG", **MODES[mode])
    some = maxflops.count(maxflops.model_config(**kw, layer_loops=("1-2*4/1",)))
    every = maxflops.count(maxflops.model_config(**kw, layer_loops=("1-2*4",)))
    rows = {r.name: r for r in every.layers}
    if MODES[mode].get("mode") in ("prefill", "decode"):
        assert some.total == every.total and some.hardware_flops == every.hardware_flops
        return
    for r in some.layers:
        want = rows[r.name].total
        if r.name in ("layer 1.1", "layer 2.1", "layer 1.2", "layer 2.2", "layer 1.3", "layer 2.3"):
            forward = maxflops.count(maxflops.model_config(**{**kw, "mode": "prefill"},
                                                           layer_loops=("1-2*4",)))
            want = {x.name: x for x in forward.layers}[r.name].total
        assert r.total == want, r.name
    assert [r.name for r in some.layers] == [r.name for r in every.layers]


def test_decode_reads_a_looped_layers_weights_once_and_each_passs_cache():
    kw = dict({k: v for k, v in BASE.items() if k != "sliding_window_size"}, mode="decode", decode_kv_length=50,
              num_decoder_layers=4, attention_layer_pattern="GGGG")
    looped = maxflops.decode_traffic(maxflops.model_config(**kw, layer_loops=("1-2*3",))).components
    plain = maxflops.decode_traffic(maxflops.model_config(**kw)).components
    flat = maxflops.decode_traffic(maxflops.model_config(**{**kw, "num_decoder_layers": 8})).components
    assert looped["weights"] == plain["weights"]  # the same four layers' weights
    assert looped["kv_read"] == flat["kv_read"] and looped["kv_write"] == flat["kv_write"]  # eight passes' caches


@pytest.mark.parametrize("loops, extra, key, match", [
    (("1-5*2",), {}, "layer_loops", r"layer 5 is past the last decoder layer \(3\)"),
    (("0-1*2", "1-2*2"), {}, "layer_loops", r"blocks 0-1 and one from 1 overlap"),
    (("1-2",), {}, "layer_loops", r"'1-2' is not '<first>-<last>\*<passes>'"),
    (("1-2*0",), {}, "layer_loops", r"is not '<first>-<last>\*<passes>'"),
    (("1-2*2/3",), {}, "layer_loops", r"passes with a gradient>' \(at most the passes\)"),
    (("1-2*2",), dict(remat_block_layers=2), "remat_block_layers", r"not modelled"),
    (("1-2*2",), dict(convention="maxtext"), "convention", r"'maxtext' has no rule for looped depth"),
])
def test_bad_loops_are_one_line_naming_the_key(loops, extra, key, match):
    with pytest.raises(ValueError, match=f"config key '{key}': .*" + match):
        maxflops.model_config(**BASE, num_decoder_layers=4, layer_loops=loops, **extra)


def test_every_input_path_reads_the_loops_the_same_way(tmp_path):
    import json
    import subprocess
    import sys

    from repo import ROOT

    keys = dict(BASE, num_decoder_layers=4, attention_layer_pattern="LGLG")
    want = maxflops.count(maxflops.model_config(**keys, layer_loops=("1-2*3",)))
    assert maxflops.count(keys, layer_loops=["1-2*3"]).total == want.total
    body = ", ".join(f"{k}={v!r}" for k, v in {**keys, "layer_loops": ("1-2*3",)}.items())
    (tmp_path / "cfg.py").write_text(f"import maxflops\n\n\ndef get_config():\n    return maxflops.model_config({body})\n")
    assert maxflops.count(maxflops.load_config(str(tmp_path / "cfg.py"))).total == want.total
    (tmp_path / "empty.py").write_text("import maxflops\n\n\ndef get_config():\n    return maxflops.model_config()\n")
    flags = [f"--config={tmp_path / 'empty.py'}", *(f"--config.{k}={v}" for k, v in keys.items()),
             "--config.layer_loops=1-2*3"]
    p = subprocess.run([sys.executable, "-m", "maxflops", "--json", *flags], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["total"] == want.total
