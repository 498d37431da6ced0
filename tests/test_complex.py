"""complex64 and complex128 arrays: interleaved (re, im) pairs of float32 / float64 on the device
(complex128 where the device has shaderFloat64), against numpy: round trips, arithmetic,
comparisons, casts, numpy's promotion (NEP 50), indexing and joins, reductions, matmul, vecdot,
and the standard's complex functions (a few ulp of numpy's complex128 results; C99's special
values)."""

import dataclasses
import warnings

import mpmath as mp
import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import device as _device

from _denormals import FLT_MIN, flushed, keeps_denormals

C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
COMPLEX = [C64, C128]
REALS = [np.bool_, np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]
EPS = {C64: np.finfo(np.float32).eps, C128: np.finfo(np.float64).eps}


@pytest.fixture(scope="module", autouse=True)
def _needs_float64():
    if not km.get_device().limits["float64"]:
        pytest.skip("the default device has no float64 (shaderFloat64): complex128 is absent")


def rand(dtype, shape, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    re = rng.standard_normal(shape) * scale
    im = rng.standard_normal(shape) * scale
    return (re + 1j * im).astype(dt)


def rel_err(ours, ref):
    """Normwise relative error of each element (absolute where the reference is 0)."""
    ours, ref = np.asarray(ours, np.complex128), np.asarray(ref, np.complex128)
    den = np.maximum(np.abs(ref), np.finfo(np.float64).tiny)
    return np.abs(ours - ref) / den


# ---- storage and round trips -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (3, 5), (2, 3, 4), (70000,)])
def test_round_trip(dtype, shape):
    x = rand(dtype, shape)
    a = km.asarray(x)
    assert a.dtype == dtype and a.shape == shape
    assert a.nbytes == x.nbytes
    np.testing.assert_array_equal(a.numpy(), x)


def test_python_complex_takes_complex64():
    a = km.asarray([1 + 2j, 3.5 - 1j])
    assert a.dtype == C64
    np.testing.assert_array_equal(a.numpy(), np.array([1 + 2j, 3.5 - 1j], C64))
    assert km.full((2,), 1j).dtype == C64
    assert complex(km.asarray(np.complex128(2 - 3j))) == 2 - 3j
    assert km.asarray(np.complex64(1 + 1j)).item() == 1 + 1j


def test_special_values_round_trip():
    x = np.array([complex(np.inf, np.nan), complex(-0.0, 0.0), complex(np.nan, -np.inf),
                  complex(1e-300, -1e300)], C128)
    np.testing.assert_array_equal(km.asarray(x).numpy(), x)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_creation_functions(dtype):
    for fn, ref in ((km.zeros, np.zeros), (km.ones, np.ones)):
        out = fn((3, 70), dtype=dtype)
        assert out.dtype == dtype
        np.testing.assert_array_equal(out.numpy(), ref((3, 70), dtype))
    out = km.full((5, 3), 2.5 - 1.25j, dtype=dtype)
    np.testing.assert_array_equal(out.numpy(), np.full((5, 3), 2.5 - 1.25j, dtype))
    assert km.empty((4,), dtype=dtype).dtype == dtype


def test_complex128_needs_float64():
    info = km.get_device().info
    fake = _device.Device(dataclasses.replace(info, limits={**info.limits, "float64": False}))
    try:
        with pytest.raises(TypeError, match="complex128.*shaderFloat64"):
            km.asarray(np.ones(3, C128), dtype=km.complex128, device=fake)
        with pytest.raises(TypeError, match="shaderFloat64"):
            km.zeros(3, dtype=km.complex128, device=fake)
        # data-driven: complex128 data becomes complex64 there, as float64 data becomes float32
        a = km.asarray(np.array([1 + 2j]), device=fake)
        assert a.dtype == C64
        assert "complex128" not in km.__array_namespace_info__().dtypes(device=fake)
        assert "complex64" in km.__array_namespace_info__().dtypes(device=fake)
    finally:
        fake.close()


def test_linspace_pickle_dlpack_cumsum():
    got = km.linspace(0, 2 + 1j, 5)
    assert got.dtype == C64
    np.testing.assert_allclose(got.numpy(), np.linspace(0, 2 + 1j, 5), rtol=1e-6)
    x = rand(C128, (4, 3), 22)
    a = km.asarray(x)
    import pickle
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)).numpy(), x)
    np.testing.assert_array_equal(np.from_dlpack(a), x)
    np.testing.assert_allclose(km.cumulative_sum(a, axis=0).numpy(), np.cumsum(x, axis=0),
                               rtol=1e-14)


