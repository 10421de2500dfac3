"""Step 3.7 Flash (step3p7, its text model step3p5): StepFun's checkpoint form (attention_other_setting,
moe_layers_enum, per-layer lists padded with the MTP layers' entries) read as transformers' Step3p7TextConfig reads it,
equal to the same model as transformers saves it; NVIDIA aiconfigurator's flat files (the text model's keys at the
top level) read from those keys, equal to the same model nested in text_config; other readers' keys refused by name
where they describe another model. The eager model is held in tests/loaders/test_hf_eager.py (the step3p7 case,
forward and training exact) and the zoo (tests/loaders/test_hf_zoo.py)."""

from __future__ import annotations

import copy
import json

import pytest

import maxflops
from maxflops.loaders import NOT_UNDERSTOOD, load_hf_config
from repo import ROOT

EAGER = json.loads((ROOT / "tests" / "fixtures" / "hf_eager" / "cases.json").read_text())["cases"]["step3p7"]
HF_REAL = ROOT.parent / "shared" / "hf-real"

# the eager case's input, as StepFun's checkpoint writes a text model (tests/fixtures/hf_eager/generate.py: STEP3P7)
CHECKPOINT = {
    "model_type": "step3p7", "architectures": ["Step3p7ForConditionalGeneration"],
    "vision_config": {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2},
    "text_config": {
        "vocab_size": 70, "hidden_size": 40, "intermediate_size": 26, "num_hidden_layers": 4, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 10, "sliding_window": 5, "num_nextn_predict_layers": 1,
        "attention_other_setting": {"num_attention_heads": 8, "num_attention_groups": 2, "head_dim": 10},
        "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention",
                        "full_attention"],
        "moe_layers_enum": "1,3,4", "n_routed_experts": 5, "num_experts_per_tok": 2, "moe_intermediate_size": 22,
        "share_expert_dim": 18, "gating": "per-head"},
}


