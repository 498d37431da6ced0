"""numpy's functions beyond the Array API (_api/shaping.py, _api/numeric.py) against numpy.

Each case runs numpy on host data, then ``km.<name>`` on the same data as Arrays and numpy's
own ``np.<name>`` on those Arrays (through ``__array_function__`` / ``__array_ufunc__``): both
must give an Array (or numpy's Python scalar) with numpy's values, shape and dtype mapped onto
kompute_ml's (int64 -> int32; float64 stays on a device with float64, as lavapipe has).
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import kompute_ml as km
from kompute_ml._array.dtypes import device_dtype

from _numpy_checks import (BIG, DTYPES, FLOATS, NUMERIC, SHAPES, _to_km, assert_matches, check,
                           data, ids)


# ---- stacking -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_concatenate(shape, dtype):
    a, b = data(shape, dtype), data(shape, dtype, seed=1)
    for axis in (0, -1, None):
        check("concatenate", [a, b], axis=axis)


def test_concatenate_mixed_dtypes_and_dtype_keyword():
    a, b = data((3, 4), np.int32), data((2, 4), np.float32)
    assert check("concatenate", [a, b]).dtype == np.float64
    check("concatenate", [a, a], dtype=np.float32)
    check("concatenate", [b, b], dtype=np.int32)        # float -> int: not same_kind
    check("concatenate", [a, data((3, 5), np.int32)])   # other dims differ
    check("concatenate", [a, data((3,), np.int32)])     # ndim differs


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack"])
@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (2, 3, 4), (0, 3), (BIG,)], ids=str)
def test_stacks(name, shape, dtype):
    check(name, [data(shape, dtype), data(shape, dtype, seed=1), data(shape, dtype, seed=2)])


def test_stacks_refuse_what_numpy_refuses():
    check("hstack", [data((2, 3), np.float32), data((3, 3), np.float32)])
    check("vstack", [data((2, 3), np.float32), data((2, 4), np.float32)])
    with pytest.raises(TypeError):
        km.hstack(km.asarray([1, 2]))           # not a sequence of arrays
    with pytest.raises(TypeError):
        km.vstack(x for x in [km.asarray([1])])


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shape", [(), (0,), (4,), (2, 3), (2, 3, 4), (1, 2, 3, 4)], ids=str)
def test_atleast(name, shape):
    x = data(shape, np.float32)
    check(name, x)
    check(name, x, data((5,), np.int32))


# ---- splitting ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (6, 4), (4, 6, 2), (BIG,)], ids=str)
def test_split_family(shape, dtype):
    x = data(shape, dtype)
    n = shape[0]
    for sections in (1, 2, 3, 7):
        check("array_split", x, sections)
        check("split", x, sections)                   # ValueError where it does not divide
    check("split", x, [1, 3, n + 2])
    check("array_split", x, [-2, 1])
    check("split", x, 0)
    if len(shape) > 1:
        check("array_split", x, 3, axis=-1)
    for name in ("hsplit", "vsplit", "dsplit"):
        check(name, x, 2)
        check(name, x, [1])


def test_split_of_0d_and_bad_sections():
    check("hsplit", np.float32(3.0) * np.ones((), np.float32), 1)
    with pytest.raises(TypeError):
        km.split(km.arange(4), 2.5)


# ---- shape and order ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_ravel_copy(shape, dtype):
    x = data(shape, dtype)
    for order in ("C", "F", "A", "K"):
        check("ravel", x, order=order)
    check("ravel", x, order="Z")
    check("copy", x)
    res = km.copy(km.asarray(x))
    assert isinstance(res, km.Array)


def test_copy_is_a_new_array():
    a = km.asarray([1.0, 2.0])
    b = np.copy(a)
    assert b is not a and isinstance(b, km.Array)
    a[0] = 5.0
    assert b.numpy().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (2, 3, 4), (2, 0, 3)], ids=str)
def test_swap_flip_rot(shape, dtype):
    x = data(shape, dtype)
    check("swapaxes", x, 0, -1)
    check("swapaxes", x, 0, 5)                        # AxisError (a ValueError and IndexError)
    check("fliplr", x)
    check("flipud", x)
    for k in (-1, 0, 1, 2, 3, 5):
        check("rot90", x, k)
    check("rot90", x, 1, axes=(1, 0))
    check("rot90", x, 1, axes=(-1, 0))
    check("rot90", x, 1, axes=(0, 0))
    check("rot90", x, 1, axes=(0, 1, 2))


# ---- diagonals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_diag_diagonal_trace(dtype):
    for shape in [(4,), (0,), (3, 5), (5, 3), (0, 3), (2, 3, 4), (), (300, 300)]:
        x = data(shape, dtype)
        for k in (-4, -1, 0, 2, 7):
            check("diag", x, k)
            if x.ndim >= 2:
                check("diagonal", x, k)
                check("diagonal", x, k, 2, 0)
                check("trace", x, k)
                check("trace", x, k, 1, 2)
        check("diagonal", x, 0, 1, 1)


def test_trace_dtype():
    x = data((4, 4), np.float32)
    check("trace", x, dtype=np.float64)
    check("trace", data((4, 4), np.bool_))


# ---- min/max, rounding, angles ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["amax", "amin", "ptp"])
@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_extremes(name, shape, dtype):
    x = data(shape, dtype, special=True)
    check(name, x)
    for axis in (0, -1, (0, -1)):
        if len(shape) >= 1:
            check(name, x, axis=axis, keepdims=True)
    if name != "ptp" and dtype != np.bool_:
        check(name, x, initial=3)


@pytest.mark.parametrize("dtype", NUMERIC + [np.bool_], **ids)
@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (BIG,)], ids=str)
def test_round(shape, dtype):
    x = data(shape, dtype, high=100000 if dtype in (np.int32, np.uint32) else None)
    if dtype != np.bool_:
        x = np.asarray(x * np.asarray(37, dtype))
    for decimals in (-3, -1, 0, 1, 3):
        if dtype == np.bool_:
            # numpy rounds bools as float16; ours as float32 (as the float functions of bools)
            if decimals:                      # (numpy refuses to scale a bool: so do we)
                for fn, arg in ((np.round, x), (km.round, km.asarray(x))):
                    with pytest.raises(TypeError):
                        fn(arg, decimals)
            else:
                assert_matches(km.round(km.asarray(x)), np.round(x.astype(np.float32)),
                               rtol=0, atol=0)
            continue
        check("round", x, decimals)
        check("around", x, decimals=decimals)


def test_round_halves_to_even():
    check("round", np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.25, 0.35], np.float64), 1)
    check("round", np.array([150, 250, -150, -250, 149, 151, 50, -50], np.int32), -2)
    check("round", np.array([5, 15, 25, 4294967290], np.uint32), -1)
    check("round", np.array([2000000000, -7], np.int32), -10)


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg", "radians", "degrees"])
@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_angles(name, dtype):
    for shape in [(), (7,), (BIG,)]:
        x = data(shape, dtype, special=True)
        if dtype == np.bool_:
            # numpy computes bools in float16; ours in float32 (float16's closest dtype here)
            exp = getattr(np, name)(x.astype(np.float32))
            for fn in (getattr(km, name), getattr(np, name)):
                assert_matches(fn(km.asarray(x)), exp, rtol=1e-6, atol=0)
        else:
            check(name, x)


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_mod(dtype):
    a = data((BIG,), dtype)
    b = data((BIG,), dtype, low=1, high=9)
    exp = np.mod(a, b)
    for fn in (km.mod, np.mod):
        assert_matches(fn(km.asarray(a), km.asarray(b)), exp, rtol=1e-6, atol=1e-6)


# ---- comparisons --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (BIG,)], ids=str)
def test_isclose_allclose(shape, dtype):
    a = data(shape, dtype, special=True)
    b = a.copy()
    if a.dtype.kind == "f" and a.size:
        b = (a * (1 + np.asarray(3e-6, a.dtype))).astype(a.dtype)
        b.reshape(-1)[::3] += np.asarray(1, a.dtype)
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 0.5}):
        check("isclose", a, b, **kw)
        check("allclose", a, b, **kw)
        check("allclose", a, a, **kw)
    check("isclose", a, np.float64(1.0))


def test_isclose_infinities_and_mixed_dtypes():
    a = np.array([np.inf, -np.inf, np.inf, np.nan, 1.0, 0.0], np.float32)
    b = np.array([np.inf, np.inf, 1e30, np.nan, 1.0 + 1e-9, 1e-9], np.float32)
    check("isclose", a, b)
    check("isclose", a, b, equal_nan=True)
    check("isclose", data((9,), np.int32), data((9,), np.float32))
    check("isclose", data((9,), np.uint32), data((9,), np.uint32, seed=1))   # no wrap-around
    check("isclose", data((3, 1), np.float32), data((4,), np.float32))
    check("isclose", data((3,), np.float32), data((4,), np.float32))


@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_array_equal_equiv(dtype):
    a = data((3, 5), dtype, special=True)
    check("array_equal", a, a)
    check("array_equal", a, a, equal_nan=True)
    check("array_equal", a, a[:, :4])
    check("array_equal", a, ~a if dtype == np.bool_ else a + np.asarray(1, dtype))
    check("array_equiv", a, a[:1])
    check("array_equiv", a[:1], a[:1])
    check("array_equiv", a, a[:, :2])
    check("array_equal", data((BIG,), dtype), data((BIG,), dtype))


@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (9,), (BIG,)], ids=str)
def test_nan_to_num(shape, dtype):
    x = data(shape, dtype, special=True)
    check("nan_to_num", x)
    check("nan_to_num", x, nan=-1.5, posinf=7.0, neginf=-7.0)


def test_nan_to_num_in_place():
    x = km.asarray([np.nan, np.inf, 1.0])
    res = km.nan_to_num(x, copy=False)
    assert res is x
    np.testing.assert_array_equal(x.numpy(), np.nan_to_num(np.array([np.nan, np.inf, 1.0],
                                                                    np.float32)))


@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (BIG,)], ids=str)
def test_isin(shape, dtype):
    x = data(shape, dtype, special=True, low=-5 if dtype != np.uint32 else 0, high=5)
    if x.dtype.kind == "f":
        x = np.round(x)
    test = np.array([0, 1, 3, -2, 4, 4], np.float64).astype(dtype)
    check("isin", x, test)
    check("isin", x, test, invert=True)
    check("isin", x, test[:0])
    check("isin", x, data((3, 2), np.int32, low=-3, high=3))   # mixed dtypes, 2-D test


def test_isin_nan_and_signed_zero():
    check("isin", np.array([np.nan, 0.0, -0.0, 1.0], np.float32),
          np.array([np.nan, -0.0], np.float32))
    check("isin", np.array([1, 2], np.int32), np.array([1], np.int32), kind="bogus")


# ---- selection and indices ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (2, 3, 4), (BIG,)], ids=str)
def test_flatnonzero_argwhere(shape, dtype):
    x = data(shape, dtype)
    check("flatnonzero", x)
    check("argwhere", x)


def test_argwhere_0d():
    check("argwhere", np.array(5.0, np.float32))
    check("argwhere", np.array(0, np.int32))


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_select(dtype):
    for shape in [(7,), (3, 5), (BIG,)]:
        x = data(shape, dtype)
        y = data(shape, dtype, seed=1)
        conds = [x > 10, (x < 5) & (y > 0), y == x]
        check("select", conds, [x, y, x * 2])
        check("select", conds, [x, y, x * 2], default=7)
        check("select", [x > 10], [3])                       # a scalar choice broadcasts
        check("select", [x > 10, y > 5], [x, data(shape[-1:], np.float32)], default=0.5)


def test_select_errors():
    x = data((4,), np.float32)
    check("select", [x > 0], [x, x])                      # lengths differ
    check("select", [], [])
    check("select", [x], [x])                             # a condition that is not bool


def test_unravel_index():
    shape = (7, 5, 3)
    idx = data((50,), np.int32, low=0, high=105)
    check("unravel_index", idx, shape)
    check("unravel_index", idx, shape, order="F")
    check("unravel_index", idx.astype(np.uint32), shape)
    check("unravel_index", data((BIG,), np.int32, low=0, high=BIG), (BIG,))
    check("unravel_index", np.array([105], np.int32), shape)       # out of bounds
    check("unravel_index", np.array([-1], np.int32), shape)
    check("unravel_index", np.array([1.0], np.float32), shape)     # not integers
    assert km.unravel_index(17, shape) == (1, 0, 2)
    check("unravel_index", np.zeros((0,), np.int32), shape)


# ---- running and nan-ignoring reductions --------------------------------------------------------

@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (2, 3, 4), (BIG,)], ids=str)
def test_cumulative(name, shape, dtype):
    if name == "cumprod":        # factors near one: no overflow, and numpy's int64 equals ours
        x = data(shape, dtype, low=0.99, high=1.01) if dtype in FLOATS else \
            data(shape, dtype, low=0 if dtype == np.uint32 else -1, high=2)
        if dtype in (np.int32, np.uint32) and x.size > 40:
            x = np.where(np.arange(x.size).reshape(shape) % 50 == 0, x, 1).astype(dtype)
    else:
        x = data(shape, dtype, low=0.0, high=1.0) if dtype in FLOATS else data(shape, dtype)
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    check(name, x, rtol=rtol)
    for axis in range(-len(shape), len(shape)):
        check(name, x, axis=axis, rtol=rtol)
    check(name, x, dtype=np.float32, rtol=1e-4)
    if shape:
        check(name, x, axis=len(shape))


NAN_REDUCTIONS = ["nansum", "nanmean", "nanmax", "nanmin", "nanstd", "nanvar", "nanprod"]


@pytest.mark.parametrize("name", NAN_REDUCTIONS)
@pytest.mark.parametrize("dtype", NUMERIC + [np.bool_], **ids)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (2, 3, 4), (BIG,)], ids=str)
def test_nan_reductions(name, shape, dtype):
    if name == "nanprod":
        x = data(shape, dtype, low=0.95, high=1.05) if dtype in FLOATS else \
            data(shape, dtype, low=0 if dtype == np.uint32 else -1, high=2)
        if x.size > 30 and dtype not in FLOATS:
            x = np.where(np.arange(x.size).reshape(shape) % 40 == 0, x, 1).astype(dtype)
    else:
        x = data(shape, dtype)
    if x.dtype.kind == "f" and x.size:
        x.reshape(-1)[::4] = np.nan
    if dtype == np.bool_ and name in ("nanstd", "nanvar"):
        x = x.astype(np.int32)
    rtol = 1e-4 if dtype == np.float32 else 1e-9
    check(name, x, rtol=rtol, atol=1e-6)
    for axis in (0, -1, (0, -1)):
        if shape:
            check(name, x, axis=axis, rtol=rtol, atol=1e-6)
            check(name, x, axis=axis, keepdims=True, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("name", NAN_REDUCTIONS + ["nanargmax", "nanargmin"])
def test_nan_reductions_all_nan_slices(name):
    x = data((4, 6), np.float32)
    x[1] = np.nan
    x[:, 2] = np.nan
    x[3, 4] = -np.inf
    for axis in (None, 0, 1):
        check(name, x, axis=axis, atol=1e-6)
    check(name, np.full((3,), np.nan, np.float32))


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (2, 3, 4), (BIG,)], ids=str)
def test_nan_arg(name, shape, dtype):
    x = data(shape, dtype, special=dtype in FLOATS)
    if x.dtype.kind == "f" and x.size > 2:
        x.reshape(-1)[1] = -np.inf if name == "nanargmax" else np.inf  # ties with nan fills
    check(name, x)
    for axis in range(-len(shape), len(shape)):
        check(name, x, axis=axis)
        check(name, x, axis=axis, keepdims=True)


def test_nan_reduction_options():
    x = data((5, 4), np.float32)
    x[0, 0] = np.nan
    check("nanvar", x, ddof=1, axis=0)
    check("nanstd", x, correction=1)
    check("nanvar", x, ddof=1, correction=1)
    check("nansum", x, dtype=np.float64)
    check("nanmean", x, dtype=np.float64)
    check("nanvar", np.array([1.0, np.nan], np.float32), ddof=1)      # dof 0: nan


# ---- statistics ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC + [np.bool_], **ids)
def test_average(dtype):
    x = data((4, 5), dtype)
    w = data((4, 5), np.float32, low=0.5, high=2.0)
    check("average", x)
    check("average", x, axis=1)
    check("average", x, axis=(0, 1), keepdims=True)
    check("average", x, weights=w)
    check("average", x, axis=0, weights=w, returned=True)
    check("average", x, axis=1, weights=w[0], returned=True)
    check("average", x, axis=(1, 0), weights=w.T.copy())
    check("average", x, weights=w[0])                            # shapes differ, no axis
    check("average", x, axis=1, weights=w[:, 0])                 # wrong length
    check("average", x, axis=0, weights=np.zeros((4, 5), np.float32))   # sum to zero
    check("average", data((BIG,), dtype), weights=data((BIG,), np.float64, low=0, high=1))
    check("average", x, returned=True)


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_cov_corrcoef(dtype):
    m = data((3, 40), dtype)
    y = data((2, 40), dtype, seed=1)
    for name in ("cov", "corrcoef"):
        check(name, m, atol=1e-9)
        check(name, m, rowvar=False, atol=1e-9)
        check(name, m, y, atol=1e-9)
        check(name, m.T.copy(), y.T.copy(), rowvar=False, atol=1e-9)
        check(name, m[0], atol=1e-9)
        check(name, m[0], m[1], atol=1e-9)
        check(name, data((2, 2, 2), dtype))
    check("cov", m, bias=True)
    check("cov", m, ddof=3)
    check("cov", m, ddof=1.5)
    check("cov", m, dtype=np.float32, rtol=1e-5)
    check("cov", data((2, BIG), dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32], **ids)
def test_cov_weights(dtype):
    m = data((3, 40), dtype)
    f = data((40,), np.int32, low=0, high=4)
    a = data((40,), np.float64, low=0.1, high=2.0)
    for kw in ({"fweights": f}, {"aweights": a}, {"fweights": f, "aweights": a},
               {"fweights": f, "aweights": a, "ddof": 0}, {"aweights": a, "bias": True},
               {"fweights": f, "ddof": 40 * 4}):
        check("cov", m, atol=1e-9, **kw)
    check("cov", m, fweights=f + 0.5)                        # not integers
    check("cov", m, fweights=-f)                             # negative
    check("cov", m, aweights=-a)
    check("cov", m, fweights=np.zeros(40, np.int32))         # sum to zero
    for bad in (f[:5], np.stack([f, f])):
        with pytest.raises(RuntimeError):                    # numpy's error for these
            np.cov(m, fweights=bad)
        with pytest.raises(RuntimeError):
            km.cov(km.asarray(m), fweights=km.asarray(bad))


# ---- products and creation ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_outer_kron(dtype):
    for sa, sb in [((3,), (4,)), ((2, 3), (4,)), ((), (3,)), ((0,), (3,)), ((2, 2), (3, 1, 2)),
                   ((), ())]:
        a, b = data(sa, dtype), data(sb, dtype, seed=1)
        check("outer", a, b)
        check("kron", a, b)
    check("outer", data((300,), dtype), data((250,), dtype))
    check("kron", data((300,), dtype), data((250,), dtype))


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_cross(dtype):
    for sa, sb in [((3,), (3,)), ((5, 3), (3,)), ((4, 1, 3), (2, 3)), ((5, 2), (5, 3)),
                   ((5, 3), (5, 2)), ((5, 2), (2,)), ((BIG, 3), (BIG, 3))]:
        a, b = data(sa, dtype, high=20), data(sb, dtype, seed=1, high=20)
        # a1*b2 - a2*b1 cancels: a device that fuses it (FMA, as NVIDIA's compiler does) rounds
        # once where numpy rounds each product, so the room is the products' rounding (|x| <= 20)
        atol = 2 * np.finfo(dtype).eps * 400 if np.dtype(dtype).kind == "f" else 0.0
        check("cross", a, b, atol=atol)
    a, b = data((3, 4), dtype, high=20), data((4, 3), dtype, seed=1, high=20)
    check("cross", a, b, axisa=0, axisb=1)
    check("cross", a, b, axisa=0, axisb=1, axisc=0)
    check("cross", data((3, 5), dtype), data((3, 5), dtype, seed=1), axis=0)
    check("cross", data((4,), dtype), data((3,), dtype))
    check("cross", data((3,), np.bool_), data((3,), np.bool_))


@pytest.mark.parametrize("dtype", [None] + DTYPES, **ids)
def test_identity_logspace(dtype):
    for n in (0, 1, 5, 300):
        res = km.identity(n, dtype)
        exp = np.identity(n, np.float32 if dtype is None else dtype)
        assert_matches(res, exp, rtol=0, atol=0)
    if dtype != np.bool_:
        for args, kw in [((0, 2, 5), {}), ((1, -1, 7), {"endpoint": False}),
                         ((0, 3, 4), {"base": 2.0}), ((0, 1, 0), {})]:
            exp = np.logspace(*args, **kw).astype(np.float32 if dtype is None else dtype)
            assert_matches(km.logspace(*args, dtype=dtype, **kw), exp, rtol=1e-6, atol=0)


# ---- more of numpy's namespace: ufuncs, index functions, sets, shapes, products -------------------

@pytest.mark.parametrize("name", ["fmax", "fmin", "fmod", "heaviside", "logaddexp2"])
@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (BIG,)], ids=str)
def test_binary_ufuncs(name, shape, dtype):
    a = data(shape, dtype, special=True)
    b = data(shape, dtype, seed=1, special=True)
    if dtype == np.bool_ and name == "logaddexp2":
        # numpy computes bools in float16 here; ours in float32 (float16's closest dtype)
        exp = np.logaddexp2(a.astype(np.float32), b.astype(np.float32))
        for fn in (km.logaddexp2, np.logaddexp2):
            assert_matches(fn(km.asarray(a), km.asarray(b)), exp, rtol=1e-6, atol=0)
        return
    if dtype in (np.int32, np.uint32) and b.size:
        b.reshape(-1)[::5] = 0                  # integer fmod by zero: 0, as numpy's
    check(name, a, b, atol=1e-6)
    check(name, a, data(shape[-1:], dtype, seed=2), atol=1e-6)     # broadcasting


def test_fmod_signs_and_special_values():
    a = np.array([-7.0, 7.0, -7.5, 7.5, -0.0, 0.0, 5.0, -5.0, np.inf, np.nan, 1e30, -3.0],
                 np.float32)
    b = np.array([3.0, -3.0, 2.0, -2.0, 3.0, -3.0, np.inf, np.inf, 2.0, 1.0, 7.0, 0.0],
                 np.float32)
    res = km.fmod(km.asarray(a), km.asarray(b)).numpy()
    with np.errstate(all="ignore"):
        exp = np.fmod(a, b)
    np.testing.assert_array_equal(res, exp)
    finite = ~np.isnan(exp)
    np.testing.assert_array_equal(np.signbit(res[finite]), np.signbit(exp[finite]))  # zeros
    check("fmod", np.array([-7, 7, -8, 8, 0], np.int32), np.array([3, -3, 4, 0, -5], np.int32))


@pytest.mark.parametrize("name", ["fabs", "fix", "rint", "sinc", "isposinf", "isneginf",
                                  "isreal", "iscomplex", "conjugate", "bitwise_not"])
@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (BIG,)], ids=str)
def test_unary_ufuncs(name, shape, dtype):
    if name == "bitwise_not" and dtype in FLOATS:
        check(name, data(shape, dtype))                    # numpy's TypeError
        return
    x = data(shape, dtype, special=name not in ("sinc",))
    if name == "sinc" and x.dtype.kind == "f" and x.size:
        x.reshape(-1)[::7] = 0
    check(name, x, atol=1e-6)


def test_real_dtype_predicates():
    x = km.asarray([1.0, 2.0])
    assert km.isrealobj(x) is True and km.iscomplexobj(x) is False
    assert np.isrealobj(x) and not np.iscomplexobj(x)
    assert km.isscalar(3.0) and not km.isscalar(km.asarray(3.0))
    assert km.iscomplexobj(np.array([1j])) is True


def test_shifts_by_numpy_names():
    a = data((9,), np.int32, low=-100, high=100)
    s = data((9,), np.int32, low=0, high=31)
    check("left_shift", a, s)
    check("right_shift", a, s)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32], **ids)
def test_ravel_multi_index(dtype):
    dims = (7, 5, 3)
    coords = tuple(data((40,), dtype, seed=k, low=0, high=d) for k, d in enumerate(dims))
    check("ravel_multi_index", coords, dims)
    check("ravel_multi_index", coords, dims, order="F")
    big = tuple(c + np.asarray(4, dtype) for c in coords)
    check("ravel_multi_index", big, dims)                          # out of bounds: ValueError
    check("ravel_multi_index", big, dims, mode="wrap")
    check("ravel_multi_index", big, dims, mode="clip")
    check("ravel_multi_index", big, dims, mode=("wrap", "clip", "wrap"))
    check("ravel_multi_index", big, dims, mode="bogus")
    check("ravel_multi_index", coords[:2], dims)                   # too few coordinates
    check("ravel_multi_index", (data((BIG,), dtype, low=0, high=300),
                                data((BIG,), dtype, seed=1, low=0, high=300)), (300, 300))


def test_indices_and_triangles():
    for dims in [(2, 3), (4,), (2, 0, 3), (3, 1, 2)]:
        check("indices", dims, dispatch=False)
        check("indices", dims, sparse=True, dispatch=False)
        check("indices", dims, dtype=np.float32, dispatch=False)
    for n, k, m in [(4, 0, None), (4, 1, None), (4, -2, 6), (5, 0, 3), (0, 0, None),
                    (300, 3, 200)]:
        check("tril_indices", n, k, m, dispatch=False)
        check("triu_indices", n, k, m, dispatch=False)
        x = np.zeros((n, n if m is None else m), np.float32)
        check("tril_indices_from", x, k)
        check("triu_indices_from", x, k)
        for dtype in (None, np.int32, np.bool_, np.float64):
            exp = np.tri(n, m, k, dtype=np.float32 if dtype is None else dtype)
            assert_matches(km.tri(n, m, k, **({} if dtype is None else {"dtype": dtype})),
                           exp, rtol=0, atol=0)
    check("tril_indices_from", np.zeros((3,), np.float32))
    check("diag_indices", 4, dispatch=False)
    check("diag_indices", 3, 3, dispatch=False)
    check("diag_indices_from", np.zeros((3, 3, 3), np.float32))
    check("diag_indices_from", np.zeros((3, 4), np.float32))
    check("diag_indices_from", np.zeros((3,), np.float32))


@pytest.mark.parametrize("name", ["union1d", "intersect1d", "setdiff1d", "setxor1d"])
@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (9,), (4, 5), (BIG,)], ids=str)
def test_set_functions(name, shape, dtype):
    a = data(shape, dtype, special=True)
    b = data(shape[-1:] if shape else (), dtype, seed=1, special=True)
    if a.dtype.kind == "f":
        a, b = np.asarray(np.round(a / 4)), np.asarray(np.round(b / 4))   # repeats
    check(name, a, b)
    check(name, a, data((6,), np.int32, low=-3, high=3))  # mixed dtypes
    if name != "union1d":
        check(name, np.unique(a), np.unique(b), assume_unique=True)


@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_append_diagflat_ediff1d(dtype):
    for shape in [(), (0,), (7,), (3, 4), (BIG,)]:
        x = data(shape, dtype)
        check("append", x, x)
        check("append", x, data((2,), dtype))
        check("diagflat", x[..., :300] if x.ndim else x, 1)
        if dtype != np.bool_:
            check("ediff1d", x)
            check("ediff1d", x, to_end=np.array([1, 2], dtype), to_begin=np.array(5, dtype))
    x = data((3, 4), dtype)
    check("append", x, data((2, 4), dtype), axis=0)
    check("append", x, data((4,), dtype), axis=0)           # ndim differs: ValueError
    check("ediff1d", data((5,), np.int32), to_end=np.array([1.5], np.float32))   # TypeError


def test_shape_queries_and_conversions():
    for shape in [(), (0,), (3, 4), (2, 3, 4)]:
        x = data(shape, np.float32)
        check("ndim", x)
        check("shape", x)
        check("size", x)
        if shape:
            check("size", x, -1)
        for name in ("asanyarray", "ascontiguousarray", "asfortranarray"):
            # numpy's own (np.asanyarray(a)) converts to numpy: the explicit way to the host
            check(name, x, dispatch=False)
            check(name, x, np.int32, dispatch=False)
    assert km.broadcast_shapes((2, 1), (1, 3), ()) == np.broadcast_shapes((2, 1), (1, 3), ())
    with pytest.raises(ValueError):
        km.broadcast_shapes((2,), (3,))
    a = km.asarray([1.0])
    assert km.asanyarray(a) is a and isinstance(np.asanyarray(a), np.ndarray)


@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_inner_vdot(dtype):
    for sa, sb in [((4,), (4,)), ((3, 4), (4,)), ((2, 3, 4), (5, 4)), ((), (3,)), ((0,), (0,)),
                   ((3, 4), (3,)), ((BIG,), (BIG,))]:
        a, b = data(sa, dtype), data(sb, dtype, seed=1)
        if dtype in (np.int32, np.uint32):
            a, b = a % np.asarray(5, dtype), b % np.asarray(5, dtype)
        check("inner", a, b, rtol=1e-4 if dtype == np.float32 else None, atol=1e-3)
        check("vdot", a, b, rtol=1e-4 if dtype == np.float32 else None, atol=1e-3)


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_trapezoid(dtype):
    y = data((4, 9), dtype)
    x = np.sort(data((9,), np.float32, low=0.0, high=5.0))
    check("trapezoid", y)
    check("trapezoid", y, dx=0.5)
    check("trapezoid", y, x)
    check("trapezoid", y, axis=0)
    check("trapezoid", y, np.sort(data((4, 9), np.float32, low=0, high=5), axis=0), axis=0)
    check("trapezoid", data((BIG,), dtype), rtol=1e-4)


@pytest.mark.parametrize("name", ["nancumsum", "nancumprod"])
@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (BIG,)], ids=str)
def test_nan_cumulative(name, shape, dtype):
    x = data(shape, dtype, low=0.999 if name == "nancumprod" else 0.0,
             high=1.001 if name == "nancumprod" else 1.0) if dtype in FLOATS else \
        data(shape, dtype, low=0, high=2)
    if name == "nancumprod" and dtype not in FLOATS:
        x = np.asarray(np.minimum(x, 1)).astype(dtype)       # no overflow
    if x.dtype.kind == "f" and x.size:
        x.reshape(-1)[::3] = np.nan
    check(name, x, rtol=1e-4 if dtype == np.float32 else 1e-10)
    if shape:
        check(name, x, axis=-1, rtol=1e-4 if dtype == np.float32 else 1e-10)


# ---- selection and rearrangement ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_compress_extract_choose(dtype):
    for shape in [(7,), (3, 5), (0,), (BIG,)]:
        x = data(shape, dtype)
        c = data(shape[:1], np.bool_, seed=3)
        check("compress", c, x, axis=0)
        check("compress", c[: max(shape[0] - 2, 0)], x, axis=0)      # shorter condition
        check("compress", data((x.size,), np.bool_, seed=4), x)      # flattened
        check("extract", data(shape, np.bool_, seed=5), x)
        check("extract", data(shape, np.int32, seed=6, low=0, high=2), x)
        idx = data(shape, np.int32, seed=7, low=0, high=3)
        choices = [x, data(shape, dtype, seed=8), data(shape[-1:], dtype, seed=9)]
        check("choose", idx, choices)
        check("choose", idx + 2, choices)                            # past the choices
        check("choose", idx + 2, choices, mode="wrap")
        check("choose", idx - 1, choices, mode="clip")
    check("compress", np.array([[True]]), data((3,), dtype))         # 2-D condition
    check("choose", np.array([0.5]), [data((1,), dtype)])            # float indices


@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_delete_resize(dtype):
    x = data((6, 5), dtype)
    for obj in (0, -1, [0, 2, 3], slice(1, 4), slice(None, None, 2), [], np.array([5])):
        check("delete", x, obj, axis=0)
        check("delete", x, obj)
    check("delete", x, [0, 1, 2, 3, 4], axis=1)
    check("delete", x, np.arange(6) % 2 == 0, axis=0)
    check("delete", x, np.array([True, False]), axis=0)              # mask of the wrong length
    check("delete", x, 6, axis=0)                                    # IndexError
    check("delete", data((BIG,), dtype), [0, 5, 70000])
    for shape in [(2, 4), (7,), (0,), (), (3, 3, 3), 10]:
        check("resize", data((5,), dtype), shape)
    check("resize", data((0,), dtype), (2, 3))
    check("resize", data((BIG,), dtype), (300, 300))
    check("resize", data((3,), dtype), (-1, 2))


@pytest.mark.parametrize("dtype", NUMERIC + [np.bool_], **ids)
def test_trim_zeros(dtype):
    x = np.array([0, 0, 3, 0, 5, 0, 0], np.float64).astype(dtype)
    for trim in ("fb", "f", "b", "F", "", "bf"):
        check("trim_zeros", x, trim)
        check("trim_zeros", np.zeros(4, dtype), trim)
    check("trim_zeros", x, "x")
    m = np.zeros((5, 6), dtype)
    m[1:3, 2:5] = np.asarray(1, dtype)
    check("trim_zeros", m)
    check("trim_zeros", m, axis=1)
    check("trim_zeros", m, "f", axis=0)


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_fill_diagonal(dtype):
    for shape, wrap in [((4, 4), False), ((7, 3), False), ((7, 3), True), ((3, 7), False),
                        ((3, 3, 3), False), ((0, 0), False), ((300, 300), False)]:
        for val in (5, np.array([1, 2], dtype)):
            x = data(shape, dtype)
            k = km.asarray(x)
            np.fill_diagonal(x, val, wrap=wrap)
            assert km.fill_diagonal(k, val, wrap=wrap) is None
            assert_matches(k, x, rtol=0, atol=0)
            k2 = km.asarray(data(shape, dtype))
            np.fill_diagonal(k2, val, wrap=wrap)                     # through numpy's name
            assert_matches(k2, x, rtol=0, atol=0)
    with pytest.raises(ValueError):
        km.fill_diagonal(km.zeros((3,)), 1)
    with pytest.raises(ValueError):
        km.fill_diagonal(km.zeros((2, 3, 3)), 1)


@pytest.mark.parametrize("name", ["partition", "argpartition"])
@pytest.mark.parametrize("dtype", NUMERIC, **ids)
@pytest.mark.parametrize("shape", [(9,), (4, 7), (BIG,)], ids=str)
def test_partition(name, shape, dtype):
    x = data(shape, dtype)
    srt = np.sort(x, axis=-1)
    for kth in (0, shape[-1] // 2, -1, [1, 3]):
        for fn in (getattr(km, name), getattr(np, name)):
            res = fn(km.asarray(x), kth)
            assert isinstance(res, km.Array)
            got = res.numpy()
            vals = np.take_along_axis(x, got, axis=-1) if name == "argpartition" else got
            np.testing.assert_array_equal(np.sort(vals, axis=-1), srt)     # a permutation
            for k in np.atleast_1d(kth) % shape[-1]:
                np.testing.assert_array_equal(vals[..., k], srt[..., k])
                assert (vals[..., :k] <= vals[..., k:k + 1]).all()
                assert (vals[..., k:] >= vals[..., k:k + 1]).all()
    check(name, x, shape[-1])                                        # kth out of bounds
    check(name, x, 1.5)
    flat = getattr(km, name)(km.asarray(x), 0, axis=None).numpy()        # of the flattened
    assert flat.shape == (x.size,)
    assert (x.reshape(-1)[flat[0]] if name == "argpartition" else flat[0]) == x.min()


@pytest.mark.parametrize("dtype", NUMERIC + [np.bool_], **ids)
def test_lexsort(dtype):
    for shape in [(9,), (3, 20), (BIG,)]:
        keys = [data(shape, dtype, seed=k, low=0, high=3) if dtype != np.bool_ else
                data(shape, dtype, seed=k) for k in range(3)]
        # a tuple of keys (numpy dispatches on a tuple's Arrays; a list it converts)
        check("lexsort", tuple(keys))
        check("lexsort", tuple(keys[:1]))
        if len(shape) > 1:
            check("lexsort", tuple(keys), axis=0)
    check("lexsort", np.stack([data((9,), dtype, seed=1), data((9,), dtype, seed=2)]))
    check("lexsort", (data((3,), dtype), data((4,), dtype)))


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_divmod_modf_float_power(dtype):
    a = data((BIG,), dtype)
    b = data((BIG,), dtype, seed=1, low=1, high=9)
    # finite data: ``inf // 3`` is inf here (the fused floor_divide), nan in numpy
    check("divmod", a, b, atol=1e-6)
    a = data((BIG,), dtype, special=True)
    check("modf", a, atol=0)
    check("float_power", np.abs(a) if dtype in FLOATS else a, data((BIG,), np.int32, low=0,
                                                                    high=4), rtol=1e-13)
    if dtype in FLOATS:
        frac, whole = km.modf(km.asarray(np.array([-0.0, -np.inf, 2.5], dtype)))
        np.testing.assert_array_equal(np.signbit(frac.numpy()), [True, True, False])


def test_matvec_vecmat():
    for sa, sv in [((3, 4), (4,)), ((2, 3, 4), (4,)), ((3, 4), (5, 4)), ((1, 3, 4), (2, 1, 4))]:
        a, v = data(sa, np.float32), data(sv, np.float32)
        check("matvec", a, v, rtol=1e-5, atol=1e-5)
        w = data(sv[:-1] + (sa[-2],), np.float32)
        check("vecmat", w, a, rtol=1e-5, atol=1e-5)
    check("matvec", data((3, 4), np.float32), data((5,), np.float32))


@pytest.mark.parametrize("dtype", NUMERIC + [np.bool_], **ids)
def test_vander(dtype):
    x = data((6,), dtype, low=-3 if dtype != np.uint32 else 0, high=4)
    for n in (None, 0, 1, 4):
        check("vander", x, n)
        check("vander", x, n, increasing=True)
    check("vander", data((2, 2), dtype))


def test_geomspace():
    for args, kw in [((1, 1000, 4), {}), ((2, 64, 6), {"endpoint": False}), ((-1, -100, 3), {}),
                     ((1, 1000, 4), {"dtype": np.int32})]:
        exp = np.geomspace(*args, **kw).astype(kw.get("dtype", np.float32))
        assert_matches(km.geomspace(*args, **kw), exp, rtol=1e-6, atol=0)
    with pytest.raises(ValueError):
        km.geomspace(0, 10, 3)


# ---- in-place writers and the rest ---------------------------------------------------------------

def _in_place(name, x, *args, **kw):
    """numpy's writer on a copy of ``x``; ``km.<name>`` and ``np.<name>`` on Arrays must write
    the same values (or raise numpy's error)."""
    exp = x.copy()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(np, name)(exp, *args, **kw)
    except (ValueError, TypeError, IndexError) as e:
        err = next(t for t in (TypeError, ValueError, IndexError) if isinstance(e, t))
        for fn in (getattr(km, name), getattr(np, name)):
            with pytest.raises(err):
                fn(km.asarray(x), *[_to_km(v) for v in args], **kw)
        return
    for fn in (getattr(km, name), getattr(np, name)):
        k = km.asarray(x)
        before = k * 1                                   # a reader of the old values
        assert fn(k, *[_to_km(v) for v in args], **{n: _to_km(v) for n, v in kw.items()}) \
            is None
        assert_matches(k, exp, rtol=0, atol=0)
        assert_matches(before, x * 1, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (BIG,)], ids=str)
