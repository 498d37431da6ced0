"""float32 transcendental functions against correctly rounded references, in ulp (not rtol).

The reference is numpy's float64 result (float64 carries 29 more bits than float32, so its
rounding to float32 is the correctly rounded value except within ~2^-29 ulp of a tie); the error
of a result is its distance from that float64 value in ulps of the float32 reference (subnormal
results: in units of the smallest subnormal). Inputs cover the whole float32 range:
log-uniform magnitudes of both signs, subnormals, arguments near 1 (log), near multiples of pi
(sin/cos) and huge ones, plus numpy's own validation data, read from the installed numpy.

benchmarks/ulp.py prints the table of worst errors over these inputs (docs/arrays.md).
"""

import csv
import os

import numpy as np
import pytest

import kompute_ml as km

TOLERANCE_ULP = 4
N = 200_000                     # random inputs per function (lavapipe runs them in well under 1 s)
TINY = 2.0 ** -149              # the smallest float32 subnormal


def _sigmoid64(x):
    with np.errstate(over="ignore"):
        return np.where(x >= 0, 1.0 / (1.0 + np.exp(-x)), np.exp(x) / (1.0 + np.exp(x)))


# name -> (kompute_ml function, float64 reference)
FUNCTIONS = {
    "exp": (km.exp, np.exp), "log": (km.log, np.log), "sqrt": (km.sqrt, np.sqrt),
    "sin": (km.sin, np.sin), "cos": (km.cos, np.cos), "tanh": (km.tanh, np.tanh),
    "sigmoid": (km.sigmoid, _sigmoid64),
}
# numpy's validation data (correctly rounded float32 outputs) for the functions it covers
VALIDATION = {"exp", "log", "sin", "cos", "tanh"}


def _loguniform(rng, n, lo, hi, signed=True):
    """float32 values with log2|x| uniform in [lo, hi] (lo = -149: down to the subnormals)."""
    x = np.exp2(rng.uniform(lo, hi, n))
    if signed:
        x *= rng.choice([-1.0, 1.0], n)
    return x.astype(np.float32)


def _near_multiples_of_pi_over_2(rng, n):
    """Floats within a few ulp of k pi/2 for k up to 2^20: the reduction's cancellation cases."""
    k = rng.integers(1, 2 ** 20, n).astype(np.float64)
    x = (k * (np.pi / 2)).astype(np.float32)
    steps = rng.integers(-3, 4, n).astype(np.int32)
    return (x.view(np.int32) + steps).view(np.float32) * rng.choice([-1, 1], n).astype(np.float32)


