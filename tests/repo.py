"""The repository's paths, for tests in any folder of tests/."""

import functools
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


def quiet_config(**kw):
    """``maxflops.model_config(**kw)`` with maxflops.InertKeyWarning filtered (``quietly_inert``): for a test that
    builds the same keys in every mode or over layer shapes that read only some of them."""
    import maxflops

    return quietly_inert(lambda: maxflops.model_config(**kw))


@functools.cache
def jax_trainer_example():
    """examples/jax_trainer.py as a module, loaded once per process (its absl flags are defined at import)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("jax_trainer_example", ROOT / "examples" / "jax_trainer.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod                         # (Flax's module dataclasses look their module up)
    spec.loader.exec_module(mod)
    return mod


def needs_tokamax(what: str):
    """Skip unless ``MAXFLOPS_TOKAMAX_PYTHON`` names the Python of a venv with tokamax (CI's MaxText leg sets it)."""
    import os

    import pytest

    return pytest.mark.skipif(not os.environ.get("MAXFLOPS_TOKAMAX_PYTHON"),
                              reason="opt-in: MAXFLOPS_TOKAMAX_PYTHON=/path/to/python of a venv with tokamax "
                                     f"(Python >= 3.12) {what}")


def tokamax_json(script: str, timeout: int = 900):
    """Run ``script`` under the tokamax venv's Python (``MAXFLOPS_TOKAMAX_PYTHON``: tokamax needs Python >= 3.12)
    with this checkout importable and jax on CPU, and read the JSON its last line prints."""
    import json
    import os
    import subprocess

    p = subprocess.run([os.environ["MAXFLOPS_TOKAMAX_PYTHON"], "-c", script], capture_output=True, text=True,
                       timeout=timeout, env=dict(os.environ, PYTHONPATH=str(ROOT), JAX_PLATFORMS="cpu"))
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])