def test_writers(shape, dtype):
    x = data(shape, dtype)
    mask = data(shape, np.bool_, seed=3)
    vals = data((4,), dtype, seed=4)
    _in_place("copyto", x, data(shape, dtype, seed=5))
    _in_place("copyto", x, data(shape[-1:], dtype, seed=5), where=mask)       # broadcast
    _in_place("copyto", x, np.asarray(3, dtype))
    _in_place("copyto", x, data(shape, np.float64), casting="same_kind")      # float to int
    _in_place("copyto", x, data((2,), dtype))                                 # bad shape
    _in_place("putmask", x, mask, vals)
    _in_place("putmask", x, mask, vals[:0])
    _in_place("place", x, mask, vals)
    _in_place("place", x, mask, vals[:0])
    ind = data((5,), np.int32, seed=6, low=0, high=x.size)
    _in_place("put", x, ind, vals)
    _in_place("put", x, ind + x.size, vals, mode="wrap")
    _in_place("put", x, ind + x.size, vals, mode="clip")
    _in_place("put", x, ind + x.size, vals)                                   # IndexError
    along = data(shape[:-1] + (2,), np.int32, seed=7, low=0, high=shape[-1])
    _in_place("put_along_axis", x, along, np.asarray(9, dtype), axis=-1)
    _in_place("put_along_axis", x, along[..., :1], data(shape[:-1] + (1,), dtype), axis=-1)