def test_numpy_style_predicates():
    x = np.array([1 + 0j, 2 - 1j, -0.0 + 0j, 3j], C64)
    a = km.asarray(x)
    np.testing.assert_array_equal(km.isreal(a).numpy(), np.isreal(x))
    np.testing.assert_array_equal(km.iscomplex(a).numpy(), np.iscomplex(x))
    assert km.iscomplexobj(a) and not km.isrealobj(a)
    assert not km.iscomplexobj(km.asarray([1.0]))
    np.testing.assert_array_equal(km.conjugate(a).numpy(), np.conjugate(x))


def test_namespace_info():
    info = km.__array_namespace_info__()
    assert info.default_dtypes()["complex floating"] == C64
    assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"}
    assert km.isdtype(km.complex64, "complex floating")
    assert not km.isdtype(km.complex64, "real floating")
    assert km.complex128 == C128


# ---- promotion ---------------------------------------------------------------------------------

@pytest.mark.parametrize("cdt", COMPLEX)
@pytest.mark.parametrize("other", REALS + COMPLEX)
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide"])
def test_promotion_and_arithmetic(cdt, other, op):
    x = rand(cdt, (37,), 1)
    if np.dtype(other).kind == "c":
        y = rand(other, (37,), 2)
    elif np.dtype(other).kind == "b":
        y = np.arange(37) % 3 == 0
    else:
        y = (np.arange(37) % 11 + 1).astype(other)
    fn = getattr(km, op)
    want = getattr(np, op)(x, y)
    for a, b, w in ((km.asarray(x), km.asarray(y), want),
                    (km.asarray(y), km.asarray(x), getattr(np, op)(y, x))):
        got = fn(a, b)
        assert got.dtype == w.dtype, (got.dtype, w.dtype)
        tol = 4 * EPS[C64 if w.dtype == C64 else C128]
        ok = np.isfinite(w)
        assert np.all(rel_err(got.numpy()[ok], w[ok]) <= tol)


@pytest.mark.parametrize("cdt", COMPLEX)
@pytest.mark.parametrize("scalar", [2, 2.5, 1 - 2j, True])
def test_python_scalars_are_weak(cdt, scalar):
    x = rand(cdt, (9,), 3)
    a = km.asarray(x)
    for got, want in ((a * scalar, x * scalar), (scalar - a, scalar - x), (a / scalar, x / scalar)):
        assert got.dtype == want.dtype == cdt
        np.testing.assert_allclose(got.numpy(), want, rtol=4 * EPS[cdt])


def test_real_array_with_python_complex():
    f = km.asarray(np.arange(5, dtype=np.float32))
    assert (f + 1j).dtype == C64
    d = km.asarray(np.arange(5, dtype=np.float64))
    assert (d * 2j).dtype == C128
    np.testing.assert_array_equal((d * 2j).numpy(), np.arange(5.0) * 2j)
    i = km.asarray(np.arange(5, dtype=np.int32))
    assert (i + 1j).dtype == np.result_type(np.int32, 1j) == C128
    assert km.result_type(km.complex64, km.float64) == C128
    assert km.result_type(km.complex64, km.float32) == C64


