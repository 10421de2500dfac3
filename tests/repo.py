"""The repository's paths, for tests in any folder of tests/."""

import pathlib

TESTS = pathlib.Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"


def quietly_inert(build):
    """``build()`` with maxflops.InertKeyWarning filtered: for a test helper that sets a family's knobs on every shape
    it draws (a shape without that family's layers leaves them inert, which is what the knob should do there; the
    inert rule itself is held by tests/core/test_input_paths.py)."""
    import warnings

    import maxflops

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", maxflops.InertKeyWarning)
        return build()
