#!/usr/bin/env bash
# ab_runtime.sh — the runtime issue's before/after figures from one tree's root (run by
# before_after.sh in each tree): run_all.py's device time, the streaming wall clock, latency at
# 1e3 / 1e6 / 1e8, upload and download of 256 MiB, LogisticRegression 1e6 x 256 from numpy.
# Each step is capped so that a slow one cannot take the lease; its last lines are printed.
set -u
step() { local cap="$1"; shift; echo "--- $*"; timeout "$cap" "$@" 2>&1 | tail -n "${TAIL:-14}"; }
step 150 python3 benchmarks/run_all.py --reps 20 --only elementwise,matmul,dispatch --out /tmp/ra.json
step 120 python3 tools/perf/streaming_wall.py --reps 20 --rounds 5
step 120 python3 tools/perf/latency.py --budget 0.1 --rounds 3 --out /tmp/lat.json
step 90 python3 tools/perf/transfer_sweep.py --sizes 6.7108864e7 --ways auto --reps 20
step 90 python3 tools/perf/ab_fit.py --sizes 1000000x256x2 --reps 5
