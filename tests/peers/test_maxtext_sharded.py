"""Hardware FLOPs per device against MaxText's own train step compiled for 8 simulated devices.

tests/fixtures/maxtext_sharded/sharded.json was made by the script beside it: tiny configs with a mesh (fsdp, fsdp x
tensor, tensor, context, expert parallelism; a batch below one sequence per device), built and lowered by MaxText
0.2.5 as its trainer does (under its mesh and logical axis rules), partitioned by XLA over 8 host devices, and
counted per device by maxflops.xla (the matmuls one device runs). Here the engine, given MaxText's resolved config
object through ``from_maxtext``, must give that count as its per-device hardware FLOPs.
"""

from __future__ import annotations

import json
import os

import pytest

import maxflops
from maxflops.maxtext import from_maxtext
from repo import FIXTURES

BASE = json.loads((FIXTURES / "maxtext_real" / "maxtext_base_keys.json").read_text())
DATA = json.loads((FIXTURES / "maxtext_sharded" / "sharded.json").read_text())
CASES = DATA["cases"]
BUILT = sorted(n for n, c in CASES.items() if "error" not in c)

# Programs the engine does not price to the FLOP yet, and the not_priced entry that says so.
NOT_PRICED = {
    "residual_whole_outside_moe_capacity_fsdp4_tensor2": "logical_axis_rules other than MaxText 0.2.5's defaults",
    "residual_whole_in_moe_capacity_fsdp4_tensor2": "logical_axis_rules other than MaxText 0.2.5's defaults",
    "megatron_rules_kv_heads_whole_moe_capacity_fsdp2_tensor4": "logical_axis_rules other than MaxText 0.2.5's",
}



def breakdown(name, **knobs):
    return maxflops.count(from_maxtext({**BASE, **CASES[name]["keys"]}), **knobs)


def test_fixture_is_complete():
    assert DATA["meta"]["maxtext"] == "0.2.5" and DATA["meta"]["devices"] == 8 and DATA["meta"]["backend"] == "cpu"
    assert sorted(set(CASES) - set(BUILT)) == [] and set(NOT_PRICED) <= set(CASES)


@pytest.mark.parametrize("name", sorted(set(BUILT) - set(NOT_PRICED)))
def test_per_device_hardware_flops_equal_maxtexts_partitioned_train_step(name):
    b = breakdown(name)
    assert [p for p in b.not_priced if p.startswith("hardware")] == []
    assert b.hardware_flops == CASES[name]["train_step_matmul_flops"]


def test_no_expert_sharding_repeats_the_down_projections_input_gradient_per_batch_shard_of_an_expert_shard():
    # moe_dispatch_no_expert_sharding: each batch shard holding the same expert shard computes the experts'
    # down-projection input gradient for all of their rows. The forward is the default layout's.
    replicas = {"fsdp2_expert4": 2, "fsdp4_expert2": 4, "data2_expert4": 2, "fsdp2_tensor2_expert2": 2,
                "expert8": 1, "fsdp8": 1}
    for mesh, r in replicas.items():
        name = f"moe_capacity_{mesh}_no_expert_sharding"
        cfg = from_maxtext({**BASE, **CASES[name]["keys"]})
        assert cfg.moe_down_grad_replicas == r, name
        b = maxflops.count(cfg)
        extra = b.hardware_components.get("moe_down_grad_replicated", 0)
        down = maxflops.count(cfg, moe_down_grad_replicas=1)
        assert b.hardware_flops - extra == down.hardware_flops and (extra > 0) == (r > 1), name
    peeled, default = breakdown("moe_capacity_fsdp2_expert4_no_expert_sharding"), breakdown("moe_capacity_fsdp2_expert4")
    assert peeled.hardware_flops - default.hardware_flops == peeled.hardware_components["moe_down_grad_replicated"]
    # one forward of the down projection per replica past the first, per layer (2): E (4) x slots (2 sequences x
    # MaxText's int(16 x 2 / 4 x 1.3) = 10 per sequence) x 2 x F (24) x D (32)
    assert peeled.hardware_components["moe_down_grad_replicated"] == 2 * 4 * 20 * 2 * 24 * 32
    assert breakdown("moe_capacity_fsdp2_expert4_no_expert_sharding", mode="prefill").hardware_flops == \
        breakdown("moe_capacity_fsdp2_expert4", mode="prefill").hardware_flops
    ideal = from_maxtext({**BASE, **CASES["moe_capacity_fsdp2_expert4_no_expert_sharding"]["keys"]})
    with pytest.warns(maxflops.InertKeyWarning, match="'moe_down_grad_replicas' = 1 changes nothing here"):
        assert maxflops.count(ideal, moe_impl="ideal").hardware_flops == \
            maxflops.count(ideal, moe_impl="ideal", moe_down_grad_replicas=1).hardware_flops
    with pytest.raises(ValueError, match="moe_down_grad_replicas"):
        maxflops.count(ideal, moe_down_grad_replicas=0)


