#!/usr/bin/env bash
# The accelerator check, one command: on a machine with a GPU or TPU, run the bench with the backend's preset,
# check every row (a failed kernel or a hardware figure != XLA's count makes it exit non-zero), and write the
# table into benchmarks/RESULTS.md (a copy and the run's JSON, CSV and log go to $OUT when it is set).
#
#   bash benchmarks/device_prepare.sh        # here, once: wheels the accelerator machine lacks (benchmarks/wheels)
#   # then on the device machine (the device tool: carry ["benchmarks/wheels"]):
#   bash benchmarks/device_check.sh          # add --quick for a short run; any bench flag passes through
#
# The plan for a device lent for 15 minutes: each row runs in its own process (--row-timeout, default 240 s, compile
# included) and is appended to $OUT/rows.jsonl as it finishes; rows benchmarks/device_rows.jsonl already holds for
# this device kind, jax and preset are skipped (--again reruns them), rows this device kind never ran go first, and
# no row starts after --budget seconds (default 720: about 12 minutes of rows). What comes back: rows.jsonl,
# bench.json, bench.csv, bench.log, RESULTS.md and programs.zip (the compiled programs of the custom-kernel rows; commit it
# as benchmarks/device_programs/<device kind>.zip): 6 files. Copy rows.jsonl's lines into
# benchmarks/device_rows.jsonl and commit them: the next device run resumes where this one stopped.
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if ! "$PY" -c "import ml_collections, yaml" 2>/dev/null; then
  "$PY" -m pip install --quiet --no-deps benchmarks/wheels/*.whl || { echo "device_check: no wheels to install" >&2; exit 2; }
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
"$PY" -c "import jax; print('device_check:', jax.default_backend(), jax.devices()[0].device_kind, jax.__version__)"
export MAXFLOPS_BENCH_OUT="${OUT:-benchmarks/device_out}"
"$PY" benchmarks/bench_kernels.py --per-row "$@"
rc=$?
cp "${MAXFLOPS_RESULTS:-benchmarks/RESULTS.md}" "$MAXFLOPS_BENCH_OUT/RESULTS.md"
echo "device_check: exit $rc (RESULTS.md and the run's files in $MAXFLOPS_BENCH_OUT)"
exit $rc
