"""Hardware FLOPs against MaxText's own compiled train step.

tests/fixtures/maxtext_programs/programs.json was made by the script beside it: for tiny configs of each model
family, MaxText 0.2.5 builds its model, optimizer and train step as its trainer does, and maxflops.xla counts
the matmuls of the optimized module (every while body times its trip count). Here the engine, given MaxText's
resolved config object through ``from_maxtext``, must give exactly that count as hardware FLOPs (train step; and
in prefill mode, MaxText's eval step: one forward with the loss), except where it says, in ``not_priced``, that it
does not price the program's code path yet.
"""

from __future__ import annotations

import json
import os

import pytest

import maxflops
from maxflops.maxtext import from_maxtext
from repo import FIXTURES

BASE = json.loads((FIXTURES / "maxtext_real" / "maxtext_base_keys.json").read_text())
DATA = json.loads((FIXTURES / "maxtext_programs" / "programs.json").read_text())
CASES = DATA["cases"]

# Code paths the engine does not price yet, and the not_priced entry that says so.
NOT_PRICED = {
    "dsa_warmup_no_loss": "trains nothing",
}




def breakdown(name, **knobs):
    return maxflops.count(from_maxtext({**BASE, **CASES[name]["keys"]}), **knobs)


def test_fixture_is_complete():
    assert DATA["meta"]["maxtext"] == "0.2.5" and DATA["meta"]["backend"] == "cpu"
    # compiled by XLA for CPU, which rewrites the depthwise conv's batch-grouped weight gradient as a dense
    # convolution: MaxText's hardware key says so, and from_maxtext reads it (conv_weight_grad='dense')
    assert all(c["keys"]["hardware"] == "cpu" for c in CASES.values())
    assert from_maxtext({**BASE, **CASES["qwen3_next"]["keys"]}).conv_weight_grad == "dense"
    assert from_maxtext({**BASE, **CASES["qwen3_next"]["keys"], "hardware": "tpu"}).conv_weight_grad == "grouped"
    assert not [n for n, c in CASES.items() if "error" in c]
    assert set(NOT_PRICED) < set(CASES)


@pytest.mark.parametrize("name", sorted(set(CASES) - set(NOT_PRICED)))
def test_hardware_flops_equal_maxtexts_compiled_train_step(name):
    b = breakdown(name)
    assert [p for p in b.not_priced if p.startswith("hardware")] == []
    assert b.hardware_flops == CASES[name]["train_step_matmul_flops"]


@pytest.mark.parametrize("name", sorted(NOT_PRICED))
def test_unpriced_code_paths_say_so(name):
    b = breakdown(name)
    assert any(NOT_PRICED[name] in p for p in b.not_priced)
    assert b.hardware_flops != CASES[name]["train_step_matmul_flops"]


EVAL = sorted(n for n, c in CASES.items() if isinstance(c.get("eval_step_matmul_flops"), int))


@pytest.mark.parametrize("name", EVAL)
def test_forward_equals_maxtexts_compiled_eval_step(name):
    """MaxText's eval step is one forward pass with the loss: the prefill count, plus the indexer KL loss's
    target when that loss is on (the main attention's scores over the whole masked square, per DSA layer)."""
    b = breakdown(name, mode="prefill")
    args = CASES[name]["args"]
    kl = 0
    if args.get("indexer_loss_scaling_factor", 0) > 0:
        heads, d_qk, T, B = args["base_num_query_heads"], args["qk_nope_head_dim"] + args["qk_rope_head_dim"], \
            args["max_target_length"], args["per_device_batch_size"]
        kl = args["base_num_decoder_layers"] * B * 2 * heads * d_qk * T * T
    assert b.hardware_flops + kl == CASES[name]["eval_step_matmul_flops"]


def test_the_eval_steps_maxtext_cannot_build_are_recorded():
    # MaxText 0.2.5's eval step fails in the DSA warm-up stage with a KL loss
    assert {n for n, c in CASES.items() if not isinstance(c.get("eval_step_matmul_flops"), int)} == \
        {n for n in CASES if n.startswith("dsa_warmup_") and n != "dsa_warmup_no_loss"}


