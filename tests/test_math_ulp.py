"""float32 math functions (shaders/kmath.glsl) against correctly rounded references, in ulp.

The reference is numpy's float64 result (float64 carries 29 more bits than float32, so its
rounding to float32 is the correctly rounded value except within ~2^-29 ulp of a tie); the error
of a result is its distance from that float64 value in ulps of the float32 reference (subnormal
results: in units of the smallest subnormal). Inputs cover the whole float32 range:
log-uniform magnitudes of both signs, subnormals, arguments near 1 (logarithms), near +-1
(arcsin, arccos, arctanh), near multiples of pi/2 (sin, cos, tan) and huge ones, pow with
results over the whole range, plus numpy's own validation data, read from the installed numpy;
and the special values C99 / the Array API specify (signed zeros, infinities, nan). On a device
that flushes float32 subnormals the comparison reads subnormal inputs as zeros too (see
``errors``; docs/arrays.md); whether it may flush is decided by the device info
(``float32_denormals``, see ``keeps_denormals``).

tools/perf/ulp.py prints the table of worst errors over these inputs (docs/arrays.md).
"""

import csv
import os

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml import array as kma

from _denormals import keeps_denormals, flushed

TOLERANCE_ULP = 4
N = 200_000                     # random inputs per function (lavapipe runs them in well under 1 s)
TINY = 2.0 ** -149              # the smallest float32 subnormal
F32 = np.finfo(np.float32)


def _sigmoid64(x):
    with np.errstate(over="ignore"):
        return np.where(x >= 0, 1.0 / (1.0 + np.exp(-x)), np.exp(x) / (1.0 + np.exp(x)))


# name -> (kompute_ml function, float64 reference); binary functions take two arrays
FUNCTIONS = {name: (getattr(kma, name), getattr(np, name)) for name in (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan", "tanh",
    "sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "power",
    "arctan2")}
FUNCTIONS["sigmoid"] = (kma.sigmoid, _sigmoid64)
BINARY = {"power", "arctan2"}
# numpy's validation data (correctly rounded float32 outputs) for the functions it covers
VALIDATION = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "tanh",
              "sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"}


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


