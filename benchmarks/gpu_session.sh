#!/usr/bin/env bash
# gpu_session.sh PHASE... — what one lease of the lent GPU machine runs (the device tool), from the
# repo root after `source .gpu/bootstrap.sh; source benchmarks/gpu_setup.sh` (and optionally
# `source .gpu/lvp/lvp.sh` for lavapipe beside the GPU). Logs and results JSON go to $OUT (the
# files that come back) and to benchmarks/results/. PHASEs, in the order given:
#   suite      the whole test suite on the default device (the GPU), log in $OUT/suite.log
#   arrays     run_all.py (device time and wall clock vs torch/CuPy), ulp.py, latency.py
#   logistic   logreg_fullbatch.py and logistic.py at the sizes
#   dask       dask_scaling.py: the seeds' experiment and the distributed fit
#   sklearn    sklearn_array_api.py: PCA and Ridge on numpy, kompute_ml and torch CUDA arrays
#   bench      suite.py (the public-API suite behind BENCHMARKS.md) into $BENCH_OUT (benchmarks/results/suite-gpu.json)
set -u
# the installed wheel is what runs: the working directory (the source tree) stays off sys.path
export PYTHONSAFEPATH=1
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
# the device tool returns at most 8 files: one archive of this machine's results and plots
cp_results() { tar -czf "$OUT/results-$(date +%H%M%S).tgz" benchmarks/results/nvidia-* benchmarks/*h100*.png \
               benchmarks/*.png 2>/dev/null; true; }
for phase in "$@"; do
    echo "=== $phase $(date +%T)"
    case "$phase" in
        suite)
            # SUITE_ARGS: e.g. "-n 4 --dist loadfile" (pytest-xdist is on the GPU machine)
            timeout "${SUITE_TIMEOUT:-420}" python3 -m pytest -q -rfE -p no:cacheprovider --timeout 300 \
                ${SUITE_ARGS:-} tests > "$OUT/suite.log" 2>&1; tail -n 40 "$OUT/suite.log" ;;
        arrays)
            timeout 240 python3 benchmarks/run_all.py --reps 20 2>&1 | tail -n 40
            timeout 60 python3 tools/perf/ulp.py 2>&1 | tail -n 25
            timeout 150 python3 tools/perf/latency.py --budget 0.15 --plot benchmarks/latency-h100.png 2>&1 | tail -n 40 ;;
        logistic)
            timeout 200 python3 tools/perf/logreg_fullbatch.py --reps 3 2>&1 | tail -n 30
            timeout "${LOGISTIC_TIMEOUT:-300}" python3 benchmarks/logistic.py --sizes "${LOGISTIC_SIZES:-100000x512x2,1000000x256x2,200000x128x10}" \
                ${LOGISTIC_ARGS:-} > "$OUT/logistic.log" 2>&1; tail -n 30 "$OUT/logistic.log" ;;
        dask)
            timeout 400 python3 benchmarks/dask_scaling.py --n "${DASK_N:-40000}" --chunk "${DASK_CHUNK:-10000}" \
                --fit-rows "${DASK_FIT_ROWS:-2000000}" 2>&1 | tail -n 30 ;;
        fullbatch)
            timeout 120 python3 tools/perf/logreg_fullbatch.py --sizes "${FULLBATCH_SIZES:-1000000x256x2}" --reps 3 \
                > "$OUT/fullbatch.log" 2>&1; grep -v '^    {' "$OUT/fullbatch.log" | tail -n 20 ;;
        sklearn)
            timeout 240 python3 benchmarks/sklearn_array_api.py --n "${SKLEARN_N:-1000000}" --d 256 2>&1 | tail -n 20 ;;
        bench)
            # BENCH_ARGS: e.g. "--commit SHA --only sort,unique --merge" (a suite split over calls)
            bench_out="${BENCH_OUT:-benchmarks/results/suite-gpu.json}"
            timeout "${BENCH_TIMEOUT:-540}" python3 benchmarks/suite.py ${BENCH_ARGS:-} \
                --out "$bench_out" > "$OUT/bench.log" 2>&1; tail -n 60 "$OUT/bench.log"
            cp "$bench_out" "$OUT/" 2>/dev/null ;;
        *) echo "unknown phase $phase" ;;
    esac
    cp_results
done