@pytest.mark.parametrize("dtype", COMPLEX)
def test_division_extremes(dtype):
    """Smith's algorithm: no overflow of |b|^2, numpy's values at zero and infinite divisors."""
    big = np.finfo(np.float32 if dtype == C64 else np.float64).max / 4
    x = np.array([1 + 1j, big + big * 1j, 1 + 0j, 1 + 1j, 0j, 3 - 4j, complex(np.inf, 1)], dtype)
    y = np.array([big + big * 1j, big - 1j, 0j, complex(0, np.inf), 0j, 1e-30 + 2e-30j, 2 + 1j],
                 dtype)
    with np.errstate(all="ignore"):
        want = x / y
    got = (km.asarray(x) / km.asarray(y)).numpy()
    # a quotient near FLT_MIN passes through subnormal intermediates, which a device may flush
    atol = 4 * FLT_MIN if dtype == C64 and not keeps_denormals() else 0
    np.testing.assert_allclose(got, want, rtol=8 * EPS[dtype], atol=atol, equal_nan=True)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_comparisons_and_where(dtype):
    x = rand(dtype, (40,), 4)
    y = x.copy()
    y[::3] += 1
    y[5] = complex(x[5].real, -x[5].imag)
    x[7] = complex(np.nan, 1)
    y[7] = x[7]
    a, b = km.asarray(x), km.asarray(y)
    np.testing.assert_array_equal((a == b).numpy(), x == y)
    np.testing.assert_array_equal((a != b).numpy(), x != y)
    np.testing.assert_array_equal((a == 1 + 0j).numpy(), x == 1)
    cond = np.arange(40) % 2 == 0
    got = km.where(km.asarray(cond), a, b)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.numpy(), np.where(cond, x, y))
    got = km.where(km.asarray(cond), a, 2.0)
    np.testing.assert_array_equal(got.numpy(), np.where(cond, x, 2.0).astype(dtype))
    with pytest.raises(TypeError):
        (a < b).numpy()


@pytest.mark.parametrize("dtype", COMPLEX)
def test_parts_conj_abs_angle(dtype):
    x = rand(dtype, (1001,), 5)
    x[:6] = [0j, complex(-0.0, -0.0), complex(np.inf, np.nan), complex(np.nan, 2),
             complex(3e38 if dtype == C64 else 1e300, 3e38 if dtype == C64 else 1e300), 1e-40j]
    a = km.asarray(x)
    part = np.float32 if dtype == C64 else np.float64
    for got, want in ((km.real(a), x.real), (km.imag(a), x.imag), (km.conj(a), np.conj(x))):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(np.signbit(km.conj(a).numpy().imag), np.signbit(-x.imag))
    got = km.abs(a)
    assert got.dtype == part
    want = np.abs(x.astype(C128))
    ok = np.isfinite(want.astype(part))         # (|3e38 + 3e38j| overflows float32, as numpy's)
    # a device that flushes float32 subnormals reads 1e-40j as 0
    flush = dtype == C64 and not keeps_denormals()
    tiny = (np.abs(want) < FLT_MIN) if flush else np.zeros(want.shape, bool)
    assert np.all(rel_err(got.numpy()[ok & ~tiny], want[ok & ~tiny]) <= 2 * EPS[dtype])
    assert np.all(got.numpy()[tiny] <= FLT_MIN)
    np.testing.assert_array_equal(got.numpy()[~ok], want[~ok].astype(part))
    got = km.angle(a)
    want = np.angle(x)
    assert got.dtype == want.dtype
    if flush:
        x0 = flushed(x.real) + 1j * flushed(x.imag)
        want = np.where(np.isclose(got.numpy(), np.angle(x0), rtol=4 * EPS[dtype], atol=0),
                        np.angle(x0), want)
    np.testing.assert_allclose(got.numpy(), want, rtol=4 * EPS[dtype], atol=0, equal_nan=True)
    np.testing.assert_array_equal((-a).numpy(), -x)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_astype(dtype):
    x = rand(dtype, (50,), 6)
    a = km.asarray(x)
    other = C128 if dtype == C64 else C64
    np.testing.assert_array_equal(a.astype(other).numpy(), x.astype(other))
    for real in (np.float32, np.float64, np.int32, np.int64):
        with pytest.warns(np.exceptions.ComplexWarning):
            got = a.astype(real)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            np.testing.assert_array_equal(got.numpy(), x.astype(real))
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)     # none, as numpy's
        np.testing.assert_array_equal(a.astype(np.bool_).numpy(), x.astype(np.bool_))
    for real in REALS:
        r = (np.arange(50) % 7).astype(real)
        np.testing.assert_array_equal(km.asarray(r).astype(dtype).numpy(), r.astype(dtype))


