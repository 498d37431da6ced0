#!/usr/bin/env bash
# setup_wheel_venv.sh WHEEL VENV — VENV holds kompute_ml installed from WHEEL as a user installs
# it (its dependencies, the test and dask extras and pytest-timeout from the package index),
# nothing of the source tree. `make test` runs the suite there with PYTHONSAFEPATH=1 (the
# working directory off sys.path), so that the tests import the installed wheel. A second run
# keeps the dependencies and reinstalls the wheel alone.
set -euo pipefail
whl="${1:?usage: setup_wheel_venv.sh WHEEL VENV}"
venv="${2:?usage: setup_wheel_venv.sh WHEEL VENV}"
PY="${PYTHON:-python3}"
[ -x "$venv/bin/python" ] || "$PY" -m venv "$venv"
venv="$(cd "$venv" && pwd)"
extra="pytest-timeout pandas"
deps_hash="$( (unzip -p "$whl" '*.dist-info/METADATA' | grep '^Requires-Dist'; echo "$extra") |
             sha256sum | cut -c1-16)"
if [ "$(cat "$venv/.deps-hash" 2>/dev/null)" != "$deps_hash" ]; then
    "$venv/bin/python" -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
    # pandas: scikit-learn's estimator checks test pandas inputs where it is installed
    "$venv/bin/python" -m pip install -q "$whl[test,dask]" $extra 2>&1 |
        grep -v "^WARNING: Location" || true
    echo "$deps_hash" >"$venv/.deps-hash"
fi
"$venv/bin/python" -m pip install -q --no-deps --force-reinstall "$whl" 2>&1 |
    grep -v "^WARNING: Location" || true
(cd / && "$venv/bin/python" -c "import kompute_ml._runtime.native as n; print('setup_wheel_venv:', n.BUILD_STAMP)")
