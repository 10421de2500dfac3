"""The repository's paths, for tests in any folder of tests/."""

import pathlib

TESTS = pathlib.Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