def test_writers_refuse_host_targets():
    for fn in (km.copyto, km.putmask, km.place, km.put, km.fill_diagonal):
        with pytest.raises(TypeError):
            fn(np.zeros(3), *([np.ones(3)] if fn is km.copyto else
                              [np.ones(3, bool), 1] if fn in (km.putmask, km.place) else
                              [[0], 1] if fn is km.put else [1]))


@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_block_ix(dtype):
    a, b = data((2, 2), dtype), data((2, 1), dtype, seed=1)
    c = data((1, 3), dtype, seed=2)
    check("block", [[a, b], [c]])
    check("block", [a, a])
    check("block", [[data((2,), dtype)], [data((2,), dtype, seed=1)]])
    check("block", [[[a]]])
    check("block", [data((), dtype), data((3,), dtype)])
    check("block", [a, [b]])                                   # depths differ
    check("block", [[a, b], [data((1, 2), dtype)]])            # shapes do not fit
    with pytest.raises(TypeError):
        km.block((km.asarray(a), km.asarray(b)))
    with pytest.raises(ValueError):
        km.block([])
    check("ix_", data((3,), np.int32, low=0, high=5), data((4,), np.int32, low=0, high=5))
    check("ix_", data((5,), np.bool_), data((2,), np.int32, low=0, high=3))
    check("ix_", data((2, 2), np.int32))


