"""int8, uint8, int16, uint16, float16 and bfloat16 on a device with 8/16-bit storage buffers:
each element takes 1 or 2 bytes on the device, values compute in 32 bits and narrow at each
operation's result as numpy's loops do (integers wrap; float16 and bfloat16 round to nearest
even once per operation, as numpy's float16 loops and ml_dtypes' bfloat16 do). numpy (with
ml_dtypes' bfloat16) is the reference: result dtypes are ``np.result_type``'s (NEP 50), values
numpy's own. On a device without the storage (the same device, its reported features changed)
such data widens to its 32-bit dtype and an explicit request raises TypeError."""

import dataclasses
import pickle
import re

import ml_dtypes
import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._array import dtypes as _dtypes
from kompute_ml._runtime import device as _device

from _denormals import flushed, keeps_denormals

BF16 = np.dtype(ml_dtypes.bfloat16)
SMALL = [np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.float16)] + [BF16]
OTHERS = [np.dtype(t) for t in (np.bool_, np.int32, np.uint32, np.int64, np.uint64, np.float32,
                                np.float64)]
SMALL_INTS = SMALL[:4]


@pytest.fixture(scope="module", autouse=True)
def _needs_storage():
    lim = km.get_device().limits
    if not (lim["storage8"] and lim["storage16"] and lim["int64"] and lim["float64"]):
        pytest.skip("the default device lacks 8/16-bit storage (or int64 / float64)")


@pytest.fixture(scope="module")
def no_storage_device():
    """The default device as one reporting no 8/16-bit storage (nothing else changes)."""
    info = km.get_device().info
    fake = _device.Device(dataclasses.replace(
        info, limits={**info.limits, "storage8": False, "storage16": False}))
    yield fake
    fake.close()