def load(tmp_path, data, name="config.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return load_hf_config(path)


def count(loaded, mode="train"):
    return maxflops.count(maxflops.model_config(**loaded.overrides, mode=mode, max_target_length=64))


def test_the_checkpoint_form_is_the_saved_form(tmp_path):
    checkpoint, saved = load(tmp_path, CHECKPOINT, "a.json"), load(tmp_path, EAGER["config"], "b.json")
    assert NOT_UNDERSTOOD not in checkpoint.ignored.values()
    assert checkpoint.overrides == saved.overrides
    o = saved.overrides
    assert o["layer_widths"] == ("num_query_heads@0+2=8",)  # the sliding layers' own head count
    assert o["attention_layer_pattern"] == "LG" and o["sliding_window_size"] == 5
    assert o["attention_head_gate"] is True and o["shared_expert_mlp_dim"] == 18
    assert o["interleave_moe_layer_step"] == 2 and "first_num_dense_layers" not in o  # MoE on layers 1 and 3
    # the MTP layer: the padded lists' tail (full attention, MoE: the last decoder layer's FFN)
    assert (o["mtp_num_layers"], o["mtp_layer_pattern"]) == (1, "G") and "mtp_ffn_layer_pattern" not in o


def test_the_mtp_layers_of_another_ffn_than_the_last_layer(tmp_path):
    """Without moe_layers_enum the class derives the MTP layers' FFNs with the decoder's: MoE from layer 3 on, so the
    MTP layers (past the last layer) come out dense; counted as a dense layer each in training."""
    data = copy.deepcopy(CHECKPOINT)
    text = data["text_config"]
    del text["moe_layers_enum"]
    text.update(num_hidden_layers=5, layer_types=text["layer_types"] + ["sliding_attention"])
    loaded = load(tmp_path, data)
    o = loaded.overrides
    assert o["ffn_layer_pattern"] == "FFFEE" and "first_num_dense_layers" not in o
    assert (o["mtp_layer_pattern"], o["mtp_ffn_layer_pattern"]) == ("L", "F")
    rows = {r.name: r for r in count(loaded).layers}
    assert rows["mtp 1"].ffn == "dense" and rows["mtp 1"].mixer == "window" and rows["layer 4"].ffn == "moe"
    # its decoder is the first_num_dense_layers form's, FLOP for FLOP
    plain = dict(o, mtp_num_layers=0, first_num_dense_layers=3)
    for key in ("ffn_layer_pattern", "mtp_layer_pattern", "mtp_ffn_layer_pattern"):
        plain.pop(key)
    with_ffn = dict(o, mtp_num_layers=0, mtp_layer_pattern="", mtp_ffn_layer_pattern="")
    assert maxflops.count(maxflops.model_config(**plain)).total == \
        maxflops.count(maxflops.model_config(**with_ffn)).total


@pytest.mark.parametrize("where, key, value, named", [
    ("text", "gating", "per-element", "gating"),  # a per-channel g_proj its attention cannot apply
    ("text", "gating", False, "gating"),
    ("text", "num_experts", 7, "num_experts"),  # not read by the class: must agree with n_routed_experts
    ("text", "first_k_dense_replace", 2, "first_k_dense_replace"),  # disagrees with moe_layers_enum
    ("text", "n_shared_experts", 2, "n_shared_experts"),
    ("text", "attention_other_setting", {"num_attention_heads": 8, "head_dim": 12}, "attention_other_setting"),
    ("text", "layer_types", ["minimax_m3_sparse"] * 5, "layer_types"),  # no mask of that kind in its model
    ("text", "per_layer_config", {"0": {"head_dim": 12}}, "per_layer_config"),
    ("text", "sliding_window", None, "sliding_window"),  # sliding layers need it
    ("text", "attention_other_setting", {"num_attention_heads": 3}, "attention_other_setting"),  # 3 heads on 2 KV
    ("text", "num_sliding_attention_heads", 5, "num_sliding_attention_heads"),
])
def test_what_transformers_does_not_build_is_refused_by_name(tmp_path, where, key, value, named):
    data = copy.deepcopy(CHECKPOINT)
    data["text_config"][key] = value
    with pytest.raises(ValueError, match=named):
        load(tmp_path, data)


def test_other_readers_keys_that_agree_are_accepted(tmp_path):
    data = copy.deepcopy(CHECKPOINT)
    data["text_config"].update(num_experts=5, n_shared_experts=1, first_k_dense_replace=0,
                               moe_layer_freq=[0, 1, 0, 1], scoring_func="sigmoid", use_moe_router_bias=True)
    data["text_config"]["moe_layers_enum"] = "1,3,4"
    with pytest.raises(ValueError, match="first_k_dense_replace"):  # layers 0 and 2 are dense: no prefix rule
        load(tmp_path, data)
    del data["text_config"]["first_k_dense_replace"]
    loaded = load(tmp_path, data)
    assert loaded.overrides == load(tmp_path, CHECKPOINT, "b.json").overrides
    assert loaded.ignored["text_config.num_experts"].startswith("superseded")


def test_attention_other_setting_keys_of_no_width_are_dropped_as_transformers_drops_them(tmp_path):
    data = copy.deepcopy(CHECKPOINT)
    data["text_config"]["attention_other_setting"].update(rope_theta=10000.0, num_key_value_heads=2)
    assert load(tmp_path, data).overrides == load(tmp_path, CHECKPOINT, "b.json").overrides


def test_any_text_config_model_type_is_read_as_step3p5(tmp_path):
    """Step3p7Config drops the model_type its text_config names and builds Step3p7TextConfig."""
    data = copy.deepcopy(CHECKPOINT)
    data["text_config"]["model_type"] = "step3p7_text"
    assert load(tmp_path, data).overrides == load(tmp_path, CHECKPOINT, "b.json").overrides


@pytest.mark.skipif(not HF_REAL.is_dir(), reason="../shared/hf-real (real published config.json files) is absent")
@pytest.mark.parametrize("name", ["step-3.7-flash", "step-3.7-flash-fp8"])
def test_aiconfigurator_flat_file_is_the_nested_model(tmp_path, name):
    """NVIDIA aiconfigurator's Step-3.7-Flash files carry the text model's keys at the top level (and its own names:
    num_experts, first_k_dense_replace, n_shared_experts): read from them, the same model as those keys nested in a
    text_config as transformers reads it."""
    flat = json.loads((HF_REAL / name / "config.json").read_text())
    got = load_hf_config(HF_REAL / name / "config.json")
    o = got.overrides
    assert (o["num_decoder_layers"], o["vocab_size"], o["attention_layer_pattern"], o["sliding_window_size"]) == \
        (45, 128896, "GLLL", 512)
    assert (o["num_experts"], o["num_experts_per_tok"], o["moe_mlp_dim"], o["shared_expert_mlp_dim"]) == \
        (288, 8, 1280, 1280)
    assert "layer_widths" not in o  # no attention_other_setting: the sliding layers at num_attention_heads
    # MoE from layer 3 (the class's rule, which first_k_dense_replace=3 agrees with); the 3 MTP layers dense
    assert o["ffn_layer_pattern"] == "FFF" + "E" * 42 and (o["mtp_num_layers"], o["mtp_ffn_layer_pattern"]) == (3, "F")
    keep = {"model_type", "architectures", "quantization_config"}
    text = {k: v for k, v in flat.items() if k not in keep | {"num_experts", "first_k_dense_replace",
                                                                "n_shared_experts"}}
    nested = {**{k: v for k, v in flat.items() if k in keep}, "text_config": text}
    assert load(tmp_path, nested).overrides == o


def test_the_mtp_alias_reads_as_num_nextn_predict_layers(tmp_path):
    """Step3p7TextConfig's attribute_map: num_mtp_layers is num_nextn_predict_layers (the padded lists split alike)."""
    data = copy.deepcopy(CHECKPOINT)
    data["text_config"]["num_mtp_layers"] = data["text_config"].pop("num_nextn_predict_layers")
    assert load(tmp_path, data).overrides == load(tmp_path, CHECKPOINT, "b.json").overrides
