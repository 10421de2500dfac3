"""Hardware FLOPs against MaxText's own train step as it runs on TPU, splash kernels included.

tests/fixtures/maxtext_tpu/programs.json was made by the script beside it: MaxText 0.2.5 builds its train step with
``attention: flash`` (jax's splash attention) and ``jax.export`` lowers it for TPU on a CPU machine; the program
counter counts it (XLA's dots loop-aware, each splash call from its own Mosaic module over its grid and block tables,
maxflops.xla.mosaic). Here ``from_maxtext`` on the same resolved config must give exactly that count (less the
elementwise work the module writes as dots, summed apart by the counter): the splash
tiles, the split backward (a dq kernel and a dkv kernel unless sa_use_fused_bwd_kernel), its recompute under
remat, the windows' skipped tiles, MLA's head widths, DeepSeek sparse attention's indexer and its top-k mask under
tokamax's dynamic-mask splash (the mask is the step's data: both counts take every causally visible tile, the
assumption maxflops.xla.splash_dynamic states), and tokamax's static-mask splash (``use_tokamax_splash``), whose
tables the program prunes by the batch's segment ids (the counter runs the program's own ops with one document per
row, maxflops.xla.fold; causal and windowed, one device and fsdp). The sharded cases (a mesh of 4 host devices: fsdp, and fsdp x
tensor with splash's mask tables split over heads) are exported before partitioning, the whole program's: exactly 4
devices' worth of the per-device count. Unverified on the chip itself: no TPU has run these programs.
"""

from __future__ import annotations

import json
import os

import pytest

import maxflops
from maxflops.maxtext import from_maxtext
from repo import FIXTURES

BASE = json.loads((FIXTURES / "maxtext_real" / "maxtext_base_keys.json").read_text())
DATA = json.loads((FIXTURES / "maxtext_tpu" / "programs.json").read_text())
CASES = DATA["cases"]


def test_fixture_is_complete():
    assert DATA["meta"]["maxtext"] == "0.2.5" and DATA["meta"]["platform"].startswith("tpu")
    assert set(CASES) >= {"dense_gqa", "dense_gqa_fused_backward", "olmo3_windows", "mla_moe", "mla_dsa",
                          "dense_gqa_fsdp4", "dense_gqa_fsdp2_tensor2", "mla_moe_fsdp4", "dense_gqa_tokamax",
                          "olmo3_windows_tokamax", "dense_gqa_tokamax_fsdp4"}
    assert {n for n, c in CASES.items() if c["devices"] == 4} == {n for n in CASES if "_fsdp" in n}
    for name, case in CASES.items():
        assert case["keys"]["attention"] == "flash" and case["kernel_flops"] > 0, name
        assert case["not_counted"] == [], name                  # every splash call priced
        assert all("splash_mha" in k for k in case["kernels"]), name


@pytest.mark.parametrize("name", sorted(CASES))
def test_hardware_flops_equal_maxtexts_tpu_train_step(name):
    """Exactly, but for the elementwise work the exported module writes as dots (MaxText's norm scales and their
    gradients as einsums, splash's backward row sums D = rowsum(dO * O)): XLA's optimizers rewrite those as
    multiplies and reductions (MaxText's CPU programs, ../maxtext_programs, hold none), and maxflops prices a norm
    or a softmax sum as no matmul. A sharded program is the whole mesh's: its devices times the per-device count."""
    case = CASES[name]
    b = maxflops.count(from_maxtext({**BASE, **case["keys"]}))
    said = [p for p in b.not_priced if p.startswith("hardware")]
    if case["keys"].get("use_indexer"):  # the top-k mask is data: both counts take its every causally visible tile
        assert len(said) == 1 and said[0].startswith("hardware: the DSA top-k mask's splash tiles are priced as every "
                                                     "causally visible tile")
        assert all("every causally visible tile assumed active" in k for k in case["kernels"])
    else:
        assert said == []
    if case["keys"].get("use_tokamax_splash") and not case["keys"].get("use_indexer"):
        assert all("segment ids taken as one document per row" in k for k in case["kernels"])
    assert b.hardware_flops * case["devices"] == case["train_step_flops"] - case["elementwise_dot_flops"]
    assert 0 < case["elementwise_dot_flops"] < case["train_step_flops"] // 1000


def test_the_split_backward_is_one_more_forward_of_the_core():
    """The fixture's two dense programs differ by one forward of the core attention: splash's default backward runs
    QK^T and dO V^T again in its dq kernel (per tile: dq 2 d_qk + d_v, dkv 2 d_qk + 2 d_v; fused: 3 d_qk + 2 d_v)."""
    split, fused = CASES["dense_gqa"], CASES["dense_gqa_fused_backward"]
    assert len(split["kernels"]) == 4 and len(fused["kernels"]) == 3   # forward, forward again (remat), dq, dkv
    prefill = maxflops.count(from_maxtext({**BASE, **fused["keys"]}), mode="prefill")
    assert split["kernel_flops"] - fused["kernel_flops"] == prefill.hardware_components["core_attention"] > 0