@pytest.mark.parametrize("name", sorted(NOT_PRICED))
def test_unpriced_programs_say_so(name):
    b = breakdown(name)
    assert any(NOT_PRICED[name] in p for p in b.not_priced)
    assert b.hardware_flops != CASES[name]["train_step_matmul_flops"]


def test_megatron_style_rules_repeat_the_moe_routing_on_every_tensor_rank():
    # The residual stream whole over `tensor`: attention, the MLP, the experts and the head still split over it
    # (heads, hidden widths, vocabulary), so a dense model's program is the default rules' share; the MoE router,
    # dispatch, combine and weighted sum have no tensor-sharded dimension and run whole on every tensor rank.
    for name, default in (("megatron_rules_dense_fsdp4_tensor2", "dense_fsdp4_tensor2"),
                          ("megatron_rules_moe_capacity_fsdp4_tensor2", None),
                          ("megatron_rules_moe_fsdp4_tensor2", None),
                          ("megatron_rules_mla_moe_fsdp4_tensor2", "mla_moe_fsdp4_tensor2"),
                          ("megatron_rules_moe_capacity_tensor8", None)):
        cfg = from_maxtext({**BASE, **CASES[name]["keys"]})
        tensor = 8 if name.endswith("tensor8") else 2
        assert cfg.moe_routing_replicas == tensor, name
        for mode in ("train", "prefill"):
            b = maxflops.count(cfg, mode=mode)
            routing = sum(b.hardware_components.get(k, 0) for k in
                          ("moe_router", "moe_dispatch", "moe_combine", "moe_weighted_sum"))
            assert b.hardware_components.get("moe_routing_replicated", 0) == (tensor - 1) * routing, (name, mode)
            if default:
                assert b.hardware_flops == breakdown(default, mode=mode).hardware_flops + (tensor - 1) * routing
    assert breakdown("megatron_rules_dense_fsdp4_tensor2").hardware_components.keys() == \
        breakdown("dense_fsdp4_tensor2").hardware_components.keys()
    # K/V heads whole over `tensor` too (fewer KV heads than tensor ranks): XLA still splits the K/V projections
    for name, replicas in (("kv_heads_whole_fsdp2_tensor4", 1), ("megatron_rules_kv_heads_whole_fsdp2_tensor4", 4),
                           ("megatron_rules_kv_heads_whole_one_kv_head_fsdp4_tensor2", 2)):
        cfg = from_maxtext({**BASE, **CASES[name]["keys"]})
        assert cfg.moe_routing_replicas == replicas and not maxflops.count(cfg).not_priced, name
    with pytest.raises(ValueError, match="moe_routing_replicas"):
        maxflops.model_config(moe_routing_replicas=0)


