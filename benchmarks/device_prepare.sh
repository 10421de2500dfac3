#!/usr/bin/env bash
# Here, before a device run: the pure-Python wheels maxflops needs that the accelerator image lacks (it cannot
# fetch anything), into benchmarks/wheels (ignored by git; carry it to the device machine).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip download --quiet --no-deps -d benchmarks/wheels ml-collections==1.1.0
ls benchmarks/wheels