def test_chkfinite_and_dtype_utilities():
    check("asarray_chkfinite", data((7,), np.float32), dispatch=False)
    check("asarray_chkfinite", np.array([1.0, np.nan], np.float32), dispatch=False)
    check("asarray_chkfinite", np.array([1.0, np.inf]), dispatch=False)
    check("asarray_chkfinite", data((5,), np.int32), dispatch=False)
    assert km.promote_types(km.int32, km.float32) == np.promote_types(np.int32, np.float32)
    assert km.promote_types(km.int32, km.uint32) == device_dtype(np.int64, km.get_device())
    assert km.issubdtype(km.float32, np.floating) and not km.issubdtype(km.int32, np.floating)
    assert km.iterable(km.asarray([1])) and not km.iterable(3)


@pytest.mark.parametrize("dtype", NUMERIC + [np.bool_], **ids)
def test_ldexp(dtype):
    x = data((BIG,), dtype)
    e = data((BIG,), np.int32, seed=1, low=-20, high=20)
    if dtype == np.bool_:
        # numpy scales bools in float16 (overflowing from 2**16); ours in float32
        for fn in (km.ldexp, np.ldexp):
            assert_matches(fn(km.asarray(x), km.asarray(e)), np.ldexp(x.astype(np.float32), e),
                           rtol=0, atol=0)
        return
    check("ldexp", x, e)
    if dtype in FLOATS:
        big = np.array([1e-30, 3e30, 1.5, 1.0], dtype)
        exps = np.array([140, -140, -149 if dtype == np.float32 else -1074, 127], np.int32)
        check("ldexp", big, exps)
        check("ldexp", x, data((BIG,), np.float32))                # float exponents