def test_pipeline_stages_run_their_layers_in_the_bubble_too():
    # Each stage runs its pipelined layers over repeats x microbatches + stages - 1 iterations (twice stages - 1 with
    # delayed activation forwarding): the bubble adds (stages - 1) / (repeats x microbatches) of the layers' work.
    expect = {"pipeline_stage2_fsdp4": (2, 2, 1, False, ()), "pipeline_stage2_fsdp4_microbatches4": (2, 4, 1, False, ()),
              "pipeline_stage2_fsdp4_4_layers_circular": (2, 2, 2, False, ()),
              "pipeline_stage2_fsdp4_4_layers_2_per_stage": (2, 2, 1, False, ()),
              "pipeline_stage2_fsdp4_2_of_4_layers": (2, 2, 1, False, (0, 1)),
              "pipeline_stage4_fsdp2_4_layers": (4, 4, 1, False, ()),
              "pipeline_stage2_fsdp4_delay": (2, 4, 1, True, ()),
              "pipeline_stage2_mla_moe_fsdp4": (2, 2, 1, False, (2, 3))}  # deepseek pipelines its MoE layers
    for name, (S, M, R, delay, layers) in expect.items():
        cfg = from_maxtext({**BASE, **CASES[name]["keys"]})
        got = (cfg.pipeline_stages, cfg.pipeline_microbatches, cfg.pipeline_repeats, cfg.pipeline_delay,
               cfg.pipeline_layers)
        assert got == (S, M, R, delay, layers), name
        b = maxflops.count(cfg)
        piped = [row for row in b.layers if row.name.startswith("layer ")
                 and (not layers or int(row.name.split()[1]) in layers)]
        work = sum(sum(v for k, v in row.hardware_components.items() if k != "pipeline_bubble") for row in piped)
        assert b.hardware_components["pipeline_bubble"] * R * M == work * (S - 1) * (2 if delay else 1), name
        assert b.hardware_flops - b.hardware_components["pipeline_bubble"] == \
            maxflops.count(cfg, pipeline_stages=1).hardware_flops
        assert b.total == maxflops.count(cfg, pipeline_stages=1).total  # model FLOPs: the ideal share
    with pytest.raises(ValueError, match="num_pipeline_microbatches"):
        from_maxtext({**BASE, **CASES["pipeline_stage2_fsdp4"]["keys"], "num_pipeline_microbatches": 0})
    with pytest.raises(ValueError, match="num_pipeline_repeats"):
        from_maxtext({**BASE, **CASES["pipeline_stage2_fsdp4"]["keys"], "num_pipeline_repeats": 2})
    with pytest.raises(ValueError, match="pipeline_layers"):
        maxflops.model_config(pipeline_stages=2, pipeline_layers=(5,))


def test_the_report_says_what_the_partitioned_program_adds():
    from maxflops.report import text_report

    said = {"dense_fsdp8_batch_half": "sequences per device 1: the batch of 0.5 padded per batch shard (8 shards",
            "pipeline_stage2_fsdp4_microbatches4": "pipeline of 2 stages x 4 microbatches x 1 repeats",
            "megatron_rules_moe_capacity_fsdp4_tensor2": "MoE routing whole on 2 devices",
            "moe_capacity_fsdp4_expert2_no_expert_sharding": "experts' down-projection input gradient on 4 devices"}
    for name, words in said.items():
        cfg = from_maxtext({**BASE, **CASES[name]["keys"]})
        assert words in text_report(maxflops.count(cfg), cfg), name
    cfg = from_maxtext({**BASE, **CASES["dense_fsdp4_tensor2_batch_half"]["keys"]})
    assert "sequences per device" not in text_report(maxflops.count(cfg), cfg)  # the share exactly: nothing said


def test_a_batch_below_one_sequence_per_device_is_padded_per_batch_shard():
    # 0.5 sequences per device: MaxText trains 4 sequences on 8 devices. Over fsdp 8 (8 batch shards) each device
    # runs one whole sequence, twice the model's share; over fsdp 4 x tensor 2 each shard's sequence is split
    # between its two devices, the model's share exactly.
    half, whole = breakdown("dense_fsdp8_batch_half"), breakdown("dense_fsdp4_tensor2_batch_half")
    assert half.total == whole.total and half.hardware_flops == 2 * whole.hardware_flops
    assert half.hardware_flops == breakdown("dense_fsdp8").hardware_flops // 2


@pytest.mark.parametrize("name", [n for n in BUILT if isinstance(CASES[n]["eval_step_matmul_flops"], int)
                                  and n not in NOT_PRICED])