def inputs(name, seed=0):
    """The random float32 test inputs of ``name`` (also what benchmarks/ulp.py measures)."""
    rng = np.random.default_rng(seed)
    full = _loguniform(rng, N // 2, -149, 128)
    if name == "exp":
        parts = [rng.uniform(-104, 89, N // 2).astype(np.float32), _loguniform(rng, N // 4, -149, 7)]
    elif name in ("log", "sqrt"):
        near1 = (1.0 + rng.uniform(-2.0 ** -7, 2.0 ** -7, N // 4)).astype(np.float32)
        ulps = (np.float32(1.0).view(np.int32) + rng.integers(-300, 300, N // 8)).view(np.float32)
        parts = [np.abs(full), near1, ulps.astype(np.float32)]
    elif name in ("sin", "cos"):
        parts = [full, _near_multiples_of_pi_over_2(rng, N // 4),
                 rng.uniform(-1e4, 1e4, N // 4).astype(np.float32)]
    else:                        # tanh, sigmoid: everything interesting is within |x| < 128
        parts = [_loguniform(rng, N // 2, -149, 7), rng.uniform(-12, 12, N // 4).astype(np.float32)]
    return np.concatenate(parts + [full[: N // 8]])


def ulp_error(got, ref64):
    """|got - ref| in ulps of the float32-rounded ref; 0 where both are the same inf/nan/value."""
    got = np.asarray(got, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        ref32 = ref64.astype(np.float32)
        spacing = np.maximum(np.spacing(np.abs(ref32)).astype(np.float64), TINY)
        err = np.abs(got.astype(np.float64) - ref64) / spacing
    same = (got == ref32) | (np.isnan(got) & np.isnan(ref32))
    err[same] = 0.0
    err[np.isnan(err)] = np.inf          # inf against a finite value, or a nan where none belongs
    return err


def keeps_denormals(device=None):
    """Whether the device computes with float32 subnormals (else it may flush them to 0)."""
    x = km.asarray(np.array([TINY * 3], np.float32), device=device)
    return float((x * 0.5).numpy()[0]) != 0.0


def measure(name, x=None, device=None):
    """(ulp errors, inputs, results, float64 references) of function ``name`` on ``x``."""
    fn, ref = FUNCTIONS[name]
    x = inputs(name) if x is None else x
    got = fn(km.asarray(x, device=device)).numpy()
    with np.errstate(all="ignore"):
        r = ref(x.astype(np.float64))
    err = ulp_error(got, r)
    if not keeps_denormals(device):      # a flushing device may give 0 (or FLT_MIN) for those
        sub = np.abs(r) < 2.0 ** -126
        err[sub & (np.abs(got) <= 2.0 ** -126)] = 0.0
    return err, x, got, r


def _report(err, x, got, ref):
    i = int(np.argmax(err))
    return (f"worst {err[i]:.2f} ulp at x={x[i]!r} ({x[i].view(np.uint32):#010x}): got {got[i]!r}, "
            f"reference {ref[i]!r}")


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_random_inputs_within_4_ulp(name):
    err, x, got, ref = measure(name)
    assert err.max() <= TOLERANCE_ULP, f"{name}: " + _report(err, x, got, ref)


def validation_rows(name):
    """float32 (input, correctly rounded output) pairs of numpy's validation data for ``name``."""
    path = os.path.join(os.path.dirname(np.__file__), "_core", "tests", "data",
                        f"umath-validation-set-{name}.csv")
    xs, ys = [], []
    with open(path) as f:
        for row in csv.reader(line for line in f if not line.startswith(("#", "dtype"))):
            if len(row) >= 3 and row[0] == "np.float32":
                xs.append(int(row[1], 16))
                ys.append(int(row[2], 16))
    return np.array(xs, np.uint32).view(np.float32), np.array(ys, np.uint32).view(np.float32)


@pytest.mark.parametrize("name", sorted(VALIDATION))
def test_numpy_validation_data(name):
    x, want = validation_rows(name)
    assert x.size > 100, f"numpy's validation data for {name} has no float32 rows"
    fn = FUNCTIONS[name][0]
    got = fn(km.asarray(x)).numpy()
    err = ulp_error(got, want.astype(np.float64))
    if not keeps_denormals():
        err[(np.abs(want) < 2.0 ** -126) & (np.abs(got) <= 2.0 ** -126)] = 0.0
    assert err.max() <= TOLERANCE_ULP, f"{name}: " + _report(err, x, got, want)


F32 = np.finfo(np.float32)
EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, F32.max, -F32.max, F32.tiny, -F32.tiny,
                  TINY, -TINY, 1.0, -1.0, 88.72283, 88.72284, -87.33654, -103.27893, -103.97208,
                  -104.0, 1e-8, np.pi / 2, np.pi, 2 * np.pi, 1e8, 3e38, 0.625, -0.625, 9.1, 20.0,
                  -20.0], np.float32)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_edge_cases_match_numpy(name):
    fn, ref = FUNCTIONS[name]
    got = fn(km.asarray(EDGES)).numpy()
    with np.errstate(all="ignore"):
        want = ref(EDGES.astype(np.float64)).astype(np.float32)
    # special values exactly as numpy (nan where nan, the same infinities, zeros with their sign)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{name}: nan")
    special = np.isinf(want) | (want == 0)
    np.testing.assert_array_equal(got[special], want[special], err_msg=f"{name}: inf/0")
    np.testing.assert_array_equal(np.signbit(got[special]), np.signbit(want[special]),
                                  err_msg=f"{name}: sign of zero")
    with np.errstate(all="ignore"):
        err = ulp_error(got, ref(EDGES.astype(np.float64)))
    assert err.max() <= TOLERANCE_ULP, f"{name}: " + _report(err, EDGES, got, want)


def test_issue_examples():
    """The values the issue reported wrong on lavapipe."""
    x = np.array([0.9999, 0.99999994], np.float32)
    err = ulp_error(km.log(km.asarray(x)).numpy(), np.log(x.astype(np.float64)))
    assert err.max() <= 1
    y = np.array([1e8], np.float32)
    assert ulp_error(km.sin(km.asarray(y)).numpy(), np.sin(y.astype(np.float64))).max() <= 1


def test_subnormal_results_kept():
    """exp of -100 is a subnormal float32 (2^-144.3), not 0, where the device keeps denormals."""
    got = km.exp(km.asarray(np.array([-100.0, -103.0], np.float32))).numpy()
    if keeps_denormals():
        assert (got > 0).all()
        assert ulp_error(got, np.exp(np.array([-100.0, -103.0]))).max() <= 1
    else:
        assert (got >= 0).all()
