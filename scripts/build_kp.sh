#!/usr/bin/env bash
# build_kp.sh PYTHON [SDIST] — build kp 0.9.0 offline from its PyPI sdist with patches/kp/*.patch
# applied, and install it into PYTHON's environment. Used by scripts/setup.sh here and on the GPU
# machine (benchmarks/gpu_run.sh), so both build the same patched kp.
#
# The wheel is cached under .cache/kp/ keyed by the patches' hash and the Python tag: a second run
# installs the cached wheel in seconds. Extra CMake flags (e.g. unpacked Vulkan headers) come from
# KP_CMAKE_ARGS. Build log: .cache/kp/build.log.
#
# KOMPUTE_OPT_DISABLE_VK_DEBUG_LAYERS=ON: kp otherwise loads VK_LAYER_KHRONOS_validation into
# every instance whenever it is installed (with its log off, so only the cost shows: lavapipe ran
# 4,000 dispatches in 0.5 s instead of 0.3 s). Validation is enabled on purpose through the
# loader instead (VK_INSTANCE_LAYERS, as `make test-validation` does).
set -euo pipefail
py="${1:?usage: build_kp.sh PYTHON [SDIST]}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$here/.cache/kp"
mkdir -p "$cache"
sdist="${2:-}"
if [ -z "$sdist" ]; then
    sdist="$cache/kp-0.9.0.tar.gz"
    [ -f "$sdist" ] || "$py" -m pip download -q --no-deps --no-binary :all: -d "$cache" kp==0.9.0
fi
# the key covers the patches and this script (its build options): a change to either rebuilds
phash="$(cat "$here"/patches/kp/*.patch "$here"/scripts/build_kp.sh | sha256sum | cut -c1-12)"
tag="$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')"
wheeldir="$cache/wheels-$phash-$tag"
whl="$(ls "$wheeldir"/kp-*.whl 2>/dev/null | tail -n1 || true)"
if [ -z "$whl" ]; then
    src="$(mktemp -d)"
    tar -xzf "$sdist" -C "$src" --strip-components=1
    for p in "$here"/patches/kp/*.patch; do
        patch -s -p1 -d "$src" <"$p" || { echo "build_kp: $(basename "$p") does not apply"; exit 1; }
    done
    jobs="$(nproc 2>/dev/null || echo 2)"; [ "$jobs" -gt 9 ] && jobs=9   # setup.py takes one digit
    pybind="$("$py" -m pybind11 --cmakedir)"
    pyexe="$("$py" -c 'import sys; print(sys.executable)')"
    echo "build_kp: building kp 0.9.0 with $(ls "$here"/patches/kp | wc -l) patches (log: $cache/build.log)"
    mkdir -p "$wheeldir.tmp"
    if ! env KOMPUTE_OPT_INSTALL=OFF KOMPUTE_OPT_USE_BUILT_IN_VULKAN_HEADER=OFF \
        KOMPUTE_OPT_USE_BUILT_IN_FMT=OFF KOMPUTE_OPT_USE_BUILT_IN_PYBIND11=OFF \
        KOMPUTE_OPT_DISABLE_VULKAN_VERSION_CHECK=ON KOMPUTE_PYTHON_NUM_PARALLEL_THREADS="$jobs" \
        KOMPUTE_OPT_DISABLE_VK_DEBUG_LAYERS=ON \
        CMAKE_ARGS="-Dpybind11_DIR=$pybind -DPYTHON_EXECUTABLE=$pyexe -DPython_EXECUTABLE=$pyexe ${KP_CMAKE_ARGS:-}" \
        "$py" -m pip wheel -v --no-index --no-deps --no-build-isolation --no-cache-dir \
            -w "$wheeldir.tmp" "$src" >"$cache/build.log" 2>&1; then
        echo "build_kp: kp build FAILED; last lines of $cache/build.log:"; tail -n 30 "$cache/build.log"; exit 1
    fi
    rm -rf "$src" "$wheeldir"; mv "$wheeldir.tmp" "$wheeldir"
    whl="$(ls "$wheeldir"/kp-*.whl | tail -n1)"
fi
"$py" -m pip install -q --no-index --no-deps --force-reinstall "$whl"
echo "$phash" >"$("$py" -c 'import sys; print(sys.prefix)')/kp-patches.sha"
echo "build_kp: installed $(basename "$whl")"