# ---- indexing, joins, shapes --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
def test_indexing_and_shapes(dtype):
    x = rand(dtype, (6, 7, 5), 7)
    a = km.asarray(x)
    for key in [(1,), (slice(None, None, -2),), (Ellipsis, 3),
                (slice(1, 5), None, slice(None, None, 2)), (2, 3, 4), (np.array([0, 5, 2]),),
                (x.real > 0,)]:
        np.testing.assert_array_equal(a[key].numpy(), x[key])
    np.testing.assert_array_equal(a.reshape(35, 6).numpy(), x.reshape(35, 6))
    np.testing.assert_array_equal(a.T.numpy(), x.T)
    np.testing.assert_array_equal(km.permute_dims(a, (1, 2, 0)).numpy(), x.transpose(1, 2, 0))
    m = km.asarray(x[0])
    np.testing.assert_array_equal(m.T.numpy(), x[0].T)
    idx = np.array([4, 0, 6, 6])
    np.testing.assert_array_equal(km.take(a, km.asarray(idx), axis=1).numpy(),
                                  np.take(x, idx, axis=1))
    y = rand(dtype, (6, 3, 5), 8)
    np.testing.assert_array_equal(km.concat([a, km.asarray(y)], axis=1).numpy(),
                                  np.concatenate([x, y], axis=1))
    np.testing.assert_array_equal(km.stack([a, a]).numpy(), np.stack([x, x]))
    f = np.arange(30, dtype=np.float32).reshape(6, 1, 5)
    got = km.concat([a, km.asarray(f)], axis=1)
    assert got.dtype == np.result_type(x, f)
    np.testing.assert_array_equal(got.numpy(), np.concatenate([x, f], axis=1))
    b = km.asarray(x.copy())
    b[1, 2] = 5 - 5j
    want = x.copy()
    want[1, 2] = 5 - 5j
    np.testing.assert_array_equal(b.numpy(), want)
    big = rand(dtype, (300, 300), 9)             # a gather past one workgroup grid row
    np.testing.assert_array_equal(km.asarray(big).T.numpy(), big.T)


# ---- reductions, products -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape,axis", [((0,), None), ((1,), None), ((1000,), None),
                                        ((33, 17), 0), ((33, 17), 1), ((4, 5, 6), (0, 2)),
                                        ((70001,), 0)])
def test_sum_mean(dtype, shape, axis):
    x = rand(dtype, shape, 10)
    a = km.asarray(x)
    n = max(x.size, 1)
    for fn, ref in ((km.sum, np.sum), (km.mean, np.mean)):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = ref(x.astype(C128), axis=axis).astype(dtype)
        got = fn(a, axis=axis)
        assert got.dtype == dtype and got.shape == want.shape
        scale = np.sum(np.abs(x.astype(C128)), axis=axis) / (n if ref is np.mean else 1)
        err = np.abs(got.numpy().astype(C128) - want)
        assert np.all(err <= 4 * np.log2(n + 1) * EPS[dtype] * np.maximum(scale, 1e-300)) or \
            (x.size == 0 and ref is np.mean)
    assert km.sum(a, axis=axis, keepdims=True).shape == np.sum(x, axis=axis, keepdims=True).shape


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape,axis", [((0,), None), ((1,), None), ((7,), None), ((64,), None),
                                        ((13, 9), 1), ((5, 6, 7), (0, 2))])
def test_prod(dtype, shape, axis):
    x = (1 + 0.1 * rand(dtype, shape, 11)).astype(dtype)
    got = km.prod(km.asarray(x), axis=axis)
    want = np.prod(x.astype(C128), axis=axis)
    assert got.dtype == dtype and got.shape == want.shape
    n = max(x.size, 1)
    assert np.all(rel_err(got.numpy(), want) <= 4 * n * EPS[dtype])


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shapes", [((5, 7), (7, 3)), ((7,), (7,)), ((2, 4, 6), (6, 5)),
                                    ((70,), (70, 9)), ((0, 4), (4, 3))])