def test_per_device_forward_equals_maxtexts_partitioned_eval_step(name):
    assert breakdown(name, mode="prefill").hardware_flops == CASES[name]["eval_step_matmul_flops"]


def test_the_mesh_is_read_from_maxtexts_keys():
    keys = {**BASE, **CASES["moe_fsdp2_expert4"]["keys"]}
    cfg = from_maxtext(keys)
    assert (cfg.num_devices, cfg.batch_shards) == (8, 8)  # the batch over fsdp x expert
    tp = from_maxtext({**BASE, **CASES["dense_fsdp4_tensor2"]["keys"]})
    assert (tp.num_devices, tp.batch_shards) == (8, 4)
    one = from_maxtext(BASE)
    assert (one.num_devices, one.batch_shards) == (0, 0)  # one device: nothing to pad
    filled = from_maxtext({**keys, "ici_parallelism": [1, 1, 1, -1, 1, 1, 1, 1, 2, 1, 1, 1]})
    assert filled.batch_shards == 4  # the -1 (fsdp) fills the slice: 8 / tensor 2
    with pytest.raises(ValueError, match="ici_parallelism"):
        from_maxtext({**keys, "ici_parallelism": [1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1]})
    with pytest.raises(ValueError, match="per_device_batch_size.*num_devices=8"):
        maxflops.count(from_maxtext(keys), per_device_batch_size=0.3)
    with pytest.raises(ValueError, match="batch_shards.*does not divide"):
        maxflops.model_config(num_devices=8, batch_shards=3)
    with pytest.raises(ValueError, match="together"):
        maxflops.model_config(num_devices=8)


LIVE = ["dense_fsdp8_batch_half", "moe_fsdp2_expert4", "moe_capacity_fsdp4_expert2_no_expert_sharding",
        "megatron_rules_moe_capacity_fsdp4_tensor2", "pipeline_stage2_fsdp4_4_layers_circular"]


@pytest.mark.skipif(not os.environ.get("MAXFLOPS_LIVE_MAXTEXT"), reason="opt-in: MAXFLOPS_LIVE_MAXTEXT=/path/to/python "
                    "of a venv with maxtext 0.2.5 recompiles five of these programs on 8 host devices and compares")
def test_live_maxtext_sharded_programs_reproduce_the_fixture(tmp_path):
    import shutil
    import subprocess

    for folder in ("maxtext_sharded", "maxtext_programs"):
        shutil.copytree(FIXTURES / folder, tmp_path / folder)
    (tmp_path / "maxtext_real").mkdir()
    shutil.copy(FIXTURES / "maxtext_real" / "maxtext_base_keys.json", tmp_path / "maxtext_real")
    env = dict(os.environ, PYTHONPATH=str(FIXTURES.parent.parent), JAX_PLATFORMS="cpu")
    subprocess.run([os.environ["MAXFLOPS_LIVE_MAXTEXT"], str(tmp_path / "maxtext_sharded" / "generate.py"), *LIVE],
                   check=True, capture_output=True, timeout=1200, env=env)
    live = json.loads((tmp_path / "maxtext_sharded" / "sharded.json").read_text())["cases"]
    for name in LIVE:
        for key in ("train_step_matmul_flops", "eval_step_matmul_flops"):
            assert live[name][key] == CASES[name][key], (name, key)


def test_rules_other_than_maxtexts_defaults_are_said():
    # A Megatron-style rule that replicates the residual stream over 'tensor' leaves matmuls whole on every tensor
    # rank: priced as the default rules shard it, and said in not_priced
    keys = {**BASE, **CASES["dense_fsdp4_tensor2"]["keys"]}
    rules = [[name, [a for a in axes if a != "tensor"] if name == "activation_embed" and isinstance(axes, list)
              else axes] for name, axes in BASE["logical_axis_rules"]]
    assert rules != BASE["logical_axis_rules"]
    custom = maxflops.count(from_maxtext({**keys, "logical_axis_rules": rules}))
    assert any("logical_axis_rules" in p for p in custom.not_priced)
    assert not any("logical_axis_rules" in p for p in maxflops.count(from_maxtext(keys)).not_priced)
