"""BLT (blt): BltConfig's four stacks read as BltModel builds them. The layout (the patcher frozen with its head, the
encoder's patch cross-attention, the global layers over the patches, the decoder's), the class defaults (BLT-1B's
shape), what runs without the patcher, and the files transformers cannot run refused by name. Exact against torch
forward and training in the zoo (tests/loaders/test_hf_zoo.py) and tests/fixtures/hf_eager (blt_wide,
blt_no_patcher)."""

from __future__ import annotations

import json

import pytest
from repo import ROOT

import maxflops
from maxflops.loaders import load_hf_config
from maxflops.report import text_report

ZOO = json.loads((ROOT / "tests" / "fixtures" / "hf_zoo" / "cases.json").read_text())["cases"]["blt"]
EAGER = json.loads((ROOT / "tests" / "fixtures" / "hf_eager" / "cases.json").read_text())["cases"]


def _load(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return load_hf_config(path)


def _count(overrides, mode, case=ZOO, **kw):
    return maxflops.count(maxflops.model_config(**{**overrides, **kw}, mode=mode, per_device_batch_size=case["batch"],
                                                max_target_length=case["length"], attention_impl="dense"))


def test_the_zoos_layout(tmp_path):
    """Two patcher layers (window 6, frozen, its head after the second), two encoder byte layers (window 8) and the
    encoder's cross-attention once, two global layers over the patches, the decoder's cross-attention before each
    of its two byte layers."""
    o = _load(tmp_path, ZOO["config"]).overrides
    assert (o["attention_layer_pattern"], o["ffn_layer_pattern"]) == ("LLLLYGGULUL", "FFFF-FF-F-F")
    assert (o["frozen_layers"], o["patcher_head_layer"], o["patch_layers"]) == ([0, 1], 1, [5, 6])
    assert (o["sliding_window_size"], o["layer_widths"], o["patch_cross_k"]) == (8, ("sliding_window_size@0-1=6",), 2)
    b = _count(o, "train")
    rows = {r.name: r for r in b.layers}
    assert rows["layer 1"].components["patcher_logits"] == ZOO["modules"]["model.patcher.lm_head"]
    # the encoder's cross-attention feeds the global layers through token_embedding_projection (2 x 40 -> 40)
    assert rows["layer 4"].computes_index and rows["layer 7"].computes_index and not rows["layer 9"].computes_index
    assert [r.name for r in b.layers if r.patches] == ["layer 5", "layer 6"]
    assert [r.name for r in b.layers if r.forward_only] == ["layer 0", "layer 1"]
    text = text_report(b)  # the report says which layers run over the patches, and which run forward only
    assert "global causal, dense FFN, over the patches" in text
    assert "sliding window, dense FFN, then the patcher's head, forward only (no gradient)" in text
    assert "(feeds the patch stream)" in text and "(projects the patch stream)" in text


def test_the_class_defaults_are_blt_1b(tmp_path):
    """BltConfig(): a 14-layer patcher of 768 (windows of 512), one encoder layer of 1024 and its cross-attention
    (k = 2: 2 x 1024 = the global width, no projection), 25 global layers of 2048 (heads of 128), nine decoder
    layers of 1024 with the cross-attention before each; the encoder's FFN 8 x 1024 / 3."""
    o = _load(tmp_path, {"model_type": "blt"}).overrides
    assert o["attention_layer_pattern"] == "L" * 15 + "Y" + "G" * 25 + "UL" * 9
    assert o["frozen_layers"] == list(range(14)) and o["patch_layers"] == list(range(16, 41))
    assert (o["emb_dim"], o["mlp_dim"], o["sliding_window_size"]) == (1024, 2730, 512)
    assert set(o["layer_widths"]) == {"emb_dim@0-13=768", "num_query_heads@0-13=12", "num_kv_heads@0-13=12",
                                      "mlp_dim@0-13=2048", "emb_dim@16-40=2048", "head_dim@16-40=128",
                                      "mlp_dim@16-40=5632", "mlp_dim@41-58=2816"}
    b = maxflops.count(maxflops.model_config(**o, mode="train", max_target_length=4096))
    assert "patch_proj" in b.components  # the pooled patches' projection (the stream's input is an identity)
    rows = {r.name: r for r in b.layers}
    assert rows["layer 15"].components["patch_proj"] == 3 * 2 * 1024 * 2048 * 4097


def test_without_the_patcher_nothing_is_frozen(tmp_path):
    """patch_in_forward false (or patching_mode other than 'entropy', or either null, which BltModel reads as
    falsy): one patch a byte and one more, no patcher layers; its sub-config's keys are reported unused."""
    case = EAGER["blt_no_patcher"]
    loaded = _load(tmp_path, case["config"])
    o = loaded.overrides
    assert "frozen_layers" not in o and "patcher_head_layer" not in o
    assert o["attention_layer_pattern"] == "GYGUGUGUG"
    assert any(k.startswith("patcher_config.") for k in loaded.ignored)
    for mode, want in (("prefill", case["total_flops"]), ("train", case["train_flops"])):
        assert _count(o, mode, case).hardware_flops == want
    for key, value in (("patch_in_forward", None), ("patching_mode", "static"), ("patching_mode", None)):
        assert _load(tmp_path, {**ZOO["config"], key: value}).overrides["attention_layer_pattern"] == "LLYGGULUL"


def test_the_patches_are_a_stated_input(tmp_path):
    """The patcher's threshold decides them from the data: patches_per_sequence (0: transformers' L + 1, what a
    patcher that opens a patch at every byte gives, as the zoo's random one does)."""
    o = _load(tmp_path, ZOO["config"]).overrides
    assert "patches_per_sequence" not in o
    L = ZOO["length"]
    full, fewer = _count(o, "prefill"), _count(o, "prefill", patches_per_sequence=8)
    assert _count(o, "prefill", patches_per_sequence=L + 1).hardware_flops == full.hardware_flops
    assert fewer.total < full.total
    assert fewer.components["logits"] == full.components["logits"]  # the head reads the bytes


@pytest.mark.parametrize("edit, key, match", [
    (dict(cross_attn_k=3), "encoder_config.cross_attn_k", "differs from cross_attn_k=3"),
    (dict(decoder_config={"hidden_size": 48}), "decoder_config.hidden_size", "differs from encoder_config.hidden_size"),
    (dict(decoder_config={"hidden_size_global": 24}), "decoder_config.hidden_size_global",
     "differs from global_config.hidden_size"),
    (dict(patcher_config={"vocab_size": 300}), "patcher_config.vocab_size", "differs from vocab_size"),
    (dict(global_config={"num_attention_heads": 3}), "global_config.num_attention_heads", "does not divide"),
    (dict(patch_size=None), "patch_size", "null"),
    (dict(encoder_config={"num_key_value_heads": 3}), "encoder_config.num_key_value_heads", "does not divide"),
])
def test_files_transformers_cannot_run_are_refused_by_name(tmp_path, edit, key, match):
    data = json.loads(json.dumps(ZOO["config"]))
    for k, v in edit.items():
        if isinstance(v, dict):
            data[k].update(v)
        else:
            data[k] = v
    with pytest.raises(ValueError, match=f"'{key}'.*{match}") as e:
        _load(tmp_path, data)
    assert len(str(e.value).splitlines()) == 1


def test_a_head_dim_in_the_file_is_not_read(tmp_path):
    """BltSelfAttention and BltCrossAttention make heads hidden_size // num_attention_heads wide, whatever head_dim
    the sub-config carries (transformers sets it so, and a file may say otherwise)."""
    data = json.loads(json.dumps(ZOO["config"]))
    data["global_config"]["head_dim"] = 99
    loaded = _load(tmp_path, data)
    assert loaded.overrides == _load(tmp_path, ZOO["config"]).overrides
    assert "global_config.head_dim" in loaded.ignored


def test_a_null_ffn_width_is_each_class_rule(tmp_path):
    """Each of BltConfig's four sub-config classes sets a null intermediate_size to int(8 hidden_size / 3): the
    patcher's (40 wide here: 106) as the others'."""
    data = json.loads(json.dumps(ZOO["config"]))
    data["patcher_config"]["intermediate_size"] = None
    assert "mlp_dim@0-1=106" in _load(tmp_path, data).overrides["layer_widths"]
