"""An explicit null in a Hugging Face file, read as transformers reads it.

tests/fixtures/hf_nulls/nulls.json was made by the script beside it: for every zoo model type and every key whose
class default is not null, the zoo's saved config with that key set to null, built by transformers 5.24 and, where
the class keeps the null, run by its eager model as the zoo runs it. For every such key the loader reads:
- the class refuses the null, or keeps it for a model that cannot build or run: maxflops refuses it, in one line
  naming the key (it used to read the class default in its place, a plausible wrong number);
- the class keeps it and its model runs: maxflops' count of the file equals torch's count of that model;
- the class fills a value in (``__post_init__``): maxflops counts that value.
Keys maxflops does not read (no FLOP effect) are ignored, null or not.
"""

from __future__ import annotations

import json
import pathlib
import tempfile

import pytest

import maxflops
from maxflops.loaders import hf, load_hf_config
from maxflops.loaders.hf import nulls
from repo import FIXTURES
from test_hf_zoo import KNOBS, NO_MTP

DATA = json.loads((FIXTURES / "hf_nulls" / "nulls.json").read_text())
ZOO = json.loads((FIXTURES / "hf_zoo" / "cases.json").read_text())["cases"]


def _load(tmp_path, config):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return load_hf_config(path)


def _rows():
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in sorted(DATA["cases"].items()):
            if hf.get(case["model_type"]) is None:
                continue
            ignored = _load(pathlib.Path(tmp), ZOO[name]["config"]).ignored
            for key, outcome in sorted(case["keys"].items()):
                if key not in ignored:  # a key the loader reads
                    yield pytest.param(name, key, outcome, id=f"{name}-{key}")


ROWS = list(_rows())


def _refused(outcome) -> bool:
    return "refused" in outcome or "fails" in outcome.get("kept", {})


def test_the_loaders_table_is_the_fixtures():
    """maxflops/loaders/hf/nulls.py (written by the same script) is what nulls.json says, for the keys read."""
    want = {}
    for name, key, outcome in (p.values for p in ROWS):
        mt = DATA["cases"][name]["model_type"]
        if _refused(outcome) and (mt, key) not in nulls.READ_ANYWAY:
            want.setdefault(mt, set()).add(key)
    assert {t: set(k) for t, k in nulls.REFUSED.items()} == want


def test_fixture():
    assert DATA["transformers"] == "5.24.0"
    kinds = {next(iter(o)) for *_, o in (p.values for p in ROWS)}
    assert kinds == {"refused", "kept", "replaced"} and len(ROWS) > 1000


@pytest.mark.parametrize("name, key, outcome", ROWS)
def test_a_null_is_read_as_transformers_reads_it(name, key, outcome, tmp_path):
    base, case = ZOO[name]["config"], ZOO[name]
    nulled = {**base, key: None}
    anyway = nulls.READ_ANYWAY.get((DATA["cases"][name]["model_type"], key))
    if (DATA["cases"][name]["model_type"], key) in nulls.REFUSED_ANYWAY:  # kept for a degenerate model: refused
        with pytest.raises(ValueError, match=f"'{key}'"):
            _load(tmp_path, nulled)
    elif anyway:  # the class refuses it, the authors write it: read as the value it stands for
        assert _refused(outcome)
        assert _load(tmp_path, nulled).overrides == _load(tmp_path, {**base, key: anyway[0]}).overrides
    elif "replaced" in outcome:
        assert _load(tmp_path, nulled).overrides == _load(tmp_path, {**base, key: outcome["replaced"]}).overrides
    elif "forward_flops" in outcome.get("kept", {}):  # the model runs: its count is torch's
        loaded = _load(tmp_path, nulled)
        knobs = dict(KNOBS.get(name, {}), **(NO_MTP if loaded.overrides.get("mtp_num_layers") else {}))
        c = maxflops.model_config(**{**loaded.overrides, **knobs}, mode="prefill", attention_impl="dense",
                                  per_device_batch_size=case["batch"], max_target_length=case["length"])
        assert maxflops.count(c).hardware_flops == outcome["kept"]["forward_flops"]
    else:  # refused by the class, or kept for a model that cannot run
        with pytest.raises(ValueError) as e:
            _load(tmp_path, nulled)
        msg = str(e.value)
        assert f"'{key}'" in msg and "null" in msg and len(msg.splitlines()) == 1, msg
