#!/usr/bin/env bash
# setup.sh — all set-up on a fresh Debian/Ubuntu machine; a second run finds everything in place.
#   1. system packages (apt, when root), or a list of what is missing and exit 1;
#   2. the virtual environment .venv with requirements-dev.txt;
#   3. kp 0.9.0 built offline from its sdist with patches/kp/ (scripts/build_kp.sh);
#   4. kompute_ml installed editable (scikit-build-core; compiles shaders/ to SPIR-V).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PYTHON:-python3}"
VENV=.venv
pkgs=(mesa-vulkan-drivers libvulkan-dev glslang-tools spirv-tools libfmt-dev pybind11-dev cmake
      vulkan-tools vulkan-validationlayers patch)
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

# 2. virtual environment and Python dependencies (re-run only when requirements change)
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
VPY="$VENV/bin/python"
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

# 3. kp, rebuilt when the patches change
phash="$(cat patches/kp/*.patch scripts/build_kp.sh | sha256sum | cut -c1-12)"   # as build_kp.sh
if ! "$VPY" -c "import kp" 2>/dev/null || [ "$(cat "$VENV/kp-patches.sha" 2>/dev/null)" != "$phash" ]; then
    bash scripts/build_kp.sh "$VPY"
fi

# 4. kompute_ml itself (editable), re-installed when its build files change
build_hash="$(cat pyproject.toml CMakeLists.txt | sha256sum | cut -c1-16)"
if [ "$(cat "$VENV/.build-hash" 2>/dev/null)" != "$build_hash" ] || ! "$VPY" -c "import kompute_ml" 2>/dev/null; then
    echo "setup: installing kompute_ml (editable)"
    "$VPY" -m pip install -q --no-build-isolation --no-deps -e . 2>&1 | grep -v "^WARNING: Location" || true
    "$VPY" -c "import kompute_ml"
    echo "$build_hash" >"$VENV/.build-hash"
fi
echo "setup: ready in $(( $(date +%s) - t0 )) s"