LIVE = ["dense_gqa", "olmo3_windows", "mla_moe", "mla_dsa", "moe_sparse_ragged_dot", "dense_gqa_fsdp2_tensor2",
        "olmo3_windows_tokamax", "dense_gqa_tokamax_fsdp4"]


@pytest.mark.skipif(not os.environ.get("MAXFLOPS_LIVE_MAXTEXT"), reason="opt-in: MAXFLOPS_LIVE_MAXTEXT=/path/to/python "
                    "of a venv with maxtext 0.2.5 re-exports some of these programs for TPU and compares")
def test_live_maxtext_tpu_programs_reproduce_the_fixture(tmp_path):
    """Re-exports eight of the recorded programs with MaxText itself into a copy of the fixture."""
    import shutil
    import subprocess

    work = tmp_path / "maxtext_tpu"
    shutil.copytree(FIXTURES / "maxtext_tpu", work)
    (tmp_path / "maxtext_real").mkdir()
    shutil.copy(FIXTURES / "maxtext_real" / "maxtext_base_keys.json", tmp_path / "maxtext_real")
    env = dict(os.environ, PYTHONPATH=str(FIXTURES.parent.parent), JAX_PLATFORMS="cpu")
    subprocess.run([os.environ["MAXFLOPS_LIVE_MAXTEXT"], str(work / "generate.py"), *LIVE], check=True,
                   capture_output=True, timeout=900, env=env)
    live = json.loads((work / "programs.json").read_text())["cases"]
    for name in LIVE:
        for key in ("train_step_flops", "kernel_flops", "elementwise_dot_flops", "kernels", "not_counted", "devices"):
            assert live[name][key] == CASES[name][key], (name, key)


def test_the_cost_estimates_maxtext_asks_for_are_one_call_of_each_kernel():
    """maxflops.maxtext.splash_cost_estimates: MaxText's cost_estimate_flops_fwd / _bwd for a flash config are one call
    of splash's forward kernel and of its fused backward kernel (tokamax's, the one the keys reach), one sequence on
    the device's heads: equal to those kernels' calls in the TPU program of the same shapes, priced from their code."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as sk
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as sm

    from maxflops.maxtext import splash_cost_estimates
    from maxflops.xla import count_program

    keys = {**BASE, **CASES["dense_gqa_fused_backward"]["keys"]}
    got = splash_cost_estimates(keys)
    c = from_maxtext(keys)
    L, H, Hkv, D, blk = c.max_target_length, c.num_query_heads, c.num_kv_heads, c.head_dim, c.attention_block_q
    tiles = dict(block_q=blk, block_kv=blk, block_kv_compute=blk, block_q_dkv=blk, block_kv_dkv=blk,
                 block_kv_dkv_compute=blk, use_fused_bwd_kernel=True)
    kernel = sk.make_splash_mha(sm.MultiHeadMask([sm.CausalMask((L, L))] * H), head_shards=1, q_seq_shards=1,
                                block_sizes=sk.BlockSizes(**tiles))
    step = jax.value_and_grad(lambda q, k, v: kernel(q, k, v).sum(), argnums=(0, 1, 2))
    q, kv = jax.ShapeDtypeStruct((H, L, D), jnp.float32), jax.ShapeDtypeStruct((Hkv, L, D), jnp.float32)
    calls = {d.note.split()[3].rstrip(":"): d.flops for d in count_program(step, q, kv, kv, platform="tpu").kernels}
    fwd, bwd = calls.pop("splash_mha_fwd_residuals"), calls.pop("splash_mha_dkv_no_residuals")
    assert not calls and (got["cost_estimate_flops_fwd"], got["cost_estimate_flops_bwd"]) == (fwd, bwd)
    assert "one sequence of 256 tokens" in got["note"]
    # a window layer and a global one: one value for both, the global layer's, said
    mixed = maxflops.model_config(attention_layer_pattern="LG", sliding_window_size=100, max_target_length=512,
                                  num_decoder_layers=2, attention_impl="blocked", attention_block_q=128,
                                  attention_block_kv=128, emb_dim=64, num_query_heads=2, num_kv_heads=2, head_dim=128)
    both = splash_cost_estimates(mixed)
    assert "the largest is given" in both["note"]
    assert both["cost_estimate_flops_fwd"] == 2 * 10 * 2 * 128 * 128 * 256     # 2 heads x 10 causal tiles
    with pytest.raises(ValueError, match="attention_impl"):
        splash_cost_estimates({**keys, "attention": "dot_product"})
