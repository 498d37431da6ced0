#!/usr/bin/env bash
# setup.sh — all set-up on a fresh Debian/Ubuntu machine; a second run finds everything in place.
#   1. system packages (apt, when root), or a list of what is missing and exit 1;
#   2. the virtual environment .venv with requirements-dev.txt;
#   3. kompute_ml's wheel for .venv's Python (scripts/build_wheel.sh: kp 0.9.0 from its sdist with
#      patches/kp/ as kompute_ml._kp, kompute_ml._native, the shaders), installed into .venv like
#      a user's (not editable). It is built as `make wheel` builds dist/ (KM_TOOLCHAIN=zig: the
#      manylinux_2_28 toolchain, scripts/manylinux_toolchain.sh), so that `make test` tests what
#      users get; KM_TOOLCHAIN=system builds it with the system's compiler instead. CMake's build
#      folder is kept: a second run rebuilds only what changed, and reinstalls only when the tree
#      (or the toolchain) changed.
# setup.sh --packages: step 1 alone (`make wheel`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PYTHON:-python3}"
VENV=.venv
# g++: the sanitizer build and KM_TOOLCHAIN=system; xz-utils: the Vulkan loader's source package
pkgs=(mesa-vulkan-drivers libvulkan-dev glslang-tools spirv-tools libfmt-dev cmake g++ ninja-build
      vulkan-tools vulkan-validationlayers patch xz-utils)
t0=$(date +%s)

# 1. system packages
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
else
    for c in glslangValidator spirv-val cmake patch; do command -v "$c" >/dev/null || missing+=("$c"); done
fi
if ((${#missing[@]})); then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "setup: missing system packages: ${missing[*]}"
        echo "setup: install them (e.g. sudo apt-get install ${missing[*]}) and run again"
        exit 1
    fi
fi
[ "${1:-}" = --packages ] && exit 0

# 2. virtual environment and Python dependencies (re-run only when requirements change)
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
VPY="$PWD/$VENV/bin/python"
req_hash="$(sha256sum requirements-dev.txt | cut -c1-16)"
if [ "$(cat "$VENV/.req-hash" 2>/dev/null)" != "$req_hash" ]; then
    echo "setup: installing Python dependencies"
    "$VPY" -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
    "$VPY" -m pip install -q -r requirements-dev.txt 2>&1 | grep -v "^WARNING: Location" || true
    "$VPY" -c "import numpy, sklearn, pybind11, scikit_build_core, pytest, hypothesis"
    # atheris (make fuzz) where it has wheels: Linux x86-64
    "$VPY" -c "import platform; platform.system() != 'Linux' or platform.machine() != 'x86_64' or __import__('atheris')"
    echo "$req_hash" >"$VENV/.req-hash"
fi

# 3. kompute_ml, built and installed when anything the wheel holds changed (git's view of the
#    tree: tracked and untracked files, not ignored ones)
toolchain="${KM_TOOLCHAIN:-zig}"
tree_hash="$( (git ls-files -s -co --exclude-standard 2>/dev/null | awk '{print $NF}' |
              grep -v '^tests/\|^benchmarks/\|^docs/\|^tools/' | sort | xargs sha256sum 2>/dev/null
               echo "toolchain $toolchain") | sha256sum | cut -c1-16)"
if [ "$(cat "$VENV/.tree-hash" 2>/dev/null)" != "$tree_hash" ] ||
        ! PYTHONSAFEPATH=1 "$VPY" -c "import kompute_ml._runtime.native" 2>/dev/null; then
    KM_TOOLCHAIN="$toolchain" bash scripts/build_wheel.sh "$VPY" build/dev-wheel
    tag="$("$VPY" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')"
    "$VPY" -m pip install -q --no-deps --force-reinstall build/dev-wheel/kompute_ml-*-"$tag"-*.whl 2>&1 |
        grep -v "^WARNING: Location" || true
    (cd /tmp && "$VPY" -c "import kompute_ml._runtime.native")
    echo "$tree_hash" >"$VENV/.tree-hash"
fi
echo "setup: ready in $(( $(date +%s) - t0 )) s"