def test_matmul(dtype, shapes):
    x, y = rand(dtype, shapes[0], 12), rand(dtype, shapes[1], 13)
    got = km.matmul(km.asarray(x), km.asarray(y))
    want = np.matmul(x.astype(C128), y.astype(C128))
    assert got.dtype == dtype and got.shape == want.shape
    k = shapes[0][-1]
    bound = 4 * k * EPS[dtype] * np.matmul(np.abs(x.astype(C128)), np.abs(y.astype(C128)))
    assert np.all(np.abs(got.numpy() - want) <= np.maximum(bound, 1e-300))


def test_matmul_mixed_real_complex():
    x = rand(C64, (4, 6), 14)
    r = np.arange(18, dtype=np.float32).reshape(6, 3)
    for a, b in ((x, r), (r.T, x.T)):
        got = km.asarray(a) @ km.asarray(b)
        want = a.astype(C128) @ b.astype(C128)
        assert got.dtype == np.result_type(a, b)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_norms_and_decompositions(dtype):
    x = rand(dtype, (4, 5), 23)
    a = km.asarray(x)
    part = np.float32 if dtype == C64 else np.float64
    for ord in (2, 1, np.inf):
        got = km.linalg.vector_norm(a, axis=-1, ord=ord)
        assert got.dtype == part
        np.testing.assert_allclose(got.numpy(), np.linalg.norm(x, ord=ord, axis=-1),
                                   rtol=8 * EPS[dtype])
    for ord in ("fro", 1, np.inf):
        got = km.linalg.matrix_norm(a, ord=ord)
        np.testing.assert_allclose(got.numpy(), np.linalg.norm(x, ord=ord), rtol=8 * EPS[dtype])
    # complex decompositions are not implemented: a TypeError, never a real part's answer
    sq = km.asarray(rand(dtype, (3, 3), 24))
    for fn in (km.linalg.inv, km.linalg.det, km.linalg.cholesky, km.linalg.svd, km.linalg.qr,
               lambda m: km.linalg.matrix_norm(m, ord=2)):
        with pytest.raises(TypeError, match="not implemented"):
            fn(sq)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_vecdot_conjugates_the_first(dtype):
    x, y = rand(dtype, (3, 50), 15), rand(dtype, (3, 50), 16)
    got = km.vecdot(km.asarray(x), km.asarray(y))
    want = np.sum(np.conj(x.astype(C128)) * y, axis=-1)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=50 * EPS[dtype])


# ---- the standard's complex functions -----------------------------------------------------------

FUNCS = ["exp", "log", "sqrt", "expm1", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh",
         "asin", "acos", "atan", "asinh", "acosh", "atanh", "square", "log2", "log10"]
NP = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh,
      "acosh": np.arccosh, "atanh": np.arctanh}
# the largest normwise relative error allowed, in ulp of the component type
ULP = {"tan": 12, "tanh": 12, "expm1": 8}


def _inputs(dtype, seed):
    """Random points over several scales (near 0, near the unit circle, large), both signs."""
    rng = np.random.default_rng(seed)
    parts = []
    for scale in (1e-4, 0.3, 1.0, 3.0, 20.0):
        parts.append((rng.standard_normal(400) + 1j * rng.standard_normal(400)) * scale)
    ang = rng.uniform(-np.pi, np.pi, 200)
    parts.append(np.exp(1j * ang) * (1 + rng.uniform(-1e-2, 1e-2, 200)))
    # near the axes (the branch cuts' sides; on them the sign of a zero part decides, which
    # test_function_special_values and test_branch_cuts check against numpy)
    parts.append(rng.uniform(-3, 3, 100) + 1j * rng.choice([-1e-3, 1e-3], 100))
    parts.append(rng.choice([-1e-3, 1e-3], 100) + 1j * rng.uniform(-3, 3, 100))
    return np.concatenate(parts).astype(dtype)