# ---- property test: stacking and splitting round trip -------------------------------------------

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=3),
       dtype=st.sampled_from(DTYPES), sections=st.integers(1, 4), data_seed=st.integers(0, 9))
def test_array_split_concatenate_round_trip(shape, dtype, sections, data_seed):
    x = data(tuple(shape), dtype, seed=data_seed)
    axis = data_seed % len(shape)
    pieces = km.array_split(km.asarray(x), sections, axis=axis)
    exp = np.array_split(x, sections, axis=axis)
    assert_matches(pieces, exp, rtol=0, atol=0)
    assert_matches(km.concatenate(pieces, axis=axis), x, rtol=0, atol=0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 99),
       name=st.sampled_from(["nan_to_num", "fix", "isposinf", "isneginf", "flatnonzero",
                             "argwhere", "ravel", "atleast_3d", "fliplr", "rot90", "cumsum",
                             "nansum", "nanmax", "amin", "ptp", "diagonal", "trace", "diag",
                             "array_split", "copy"]))
def test_unary_functions_random_inputs(shape, dtype, seed, name):
    args = (3,) if name == "array_split" else ()
    check(name, data(shape, dtype, seed=seed, special=True), *args, atol=1e-5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=5),
       dtypes=st.tuples(st.sampled_from(DTYPES), st.sampled_from(DTYPES)),
       seed=st.integers(0, 99),
       name=st.sampled_from(["isclose", "fmax", "fmin", "fmod", "heaviside", "outer", "kron",
                             "array_equal", "array_equiv", "isin", "union1d", "setdiff1d"]))
