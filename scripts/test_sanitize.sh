#!/usr/bin/env bash
# test_sanitize.sh TEST... — the tests that reach native code, against kompute_ml with its
# native module built with AddressSanitizer + UndefinedBehaviorSanitizer (KOMPUTE_ML_SANITIZE=ON,
# a build folder of its own: build/asan-*; kp is not rebuilt: the installed wheel's kompute_ml._kp
# and bundled libraries are copied beside it). The sanitized package is installed into
# build/asan-site and put first on PYTHONPATH of .venv-wheel's Python (make test-wheel made it);
# libasan and libubsan are preloaded, since the interpreter itself is not instrumented. Leak detection is off
# (CPython keeps its allocations to the end); any ASan report or UB aborts the run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ -x .venv-wheel/bin/python ] || { echo "test_sanitize: run make test-wheel first (.venv-wheel)"; exit 1; }
tag="$(.venv-wheel/bin/python -c 'import sys; print("cp%d%d" % sys.version_info[:2])')"
venv="build/venv-$tag"            # scripts/build_wheel.sh's build tools
[ -x "$venv/bin/python" ] || { echo "test_sanitize: run scripts/build_wheel.sh first"; exit 1; }
raw="build/asan-wheel-$tag"
rm -rf "$raw"; mkdir -p "$raw"
echo "test_sanitize: building kompute_ml._native with ASan + UBSan (log: build/asan-$tag.log)"
"$venv/bin/python" -m pip wheel -v --no-deps --no-build-isolation -w "$raw" \
    -Cbuild-dir="build/asan-{wheel_tag}" -Ccmake.define.KOMPUTE_ML_SANITIZE=ON \
    -Ccmake.define.KP_SDIST="$PWD/.cache/kp/kp-0.9.0.tar.gz" ${KM_CMAKE_ARGS:+-Ccmake.args="${KM_CMAKE_ARGS// /;}"} \
    . >"build/asan-$tag.log" 2>&1 || { tail -n 30 "build/asan-$tag.log"; exit 1; }
rm -rf build/asan-site
.venv-wheel/bin/python -m pip install -q --no-deps --target build/asan-site "$raw"/kompute_ml-*.whl
site="$(.venv-wheel/bin/python -c 'import sysconfig; print(sysconfig.get_path("platlib"))')"
cp "$site"/kompute_ml/_kp.*.so build/asan-site/kompute_ml/
[ -d "$site/kompute_ml.libs" ] && cp -r "$site/kompute_ml.libs" build/asan-site/
asan="$(${CXX:-g++} -print-file-name=libasan.so)"
ubsan="$(${CXX:-g++} -print-file-name=libubsan.so)"
export LD_PRELOAD="$asan:$ubsan"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
PYTHONSAFEPATH=1 PYTHONPATH="$PWD/build/asan-site" .venv-wheel/bin/python -c \
    "import kompute_ml, kompute_ml._native as n; assert 'asan-site' in n.__file__, n.__file__"
PYTHONSAFEPATH=1 PYTHONPATH="$PWD/build/asan-site" .venv-wheel/bin/python -m pytest -q -p no:cacheprovider "$@"
