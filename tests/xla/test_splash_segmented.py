"""tokamax's splash over a static mask with segment ids (what MaxText runs with ``use_tokamax_splash`` on packed
rows), priced from tables the program's own ops build (maxflops.xla.fold runs them with XLA's StableHLO interpreter),
held to tokamax's own code:

- the tables: tests/fixtures/tokamax_segmented/tables.json holds what tokamax's ``_refine_mask_info_with_segments``
  computes for two masks (causal with tiles 128 x 256 forward and 256 x 128 backward; a window of 200 keys over tiles
  of 128) and five segment layouts; the tables the counter runs from the exported step (<step>.mlir) equal them;
- the price: each step counted with each layout equals a brute-force count from tokamax's tables (per head, each
  scheduled tile of a non-zero block kind: the forward's 2 matmuls, the fused dkv kernel's 5);
- the default (one document per row) is the unpruned kernel's count; None and a wrong shape are named, not counted.
The opt-in live test regenerates the fixture with tokamax itself. Unverified on the chip: no TPU has run it.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from maxflops.xla import fold, mosaic, stablehlo
from maxflops.xla.kernels import RunTimeInputs
from maxflops.xla.program import count_file
from repo import FIXTURES, ROOT, needs_tokamax

HERE = FIXTURES / "tokamax_segmented"
DATA = json.loads((HERE / "tables.json").read_text())
LAYOUTS, TABLES = DATA["layouts"], DATA["tables"]
VERSIONS = json.loads((HERE / "versions.json").read_text())
H, D = VERSIONS["heads"], VERSIONS["head_dim"]
CASES = [(step, layout) for step in sorted(TABLES) for layout in sorted(LAYOUTS)]


def _calls(step):
    module = stablehlo.read_text((HERE / f"{step}.mlir").read_text())
    calls = [ins for comp in module.computations.values() for ins in comp.instructions
             if ins.opcode == "custom-call" and "splash_mha" in ins.op_name + ins.name]
    return module, calls


@pytest.mark.parametrize("step,layout", CASES)
def test_the_tables_the_program_builds_are_tokamaxs(step, layout):
    """Each call's grid size and its tables up to it, run from the exported program, are tokamax's own."""
    module, calls = _calls(step)
    seg = np.array(LAYOUTS[layout], np.int32)
    assert len(calls) == 2
    for ins in calls:
        name = mosaic.load_kernel(mosaic.body_of(ins.attrs["backend_config"])).name
        walk = "dkv" if "_dkv_" in name else "fwd"
        want = TABLES[step][layout][walk]
        got = fold.evaluate(module.mlir, ins.src, list(range(6)), lambda i, shape: seg if i == 3 else None)
        n = int(got[0].ravel()[0])
        assert n == want["grid"]
        tables = [t.ravel()[:n].tolist() for t in got[1:]]
        for name in ("active_rows", "active_cols", "block_mask", "bounds_start", "bounds_end", "mask_next"):
            if name in want:
                assert want[name] in tables, (walk, name)


def _brute(step, layout) -> int:
    """Per head, each scheduled tile whose block kind is not 0: 2 matmuls forward, 5 in the fused dkv kernel."""
    total = 0
    for walk, matmuls in (("fwd", 2), ("dkv", 5)):
        t = TABLES[step][layout][walk]
        tiles = sum(1 for kind in t["block_mask"] if kind != 0)
        total += H * tiles * matmuls * 2 * t["block_q"] * t["block_kv"] * D
    return total


@pytest.mark.parametrize("step,layout", CASES)
def test_the_step_prices_as_tokamaxs_tables(step, layout):
    c = count_file(HERE / f"{step}.mlir", segment_ids=LAYOUTS[layout])
    assert not c.not_counted
    assert c.kernel_flops == _brute(step, layout)
    assert all("segment ids given" in k.note for k in c.kernels)


def test_the_layouts_prune_what_they_should():
    """The fixture is worth holding: on-edge documents prune tiles, interleaved ids (ranges that overlap) do not."""
    for step in TABLES:
        one = _brute(step, "one_document")
        assert _brute(step, "four_on_edges") < one and _brute(step, "interleaved") == one
    assert _brute("local200", "padded") < _brute("local200", "one_document")


def test_one_document_per_row_is_the_default_and_prunes_nothing():
    for step in TABLES:
        c = count_file(HERE / f"{step}.mlir")
        assert c.kernel_flops == _brute(step, "one_document")
        assert all("one document per row" in k.note for k in c.kernels)
        one_row = count_file(HERE / f"{step}.mlir", segment_ids=[7] * VERSIONS["length"])
        assert one_row.kernel_flops == c.kernel_flops


def test_no_assumption_or_a_wrong_shape_is_named_not_counted():
    c = count_file(HERE / "causal.mlir", segment_ids=None)
    assert c.kernel_flops == 0 and len(c.not_counted) == 2
    assert all("segment_ids=None" in d.note for d in c.not_counted)
    wrong = count_file(HERE / "causal.mlir", segment_ids=np.ones((4, 256), np.int32))
    assert wrong.kernel_flops == 0
    assert all("s32[512]" in d.note and "[4, 256]" in d.note for d in wrong.not_counted)
    floats = count_file(HERE / "causal.mlir", segment_ids=np.ones(512))
    assert all("expected integers" in d.note for d in floats.not_counted)


def test_a_bad_assumption_is_one_error():
    for bad in ("packed", 3, object()):
        with pytest.raises(ValueError, match="segment_ids"):
            RunTimeInputs(segment_ids=bad)


def test_the_program_inputs_the_ids_come_from():
    module, calls = _calls("causal")
    for ins in calls:
        ids = [i for i in range(7, len(ins.src.operands)) if "xi32>" in str(ins.src.operands[i].type)]
        assert fold.sources(module.mlir, ins.src, ids) == {3}          # main's 4th input: seg
        assert fold.sources(module.mlir, ins.src, [1]) <= {3}


@needs_tokamax("regenerates the segmented splash fixture with tokamax and compares")
def test_live_tokamax_reproduces_the_fixture(tmp_path):
    import shutil
    import subprocess

    work = tmp_path / "tokamax_segmented"
    shutil.copytree(HERE, work)
    subprocess.run([os.environ["MAXFLOPS_TOKAMAX_PYTHON"], str(work / "generate.py")], check=True,
                   capture_output=True, timeout=900, env=dict(os.environ, PYTHONPATH=str(ROOT), JAX_PLATFORMS="cpu"))
    assert json.loads((work / "tables.json").read_text()) == DATA
    for step in TABLES:
        for layout in ("one_document", "three_off_edges"):
            live = count_file(work / f"{step}.mlir", segment_ids=LAYOUTS[layout])
            assert live.kernel_flops == _brute(step, layout)


def test_the_command_line_takes_the_run_time_inputs(tmp_path, capsys):
    """``python -m maxflops.xla.program FILE --segment-ids=...``: a word, 'none', one row's ids, or a .npy file; a bad
    value is one error line naming the flag."""
    import json as js

    from maxflops.xla.program import main

    step = str(HERE / "causal.mlir")
    docs = np.array(LAYOUTS["four_on_edges"], np.int32)
    np.save(tmp_path / "docs.npy", docs)
    got = {}
    for name, flag in (("default", None), ("word", "--segment-ids=one_document"),
                       ("file", f"--segment-ids={tmp_path / 'docs.npy'}"), ("row", "--segment-ids=" + ",".join(
                           map(str, docs))), ("none", "--segment-ids=none")):
        assert main([step, "--json"] + ([flag] if flag else [])) == 0
        got[name] = js.loads(capsys.readouterr().out)["kernel_flops"]
    assert got["default"] == got["word"] == _brute("causal", "one_document")
    assert got["file"] == got["row"] == _brute("causal", "four_on_edges") and got["none"] == 0
    for bad, said in (("--segment-ids=packed", "--segment-ids: 'packed' is not"), ("--segment-ids", "give a value"),
                      ("--splash-mask=1,2", "--splash-mask: '1,2' is not"), ("--frobnicate=1", "unknown flag")):
        assert main([step, bad]) == 2
        err = capsys.readouterr().err
        assert said in err and err.count("\n") == 1, err
