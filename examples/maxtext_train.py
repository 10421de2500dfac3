"""Run MaxText's own train loop with maxflops' figures in its TFLOP/s log lines.

    python examples/maxtext_train.py <maxtext>/configs/base.yml model_name=llama2-7b base_emb_dim=64 ... steps=3

Needs MaxText installed (``pip install --no-deps maxtext==0.2.5`` plus its runtime packages, Python 3.12) and
maxflops importable. ``maxflops.maxtext.install()`` replaces MaxText's ``calculate_tflops_training_per_device``
before its trainer starts; the metric logger then reports ``perf/per_device_tflops`` from maxflops (exact
convention; set MAXFLOPS_CONVENTION=maxtext for MaxText's own rules).
"""

import os
import sys

import maxflops.maxtext


def main() -> None:
    maxflops.maxtext.install(convention=os.environ.get("MAXFLOPS_CONVENTION", "exact"))
    from absl import app
    from maxtext.trainers.pre_train import train

    app.run(train.main, argv=[sys.argv[0], *sys.argv[1:]])


if __name__ == "__main__":
    main()
