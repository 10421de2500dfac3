"""The digest script (tests/fixtures/digest.py): the guard a refactor runs before and after itself names every item
whose figures moved, and says nothing moved when nothing did."""

from __future__ import annotations

import importlib.util
import json

from repo import ROOT


def _digest():
    spec = importlib.util.spec_from_file_location("digest", ROOT / "tests" / "fixtures" / "digest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_digest_names_a_moved_figure(tmp_path, capsys):
    digest = _digest()
    saved = tmp_path / "before.json"
    assert digest.main(["--only", "transformers", "--save", str(saved)]) == 0
    assert digest.main(["--only", "transformers", "--against", str(saved)]) == 0
    assert "0 items differ" in capsys.readouterr().out
    before = json.loads(saved.read_text())
    assert len(before["transformers"]) >= 20 and all("total" in v for v in before["transformers"].values())
    before["transformers"]["glm5"]["total"] += 1                     # a number that moved
    saved.write_text(json.dumps(before))
    assert digest.main(["--only", "transformers", "--against", str(saved)]) == 1
    out = capsys.readouterr().out
    assert "changed: transformers glm5" in out and "1 items differ" in out