def test_the_knobs_matter():
    """Each knob the mapping sets moves the count away from MaxText's program when it is taken back."""
    checks = {"dense_remat_minimal": dict(remat_policy="full"), "gemma3_windows": dict(post_ffn_norm=False),
              "moe_dense_path": dict(moe_dispatch="gather"), "moe_capacity": dict(capacity_rule="ceil"),
              "mla_moe_shared_mtp": dict(remat_mtp=True), "dsa_sparse_topk_at_T": dict(indexer_skip_short=False),
              "dsa_sparse_kl_loss": dict(outer_product_grads="matmul"),
              "dsa_warmup_kl_loss": dict(indexer_stage="sparse"),
              "dsa_warmup_one_layer_dense_group": dict(warmup_cse_layers=()),
              "dsa_warmup_unscanned": dict(warmup_dead_last_layer=False)}
    checks = [(name, undo) for name, undo in checks.items()]
    checks += [("gpt_oss_cycle_2", dict(remat_block_layers=1)), ("gpt_oss_two_cycles", dict(remat_block_layers=1))]
    checks += [("dsa_warmup_one_layer_moe_group", undo) for undo in (
        dict(warmup_cse_layers=()), dict(warmup_dead_last_layer=False))]
    checks += [("deepseek4_two_blocks", undo) for undo in (
        dict(remat_skip_layers=0), dict(remat_block_layers=1), dict(outer_product_grads="matmul"))]
    checks += [("qwen3_next_two_cycles", undo) for undo in (
        dict(gdn_conv_impl="valid"), dict(conv_weight_grad="grouped"), dict(outer_product_grads="matmul"))]
    checks += [("qwen3_next_remat_save_qkv_proj", dict(qkv_norms="none"))]
    checks += [("llama4", dict(moe_router_scale="output")), ("llama4", dict(remat_block_layers=1)),
               ("envy", dict(remat_block_layers=1)), ("olmo3", dict(post_ffn_norm=False)),
               ("olmo3_qk_norm_save_qkv_proj", dict(qkv_norms="none")), ("gemma4_save_qkv_proj", dict(qkv_norms="qk"))]
    prefill = {"qwen3_next": dict(gdn_impl="recurrent")}
    for name, undo in checks:
        assert breakdown(name, **undo).hardware_flops != CASES[name]["train_step_matmul_flops"], name
    for name, undo in prefill.items():
        assert breakdown(name, mode="prefill", **undo).hardware_flops != CASES[name]["eval_step_matmul_flops"]


def test_named_policies_on_experts_and_mla_latents():
    """MoE experts carry the MLP's checkpoint names (minimal saves them: not recomputed); MLA's q and kv latents
    carry none, so they are recomputed even when q, k and v are saved. Each rule, taken back, misses MaxText's
    program by exactly its part: the routed experts' forward, and the latents' D x (q_lora + kv_lora + rope)."""
    moe = CASES["moe_remat_minimal"]
    b = maxflops.count(from_maxtext({**BASE, **moe["keys"]}))
    assert b.hardware_flops == moe["train_step_matmul_flops"]
    none = maxflops.count(from_maxtext({**BASE, **moe["keys"]}), remat_policy="none")
    assert b.hardware_components["moe_routed"] == none.hardware_components["moe_routed"]  # nothing recomputed
    mla = CASES["mla_moe_remat_save_qkv_proj"]
    a = mla["args"]
    latents = a["base_num_decoder_layers"] * 2 * a["base_emb_dim"] * (a["q_lora_rank"] + a["kv_lora_rank"]
                                                                       + a["qk_rope_head_dim"])
    latents *= a["per_device_batch_size"] * a["max_target_length"]
    b = maxflops.count(from_maxtext({**BASE, **mla["keys"]}))
    full = maxflops.count(from_maxtext({**BASE, **mla["keys"]}), remat_policy="none")
    assert b.hardware_flops == mla["train_step_matmul_flops"]
    assert b.hardware_components["qkv_proj"] - full.hardware_components["qkv_proj"] == latents


