"""Layers of their own widths (``layer_widths``: Llama-Nemotron's block_configs, per-layer head counts, per-layer head
widths): a layer of widths W is priced as the same layer of a model whose every layer has W.

The derivation is the uniform model's pricing, itself held against brute force, XLA and transformers elsewhere: for
each distinct set of widths, the config with those widths as its own, counted whole; row i of the model with rules
must equal row i of that model, component by component, model and hardware, in every mode and on packed documents.
The Flax model built with the rules equals XLA (tests/xla), and the Hugging Face types that write them equal torch.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import maxflops
from maxflops.plan import layer_widths
from repo import ROOT

BASE = dict(num_decoder_layers=6, emb_dim=64, mlp_dim=96, num_query_heads=8, num_kv_heads=2, head_dim=16,
            vocab_size=500, max_target_length=40, per_device_batch_size=2)
CASES = {
    "dense": dict(BASE, layer_widths=("mlp_dim@0-1+4=200", "num_kv_heads@2=8", "head_dim@3=24",
                                      "num_query_heads@5=4", "num_kv_heads@5=1", "mlp_dim@5=40")),
    "windows": dict(BASE, attention_layer_pattern="LLG", sliding_window_size=9,
                    layer_widths=("num_kv_heads@0+2=4", "mlp_dim@1-3=128", "head_dim@5=8")),
    "moe": dict(BASE, num_experts=4, num_experts_per_tok=2, moe_mlp_dim=32, first_num_dense_layers=1,
                shared_experts=1, layer_widths=("moe_mlp_dim@2-3=48", "mlp_dim@0=300", "num_query_heads@4=16")),
    "no mixer, no FFN": dict(BASE, attention_layer_pattern="G-GGGG", ffn_layer_pattern="FFF-FF",
                             layer_widths=("mlp_dim@1=160", "num_kv_heads@3=1", "mlp_dim@4-5=50")),
}
MODES = {"train": {}, "prefill": {"mode": "prefill"}, "decode": {"mode": "decode", "decode_kv_length": 33},
         "train remat": {"remat_policy": "full"}}


def _rows(b, hardware: bool):
    return [dict(r.hardware_components if hardware else r.components) for r in b.layers if r.group == "decoder"]


def _derived(config: dict, docs, **mode) -> tuple:
    """(model rows, hardware rows) of the model with rules, each row from the uniform model of its widths."""
    per_layer = layer_widths(maxflops.model_config(**config, **mode))
    uniform = {}
    for own in per_layer:
        key = tuple(sorted(own.items()))
        if key not in uniform:
            plain = {k: v for k, v in config.items() if k != "layer_widths"}
            uniform[key] = maxflops.count(maxflops.model_config(**{**plain, **own}, **mode), segment_lengths=docs)
    rows = [uniform[tuple(sorted(own.items()))] for own in per_layer]
    return ([_rows(b, False)[i] for i, b in enumerate(rows)], [_rows(b, True)[i] for i, b in enumerate(rows)])


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("docs", [None, [17, 3, 20]], ids=["rows", "packed"])
@pytest.mark.parametrize("name", list(CASES))
def test_a_layer_of_its_own_widths_is_the_uniform_models_layer(name, docs, mode):
    if docs and MODES[mode].get("mode") == "decode":
        docs = [5, 33]  # decode: each sequence's cached length
    config = CASES[name]
    b = maxflops.count(maxflops.model_config(**config, **MODES[mode]), segment_lengths=docs)
    model, hardware = _derived(config, docs, **MODES[mode])
    assert _rows(b, False) == model
    assert _rows(b, True) == hardware
    plain = maxflops.count(maxflops.model_config(**{k: v for k, v in config.items() if k != "layer_widths"},
                                                 **MODES[mode]), segment_lengths=docs)
    assert b.total != plain.total  # the rules change the count
    outside = dict(plain.components)
    for row in _rows(plain, False):
        for k, v in row.items():
            outside[k] -= v
    want = dict(outside)
    for row in model:
        for k, v in row.items():
            want[k] = want.get(k, 0) + v
    assert {k: v for k, v in want.items() if v} == dict(b.components)


def test_decode_bytes_of_a_layer_of_its_own_widths_are_the_uniform_models():
    """Each layer's weights and cache bytes, from the uniform model's: one more layer of widths W adds what a layer of
    W reads (one letter throughout, so that every layer of a uniform model is alike)."""
    config = dict(BASE, mode="decode", decode_kv_length=70,
                  layer_widths=("mlp_dim@0-1=200", "num_kv_heads@2=8", "head_dim@3=24", "num_query_heads@5=4"))
    plain = {k: v for k, v in config.items() if k != "layer_widths"}

    def traffic(**keys):
        return maxflops.decode_traffic(maxflops.model_config(**{**plain, **keys})).components

    def layer(**own):  # one layer of these widths
        n = plain["num_decoder_layers"]
        more, less = traffic(**own, num_decoder_layers=n + 1), traffic(**own)
        return {k: more[k] - less[k] for k in more}

    want = dict(traffic())
    for own in layer_widths(maxflops.model_config(**config)):
        if own:
            for k, v in layer(**own).items():
                want[k] += v - layer()[k]
    assert dict(maxflops.decode_traffic(maxflops.model_config(**config)).components) == want


@pytest.mark.parametrize("rules, match", [
    (("mlp_dim@6=10",), r"'mlp_dim@6=10': layer 6 is past the last decoder layer \(5\)"),
    (("vocab_size@1=10",), r"'vocab_size@1=10': 'vocab_size' is not one of 'num_query_heads'"),
    (("mlp_dim=10",), r"'mlp_dim=10' is not '<key>@<layers>=<value>'"),
    (("mlp_dim@1=0",), r"'0' is not a positive integer"),
    (("mlp_dim@2-1=5",), r"'2-1' runs backwards"),
    (("num_kv_heads@1=3",), r"layer 1: 3 KV heads do not divide its 8 query heads"),
])
def test_bad_rules_are_one_line_naming_the_key(rules, match):
    with pytest.raises(ValueError, match=r"config key 'layer_widths': .*" + match):
        maxflops.model_config(**BASE, layer_widths=rules)


def test_no_peer_has_a_rule_for_them_and_global_layer_widths_are_given_one_way():
    with pytest.raises(ValueError, match=r"config key 'convention': 'maxtext' has no rule for layers of their own "
                                         r"widths \(layer_widths=\['mlp_dim@1=10'\]\); use 'exact'"):
        maxflops.model_config(**BASE, layer_widths=("mlp_dim@1=10",), convention="maxtext")
    with pytest.raises(ValueError, match=r"layer 2: its own head_dim on a 'G' layer, whose head_dim is "
                                         r"global_head_dim=32"):
        maxflops.model_config(**BASE, attention_layer_pattern="LLG", sliding_window_size=4, global_head_dim=32,
                              layer_widths=("head_dim@2=8",))


def test_a_later_rule_is_over_an_earlier_one_and_mtp_modules_keep_the_configs_widths():
    c = maxflops.model_config(**BASE, mtp_num_layers=1, layer_widths=("mlp_dim@0-5=10", "mlp_dim@5=20"))
    assert [w.get("mlp_dim") for w in layer_widths(c)] == [10] * 5 + [20]
    b = maxflops.count(c)
    mtp = [r for r in b.layers if r.group == "mtp"][0]
    plain = maxflops.count(maxflops.model_config(**BASE, mtp_num_layers=1))
    assert dict(mtp.components) == dict([r for r in plain.layers if r.group == "mtp"][0].components)


def test_every_input_path_reads_the_rules_the_same_way(tmp_path):
    rules = ("mlp_dim@0-1+4=200", "num_kv_heads@2=8")
    want = maxflops.count(maxflops.model_config(**BASE, layer_widths=rules))
    assert maxflops.count(BASE, layer_widths=list(rules)).total == want.total
    body = ", ".join(f"{k}={v!r}" for k, v in {**BASE, "layer_widths": rules}.items())
    (tmp_path / "cfg.py").write_text(f"import maxflops\n\n\ndef get_config():\n    return maxflops.model_config({body})\n")
    assert maxflops.count(maxflops.load_config(str(tmp_path / "cfg.py"))).total == want.total
    (tmp_path / "empty.py").write_text("import maxflops\n\n\ndef get_config():\n    return maxflops.model_config()\n")
    flags = [f"--config={tmp_path / 'empty.py'}", *(f"--config.{k}={v}" for k, v in BASE.items()),
             f"--config.layer_widths={','.join(rules)}"]
    p = subprocess.run([sys.executable, "-m", "maxflops", "--json", *flags], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["total"] == want.total
    p = subprocess.run([sys.executable, "-m", "maxflops", "--config.layer_widths=mlp_dim@999=1"], capture_output=True,
                       text=True, cwd=ROOT)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "'layer_widths'" in p.stderr, p.stderr


def test_a_rule_that_changes_nothing_is_said():
    moe = dict(BASE, num_experts=4, num_experts_per_tok=2, moe_mlp_dim=32, first_num_dense_layers=2)
    with pytest.warns(maxflops.InertKeyWarning, match=r"rule 'mlp_dim@3-4=50' changes nothing here: layers 3, 4: "
                                                      r"no dense FFN"):
        maxflops.model_config(**moe, layer_widths=("mlp_dim@3-4=50",))
    with pytest.warns(maxflops.InertKeyWarning, match=r"rule 'moe_mlp_dim@0=50' changes nothing here: layer 0: no "
                                                      r"routed experts"):
        maxflops.model_config(**moe, layer_widths=("moe_mlp_dim@0=50",))
    with pytest.warns(maxflops.InertKeyWarning, match=r"rule 'num_kv_heads@1=1' changes nothing here: layer 1: no "
                                                      r"mixer"):
        maxflops.model_config(**dict(BASE, attention_layer_pattern="G-", ffn_layer_pattern="FF"),
                              layer_widths=("num_kv_heads@1=1",))
