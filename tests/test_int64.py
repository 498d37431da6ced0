"""int64 and uint64 on a device with shaderInt64: arrays stay 64-bit and compute exactly (values
past 2^31, 2^32, 2^53 and up to 2^63 - 1, numpy's wrapping), in every layer; on a device without
it (the same physical device, with only its reported capability changed), 64-bit data becomes
32-bit where it fits and an explicit request raises.

Every operator runs on every dtype pair against numpy with values at the edges of each dtype."""

import dataclasses
import itertools
import pickle
import re

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._array import dtypes as _dtypes
from kompute_ml._runtime import device as _device

DTYPES = [np.bool_, np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]
INTS = [np.int32, np.uint32, np.int64, np.uint64]


@pytest.fixture(scope="module", autouse=True)
def _needs_int64():
    if not km.get_device().limits["int64"]:
        pytest.skip("the default device has no int64 (shaderInt64)")


@pytest.fixture(scope="module")
def no_int64_device():
    """The default device as one reporting no shaderInt64 (nothing else changes)."""
    info = km.get_device().info
    fake = _device.Device(dataclasses.replace(info, limits={**info.limits, "int64": False}))
    yield fake
    fake.close()


def ours(dtype):
    return _dtypes.device_dtype(dtype, km.get_device())


def edges(dtype, n=None):
    """Values at the edges of ``dtype`` (and of the narrower ones inside it), small ones, and
    random ones, as an array of ``dtype``; ``n`` elements (cycled) when given."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        v = np.array([True, False, True, True, False])
    elif dt.kind == "f":
        v = np.array([0.0, -0.0, 1.5, -2.5, 7, -7, 2.0**31, -2.0**31, 2.0**32 + 3, 2.0**53,
                      -2.0**53 + 2, 1e18, -1e18, 3.25, 1e-3], dtype=dt)
    else:
        info = np.iinfo(dt)
        cand = [0, 1, 2, 3, 7, -1, -2, -7, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1,
                2**32, 2**32 + 1, 2**53 + 1, -2**53 - 1, 2**62 + 12345, 2**63 - 1, -2**63,
                2**63, 2**64 - 1, info.max, info.min, info.max - 1, info.min + 1]
        v = np.array(sorted({c for c in cand if info.min <= c <= info.max}), dtype=object)
        rng = np.random.default_rng(dt.itemsize)
        rand = rng.integers(info.min, info.max, 9, endpoint=True, dtype=dt)
        v = np.concatenate([v.astype(dt), rand])
    v = v.astype(dt)
    return v if n is None else np.resize(v, n)


def check(got, want, rtol=0.0):
    """``got`` equals numpy's ``want`` in shape, dtype (mapped) and values (exact for
    integers and bools; floats within ``rtol``, float32 results from float64 maths allowed
    their rounding)."""
    assert isinstance(got, km.Array)
    want = np.asarray(want)
    assert got.dtype == ours(want.dtype), (got.dtype, want.dtype)
    assert got.shape == want.shape
    value = got.numpy()
    if want.dtype.kind == "f":
        np.testing.assert_allclose(value, want.astype(got.dtype), rtol=rtol, atol=0,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(value, want)


def _pair(a, b, n=41):
    x, y = edges(a, n), edges(b, n)
    y = np.roll(y, 3)            # every value meets several others
    return x, y


# ---- transfers and dtype rules ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_round_trip_is_exact_and_storage_is_8_bytes(dtype):
    x = edges(dtype)
    a = km.asarray(x)
    assert a.dtype == dtype and a.itemsize == 8 and a.nbytes == x.nbytes
    np.testing.assert_array_equal(a.numpy(), x)
    assert [a[k].item() for k in range(len(x))] == x.tolist()
    assert int(a[-1]) == int(x[-1]) and a.tolist() == x.tolist()
    big = np.arange(2**40, 2**40 + 3 * 70001, 3, dtype=dtype)       # past one workgroup grid
    np.testing.assert_array_equal(km.asarray(big).numpy(), big)
    assert km.asarray(np.zeros((0, 3), dtype)).numpy().dtype == dtype
    np.testing.assert_array_equal(km.asarray(x.reshape(1, -1)[:, ::2]).numpy(), x[None, ::2])


def test_numpy_int64_data_and_explicit_requests_are_int64():
    assert km.asarray(np.arange(3)).dtype == np.int64
    assert km.asarray([1, 2], dtype=km.int64).dtype == np.int64
    assert km.asarray([2**40, -1]).dtype == np.int64
    assert km.asarray(np.uint64(2**63)).dtype == np.uint64
    assert km.asarray([2**63]).dtype == np.uint64             # numpy's dtype of that list
    # (8/16-bit data: its own dtype where the device has 8/16-bit storage, tests/test_small_dtypes.py)
    assert km.asarray(np.arange(3, dtype=np.int16)).dtype == ours(np.int16)
    assert km.asarray(np.arange(3, dtype=np.uint8)).dtype == ours(np.uint8)
    with pytest.raises(OverflowError, match="do not fit int64"):
        km.asarray(np.array([2**63], np.uint64), dtype=np.int64)
    with pytest.raises(OverflowError, match="do not fit uint64"):
        km.asarray([-1], dtype=np.uint64)


@pytest.mark.parametrize("a, b", list(itertools.product(DTYPES, DTYPES)))
def test_promotion_is_numpys(a, b):
    x, y = km.zeros(2, dtype=a), km.zeros(2, dtype=b)
    want = np.result_type(a, b)
    if want == np.bool_:
        assert (x | y).dtype == want
    else:
        assert (x + y).dtype == want
        assert km.result_type(x, y) == want == km.result_type(a, b)
    assert (x < y).dtype == np.bool_
    for scalar in (3, -1, 2.5, True):        # Python scalars are weak (NEP 50)
        try:
            ref = (np.zeros(2, a) + scalar).dtype
        except OverflowError:
            with pytest.raises(OverflowError):
                x + scalar
            continue
        assert (x + scalar).dtype == ref


# ---- elementwise: every operator, every pair, edge values -------------------------------------

ARITH = ["add", "subtract", "multiply", "maximum", "minimum", "floor_divide", "remainder",
         "bitwise_and", "bitwise_or", "bitwise_xor", "true_divide", "power"]
CMP = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


def _ref(op, x, y):
    with np.errstate(all="ignore"):
        return getattr(np, op)(x, y)


@pytest.mark.parametrize("op", ARITH + CMP)
@pytest.mark.parametrize("a, b", [p for p in itertools.product(DTYPES, DTYPES)
                                  if np.int64 in p or np.uint64 in p])
def test_binary_operators_on_64_bit_pairs(op, a, b):
    x, y = _pair(a, b)
    if op == "power":
        y = np.abs(y.astype(np.float64)).clip(0, 5).astype(b) if np.dtype(b).kind != "b" else y
    try:
        want = _ref(op, x, y)
    except TypeError:                       # numpy refuses (bool - bool, float & int ...)
        with pytest.raises(TypeError):
            getattr(km, op)(km.asarray(x), km.asarray(y))
        return
    got = getattr(km, op)(km.asarray(x), km.asarray(y))
    if want.dtype.kind == "f":
        finite = np.isfinite(want)
        if op == "power":                  # our pow's few ulp, overflow to inf alike
            check(got, want, rtol=1e-12 if want.dtype == np.float64 else 2e-6)
        elif op in ("floor_divide", "remainder"):
            # float floor division of huge values: exact as numpy's (an exact fmod)
            check(got, want, rtol=1e-15)
        else:
            assert finite.any()
            check(got, want, rtol=1e-15 if want.dtype == np.float64 else 0)
    else:
        check(got, want)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_wrapping_overflow_and_division_by_zero_as_numpy(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.max, info.min, info.max, 7, -7 if info.min else 7, 0], dtype)
    y = np.array([1, 1, info.max, 0, 0, 0], dtype)
    a, b = km.asarray(x), km.asarray(y)
    with np.errstate(all="ignore"):
        check(a + b, x + y)                 # int64 max + 1 wraps to int64 min
        check(a - b, x - y)
        check(a * b, x * y)
        check(a // b, x // y)               # x // 0 == 0, as numpy's integer loops
        check(a % b, x % y)
        check(a + 1, x + dtype(1))
        check(-a, -x)
        check(abs(a), np.abs(x))
        if dtype == np.int64:
            m = np.array([-2**63, -2**63, 5, -5, 5, -5], np.int64)
            d = np.array([-1, 1, 3, 3, -3, -3], np.int64)
            check(km.asarray(m) // km.asarray(d), m // d)      # INT64_MIN // -1 wraps
            check(km.asarray(m) % km.asarray(d), m % d)        # the sign of the divisor
            check(km.asarray(m) // 2, m // 2)
            check(km.asarray(m) % -3, m % -3)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_scalars_past_32_bits_travel_whole(dtype):
    x = edges(dtype)
    a = km.asarray(x)
    for s in (2**40 + 3, 2**62, 5, 2**32):
        with np.errstate(all="ignore"):
            check(a + s, x + dtype(s))
            check(a * s, x * dtype(s))
            check(a ^ s, x ^ dtype(s))
            check(a < s, x < s)
            check(km.where(a > s, a, s), np.where(x > s, x, dtype(s)))
            check(km.maximum(a, np.int64(s)), np.maximum(x, np.int64(s)))
    # a Python int outside the dtype: compared exactly, refused in arithmetic (NEP 50)
    for s in (2**64, -2**63 - 1, -1 if dtype == np.uint64 else 2**63):
        check(a < s, x < s)
        check(a != s, x != s)
        with pytest.raises(OverflowError):
            a + s


@pytest.mark.parametrize("count", [3, 40])
def test_many_64_bit_scalars_pushed_or_baked(count):
    """Scalars travel as two push words each; past the push block (40 of them) they are
    written into the kernel's source: the same values either way, and a loop's next scalars
    (the per-op fast path) too."""
    x = edges(np.int64)
    for base in (2**40, -2**45 - 3):
        a, want = km.asarray(x), x.copy()
        for k in range(count):
            s = base + 7919 * k
            a = a + s if k % 2 else a ^ s
            with np.errstate(over="ignore"):
                want = want + np.int64(s) if k % 2 else want ^ np.int64(s)
        check(a, want)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_unary_and_bitwise(dtype):
    x = edges(dtype)
    a = km.asarray(x)
    with np.errstate(all="ignore"):
        for fn in ("negative", "absolute", "invert", "floor", "ceil", "sign", "square",
                   "signbit", "isnan", "isfinite", "positive"):
            ref = getattr(np, fn)(x)
            if fn in ("floor", "ceil"):
                ref = ref.astype(dtype)         # the Array API's (numpy 2.0: float64)
            check(getattr(km, fn)(a), ref)
        for fn in ("exp", "sqrt", "sin", "log1p"):
            check(getattr(km, fn)(km.asarray(np.abs(x) % 1000)), getattr(np, fn)(np.abs(x) % 1000),
                  rtol=1e-14)
    for s in (0, 1, 31, 32, 33, 62, 63, 64, 65):
        shift = np.full(x.shape, s, dtype)
        check(km.bitwise_left_shift(a, km.asarray(shift)), np.left_shift(x, shift))
        check(km.bitwise_right_shift(a, km.asarray(shift)), np.right_shift(x, shift))
        check(a << s, x << dtype(s))
        check(a >> s, x >> dtype(s))


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_casts_between_every_pair(src, dst):
    x = edges(src)
    if np.dtype(src).kind == "f" and np.dtype(dst).kind in "iu":
        info = np.iinfo(dst)
        # in range (numpy's value elsewhere is the platform's, undefined in C)
        lo = -2**31 if np.dtype(dst) == np.uint32 else info.min      # (negative: C's wrap)
        lo = -2**63 if np.dtype(dst) == np.uint64 else lo
        x = x[(x >= lo) & (x < float(info.max))]
    with np.errstate(invalid="ignore", over="ignore"):
        want = x.astype(dst)
    check(km.asarray(x).astype(dst), want, rtol=0)
    # fused: the cast of a lazy expression of src
    check((km.asarray(x) == km.asarray(x)).astype(dst), (x == x).astype(dst))


# ---- reductions and scans ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32, np.uint32, np.bool_])
@pytest.mark.parametrize("n", [1, 7, 1000, 70001, (1 << 20) + 3])
def test_reductions_like_numpy(dtype, n):
    h = edges(dtype, n)
    if dtype != np.bool_:
        h = np.roll(h, n // 3) * dtype(3)        # (wrapping as numpy's)
    a = km.asarray(h)
    with np.errstate(over="ignore"):
        for op in ("sum", "max", "min", "argmax", "argmin", "prod"):
            check(getattr(km, op)(a), getattr(np, op)(h))
        check(km.mean(a), np.mean(h), rtol=1e-9)
        if n <= 70001:
            check(km.cumulative_sum(a), np.cumsum(h))
            check(km.cumsum(a), np.cumsum(h))
    # sums of int32/uint32/bool accumulate in 64 bits, as numpy's: past 2^32 exactly
    if np.dtype(dtype).itemsize == 4:
        assert int(km.sum(a)) == int(h.astype(np.int64 if dtype == np.int32 else np.uint64).sum())


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
@pytest.mark.parametrize("shape, axis", [((61, 83), 0), ((61, 83), 1), ((3, 1500, 5), 1),
                                         ((7, 9, 11), (0, 2)), ((4, 0), 1), ((0, 5), 1)])
def test_axis_reductions(dtype, shape, axis):
    h = edges(dtype, int(np.prod(shape))).reshape(shape)
    a = km.asarray(h)
    for op in ("sum", "max", "min", "argmax", "argmin"):
        if (op != "sum" and 0 in shape) or (op.startswith("arg") and isinstance(axis, tuple)):
            continue
        check(getattr(km, op)(a, axis=axis), getattr(np, op)(h, axis=axis))
    check(km.sum(a, axis=axis, keepdims=True), np.sum(h, axis=axis, keepdims=True))
    if not isinstance(axis, tuple):
        check(km.cumulative_sum(a, axis=axis), np.cumsum(h, axis=axis))


def test_sum_dtype_argument_accumulates_in_it():
    h = np.full(1000, 2**31 - 1, np.int32)
    a = km.asarray(h)
    check(km.sum(a, dtype=np.int64), h.sum(dtype=np.int64))
    check(a.sum(dtype=np.int32), h.sum(dtype=np.int32))     # wraps, as numpy's
    check(km.sum(km.asarray(h.astype(np.uint32)), dtype=np.uint64), h.astype(np.uint64).sum())


# ---- creation --------------------------------------------------------------------------------------

def test_creation_functions_take_int64():
    check(km.arange(2**40, 2**40 + 20, 3, dtype=km.int64), np.arange(2**40, 2**40 + 20, 3))
    check(km.arange(5), np.arange(5))                       # the default integer: int64
    check(km.arange(2**63 - 4, 2**63 - 1, dtype=km.uint64),
          np.arange(2**63 - 4, 2**63 - 1, dtype=np.uint64))
    check(km.arange(0.0, 5.0, 1.5, dtype=km.int64), np.arange(0.0, 5.0, 1.5, dtype=np.int64))
    check(km.zeros((2, 3), dtype=km.int64), np.zeros((2, 3), np.int64))
    check(km.ones(4, dtype=km.uint64), np.ones(4, np.uint64))
    check(km.full(5, 2**62 + 1), np.full(5, 2**62 + 1))
    check(km.full(3, -1, dtype=np.int64), np.full(3, -1, np.int64))
    check(km.full(3, 2**64 - 1, dtype=np.uint64), np.full(3, 2**64 - 1, np.uint64))
    check(km.eye(3, 4, k=1, dtype=km.int64), np.eye(3, 4, k=1, dtype=np.int64))
    check(km.linspace(0, 2**40, 5, dtype=km.int64), np.linspace(0, 2**40, 5).astype(np.int64))
    check(km.zeros_like(km.asarray(np.arange(3))), np.zeros(3, np.int64))
    check(km.full_like(km.asarray(np.arange(3, dtype=np.uint64)), 2**63),
          np.full(3, 2**63, np.uint64))
    with pytest.raises(OverflowError):
        km.full(3, 2**63, dtype=km.int64)
    with pytest.raises(OverflowError):
        km.arange(2**63 - 2, 2**63 + 1, dtype=km.int64)


# ---- indexing, take, put, scatter, where -------------------------------------------------------------

@pytest.mark.parametrize("idt", INTS)
def test_advanced_indexing_with_64_bit_indices(idt):
    x = edges(np.int64, 1001).reshape(7, 11, 13)
    k = km.asarray(x)
    signed = np.dtype(idt).kind == "i"
    i = np.array([0, 3, 6, -1, -7, 2] if signed else [0, 3, 6, 1, 2, 5], dtype=idt)
    j = np.array([10, 0, -11, 5, 1, 2] if signed else [10, 0, 4, 5, 1, 2], dtype=idt)
    check(k[km.asarray(i)], x[i])
    check(k[km.asarray(i), :, km.asarray(j) % 13], x[i, :, j % 13])
    check(k[:, km.asarray(j)], x[:, j])
    y = x.copy()
    y[i, j] = -5
    k2 = km.asarray(x)
    k2[km.asarray(i), km.asarray(j)] = -5
    check(k2, y)
    # an index past 32 bits is out of range, never wrapped into it
    info = np.iinfo(idt)
    for bad in ([2**32], [2**32 + 1], [-2**32 - 1] if signed else [2**63 + 2], [info.max]):
        if not info.min <= bad[0] <= info.max:
            continue
        with pytest.raises(IndexError, match="out of bounds"):
            k[km.asarray(np.array(bad, dtype=idt))]
        with pytest.raises(IndexError, match="out of bounds"):
            km.take(k, km.asarray(np.array(bad, dtype=idt)), axis=1)


@pytest.mark.parametrize("idt", INTS)
def test_take_put_and_take_along_axis(idt):
    x = edges(np.uint64, 60).reshape(6, 10)
    k = km.asarray(x)
    signed = np.dtype(idt).kind == "i"
    ind = np.array([9, 0, -1, -10, 4] if signed else [9, 0, 3, 7, 4], dtype=idt)
    check(km.take(k, km.asarray(ind), axis=1), np.take(x, ind, axis=1))
    along = np.argsort(x, axis=1).astype(idt)
    check(km.take_along_axis(k, km.asarray(along), axis=1), np.take_along_axis(x, along, axis=1))
    flat = x.reshape(-1).copy()
    np.put(flat, ind.astype(np.int64), np.array([1, 2, 3, 4, 5], np.uint64))
    kf = km.asarray(x.reshape(-1))
    km.put(kf, km.asarray(ind), km.asarray(np.array([1, 2, 3, 4, 5], np.uint64)))
    check(kf, flat)
    # wrap mode: numpy's, computed in the indices' 64 bits
    w = np.array([2**33 + 1, 2**40] if np.dtype(idt).itemsize == 8 else [2**31 - 1, 61],
                 dtype=idt)
    fw = x.reshape(-1).copy()
    np.put(fw, w.astype(np.int64), 7, mode="wrap")
    kw = km.asarray(x.reshape(-1))
    km.put(kw, km.asarray(w), 7, mode="wrap")
    check(kw, fw)


def test_index_results_are_int64():
    x = np.array([3, 0, 2**40, -1, 2**40, 5], np.int64)
    k = km.asarray(x)
    for got, want in ((km.argmax(k), np.argmax(x)), (km.argsort(k), np.argsort(x, kind="stable")),
                      (km.nonzero(k)[0], np.nonzero(x)[0]), (km.flatnonzero(k), np.flatnonzero(x)),
                      (km.argwhere(k), np.argwhere(x)),
                      (km.searchsorted(km.sort(k), k), np.searchsorted(np.sort(x), x)),
                      (km.unique_inverse(k).inverse_indices, np.unique(x, return_inverse=True)[1]),
                      (km.count_nonzero(k), np.count_nonzero(x))):
        check(got, want)
        assert got.dtype == np.int64
    assert km.__array_namespace_info__().default_dtypes()["indexing"] == np.int64


# ---- sorting ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
@pytest.mark.parametrize("n", [5, 2049, 70001])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_argsort_unique_on_the_device(dtype, n, descending):
    with km.config.set(device_sort=True):            # lavapipe too: the device's radix sort
        _sort_checks(dtype, n, descending)


def _sort_checks(dtype, n, descending):
    h = edges(dtype, n)
    np.random.default_rng(n).shuffle(h)
    k = km.asarray(h)
    got = km.argsort(k, descending=descending)
    want = np.argsort(h, kind="stable")
    if descending:
        want = np.flip(n - 1 - np.argsort(np.flip(h), kind="stable"))
    check(got, want)
    check(km.sort(k, descending=descending), h[want])
    u = km.unique_all(k)
    vals, idx, inv, counts = np.unique(h, return_index=True, return_inverse=True,
                                       return_counts=True)
    for g, w in ((u.values, vals), (u.indices, idx), (u.inverse_indices, inv), (u.counts, counts)):
        check(g, w)
    check(km.searchsorted(km.asarray(vals), k, side="right"), np.searchsorted(vals, h, "right"))


# ---- linear algebra, protocols, pickling, DLPack ----------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_matmul_wraps_as_numpy(dtype):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2**40, (37, 130), dtype=np.int64).astype(dtype)
    b = rng.integers(0, 2**30, (130, 21), dtype=np.int64).astype(dtype)
    check(km.asarray(a) @ km.asarray(b), a @ b)
    check(km.asarray(a) @ km.asarray(b[:, 0]), a @ b[:, 0])
    check(km.asarray(a[0]) @ km.asarray(b), a[0] @ b)
    # int32 @ uint64 is float64 (numpy's promotion): its rounding, not its order of sums
    c = (a[:, :5] % 1000).astype(np.int32)
    check(km.asarray(c) @ km.asarray(b[:5]), c @ b[:5], rtol=1e-14)


def test_pickle_dlpack_and_numpy_protocols():
    x = edges(np.int64)
    a = km.asarray(x)
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype == np.int64
    np.testing.assert_array_equal(b.numpy(), x)
    d = np.from_dlpack(a)
    assert d.dtype == np.int64
    np.testing.assert_array_equal(d, x)
    u = km.asarray(edges(np.uint64))
    np.testing.assert_array_equal(np.from_dlpack(u), edges(np.uint64))
    assert isinstance(np.add(a, 1), km.Array) and np.add(a, 1).dtype == np.int64
    check(km.from_dlpack(np.arange(5, dtype=np.uint64)), np.arange(5, dtype=np.uint64))
    assert km.iinfo(km.int64).max == 2**63 - 1 and km.iinfo(km.uint64).max == 2**64 - 1
    assert km.astype(a, km.uint64).dtype == np.uint64


def test_dask_chunks_of_int64():
    da = pytest.importorskip("dask.array")
    x = edges(np.int64, 3001)
    dx = da.from_array(x, chunks=700, asarray=False).map_blocks(km.asarray, dtype=x.dtype)
    got = (dx * 3 + 2**40).compute(scheduler="threads")
    assert isinstance(got, km.Array) and got.dtype == np.int64
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got.numpy(), x * 3 + 2**40)
        s = dx.sum().compute(scheduler="threads")
        assert int(np.asarray(s)) == int(x.sum())
    assert int(np.asarray(dx.max().compute(scheduler="threads"))) == int(x.max())


# ---- a device without shaderInt64 ---------------------------------------------------------------------

def test_a_device_without_int64_narrows_data_and_refuses_requests(no_int64_device):
    dev = no_int64_device
    a = km.asarray(np.arange(5), device=dev)
    assert a.dtype == np.int32
    np.testing.assert_array_equal(a.numpy(), np.arange(5))
    assert km.asarray(np.arange(5, dtype=np.uint64), device=dev).dtype == np.uint32
    with pytest.raises(OverflowError, match="do not fit int32"):
        km.asarray(np.array([2**40]), device=dev)
    for make in (lambda: km.asarray([1, 2], dtype=np.int64, device=dev),
                 lambda: km.zeros(3, dtype=np.int64, device=dev),
                 lambda: km.full((2,), 1, dtype="uint64", device=dev),
                 lambda: km.empty(3, dtype=km.int64, device=dev),
                 lambda: km.arange(3, dtype=km.int64, device=dev),
                 lambda: a.astype(np.int64)):
        with pytest.raises(TypeError, match=f"int64 is not available on "
                                            f"{re.escape(repr(dev.name))}.*shaderInt64"):
            make()
    # the default integer is int32 there, and numpy's int64 results are int32
    assert km.arange(4, device=dev).dtype == np.int32
    assert km.asarray([1, 2], device=dev).dtype == np.int32
    assert km.argmax(a).dtype == np.int32 and km.sum(a).dtype == np.int32
    i = km.asarray(np.array([1, -2], np.int32), device=dev)
    u = km.asarray(np.array([3, 4], np.uint32), device=dev)
    assert (i + u).dtype == np.int32                        # numpy: int64
    np.testing.assert_array_equal((i < u).numpy(), [True, True])      # still exact
    info = km.__array_namespace_info__()
    assert "int64" not in info.dtypes(device=dev) and "uint64" not in info.dtypes(device=dev)
    assert info.default_dtypes(device=dev)["indexing"] == np.int32
    assert km.astype(a, km.int64).dtype == np.int32         # the namespace's astype narrows
    assert km.random.default_rng(0, device=dev).integers(0, 5, size=3).dtype == np.int32