def test_warmup_layers_outside_a_loop():
    """MaxText's deepseek decoder scans its dense prefix and its MoE layers as two groups. In the warm-up stage (no
    LM loss), a group of one layer, which XLA unrolls, has its recompute of the q/k/v projections, the indexer's
    projections and its KL target merged with its forward; an unrolled last layer keeps only the work the indexer's
    loss reads. Under a policy saving q/k/v only MLA's q latent is recomputed (the indexer reads it). Each rule,
    taken back, misses the program by exactly its part."""
    layouts = {"dsa_warmup_kl_loss": ((), False), "dsa_warmup_one_layer_dense_group": ((0,), False),
               "dsa_warmup_one_layer_moe_group": ((2,), True), "dsa_warmup_one_layer_groups": ((0, 1), True),
               "dsa_warmup_unscanned": ((), True)}
    for name, (cse, dead) in layouts.items():
        cfg = from_maxtext({**BASE, **CASES[name]["keys"]})
        assert (cfg.warmup_cse_layers, cfg.warmup_dead_last_layer) == (cse, dead), name
    name = "dsa_warmup_one_layer_moe_group"
    b, alive = breakdown(name), breakdown(name, warmup_dead_last_layer=False)
    last, live = b.layers[-2].hardware_components, alive.layers[-2].hardware_components  # (the head is last)
    assert set(last) == {"qkv_proj", "indexer_proj", "indexer_score", "indexer_kl"}
    assert alive.hardware_flops - b.hardware_flops == sum(v for k, v in live.items() if k not in last)
    merged = breakdown(name, warmup_dead_last_layer=False, warmup_cse_layers=())
    recompute = breakdown(name, remat_policy="none", warmup_dead_last_layer=False, warmup_cse_layers=())
    extra = {k: merged.layers[-2].hardware_components[k] - recompute.layers[-2].hardware_components[k]
             for k in ("qkv_proj", "indexer_proj", "indexer_kl")}
    assert merged.hardware_flops - alive.hardware_flops == sum(extra.values()) > 0
    # the warm-up's own layout left to a config of another kind is said
    keys = {**BASE, **CASES["dsa_warmup_kl_loss"]["keys"]}
    mtp = from_maxtext({**keys, "mtp_num_layers": 1})
    assert any("MTP modules in the DSA warm-up" in p for p in maxflops.count(mtp).not_priced)
    assert from_maxtext(keys)["indexer_stage"] == "warmup"


def test_gpt_oss_and_olmo3_take_their_pattern_by_place_in_the_scanned_block():
    """MaxText's scannable gpt_oss and olmo3 blocks build a block of inhomogeneous_layer_cycle_interval layers, each
    with the attention of its place in the block (gpt_oss: local, global; olmo3: three sliding, one global), and
    rematerialize the block as one unit. A block of one layer is all local; unscanned, each layer takes its number's."""
    keys = {**BASE, **CASES["gpt_oss"]["keys"]}
    assert keys["inhomogeneous_layer_cycle_interval"] == 1 and keys["scan_layers"]
    assert from_maxtext(keys).attention_layer_pattern == "L"
    assert from_maxtext({**keys, "scan_layers": False}).attention_layer_pattern == "LG"
    two = from_maxtext({**BASE, **CASES["gpt_oss_cycle_2"]["keys"]})
    assert (two.attention_layer_pattern, two.remat_block_layers) == ("LG", 2)
    olmo = {**BASE, **CASES["olmo3"]["keys"]}
    assert from_maxtext({**olmo, "inhomogeneous_layer_cycle_interval": 4}).attention_layer_pattern == "LLLG"
    assert from_maxtext({**olmo, "inhomogeneous_layer_cycle_interval": 2}).attention_layer_pattern == "LL"
    assert from_maxtext({**olmo, "inhomogeneous_layer_cycle_interval": 2,
                         "scan_layers": False}).attention_layer_pattern == "LLLG"