MP = {"asin": "asin", "acos": "acos", "atan": "atan", "asinh": "asinh", "acosh": "acosh",
      "atanh": "atanh", "square": None}


def _reference(name, x):
    """The correctly rounded complex128 values of ``name`` at ``x`` (mpmath at 40 digits; numpy's
    complex128 functions are themselves a few ulp off, log1p and expm1 far more near 0)."""
    if name == "square":
        return x.astype(C128) ** 2
    mp.mp.dps = 40
    fn = getattr(mp, MP.get(name, name)) if name != "log2" else (lambda z: mp.log(z, 2))
    out = np.empty(x.shape, C128)
    for i, v in enumerate(x.astype(C128)):
        out[i] = complex(fn(mp.mpc(v.real, v.imag)))
    return out


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", FUNCS)
def test_function_accuracy(dtype, name):
    x = _inputs(dtype, 17)
    want = _reference(name, x)
    got = getattr(km, name)(km.asarray(x))
    assert got.dtype == dtype
    got = got.numpy()
    ok = np.isfinite(want) & (np.abs(want) < np.finfo(np.float32 if dtype == C64 else
                                                      np.float64).max)
    err = rel_err(got[ok], want[ok]) / EPS[dtype]
    assert err.max() <= ULP.get(name, 6), (name, err.max(), x[ok][np.argmax(err)])


SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan]


def _special_grid(dtype):
    """Every pair of SPECIAL values as (re, im)."""
    return np.array([complex(a, b) for a in SPECIAL for b in SPECIAL], dtype)


def _same(got, want, eps):
    """Indices where ``got`` differs from ``want``: a part that is nan, infinite or zero in
    ``want`` must be so in ``got`` (a zero's sign included); a finite one within 8 ulp."""
    bad = np.zeros(got.shape, bool)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        exact = ~np.isfinite(w) | (w == 0)
        eq = np.where(exact, (g == w) | (np.isnan(g) & np.isnan(w)),
                      np.abs(g - w) <= 8 * eps * np.abs(w))
        eq &= ~((w == 0) & (g == 0)) | (np.signbit(g) == np.signbit(w))
        bad |= ~eq
    return np.flatnonzero(bad) if bad.any() else None


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", ["sqrt", "log", "log1p", "asin", "acos", "atan", "asinh",
                                  "acosh", "atanh"])