def values(dtype, n=None, seed=0):
    """Values of ``dtype``: its edges, small ones and random ones (``n`` of them, cycled)."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed + dt.itemsize)
    if dt == np.bool_:
        v = rng.integers(0, 2, 23).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        edge = [c for c in (0, 1, 2, 3, 7, -1, -2, -7, 127, 128, -128, -129, 255, 256, 32767,
                            -32768, 65535, info.max, info.min, info.max - 1, info.min + 1)
                if info.min <= c <= info.max]
        v = np.concatenate([np.array(edge, dtype=dt),
                            rng.integers(info.min, info.max, 19, endpoint=True, dtype=dt)])
    else:
        big = 60000.0 if dt == np.float16 else 1e30
        v = np.array([0.0, -0.0, 1.0, -1.5, 2.5, 3.0, -7.0, 0.1, 1 / 3, 100.25, big, -big],
                     dtype=np.float64)
        v = np.concatenate([v, rng.standard_normal(19) * 50]).astype(dt)
    return v if n is None else np.resize(v, n)


def check(got, want, ulps=0):
    """``got`` (an Array) equals numpy's ``want``: dtype, shape, and values (exact; floats
    within ``ulps`` units of the last place of their dtype, nans where numpy has them)."""
    assert isinstance(got, km.Array)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    value = got.numpy()
    assert value.dtype == want.dtype
    if want.dtype.kind == "f" or want.dtype == BF16:
        w = want.astype(np.float64)
        v = value.astype(np.float64)
        same_nan = np.isnan(w) == np.isnan(v)
        assert same_nan.all(), (v[~same_nan], w[~same_nan])
        ok = ~np.isnan(w)
        if ulps == 0:
            np.testing.assert_array_equal(v[ok], w[ok])
        else:
            inf = np.isinf(w) | np.isinf(v)
            np.testing.assert_array_equal(v[inf], w[inf])
            ok &= ~inf
            spacing = np.abs(np.spacing(want[ok])).astype(np.float64)
            far = np.abs(v[ok] - w[ok]) > ulps * spacing
            assert not far.any(), (v[ok][far], w[ok][far])
    else:
        np.testing.assert_array_equal(value, want)


# ---- storage and transfers ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", SMALL, ids=str)
@pytest.mark.parametrize("n", [0, 1, 3, 7, 1001, 3 * 70001])   # (the last: past one grid)
def test_round_trip_is_exact_and_storage_is_real(dtype, n):
    x = values(dtype, n)
    a = km.asarray(x)
    assert a.dtype == dtype and a.itemsize == dtype.itemsize and a.nbytes == x.nbytes
    got = a.numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.view(np.uint8), x.view(np.uint8))      # the very bits
    buf = a._realize()
    # n elements take n * itemsize bytes on the device (rounded up to whole 4-vectors; the
    # memory pool's bucket may be larger)
    assert km._array.buffers._nbytes(x.shape, dtype) == -(-max(n, 1) // 4) * 4 * dtype.itemsize
    assert buf.nbytes <= max(256, 2 * x.nbytes)      # (the pool's smallest bucket: 256)
    # a copy through a kernel (4-vector loads and stores) keeps the bits
    np.testing.assert_array_equal((a + 0 if dtype.kind in "iu" else a.copy()).numpy()
                                  .view(np.uint8), x.view(np.uint8))


def test_explicit_requests_and_namespace_dtypes():
    for dt in SMALL:
        assert km.asarray([1, 2, 3], dtype=dt).dtype == dt
        assert km.zeros(5, dtype=dt).dtype == dt
        np.testing.assert_array_equal(km.full((3,), 2, dtype=dt).numpy(), np.full(3, 2, dt))
        np.testing.assert_array_equal(km.ones(7, dtype=dt).numpy(), np.ones(7, dt))
    names = km.__array_namespace_info__().dtypes()
    for n in ("int8", "uint8", "int16", "uint16"):
        assert n in names
    # (the standard's dtypes only; the device's own list has float16 and bfloat16 too)
    assert "float16" not in names and "bfloat16" not in names
    have = _dtypes.device_dtypes(km.get_device())
    assert have["float16"] == np.float16 and have["bfloat16"] == BF16
    assert km.bfloat16 == BF16 and km.float16 == np.float16 and km.uint8 == np.uint8
    assert km.isdtype(km.bfloat16, "real floating") and km.isdtype(km.int8, "signed integer")
    assert km.finfo(km.bfloat16).eps == float(ml_dtypes.finfo(BF16).eps)
    assert km.iinfo(km.int8).min == -128


# ---- operators on every pair -------------------------------------------------------------------

_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "floor_divide", "remainder",
           "true_divide", "less", "equal", "greater_equal", "bitwise_xor"]
_PAIRS = [(a, b) for a in SMALL for b in SMALL + OTHERS] + [(b, a) for a in SMALL for b in OTHERS]


def _numpy_op(op, x, y):
    with np.errstate(all="ignore"):
        return getattr(np, op)(x, y)


@pytest.mark.parametrize("a,b", _PAIRS, ids=lambda d: str(d))
def test_binary_operators_on_every_pair(a, b):
    x, y = values(a, 45), np.roll(values(b, 45, seed=1), 5)
    if b.kind in "iu" or b == np.bool_:
        y = np.where(y == 0, np.ones_like(y), y) if b != np.bool_ else y
    ka, kb = km.asarray(x), km.asarray(y)
    for op in _BINARY:
        try:
            want = _numpy_op(op, x, y)
        except TypeError:            # numpy refuses it (bitwise on floats): so do we
            with pytest.raises(TypeError):
                getattr(km, op)(ka, kb).numpy()
            continue
        if op in ("floor_divide", "remainder") and want.dtype.kind in "iu" and \
                b == np.bool_:
            continue             # (dividing by False: numpy's 0 with a warning; not compared)
        got = getattr(km, op)(ka, kb)
        # float16 / bfloat16 results: numpy's loops round a float32 result once, as we do;
        # a float64 division of float16 values rounds once in numpy, once in our float64 too
        ulps = 1 if op in ("floor_divide", "remainder") and want.dtype.kind == "f" else 0
        check(got, want, ulps=ulps)


@pytest.mark.parametrize("dtype", SMALL, ids=str)
def test_python_scalars_are_weak_and_overflow_raises_as_numpy(dtype):
    x = values(dtype, 33)
    a = km.asarray(x)
    with np.errstate(all="ignore"):
        check(a + 3, x + 3)
        check(a * 2, x * 2)
        check(2.5 * a, 2.5 * x)
        check(a - 1, x - 1)
    if dtype.kind in "iu":
        with pytest.raises(OverflowError):
            np.add(x, 100000)
        with pytest.raises(OverflowError):
            (a + 100000).numpy()


@pytest.mark.parametrize("dtype", SMALL_INTS, ids=str)
def test_integers_wrap_as_numpy(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.max, info.min, info.max - 1, 0, -1 if info.min else 1], dtype=dtype)
    a = km.asarray(x)
    with np.errstate(all="ignore"):
        check(a + a, x + x)
        check(a * a * a, x * x * x)              # fused: wraps at each product, as numpy's
        check(a - km.asarray(np.flip(x)), x - np.flip(x))
        check(-a, -x)
        check(km.abs(a), np.abs(x))
        check(~a, ~x)
        check((a * a) // 3, (x * x) // 3)
        check(a ** 2, x ** 2)


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), BF16], ids=str)
def test_float_rounding_is_nearest_even(dtype):
    rng = np.random.default_rng(8)
    ref = np.float16 if dtype == np.float16 else BF16
    tiny = float(np.finfo(np.float16).smallest_subnormal) if dtype == np.float16 else 1e-40
    top = 70000.0 if dtype == np.float16 else 3.4e38
    f32 = np.concatenate([
        rng.standard_normal(2000).astype(np.float32) * 1000,
        (rng.standard_normal(500) * tiny * 8).astype(np.float32),      # subnormals
        np.array([np.inf, -np.inf, np.nan, top, -top, 65504, 65519.99, 65520, tiny / 2,
                  tiny * 1.5, 0.0, -0.0], np.float32)])
    # ties: values exactly half-way between two neighbours of the dtype
    lo = f32[:200].astype(ref).astype(np.float32)
    half = np.abs(np.spacing(lo.astype(ref)).astype(np.float32)) / 2
    f32 = np.concatenate([f32, lo + half]).astype(np.float32)
    check(km.asarray(f32).astype(dtype), f32.astype(ref))
    f64 = np.concatenate([f32.astype(np.float64),
                          rng.standard_normal(2000) * 300,
                          np.float64(lo[:50]) + np.float64(half[:50]) * (1 + 2.0 ** -40)])
    check(km.asarray(f64).astype(dtype), f64.astype(ref))       # one rounding from float64
    x = km.asarray(f32.astype(ref))
    # bfloat16 has float32's exponents: a device that flushes float32 subnormals flushes its
    # subnormals, in the operands and in each result
    flush = flushed if dtype == BF16 and not keeps_denormals() else (lambda v: v)
    h = flush(f32.astype(ref))
    with np.errstate(all="ignore"):
        check(x * x + x, flush(flush(h * h) + h))
        check(x / 3, flush(h / ref(3) if dtype == np.float16 else h / np.asarray(3, ref)))
    ulps = 2
    y = km.asarray(values(dtype, 200))
    with np.errstate(all="ignore"):
        for fn in ("exp", "sin", "sqrt", "log1p", "tanh"):
            check(getattr(km, fn)(km.abs(y) / 64), getattr(np, fn)(np.abs(y.numpy()) /
                                                                    np.asarray(64, dtype)),
                  ulps=ulps)


@pytest.mark.parametrize("src", SMALL + OTHERS, ids=str)
def test_casts_between_every_pair(src):
    x = values(src, 60)
    if src.kind == "f" or src == BF16:
        x = np.where(np.isfinite(x.astype(np.float64)) & (np.abs(x.astype(np.float64)) < 100),
                     x, np.asarray(5, src)).astype(src)        # (in range of every integer)
        x = x if src.kind == "f" and src != np.float16 else x
        if src.kind == "f":
            x = np.concatenate([x, np.array([-0.0, 0.5, -0.5, 99.9], src)])
    a = km.asarray(x)
    for dst in SMALL + OTHERS:
        if dst not in SMALL and src not in SMALL:
            continue
        with np.errstate(all="ignore"):
            want = x.astype(dst)
        if (src.kind == "f" or src == BF16) and dst.kind == "u":
            want = x.astype(np.float64)
            keep = want >= 0                       # (negative floats to unsigned: C's UB)
            want = want[keep].astype(dst)
            check(km.asarray(x[keep]).astype(dst), want)
            continue
        check(a.astype(dst), want)


# ---- reductions, selection, manipulation ------------------------------------------------------

@pytest.mark.parametrize("dtype", SMALL, ids=str)
@pytest.mark.parametrize("n", [1, 100, 3 * 70001])
def test_reductions_like_numpy(dtype, n):
    x = values(dtype, n)
    if dtype.kind == "f" or dtype == BF16:
        x = np.random.default_rng(n).standard_normal(n).astype(dtype)
    a = km.asarray(x)
    if dtype.kind in "iu":
        check(km.sum(a), np.sum(x))                     # int8 adds in the default integer
        check(a.sum(), np.sum(x))
        m = km.mean(a)                                  # float64, pairwise: numpy's order aside
        assert m.dtype == np.float64
        np.testing.assert_allclose(m.numpy(), np.mean(x), rtol=1e-13)
    else:
        s = km.sum(a)
        assert s.dtype == dtype
        # added in float32 and rounded once: within the result's rounding (and float32's
        # sum error, far below it) of the exact sum
        exact = float(np.sum(x.astype(np.float64)))
        eps = float(ml_dtypes.finfo(dtype).eps)
        assert abs(float(s.numpy()) - exact) <= eps * abs(exact) + 1e-6 * n
        m = km.mean(a)
        assert m.dtype == dtype
        assert abs(float(m.numpy()) - exact / n) <= eps * abs(exact / n) + 1e-6
    check(km.max(a), np.max(x))
    check(km.min(a), np.min(x))
    check(km.argmax(a), np.argmax(x))
    check(km.argmin(a), np.argmin(x))


@pytest.mark.parametrize("dtype", SMALL, ids=str)
def test_where_concat_indexing_take_and_sort(dtype):
    x = values(dtype, 301)
    y = values(dtype, 301, seed=4)
    a, b = km.asarray(x), km.asarray(y)
    cond = x.astype(np.float64) > y.astype(np.float64)
    check(km.where(km.asarray(cond), a, b), np.where(cond, x, y))
    check(km.concat([a, b]), np.concatenate([x, y]))
    check(a[3:200:7], x[3:200:7])
    check(a.reshape(7, 43).T, x.reshape(7, 43).T)
    check(a.reshape(7, 43)[:, 5], x.reshape(7, 43)[:, 5])
    idx = np.array([0, 5, 300, 7, 7, 2])
    check(a[km.asarray(idx)], x[idx])
    check(km.take(a, km.asarray(idx)), np.take(x, idx))
    check(a[km.asarray(cond)], x[cond])
    c = km.asarray(x.copy())
    c[km.asarray(idx[:3])] = b[:3]
    want = x.copy()
    want[idx[:3]] = y[:3]
    check(c, want)
    keep = ~np.isnan(x.astype(np.float64))
    check(km.sort(km.asarray(x[keep])), np.sort(x[keep]))
    order = km.argsort(km.asarray(x[keep]), stable=True)
    np.testing.assert_array_equal(order.numpy(), np.argsort(x[keep], kind="stable"))


def test_random_integers_and_pickle():
    rng = km.random.default_rng(5)
    u = rng.integers(0, 256, size=10001, dtype=km.uint8)
    assert u.dtype == np.uint8
    got = u.numpy()
    assert got.min() >= 0 and got.max() <= 255 and len(np.unique(got)) > 200
    i = rng.integers(-100, 100, size=1000, dtype=km.int16)
    assert i.dtype == np.int16 and -100 <= i.numpy().min() and i.numpy().max() < 100
    for dt in SMALL:
        x = values(dt, 17)
        b = pickle.loads(pickle.dumps(km.asarray(x)))
        assert b.dtype == dt
        np.testing.assert_array_equal(b.numpy().view(np.uint8), x.view(np.uint8))


def test_a_device_without_storage_widens_data_and_refuses_requests(no_storage_device):
    dev = no_storage_device
    a = km.asarray(np.arange(5, dtype=np.uint8), device=dev)
    assert a.dtype == np.uint32
    np.testing.assert_array_equal(a.numpy(), np.arange(5))
    assert km.asarray(np.ones(3, np.float16), device=dev).dtype == np.float32
    for dt, feature in ((np.int8, "storageBuffer8BitAccess"),
                        (np.float16, "storageBuffer16BitAccess"),
                        (BF16, "storageBuffer16BitAccess")):
        for make in (lambda: km.asarray([1, 2], dtype=dt, device=dev),
                     lambda: km.zeros(3, dtype=dt, device=dev),
                     lambda: a.astype(dt)):
            with pytest.raises(TypeError, match=f"{np.dtype(dt)} is not available on "
                                                f"{re.escape(repr(dev.name))}.*{feature}"):
                make()
    names = km.__array_namespace_info__().dtypes(device=dev)
    assert not {"int8", "uint8", "int16", "uint16"} & set(names)
    assert not {"float16", "bfloat16"} & set(_dtypes.device_dtypes(dev))


@pytest.mark.parametrize("dtype", SMALL, ids=str)
def test_matmul_in_32_bits_narrowed(dtype):
    rng = np.random.default_rng(2)
    if dtype.kind in "iu":
        a = values(dtype, 37 * 23).reshape(37, 23)
        b = np.roll(values(dtype, 23 * 11, seed=3), 2).reshape(23, 11)
        with np.errstate(all="ignore"):
            check(km.asarray(a) @ km.asarray(b), a @ b)          # wrapping, as numpy's
        return
    a = (rng.standard_normal((37, 23))).astype(dtype)
    b = (rng.standard_normal((23, 11))).astype(dtype)
    got = km.asarray(a) @ km.asarray(b)
    assert got.dtype == dtype
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got.numpy().astype(np.float64), want,
                               rtol=0, atol=float(np.abs(want).max()) * 2 * float(
                                   ml_dtypes.finfo(dtype).eps))


@pytest.mark.parametrize("dtype", SMALL, ids=str)
@pytest.mark.parametrize("n", [5, 2049])
def test_sort_argsort_unique_on_the_device(dtype, n):
    with km.config.set(device_sort=True):            # lavapipe too: the device's radix sort
        _sort_checks(dtype, n)


def _sort_checks(dtype, n):
    h = values(dtype, n)
    np.random.default_rng(n).shuffle(h)
    k = km.asarray(h)
    check(km.argsort(k), np.argsort(h, kind="stable"))
    check(km.sort(k), np.sort(h, kind="stable"))
    check(km.sort(k, descending=True), np.flip(np.sort(h, kind="stable")))
    u = km.unique_all(k)
    vals, idx, inv, counts = np.unique(h, return_index=True, return_inverse=True,
                                       return_counts=True)
    for g, w in ((u.values, vals), (u.indices, idx), (u.inverse_indices, inv), (u.counts, counts)):
        check(g, w)


def test_dlpack_and_numpy_protocols():
    for dt in SMALL[:5]:
        x = values(dt, 9)
        a = km.asarray(x)
        np.testing.assert_array_equal(np.from_dlpack(a), x)
        assert np.from_dlpack(a).dtype == dt
        assert isinstance(np.add(a, a), km.Array) and np.add(a, a).dtype == dt
    b = km.asarray(values(BF16, 9))
    try:                    # a numpy without bfloat16 in DLPack refuses the export
        got = np.from_dlpack(b)
    except (BufferError, TypeError):
        pass
    else:                   # a numpy that takes it (kDLBfloat) reads the same bits
        assert got.dtype == BF16
        np.testing.assert_array_equal(got.view(np.uint16), values(BF16, 9).view(np.uint16))
    assert np.asarray(b).dtype == BF16


@pytest.mark.parametrize("dtype", SMALL, ids=str)
def test_scans_and_word_kernels(dtype):
    x = values(dtype, 50)
    if dtype.kind == "f" or dtype == BF16:
        x = (np.random.default_rng(1).standard_normal(50) / 4).astype(dtype)
    a = km.asarray(x)
    if dtype.kind in "iu":
        check(km.cumulative_sum(a), np.cumsum(x))          # in the default integer, as numpy's
        with np.errstate(all="ignore"):
            check(km.cumulative_prod(a[:9]), np.cumprod(x[:9]))
    else:
        # held in float32, rounded once (numpy's float16 loop rounds each running value)
        got = km.cumulative_sum(a)
        assert got.dtype == dtype
        exact = np.cumsum(x.astype(np.float64))
        eps = float(ml_dtypes.finfo(dtype).eps)
        assert (np.abs(got.numpy().astype(np.float64) - exact) <= eps * np.abs(exact) + 1e-6).all()
    # a kernel that moves whole 32-bit words refuses 8/16-bit elements instead of misreading them
    with pytest.raises(TypeError, match=f"does not take {dtype} arrays"):
        km._array.buffers.words_per_element(dtype)
