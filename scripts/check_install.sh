#!/usr/bin/env bash
# check_install.sh WHEEL — install WHEEL as a user would and use it: an unprivileged user (made
# when missing: $KM_CHECK_USER, default kmcheck) creates a fresh venv in a folder of its own,
# outside the source tree, and pip installs the wheel with only registry wheels for its
# dependencies (--only-binary :all:: no compiler, no apt, no root); then `import kompute_ml`, an
# array op and a LogisticRegression fit run there. Run as root (CI) it switches user with
# runuser; run as anyone else it checks as that user. $KM_CHECK_PYTHON: the interpreter (one the
# user may run, of the wheel's CPython version; default: /usr/bin/python3.X for the wheel's tag).
set -euo pipefail
whl="$(realpath "${1:?usage: check_install.sh WHEEL}")"
tag="$(basename "$whl" | cut -d- -f3)"                     # cp311
ver="${tag:2:1}.${tag:3}"
py="${KM_CHECK_PYTHON:-/usr/bin/python$ver}"
[ -x "$py" ] || { echo "check_install: no $py for $(basename "$whl") (set KM_CHECK_PYTHON)"; exit 1; }
if [ "$(id -u)" = 0 ]; then
    user="${KM_CHECK_USER:-kmcheck}"
    id "$user" >/dev/null 2>&1 || useradd -m -s /bin/bash "$user"
    as_user() { runuser -u "$user" -- env HOME="$(getent passwd "$user" | cut -d: -f6)" "$@"; }
else
    user="$(id -un)"
    as_user() { "$@"; }
fi
dir="$(as_user mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cp "$whl" "$dir/"
chmod a+r "$dir/$(basename "$whl")"
echo "check_install: $user installs $(basename "$whl") into a fresh venv ($py)"
as_user "$py" -m venv "$dir/venv"
as_user "$dir/venv/bin/python" -m pip install -q --only-binary :all: "$dir/$(basename "$whl")" 2>&1 |
    grep -v "^WARNING: Location" || true
cd "$dir"
as_user env PYTHONSAFEPATH=1 "$dir/venv/bin/python" - <<'PYEOF'
import os
import numpy as np
import kompute_ml as km
from kompute_ml._runtime import native
here = os.path.dirname(km.__file__)
assert "site-packages" in here, f"kompute_ml imported from {here}, not the installed wheel"
x = km.asarray(np.arange(1000, dtype=np.float32))
got = (x * 2 + 1).sum()
assert float(got) == float((np.arange(1000, dtype=np.float32) * 2 + 1).sum()), got
rng = np.random.default_rng(0)
X = rng.standard_normal((400, 8)).astype(np.float32)
y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64)
clf = km.LogisticRegression().fit(X, y)
acc = float((clf.predict(X) == y).mean())
assert acc > 0.9, acc
# the one Vulkan loader in the process is the wheel's own (no loader package is needed)
with open("/proc/self/maps") as f:
    loaders = sorted({line.split()[-1] for line in f if "libvulkan" in line.rsplit("/", 1)[-1]
                      and "libvulkan_" not in line})
assert len(loaders) == 1 and "kompute_ml.libs" in loaders[0], loaders
print(f"check_install: ok as {os.environ.get('USER') or os.getuid()}: kompute_ml {km.__version__} "
      f"from {here} on {km.get_device().name}; array op ok, LogisticRegression accuracy {acc:.3f}; "
      f"loader {os.path.basename(loaders[0])}; {native.BUILD_STAMP}")
PYEOF