def _pow_inputs(rng, n):
    """(x, y) pairs of pow: results spread over the whole range (y log2|x| uniform in [-160,
    135]), bases near 1 with large exponents, negative bases with integer exponents, and any."""
    x = _loguniform(rng, n, -149, 128, signed=False)
    e = rng.uniform(-160, 135, n)
    y = (e / np.log2(x.astype(np.float64))).astype(np.float32)
    near1 = (1.0 + rng.uniform(-2.0 ** -10, 2.0 ** -10, n // 4)).astype(np.float32)
    near1[near1 == 1] = 1.5
    ynear = (rng.uniform(-120, 120, n // 4) / np.log2(near1.astype(np.float64))).astype(np.float32)
    neg = -_loguniform(rng, n // 4, -8, 8, signed=False)
    yint = rng.integers(-40, 40, n // 4).astype(np.float32)
    anyx, anyy = _loguniform(rng, n // 4, -149, 128), _loguniform(rng, n // 4, -149, 128)
    small = rng.uniform(0, 4, n // 4).astype(np.float32), rng.uniform(-20, 20, n // 4).astype(np.float32)
    return (np.concatenate([x, near1, neg, anyx, small[0]]),
            np.concatenate([y, ynear, yint, anyy, small[1]]))


def inputs(name, seed=0):
    """The random float32 test inputs of ``name`` (a pair of arrays for binary functions; also
    what tools/perf/ulp.py measures)."""
    rng = np.random.default_rng(seed)
    if name == "power":
        return _pow_inputs(rng, N // 2)
    if name == "arctan2":
        y, x = _loguniform(rng, N, -149, 128), _loguniform(rng, N, -149, 128)
        y[: N // 4] = np.clip(x[: N // 4] * rng.uniform(-4, 4, N // 4), -F32.max, F32.max)
        return y, x
    full = _loguniform(rng, N // 2, -149, 128)
    unit = rng.uniform(-1, 1, N // 4).astype(np.float32)
    if name in ("exp", "exp2", "expm1"):
        hi = {"exp": (-104, 89), "exp2": (-150, 128), "expm1": (-20, 89)}[name]
        parts = [rng.uniform(*hi, N // 2).astype(np.float32), _loguniform(rng, N // 4, -149, 7)]
    elif name in ("log", "log2", "log10", "sqrt", "log1p", "arccosh"):
        near1 = (1.0 + rng.uniform(-2.0 ** -7, 2.0 ** -7, N // 4)).astype(np.float32)
        ulps = (np.float32(1.0).view(np.int32) + rng.integers(-300, 300, N // 8)).view(np.float32)
        parts = [np.abs(full), near1, ulps.astype(np.float32)]
        if name == "log1p":
            parts += [full[: N // 8], unit, -np.abs(unit)]
    elif name in ("sin", "cos", "tan"):
        parts = [full, _near_multiples_of_pi_over_2(rng, N // 4),
                 rng.uniform(-1e4, 1e4, N // 4).astype(np.float32)]
    elif name in ("arcsin", "arccos", "arctanh"):
        ends = (1 - _loguniform(rng, N // 4, -24, -1, signed=False)).astype(np.float32)
        parts = [unit, ends, -ends, _loguniform(rng, N // 4, -149, 0), full[: N // 16]]
    elif name in ("arctan", "arcsinh"):
        parts = [full, unit, rng.uniform(-5000, 5000, N // 4).astype(np.float32)]
    else:                        # tanh, sinh, cosh, sigmoid: everything interesting is below 128
        parts = [_loguniform(rng, N // 2, -149, 7), rng.uniform(-12, 12, N // 4).astype(np.float32),
                 rng.uniform(-90, 90, N // 8).astype(np.float32)]
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


def _flushed(x):
    return flushed(np.asarray(x, np.float32))


def _call(name, args, device=None):
    return FUNCTIONS[name][0](*(km.asarray(a, device=device) for a in args)).numpy()


def _reference(name, args):
    with np.errstate(all="ignore"):
        return FUNCTIONS[name][1](*(a.astype(np.float64) for a in args))


def errors(name, args, got, keeps=True):
    """ulp errors of ``got`` = name(*args). On a device that flushes subnormals (``keeps``
    false), the smaller of the errors against the reference for the inputs as given and for the
    inputs read as zeros, each with any result of magnitude <= 2^-126 (0, a subnormal passed
    through, FLT_MIN) accepted where that reference is below 2^-126."""
    ref = _reference(name, args)
    err = ulp_error(got, ref)
    if not keeps:
        for r in (ref, _reference(name, [_flushed(a) for a in args])):
            e = ulp_error(got, r)
            e[(np.abs(r) < 2.0 ** -126) & (np.abs(got) <= 2.0 ** -126)] = 0.0
            err = np.minimum(err, e)
    return err, ref


def measure(name, x=None, device=None):
    """(ulp errors, inputs, results, float64 references) of function ``name`` on ``x`` (a
    tuple of arrays for binary functions; the first input is reported)."""
    x = inputs(name) if x is None else x
    args = x if name in BINARY else (x,)
    got = _call(name, args, device)
    err, ref = errors(name, args, got, keeps_denormals(device))
    return err, args[0], got, ref


def _report(err, x, got, ref, y=None):
    i = int(np.argmax(err))
    second = "" if y is None else f", y={y[i]!r}"
    return (f"worst {err[i]:.2f} ulp at x={x[i]!r} ({x[i].view(np.uint32):#010x}){second}: "
            f"got {got[i]!r}, reference {ref[i]!r}")


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_random_inputs_within_4_ulp(name):
    err, x, got, ref = measure(name)
    y = inputs(name)[1] if name in BINARY else None
    assert err.max() <= TOLERANCE_ULP, f"{name}: " + _report(err, x, got, ref, y)


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
    got = _call(name, (x,))
    err = ulp_error(got, want.astype(np.float64))
    if not keeps_denormals():
        err = np.minimum(err, errors(name, (x,), got, False)[0])
    assert err.max() <= TOLERANCE_ULP, f"{name}: " + _report(err, x, got, want)


EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, F32.max, -F32.max, F32.tiny, -F32.tiny,
                  TINY, -TINY, 1.0, -1.0, 88.72283, 88.72284, -87.33654, -103.27893, -103.97208,
                  -104.0, 1e-8, np.pi / 2, np.pi, 2 * np.pi, 1e8, 3e38, 0.625, -0.625, 9.1, 20.0,
                  -20.0, 0.5, -0.5, 2.0, -2.0, 0.75, -0.75, 16.0, -16.0, 89.4, -89.4, 90.0,
                  np.nextafter(np.float32(1), np.float32(2)), np.nextafter(np.float32(1), np.float32(0)),
                  -np.nextafter(np.float32(1), np.float32(0)), 4096.0, 1e30, 128.0, -149.0, -150.0,
                  -151.0, 127.99999, 1.5, -1.5], np.float32)
# every pair of these: the special cases of pow and atan2 (C99 Annex F, the Array API's list)
PAIR_VALUES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0,
                        -3.0, 2.5, -2.5, 1e-3, F32.max, -F32.max, TINY, -TINY, 1e10, -1e10,
                        2.0 ** 25, -(2.0 ** 25) - 2, 0.999, 1.001], np.float32)


def _specials_match(got, want):
    """Elementwise: nan where nan, and the same value and sign where the reference is inf or 0."""
    special = np.isinf(want) | (want == 0)
    return ((np.isnan(got) == np.isnan(want))
            & (~special | ((got == want) & (np.signbit(got) == np.signbit(want)))))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_special_cases(name):
    """IEEE / C99 special values as numpy's float64 functions give them (the Array API spec's
    lists: signed zeros, infinities, nan outside the domain) and 4 ulp elsewhere."""
    if name in BINARY:
        args = tuple(a.ravel() for a in np.meshgrid(PAIR_VALUES, PAIR_VALUES, indexing="ij"))
    else:
        args = (EDGES,)
    got = _call(name, args)
    with np.errstate(over="ignore"):
        want = _reference(name, args).astype(np.float32)
        flushed = _reference(name, [_flushed(a) for a in args]).astype(np.float32)
    ok = _specials_match(got, want)
    if not keeps_denormals():         # or subnormals read as zeros, in the inputs and the result
        ok |= _specials_match(_flushed(got), flushed) | _specials_match(_flushed(got), want)
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, f"{name}: " + ", ".join(
        f"{name}{tuple(float(a[i]) for a in args)} = {got[i]!r}, want {want[i]!r}" for i in bad[:8])
    err, _ = errors(name, args, got, keeps_denormals())
    y = args[1] if name in BINARY else None
    assert err.max() <= TOLERANCE_ULP, f"{name}: " + _report(err, args[0], got, want, y)


def test_issue_examples():
    """The values the issue reported wrong on lavapipe."""
    x = np.array([0.9999, 0.99999994], np.float32)
    err = ulp_error(km.log(km.asarray(x)).numpy(), np.log(x.astype(np.float64)))
    assert err.max() <= 1
    y = np.array([1e8], np.float32)
    assert ulp_error(km.sin(km.asarray(y)).numpy(), np.sin(y.astype(np.float64))).max() <= 1


def test_flushing_device_comparison():
    """The H100 (which flushes float32 subnormals) gave log(3.657e-42) = -inf and
    sqrt(-3.4e-44) = -0: right for inputs read as zeros, so the comparison accepts them on a
    flushing device, and only there (a finite result for a normal input still has to be right)."""
    x = np.array([3.657e-42, -3.4e-44], np.float32)
    assert errors("log", (x[:1],), np.array([-np.inf], np.float32), keeps=False)[0].max() == 0
    assert errors("sqrt", (x[1:],), np.array([-0.0], np.float32), keeps=False)[0].max() == 0
    assert errors("sqrt", (x[1:],), x[1:], keeps=False)[0].max() == 0     # the input passed through
    assert errors("sqrt", (x[1:],), np.array([-0.0], np.float32), keeps=True)[0].max() == np.inf
    assert errors("log", (x[:1],), np.array([-np.inf], np.float32), keeps=True)[0].max() == np.inf
    assert errors("log", (np.float32([2.0]),), np.float32([0.0]), keeps=False)[0].max() > 4


def test_subnormal_results_kept():
    """exp of -100 is a subnormal float32 (2^-144.3), not 0, where the device keeps denormals:
    always where it offers DenormPreserve (the kernels request it), else where its default
    keeps them."""
    got = km.exp(km.asarray(np.array([-100.0, -103.0], np.float32))).numpy()
    if km.get_device().info.float32_denormals == "preserve":
        assert keeps_denormals()
    if keeps_denormals():
        assert (got > 0).all()
        assert ulp_error(got, np.exp(np.array([-100.0, -103.0]))).max() <= 1
    else:
        assert (got >= 0).all()


def test_integer_inputs_give_numpys_float():
    """numpy's float loops: int32 arrays are converted to float64 (float32 on a device without
    float64), for arctan2 and power of floats too."""
    want = np.float64 if km.get_device().limits["float64"] else np.float32
    x = km.asarray(np.array([1, 2, 3], np.int32))
    for fn in (kma.log2, kma.expm1, kma.arctan, kma.cosh):
        assert fn(x).dtype == want
    assert kma.arctan2(x, x).dtype == want
    np.testing.assert_allclose(kma.arctan2(x, 2).numpy(), np.arctan2([1, 2, 3], 2), rtol=1e-6)


API_NAMES = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
             "atan": "arctan", "atanh": "arctanh", "atan2": "arctan2", "pow": "power"}


@pytest.mark.parametrize("name", sorted({n for n in FUNCTIONS if hasattr(km, n)} | set(API_NAMES)))
def test_array_api_names_use_these_functions(name):
    """The Array API namespace (km.acos, ...) computes with the same kernels, bit for bit."""
    ours = API_NAMES.get(name, name)
    x = inputs(ours)
    args = x if ours in BINARY else (x[:1000],)
    args = tuple(a[:1000] for a in args)
    got = getattr(km, name)(*(km.asarray(a) for a in args)).numpy()
    np.testing.assert_array_equal(got.view(np.uint32), _call(ours, args).view(np.uint32))


def test_float32_division_is_correctly_rounded():
    """a / b in float32 is IEEE's correctly rounded quotient (numpy's), though Vulkan lets a
    driver's division be 2.5 ulp off: random significands over the whole exponent range, quotients
    near 1 (the hardest to round), zeros, infinities and nans; past one workgroup grid."""
    rng = np.random.default_rng(11)
    n = 300_001
    a = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-60, 60, n)).astype(np.float32)
    b = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-60, 60, n)).astype(np.float32)
    a[::2] *= -1
    b[1::3] = a[1::3] * np.float32(1 + 2.0 ** -23) * rng.choice([1, -1], b[1::3].size)
    b[2::7] = (a[2::7] / 3).astype(np.float32)
    # powers of two over significands of all ones: quotients a hair past a midpoint
    a[4::13] = np.float32(2.0) ** rng.integers(-60, 60, a[4::13].size)
    b[4::13] = (np.float32(1 - 2.0 ** -24) * 2.0 ** rng.integers(-60, 60, b[4::13].size)
                * rng.choice([1, -1], b[4::13].size)).astype(np.float32)
    # (near FLT_MAX, and big over big: where 1 / b is subnormal)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 3.0, 2.0 ** 100, 3e38,
                        -F32.max, 0.5, 1e-30, 1.5e-37, 7e-3], np.float32)
    k = special.size
    a[:k * k] = np.repeat(special, k)
    b[:k * k] = np.tile(special, k)
    with np.errstate(all="ignore"):
        want = a / b
    got = (km.asarray(a) / km.asarray(b)).numpy()
    normal = ~(np.abs(want) < 2.0 ** -126)         # a subnormal quotient may be flushed
    np.testing.assert_array_equal(got[normal], want[normal])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_operations_round_each_step(dtype):
    """x * y - z in one fused kernel rounds the product before the subtraction, as numpy does:
    with z = numpy's x * y the result is exactly 0 (an fma the driver contracted it into would
    leave the product's rounding error). Likewise a linear interpolation, numpy's _lerp."""
    rng = np.random.default_rng(12)
    x, y = rng.standard_normal((2, 100_003)).astype(dtype)
    z = x * y
    kx, ky, kz = km.asarray(x), km.asarray(y), km.asarray(z)
    got = (kx * ky - kz).numpy()
    np.testing.assert_array_equal(got, np.zeros_like(z))
    t = rng.uniform(0, 1, x.size).astype(dtype)
    np.testing.assert_array_equal((kx + (ky - kx) * km.asarray(t)).numpy(), x + (y - x) * t)