def test_binary_functions_random_inputs(shapes, dtypes, seed, name):
    a = data(shapes.input_shapes[0], dtypes[0], seed=seed, special=True)
    b = data(shapes.input_shapes[1], dtypes[1], seed=seed + 1, special=True)
    check(name, a, b, atol=1e-5)


def test_every_new_function_dispatches_from_numpy():
    """Each numpy function added here is in the __array_function__ table (or a ufunc)."""
    from kompute_ml._api import (assignment, index_functions, numeric, protocols, selection,
                                 sets, shaping, statistics, ufuncs)
    table = protocols._functions()
    for mod in (shaping, numeric, statistics, ufuncs, index_functions, sets, selection,
                assignment):
        for name in mod.__all__:
            fn = getattr(np, name, None)
            if fn is None or name in protocols._NOT_DISPATCHED:
                continue
            assert isinstance(fn, np.ufunc) or table.get(fn) is getattr(mod, name), name


def test_docstring_examples():
    """Every new public function has an Example, and the Examples run."""
    import doctest
    from kompute_ml._api import (assignment, index_functions, numeric, selection, sets, shaping,
                                 statistics, ufuncs)
    for mod in (shaping, numeric, statistics, ufuncs, index_functions, sets, selection,
                assignment):
        for name in mod.__all__:
            fn = getattr(mod, name)
            if getattr(fn, "__module__", None) != mod.__name__:
                continue            # numpy's name for an existing function (conjugate = conj)
            assert ">>> " in (fn.__doc__ or ""), name
        result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, (mod.__name__, result)
