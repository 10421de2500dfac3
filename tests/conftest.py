"""The test suite's shared ground: the folders by concern, the repository's paths, and the helpers every folder
imports (``repo``, ``strategies``), found from any folder because this file puts ``tests/`` on the import path.

tests/core/      the engine: counts, masks, training, hardware FLOPs, step forms, properties, the input paths
tests/families/  each mixer family against a naive per-token layer and its own weight shapes, and the registry
tests/loaders/   MaxText YAMLs and Hugging Face files: the house, its zoo against torch, the published files
tests/peers/     MaxText, Megatron-LM and Megatron-Bridge: their functions and programs, from committed fixtures
tests/xla/       the proof side: XLA's counts of the kernels, the Flax models and the sharded programs; the bench
tests/house/     the code and the docs: layering, the plan's keys, every page's blocks, the site
tests/fixtures/  what the peers produced, each folder with the script that made it and its versions

The fast suite (``-m "not slow"``) is the README's command; ``-m slow`` (XLA compiles, the bench) runs on its own.
"""

import sys

from repo import TESTS

if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))


def pytest_terminal_summary(terminalreporter):
    """The published config.json corpus (../shared/hf-real, beside the checkout in CI) absent: said in one line at
    the end, above the skip list, since the tests that read it skip and what they guard goes unchecked."""
    import pathlib

    corpus = pathlib.Path(__file__).resolve().parents[2] / "shared" / "hf-real"
    if not corpus.is_dir():
        terminalreporter.write_line(f"NOTE: {corpus} is absent: the tests that read the published config.json corpus "
                                    "were skipped (CI lays shared/ beside the clone)", yellow=True, bold=True)