def test_a_scanned_cycle_that_does_not_hold_the_pattern_is_refused():
    """MaxText's scanned llama4 and envy give each layer its kind by its place in a block of
    inhomogeneous_layer_cycle_interval layers: with a cycle of 1 and MoE every second layer it builds no MoE layer."""
    keys = {**BASE, **CASES["envy"]["keys"], "inhomogeneous_layer_cycle_interval": 1}
    with pytest.raises(ValueError, match="inhomogeneous_layer_cycle_interval.*interleave_moe_layer_step=2"):
        from_maxtext(keys)
    assert from_maxtext({**keys, "scan_layers": False}).interleave_moe_layer_step == 2


LIVE = ["dense_remat_minimal", "moe_capacity", "dsa_warmup_one_layer_moe_group", "qwen3_next_remat_save_qkv_proj", "llama4"]


@pytest.mark.skipif(not os.environ.get("MAXFLOPS_LIVE_MAXTEXT"), reason="opt-in: MAXFLOPS_LIVE_MAXTEXT=/path/to/python "
                    "of a venv with maxtext 0.2.5 recompiles some of these programs and compares")
def test_live_maxtext_programs_reproduce_the_fixture(tmp_path):
    """Rebuilds five of the recorded programs with MaxText itself (about a minute) into a copy of the fixture."""
    import shutil
    import subprocess

    here = FIXTURES / "maxtext_programs"
    work = tmp_path / "maxtext_programs"
    shutil.copytree(here, work)
    (tmp_path / "maxtext_real").mkdir()
    shutil.copy(FIXTURES / "maxtext_real" / "maxtext_base_keys.json", tmp_path / "maxtext_real")
    env = dict(os.environ, PYTHONPATH=str(FIXTURES.parent.parent), JAX_PLATFORMS="cpu")
    subprocess.run([os.environ["MAXFLOPS_LIVE_MAXTEXT"], str(work / "generate.py"), *LIVE], check=True,
                   capture_output=True, timeout=1200, env=env)
    live = json.loads((work / "programs.json").read_text())["cases"]
    for name in LIVE:
        for key in ("train_step_matmul_flops", "eval_step_matmul_flops"):
            assert live[name][key] == CASES[name][key], (name, key)


def test_review_fixes_on_maxtext_keys():
    """Found by review: the indexer and its KL target stay full squares under attention='flash' (MaxText computes them
    as plain einsums); a sparse-stage program gets no warm-up note; llama4's NoPE layers skip the q/k norm."""
    keys = {**BASE, **CASES["dsa_sparse_kl_loss"]["keys"], "max_target_length": 64}
    dense = maxflops.count(from_maxtext(keys)).hardware_components
    flash = maxflops.count(from_maxtext({**keys, "attention": "flash", "sa_block_q": 16,
                                         "sa_block_kv": 16})).hardware_components
    assert (flash["indexer_score"], flash["indexer_kl"]) == (dense["indexer_score"], dense["indexer_kl"])
    sparse = from_maxtext({**BASE, **CASES["dsa_sparse_kl_loss"]["keys"], "num_decoder_layers": 3,
                           "base_num_decoder_layers": 3, "first_num_dense_layers": 1})
    assert not any("warm-up" in p for p in maxflops.count(sparse).not_priced)
    l4 = {**BASE, **CASES["llama4"]["keys"], "use_qk_norm": True, "remat_policy": "save_qkv_proj"}
    b = maxflops.count(from_maxtext(l4))
    assert from_maxtext(l4).qkv_norms == "qk_rope"
    none = maxflops.count(from_maxtext(l4), remat_policy="none")  # the engine's: MaxText's 'none' is full remat
    rows = {r.name: r.hardware_components["qkv_proj"] for r in b.layers if r.group == "decoder"}
    rows_none = {r.name: r.hardware_components["qkv_proj"] for r in none.layers if r.group == "decoder"}
    assert rows["layer 1"] == rows_none["layer 1"]  # the NoPE (global) layer saves q, k, v: nothing recomputed
    a = CASES["llama4"]["args"]  # the RoPE layer recomputes its normed q and k projections, D -> (H + Hkv) x hd
    tokens = a["per_device_batch_size"] * a["max_target_length"]
    q_and_k = 2 * a["base_emb_dim"] * (a["base_num_query_heads"] + a["base_num_kv_heads"]) * a["head_dim"] * tokens
    assert rows["layer 0"] - rows_none["layer 0"] == q_and_k
