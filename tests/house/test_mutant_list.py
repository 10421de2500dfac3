"""The mutation run's list is the code's: every mutant of tests/mutation/mutants.py applies at HEAD (its snippet
occurs exactly once in its file, and the replacement changes it), so a run covers the whole list; a stale one
fails here, in the fast suite, before a mutation run would report it."""

from __future__ import annotations

import sys

from repo import ROOT, TESTS


def test_every_mutant_applies_at_head():
    sys.path.insert(0, str(TESTS / "mutation"))
    try:
        from mutants import MUTANTS
    finally:
        sys.path.remove(str(TESTS / "mutation"))
    stale = [(m.name, m.file) for m in MUTANTS
             if not (ROOT / m.file).is_file() or (ROOT / m.file).read_text().count(m.original) != 1
             or m.original == m.replacement]
    assert not stale, stale
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)
    assert len(MUTANTS) >= 130
