"""Kimi K3 (remote code; read as Megatron-Bridge's port at 067f987d reads it: kimi_k3_bridge.py, kimi_k3_layers.py):
its text_config is a kimi_linear config that Kimi K3's code extends with attention residuals, a latent MoE, an MLA
output gate, a full-rank KDA output gate and the SiTU activation. A small file of its shape, each key read as the port
reads it; the published file loads (where ../shared/hf-real is present)."""

from __future__ import annotations

import json

import pytest

import maxflops
from maxflops.loaders import load_hf_config
from repo import ROOT

HF_REAL = ROOT.parent / "shared" / "hf-real"

TEXT = {"model_type": "kimi_linear", "architectures": ["KimiLinearForCausalLM"], "hidden_size": 64,
        "intermediate_size": 96, "moe_intermediate_size": 24, "routed_expert_hidden_size": 32,
        "latent_moe_use_norm": True, "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 4,
        "q_lora_rank": 16, "kv_lora_rank": 12, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8,
        "mla_use_nope": True, "mla_use_output_gate": True, "num_experts": 8, "num_experts_per_token": 2,
        "num_shared_experts": 2, "first_k_dense_replace": 1, "moe_layer_freq": 1, "hidden_act": "situ",
        "activation_situ_beta": 4.0, "activation_situ_linear_beta": 25.0, "attn_res_block_size": 4,
        "vocab_size": 100, "moe_router_activation_func": "sigmoid", "moe_renormalize": True,
        "use_grouped_topk": True, "num_expert_group": 1, "topk_group": 1, "topk_method": "noaux_tc",
        "linear_attn_config": {"full_attn_layers": [3, 6], "kda_layers": [1, 2, 4, 5], "head_dim": 8,
                               "num_heads": 4, "short_conv_kernel_size": 4, "gate_lower_bound": -5.0,
                               "use_full_rank_gate": True}}
K3 = {"model_type": "kimi_k3", "architectures": ["KimiK3ForConditionalGeneration"], "text_config": TEXT,
      "vision_config": {"vt_hidden_size": 32}, "ignore_index": -100, "media_placeholder_token_id": 5,
      "image_placeholder": "<|image|>"}


def _load(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return load_hf_config(path)


def test_each_key_is_read_as_the_port_reads_it(tmp_path):
    o = _load(tmp_path, K3).overrides
    assert o["attention_layer_pattern"] * (6 // len(o["attention_layer_pattern"])) == "KKGKKG"
    assert (o["kda_num_heads"], o["kda_head_dim"], o["kda_conv_kernel"], o["kda_full_rank_gate"]) == (4, 8, 4, True)
    assert o["attention_output_gate"] and o["attn_res_block_size"] == 4
    assert (o["num_experts"], o["num_experts_per_tok"], o["moe_mlp_dim"], o["moe_latent_size"],
            o["shared_experts"], o["first_num_dense_layers"]) == (8, 2, 24, 32, 2, 1)
    assert o["mlp_activations"] == ("situ", "linear") and o["mlp_dim"] == 96
    assert any("vision" in line for line in o["not_priced"])  # the tower is named, not priced
    c = maxflops.model_config(**o)
    b = maxflops.count(c)
    assert b.components["attn_res"] > 0 and b.components["moe_latent_proj"] > 0
    # every K3 form counts: without each, the count drops by that form alone
    for key, off in (("attn_res_block_size", 0), ("kda_full_rank_gate", False), ("attention_output_gate", False)):
        assert maxflops.count(c, **{key: off}).total < b.total, key


@pytest.mark.parametrize("change, key", [
    ({"first_k_dense_replace": 2}, None),  # MoE from the third layer: read
    ({"moe_layer_freq": 2}, "moe_layer_freq"),  # MoE on layers 2 and 4 only: a placement the schema's rule lacks
    ({"linear_attn_config": {**TEXT["linear_attn_config"], "new_knob": 1}}, "linear_attn_config"),
    ({"hidden_act": "sitooo"}, "hidden_act"),
])
def test_what_changes_the_model_is_read_or_refused_by_name(tmp_path, change, key):
    data = {**K3, "text_config": {**TEXT, **change}}
    if key is None:
        o = _load(tmp_path, data).overrides
        c = maxflops.model_config(**o)
        from maxflops.plan import build_plan
        assert [k.ffn for _, k in build_plan(c).kind_rows()] == ["dense", "dense", "moe", "moe", "moe", "moe"]
        return
    with pytest.raises(ValueError, match=f"'text_config.{key}'"):
        _load(tmp_path, data)


def test_kimi_linear_itself_still_refuses_kimi_k3s_own_keys(tmp_path):
    with pytest.raises(ValueError, match="use_full_rank_gate"):
        _load(tmp_path, {**TEXT, "mla_use_output_gate": False, "attn_res_block_size": 0})


@pytest.mark.skipif(not HF_REAL.is_dir(), reason="../shared/hf-real (real published config.json files) is absent")
def test_the_published_file_loads():
    o = load_hf_config(HF_REAL / "kimi-k3" / "config.json").overrides
    assert (o["num_decoder_layers"], o["emb_dim"], o["num_experts"], o["num_experts_per_tok"], o["moe_latent_size"],
            o["attn_res_block_size"], o["kda_full_rank_gate"], o["attention_output_gate"]) == (
        93, 7168, 896, 16, 3584, 12, True, True)
    assert o["weight_bytes_rules"] == ("moe_routed=17/32",)  # MXFP4 experts, 32-element groups with a byte scale
    maxflops.count(maxflops.model_config(**o))


@pytest.mark.slow
@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full"))],
                         ids=["prefill", "train", "remat"])
def test_a_flax_model_of_kimi_k3s_layers_equals_xla(tmp_path, mode, knobs):
    """Every Kimi K3 form at once (KDA with its full-rank output gate, MLA with its output gate, the latent MoE,
    attention residuals): the reduced Flax model equal to XLA."""
    from maxflops.xla import model as M
    from maxflops.xla.hlo import count_lowered

    cfg = maxflops.model_config(**_load(tmp_path, K3).overrides)
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, **knobs)
    assert c["attn_res_block_size"] and c["kda_full_rank_gate"] and c["attention_output_gate"] and c["moe_latent_size"]
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops
