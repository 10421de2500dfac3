"""No number moved: every shipped config, in every mode and convention and under the kernel knobs, counts exactly
what ``tests/fixtures/behaviour/figures.json`` recorded (written by ``generate.py`` beside it; see its docstring
for when to regenerate)."""

from __future__ import annotations

import importlib.util
import json

import pytest
from repo import FIXTURES

# the behaviour fixture sets every implementation knob on every model, the models without those layers
# included (the inert rule is held by tests/core/test_inert_keys.py)
pytestmark = pytest.mark.filterwarnings("ignore::maxflops.InertKeyWarning")

HERE = FIXTURES / "behaviour"
_spec = importlib.util.spec_from_file_location("behaviour_generate", HERE / "generate.py")
generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate)
RECORDED = json.loads((HERE / "figures.json").read_text())
CASES = list(generate.cases())


def test_every_recorded_case_is_still_a_case():
    assert sorted(f"{name} {variant}" for name, variant, _, _ in CASES) == sorted(RECORDED)


@pytest.mark.parametrize("name, variant, overrides, docs", CASES, ids=[f"{n} {v}" for n, v, _, _ in CASES])
def test_figures_unchanged(name, variant, overrides, docs):
    want = RECORDED[f"{name} {variant}"]
    try:
        got = generate.figures(name, overrides, docs)
    except ValueError as e:
        got = {"error": str(e)}
    assert got == want
