"""tokamax's dynamic-mask splash (DSA's top-k mask under MaxText's flash path) priced from tables rebuilt from a
stated mask (maxflops.xla.splash_dynamic), held to tokamax's own code:

- the tables: tests/fixtures/tokamax_dynamic/tables.json holds what tokamax's ``_process_dynamic_mask`` and
  ``find_bounds`` build at run time for masks of four kinds and three tile shapes, forward and dkv; the rebuild from
  the mask's tile occupancy equals them entry for entry (past the grid, mask_next is never read);
- the price: step.mlir, tokamax's training step exported for TPU (tiles 128 x 256 forward, 256 x 128 backward),
  counted over its own Mosaic kernels with the tables rebuilt, equals a brute-force count from the mask itself (per
  head, each tile holding a visible pair: the forward's 2 matmuls, the fused dkv kernel's 5);
- MaxText's DeepSeek sparse attention program (tests/peers/test_maxtext_tpu.py, case mla_dsa) meets from_maxtext's
  ``dsa_impl='blocked'`` under the default assumption.
The opt-in live test regenerates the fixture with tokamax itself. Unverified on the chip: no TPU has run it.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from maxflops.xla import splash_dynamic
from maxflops.xla.kernels import RunTimeInputs
from maxflops.xla.program import count_file
from repo import FIXTURES, ROOT, needs_tokamax

HERE = FIXTURES / "tokamax_dynamic"
TABLES = json.loads((HERE / "tables.json").read_text())
VERSIONS = json.loads((HERE / "versions.json").read_text())
STEP = VERSIONS["step"]
NAMES = ("active_rows", "active_cols", "mask_next", "bounds_start", "bounds_end", "block_mask")


@pytest.mark.parametrize("name", sorted(TABLES))
@pytest.mark.parametrize("walk", ["fwd", "dkv"])
def test_the_rebuilt_tables_are_tokamaxs(name, walk):
    case = TABLES[name]
    lay = splash_dynamic.Layout(walk == "dkv", case["length"], case["block_q"], case["block_kv"])
    n, built = splash_dynamic.tables(case["occupancy"], lay)
    want = case[walk]
    assert n == want["grid"]
    for key, got in zip(NAMES, built):
        assert (got[:n] if key == "mask_next" else got) == want[key], key


def test_the_fixture_covers_what_matters():
    """Empty key tiles (dkv's extra visits), full tiles, windows and a scattered top-k, over square and oblong tiles."""
    assert VERSIONS["tokamax"] and VERSIONS["jax"].startswith("0.")
    kinds = {x for c in TABLES.values() for row in c["occupancy"] for x in row}
    assert kinds == {0, 1, 2}
    assert any(c["dkv"]["grid"] > sum(x > 0 for row in c["occupancy"] for x in row) for c in TABLES.values())
    assert {(c["block_q"], c["block_kv"]) for c in TABLES.values()} == {(128, 128), (128, 256), (256, 128)}


def test_causal_is_the_occupancy_of_a_causal_mask():
    for case in TABLES.values():
        lay = splash_dynamic.Layout(False, case["length"], case["block_q"], case["block_kv"])
        L = case["length"]
        causal = np.arange(L)[None, :] <= np.arange(L)[:, None]
        visible = [[int(x > 0) for x in row] for row in splash_dynamic.occupancy(causal, lay)]
        assert splash_dynamic.causal(lay) == visible


def _brute(mask) -> int:
    """The step's kernel FLOPs from the mask: per head, every tile holding a visible pair runs its matmuls (the
    forward's QK^T and PV; the fused dkv kernel's QK^T, dO V^T, dV, dK and dQ), each 2 x tile rows x tile cols x D."""
    L, H, D = STEP["length"], STEP["heads"], STEP["head_dim"]

    def tiles(bq, bkv):
        return int(mask.reshape(L // bq, bq, L // bkv, bkv).any(axis=(1, 3)).sum())

    fwd = tiles(STEP["block_q"], STEP["block_kv"]) * 2 * 2 * STEP["block_q"] * STEP["block_kv"] * D
    dkv = tiles(STEP["block_q_dkv"], STEP["block_kv_dkv"]) * 5 * 2 * STEP["block_q_dkv"] * STEP["block_kv_dkv"] * D
    return H * (fwd + dkv)


def _kernels(c) -> dict:
    return {d.note.split()[3].rstrip(":"): d for d in c.kernels}


def test_the_exported_step_prices_as_its_mask():
    L = STEP["length"]
    causal = np.arange(L)[None, :] <= np.arange(L)[:, None]
    c = count_file(HERE / "step.mlir")                       # the default: every causally visible tile
    assert c.not_counted == () or list(c.not_counted) == []
    assert set(_kernels(c)) == {"splash_mha_fwd_residuals", "splash_mha_dkv_no_residuals"}
    assert c.kernel_flops == _brute(causal)
    assert all("every causally visible tile assumed active" in d.note for d in c.kernels)
    rng = np.random.default_rng(1)
    for keep in (0.02, 0.2):                                 # a scattered mask: fewer tiles than causal
        mask = causal & (rng.random((L, L)) < keep)
        mask[:, 256:384] = False                             # a key tile no query sees
        given = count_file(HERE / "step.mlir", splash_mask=mask)
        assert given.kernel_flops == _brute(mask) < c.kernel_flops
        assert all("the tiles the mask given holds" in d.note for d in given.kernels)
    assert count_file(HERE / "step.mlir", splash_mask=mask.tolist()).kernel_flops == _brute(mask)


def test_no_assumption_leaves_them_named_not_counted():
    c = count_file(HERE / "step.mlir", splash_mask=None)
    assert c.kernel_flops == 0 and len(c.not_counted) == 2
    assert all("splash_mask=None" in d.note for d in c.not_counted)
    wrong = count_file(HERE / "step.mlir", splash_mask=np.ones((256, 256), bool))
    assert all("[512, 512] boolean mask" in d.note for d in wrong.not_counted)


def test_a_bad_assumption_is_one_error():
    for bad in ("dense", 3, object()):
        with pytest.raises(ValueError, match="splash_mask"):
            RunTimeInputs(splash_mask=bad)


def test_a_static_splash_is_not_taken_for_a_dynamic_one():
    """The layout rule: six equal tables and a partial-mask operand of as many blocks, a self-attention length."""
    data = [((2, 512, 128), "f32")] * 3 + [((16, 128, 128), "s8")]
    assert splash_dynamic.layout("splash_mha_fwd", [(16,)] * 6, data) == splash_dynamic.Layout(False, 512, 128, 128)
    assert splash_dynamic.layout("kernel", [(16,)] * 6, data) is None            # not a splash kernel
    assert splash_dynamic.layout("splash_mha_fwd", [(16,)] * 3, data) is None     # jax's static-grid splash
    assert splash_dynamic.layout("splash_mha_fwd", [(16,)] * 6, data[:3]) is None
    dkv = [((2, 512, 128), "f32")] * 3 + [((8, 128, 256), "s8")]              # dkv: blocks transposed
    assert splash_dynamic.layout("splash_mha_dkv", [(8,)] * 6, dkv) == splash_dynamic.Layout(True, 512, 256, 128)


@needs_tokamax("regenerates the dynamic splash fixture with tokamax and compares")
def test_live_tokamax_reproduces_the_fixture(tmp_path):
    import shutil
    import subprocess

    work = tmp_path / "tokamax_dynamic"
    shutil.copytree(HERE, work)
    subprocess.run([os.environ["MAXFLOPS_TOKAMAX_PYTHON"], str(work / "generate.py")], check=True,
                   capture_output=True, timeout=900, env=dict(os.environ, PYTHONPATH=str(ROOT), JAX_PLATFORMS="cpu"))
    assert json.loads((work / "tables.json").read_text()) == TABLES
    live = count_file(work / "step.mlir")
    assert live.kernel_flops == count_file(HERE / "step.mlir").kernel_flops