def test_branch_cuts(dtype, name):
    """On a branch cut the side is the sign of the zero part (C99's, numpy's)."""
    t = np.array([-3.0, -1.5, 1.5, 3.0, 0.25])
    x = np.concatenate([t + 0j, np.array([complex(v, -0.0) for v in t]),
                        np.array([complex(0.0, v) for v in t]),
                        np.array([complex(-0.0, v) for v in t])]).astype(dtype)
    ref = NP.get(name, getattr(np, name, None))
    with np.errstate(all="ignore"):
        want = ref(x.astype(C128))
    got = getattr(km, name)(km.asarray(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=8 * EPS[dtype], atol=8 * EPS[dtype])
    np.testing.assert_array_equal(np.sign(got.imag), np.sign(want.imag))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", [n for n in FUNCS if n not in ("square", "expm1")])
def test_function_special_values(dtype, name):
    x = _special_grid(dtype)
    ref = NP.get(name, getattr(np, name, None))
    with np.errstate(all="ignore"):
        want = ref(x.astype(C128)).astype(dtype)
    got = getattr(km, name)(km.asarray(x)).numpy()
    bad = _same(got, want, EPS[dtype])
    if bad is not None:
        # the standard leaves the sign of some zeros and infinities free: compare magnitudes there
        g, w = got[bad], want[bad]
        loose = _same(np.abs(g.real) + 1j * np.abs(g.imag), np.abs(w.real) + 1j * np.abs(w.imag),
                      EPS[dtype])
        assert loose is None, [(x[bad][i], g[i], w[i]) for i in loose]


# expm1's special cases as the standard gives them (numpy's complex expm1 is nan at infinities
# where C99's cexp is not, so it is no reference there)
_EXPM1 = [((0.0, 0.0), (0.0, 0.0)), ((1.0, np.inf), (np.nan, np.nan)),
          ((1.0, np.nan), (np.nan, np.nan)), ((np.inf, 0.0), (np.inf, 0.0)),
          ((-np.inf, 1.0), (-1.0, 0.0)), ((-np.inf, -1.0), (-1.0, -0.0)),
          ((np.inf, 1.0), (np.inf * np.cos(1.0), np.inf)), ((-np.inf, np.inf), (-1.0, 0.0)),
          ((np.nan, 0.0), (np.nan, 0.0)), ((np.nan, 1.0), (np.nan, np.nan)),
          ((np.nan, np.nan), (np.nan, np.nan))]


@pytest.mark.parametrize("dtype", COMPLEX)
def test_expm1_special_values(dtype):
    x = np.array([complex(*a) for a, _ in _EXPM1], dtype)
    want = np.array([complex(*b) for _, b in _EXPM1], dtype)
    got = km.expm1(km.asarray(x)).numpy()
    assert _same(got, want, EPS[dtype]) is None, got
    # (+inf + inf j and +inf + nan j: inf + nan j, the real part's sign free)
    got = km.expm1(km.asarray(np.array([complex(np.inf, np.inf), complex(np.inf, np.nan)],
                                       dtype))).numpy()
    assert np.all(np.isinf(got.real)) and np.all(np.isnan(got.imag))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_sign_and_predicates(dtype):
    x = rand(dtype, (30,), 18)
    x[:8] = [0j, complex(-0.0, 0), complex(np.inf, 1), complex(1, -np.inf), complex(np.nan, 0),
             complex(0, np.nan), complex(np.inf, np.nan), 3 - 4j]
    a = km.asarray(x)
    np.testing.assert_array_equal(km.isnan(a).numpy(), np.isnan(x))
    np.testing.assert_array_equal(km.isinf(a).numpy(), np.isinf(x))
    np.testing.assert_array_equal(km.isfinite(a).numpy(), np.isfinite(x))
    got = km.sign(a).numpy()
    fin = np.isfinite(x)
    with np.errstate(all="ignore"):
        want = np.sign(x)
    np.testing.assert_allclose(got[fin], want[fin], rtol=4 * EPS[dtype])
    assert np.all(np.isnan(got[np.isnan(x)]))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_pow(dtype):
    x, y = rand(dtype, (200,), 19, 1.0), rand(dtype, (200,), 20, 1.0)
    with np.errstate(all="ignore"):
        want = np.power(x.astype(C128), y.astype(C128))
    got = km.pow(km.asarray(x), km.asarray(y)).numpy()
    # exp(y log x): the error grows with |y log x|
    tol = 8 * EPS[dtype] * (1 + np.abs(y * np.log(x.astype(C128))))
    assert np.all(rel_err(got, want) <= tol)
    # integer exponents by repeated products; x ** 0 is 1; 0 ** positive real is 0
    a = km.asarray(x)
    for k in (0, 1, 2, 3, -2, 7):
        np.testing.assert_allclose((a ** k).numpy(), x.astype(C128) ** k, rtol=12 * EPS[dtype])
    z = km.asarray(np.array([0j, 0j], dtype)) ** km.asarray(np.array([2 + 0j, 0j], dtype))
    np.testing.assert_array_equal(z.numpy(), np.array([0, 1], dtype))


def test_function_on_a_large_array():
    x = rand(C64, (200_000,), 21, 1.0)                 # past one workgroup grid row
    got = km.exp(km.asarray(x)).numpy()
    want = np.exp(x.astype(C128))
    assert np.max(rel_err(got, want)) <= 6 * EPS[C64]


def test_unsupported_operations_raise():
    a = km.asarray(np.array([1 + 1j], C64))
    for fn in (lambda: a // a, lambda: a % a, lambda: km.floor(a), lambda: km.max(a)):
        with pytest.raises(TypeError):
            r = fn()
            r.numpy()
