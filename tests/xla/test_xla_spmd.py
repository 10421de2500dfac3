"""SPMD: with 8 simulated CPU devices, batch-sharded and head/hidden-sharded programs compile to per-device
modules whose loop-aware matmul count equals the analytic per-device count exactly."""

import json
import os
import subprocess
import sys

import pytest
from repo import ROOT

pytestmark = pytest.mark.slow


def test_eight_device_per_device_counts():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    root = ROOT
    p = subprocess.run([sys.executable, "-m", "maxflops.xla.spmd"], capture_output=True, text=True, env=env,
                       cwd=root, timeout=600)
    rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 6, p.stdout + p.stderr
    for row in rows:
        assert row["analytic"] == row["xla"], row
    assert {r["check"].split(",")[0] for r in rows} >= {"llama3.1-8b train step", "attention", "gated MLP"}
    assert p.returncode == 0
