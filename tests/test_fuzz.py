"""Fuzzing the array API with hypothesis: random shapes, dtypes and values.

Every call either equals numpy (after the documented mapping of dtypes on a device without
them: float16 -> float32, int16/int8 -> int32, uint16/uint8 -> uint32 without 8/16-bit storage,
float64 -> float32 and int64/uint64 -> int32/uint32 without shaderFloat64 / shaderInt64) or raises a clear TypeError/ValueError/OverflowError, the errors numpy
users catch. Anything else (another exception type, a wrong value, a crash) is a bug.

The reference is numpy run on the inputs already converted to kompute_ml's dtypes, so integer
wrap-around and (on a device without int64) int32-vs-uint32 arithmetic follow kompute_ml's
documented rules (see the docstring of kompute_ml.array).
"""

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kompute_ml as km
from kompute_ml import array as ka
from kompute_ml._array import dtypes as _dtypes
# KM_HYPOTHESIS_EXAMPLES raises the example count for a deeper local run; derandomized so that
# CI always runs the same examples (KM_HYPOTHESIS_RANDOM=1 explores new ones)
SETTINGS = settings(max_examples=int(os.environ.get("KM_HYPOTHESIS_EXAMPLES", 50)), deadline=None,
                    database=None, derandomize=os.environ.get("KM_HYPOTHESIS_RANDOM") != "1",
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SUPPORTED = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
             np.uint64, np.float16, np.float32, np.float64]
UNSUPPORTED = [np.object_, np.str_, np.bytes_, "datetime64[s]", "timedelta64[ms]"]
CLEAR_ERRORS = (TypeError, ValueError, OverflowError)
INT32, UINT32, FLOAT32, BOOL = (np.dtype(t) for t in (np.int32, np.uint32, np.float32, np.bool_))


def canon(dtype):
    """numpy's dtype on the default device (float64 stays float64 where the device has it)."""
    return _dtypes.device_dtype(dtype, km.get_device())


shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)


def _elements(dtype, fit=True, small=False):
    """Values of ``dtype``; ``fit``: only values kompute_ml's 32-bit dtype can hold."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = int(info.min), int(info.max)
        if fit:
            c = np.iinfo(canon(dtype))
            lo, hi = max(lo, int(c.min)), min(hi, int(c.max))
        if small:
            lo, hi = max(lo, -1000), min(hi, 1000)
        # the ends of the range are where wrap-around and sign bugs live
        return st.one_of(st.integers(lo, hi), st.sampled_from(sorted({lo, hi, 0, min(1, hi)})))
    width = 8 * dtype.itemsize
    if small:
        return st.floats(-1e3, 1e3, width=min(width, 32), allow_subnormal=False)
    return st.floats(width=min(width, 32), allow_subnormal=False,
                     allow_nan=True, allow_infinity=True)


@st.composite
def host_arrays(draw, dtypes=SUPPORTED, shape=None, fit=True, small=False):
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = draw(shapes) if shape is None else shape
    return draw(hnp.arrays(dtype, shape, elements=_elements(dtype, fit, small)))


def _assert_equal(got, expect, rtol=2e-6, atol=0.0):
    """An Array ``got`` equals numpy's ``expect`` (already of kompute_ml's result dtype)."""
    assert isinstance(got, ka.Array)
    assert got.shape == expect.shape, (got.shape, expect.shape)
    assert got.dtype == expect.dtype, (got.dtype, expect.dtype)
    value = got.numpy()
    if expect.dtype == FLOAT32:
        # lavapipe, like many GPUs, may flush float32 subnormal results to zero
        np.testing.assert_allclose(value, expect, rtol=rtol, atol=max(atol, 1.2e-38),
                                   equal_nan=True)
    elif expect.dtype == np.float64:       # computed in double (kmath64 within 4e-15)
        np.testing.assert_allclose(value, expect, rtol=1e-13, atol=1e-300, equal_nan=True)
    else:
        np.testing.assert_array_equal(value, expect)


def _numpy_or_error(fn):
    """(result, None) or (None, the exception numpy raised)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as exc:    # noqa: BLE001 - numpy's own refusal is what we compare with
        return None, exc


def _both(np_fn, km_fn, check):
    """Run numpy and kompute_ml; both fail with a clear error, or ``check(got, expect)``."""
    expect, np_exc = _numpy_or_error(np_fn)
    if np_exc is not None:
        with pytest.raises(CLEAR_ERRORS):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                km_fn().numpy()
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = km_fn()
    check(got, expect)


# ---- asarray -----------------------------------------------------------------------------------

@SETTINGS
@given(x=host_arrays(fit=False))
def test_asarray_of_supported_dtypes_equals_numpy_or_overflows(x):
    want = canon(x.dtype)
    if x.dtype.kind in "iu" and x.size:
        info = np.iinfo(want)
        if int(x.min()) < info.min or int(x.max()) > info.max:
            with pytest.raises(OverflowError, match=f"do not fit {want}"):
                km.asarray(x)
            return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # float64 -> float32 overflow, as numpy's astype
        expect = x.astype(want)
    got = km.asarray(x)
    assert got.shape == x.shape and got.dtype == want
    np.testing.assert_array_equal(got.numpy(), expect)
    # and back through a list and an explicit dtype
    if x.size and x.ndim:
        np.testing.assert_array_equal(km.asarray(x.tolist(), dtype=want).numpy(),
                                      np.asarray(x.tolist(), dtype=want))


@SETTINGS
@given(dtype=st.sampled_from(UNSUPPORTED), shape=shapes, data=st.data())
def test_asarray_of_unsupported_dtypes_is_a_type_error(dtype, shape, data):
    dtype = np.dtype(dtype)
    if dtype.kind == "O":
        x = np.empty(shape, dtype=object)
        for idx in np.ndindex(shape):
            x[idx] = data.draw(st.one_of(st.integers(), st.none(), st.text(max_size=3)))
    elif dtype.kind in "US":
        x = data.draw(hnp.arrays(dtype, shape))
    else:
        x = np.zeros(shape, dtype=dtype)
    with pytest.raises(TypeError, match="not supported|dtype object"):
        km.asarray(x)
    with pytest.raises(TypeError):
        km.zeros(shape, dtype=dtype)
    with pytest.raises(TypeError):
        km.ones(3) + x


# ---- elementwise operators ---------------------------------------------------------------------

BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "true_divide": np.true_divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "maximum": np.maximum,
    "minimum": np.minimum, "equal": np.equal, "not_equal": np.not_equal, "less": np.less,
    "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "power": np.power,
}
COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
OUR_TYPES = [np.bool_, np.int32, np.uint32, np.float32, np.int8, np.uint64, np.float64, np.int64]


def _reference_binary(op, x, y):
    """numpy's ``op`` computed the way kompute_ml documents it: in numpy's result dtype mapped
    onto kompute_ml's on the default device (float64, int64 stay where the device has them),
    and on a device without int64 int32 op uint32 in int32 (numpy: int64) except comparisons,
    which are exact, and true division, which follows numpy's result type."""
    fn = BINARY[op]
    kinds = {v.dtype for v in (x, y) if isinstance(v, np.ndarray)}
    if kinds == {INT32, UINT32} and op != "true_divide" and not km.get_device().limits["int64"]:
        if op in COMPARISONS:
            return fn(x, y)
        x, y = x.astype(np.int32), y.astype(np.int32)

    def proxy(v):
        return np.empty(0, v.dtype) if isinstance(v, np.ndarray) else v
    if op in COMPARISONS:
        compute = canon(np.result_type(proxy(x), proxy(y)))
    else:
        compute = canon(fn(proxy(x), proxy(y)).dtype)      # NEP 50 for Python scalars

    def cast(v):
        if isinstance(v, np.ndarray):
            return v.astype(compute)
        if isinstance(v, float) and compute == FLOAT32:
            return float(np.float32(v))                     # the scalar as kompute_ml holds it
        return v
    out = np.asarray(fn(cast(x), cast(y)))
    return out.astype(canon(out.dtype))


def _binary_tolerance(op, dtype):
    if op == "power":
        return 2e-5
    return 2e-6


@SETTINGS
@given(data=st.data(), op=st.sampled_from(sorted(BINARY)))
def test_binary_operators_with_broadcasting_equal_numpy(data, op):
    shape_x, shape_y = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, max_side=5)).input_shapes
    small = op in ("power", "floor_divide", "remainder")
    x = data.draw(host_arrays(OUR_TYPES, shape_x, small=small))
    y = data.draw(host_arrays(OUR_TYPES, shape_y, small=small))
    xc, yc = x.astype(canon(x.dtype)), y.astype(canon(y.dtype))
    if op == "power":
        # a huge exponent overflows; numpy and the driver's pow then differ in sign/accuracy
        assume(not (yc.dtype.kind == "f" and np.abs(yc).max(initial=0) > 30))
        if yc.dtype.kind in "iu" or yc.dtype == BOOL:
            yc = np.abs(yc.astype(np.int64)).clip(0, 8).astype(yc.dtype)   # numpy refuses < 0
    a, b = km.asarray(xc), km.asarray(yc)
    fn = getattr(km, op)
    _both(lambda: _reference_binary(op, xc, yc), lambda: fn(a, b),
          lambda got, expect: _assert_equal(got, expect, _binary_tolerance(op, expect.dtype)))


# Python floats of float64 precision (kompute_ml rounds them to float32), but none that is
# subnormal in float32: Vulkan lets drivers flush those to zero
SCALARS = st.one_of(st.booleans(), st.integers(-1000, 1000),
                    st.floats(-1e3, 1e3).filter(lambda v: v == 0 or abs(v) >= 1.2e-38),
                    st.sampled_from([0, 1, -1, 0.5, 0.1]))


@SETTINGS
@given(x=host_arrays(OUR_TYPES, small=True), scalar=SCALARS, reflected=st.booleans(),
       op=st.sampled_from(["add", "subtract", "multiply", "true_divide", "maximum", "minimum",
                           "less", "equal", "greater_equal", "floor_divide", "remainder"]))
def test_operators_with_python_scalars_follow_nep50(x, scalar, reflected, op):
    xc = x.astype(canon(x.dtype))
    a = km.asarray(xc)
    args_np = (scalar, xc) if reflected else (xc, scalar)
    args_km = (scalar, a) if reflected else (a, scalar)
    fn = getattr(km, op)
    _both(lambda: _reference_binary(op, *args_np), lambda: fn(*args_km),
          lambda got, expect: _assert_equal(got, expect, 2e-6))


UNARY = {"negative": np.negative, "absolute": np.absolute, "floor": np.floor, "ceil": np.ceil,
         "invert": np.invert, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin,
         "cos": np.cos, "tanh": np.tanh}
FLOAT_FUNCTIONS = {"exp", "log", "sqrt", "sin", "cos", "tanh"}


@SETTINGS
@given(x=host_arrays(OUR_TYPES, small=True), op=st.sampled_from(sorted(UNARY)))
def test_unary_functions_equal_numpy(x, op):
    xc = x.astype(canon(x.dtype))

    def ref():
        # numpy computes float functions of bool in float16 (kompute_ml: float32), of 32-bit
        # integers in float64 (kompute_ml too, where the device has float64)
        dt = canon(UNARY[op](np.empty(0, xc.dtype)).dtype)
        if xc.dtype == BOOL and dt == np.float16:
            dt = FLOAT32                    # (kompute_ml keeps float32 for bools)
        src = xc.astype(dt) if op in FLOAT_FUNCTIONS and xc.dtype != FLOAT32 else xc
        out = np.asarray(UNARY[op](src))
        return out.astype(canon(out.dtype))
    # transcendental functions have the driver's float32 precision
    rtol = 2e-6 if op in ("negative", "absolute", "floor", "ceil", "invert") else 1e-5
    atol = 2e-6 if op in ("sin", "cos", "tanh", "log") else 0.0
    _both(ref, lambda: getattr(km, op)(km.asarray(xc)),
          lambda got, expect: _assert_equal(got, expect, rtol, atol))


@SETTINGS
@given(x=host_arrays(OUR_TYPES, small=True), y=host_arrays(OUR_TYPES, small=True), data=st.data())
def test_fused_expression_chains_equal_numpy(x, y, data):
    """A few operations recorded lazily, then realized by one generated kernel."""
    xc, yc = x.astype(canon(x.dtype)), y.astype(canon(y.dtype))
    try:
        np.broadcast_shapes(xc.shape, yc.shape)
    except ValueError:
        with pytest.raises(ValueError, match="shape mismatch|broadcast"):
            km.asarray(xc) + km.asarray(yc)
        return
    ops = data.draw(st.lists(st.sampled_from(["add", "multiply", "maximum", "subtract"]),
                             min_size=1, max_size=4))
    ref_x, ref_y = xc, yc
    a, b = km.asarray(xc), km.asarray(yc)
    for op in ops:
        ref_x, np_exc = _numpy_or_error(lambda: _reference_binary(op, ref_x, ref_y))
        if np_exc is not None:
            with pytest.raises(CLEAR_ERRORS):
                getattr(km, op)(a, b).numpy()
            return
        a = getattr(km, op)(a, b)
    # float sums of several terms: allow the rounding of each step
    _assert_equal(a, ref_x, rtol=1e-5, atol=1e-3 if ref_x.dtype == FLOAT32 else 0.0)


# ---- reductions --------------------------------------------------------------------------------

REDUCTIONS = ["sum", "mean", "max", "min", "argmax", "argmin"]


def _reference_reduction(op, x, axis, keepdims):
    if op == "sum":
        acc = canon(np.sum(np.zeros(1, x.dtype)).dtype)         # 32-bit accumulation
        out = np.sum(x, axis=axis, keepdims=keepdims, dtype=acc if x.dtype != FLOAT32 else None)
    elif op == "mean":
        out = np.mean(x.astype(np.float64) if x.dtype != FLOAT32 else x, axis=axis,
                      keepdims=keepdims)
    elif op in ("argmax", "argmin"):
        out = getattr(np, op)(x, axis=axis, keepdims=keepdims)
    else:
        out = getattr(np, op)(x, axis=axis, keepdims=keepdims)
    out = np.asarray(out)
    return out.astype(canon(out.dtype))


@SETTINGS
@given(x=host_arrays(OUR_TYPES, small=True), op=st.sampled_from(REDUCTIONS),
       keepdims=st.booleans(), data=st.data())
def test_reductions_equal_numpy(x, op, keepdims, data):
    xc = x.astype(canon(x.dtype))
    axis = data.draw(st.one_of(st.none(), st.integers(-xc.ndim - 1, xc.ndim)))
    if xc.ndim == 0 and axis in (0, -1):
        # numpy's legacy: reductions of a 0-d array accept axis 0 and -1 (but mean does not);
        # kompute_ml raises AxisError for every out-of-range axis
        with pytest.raises(np.exceptions.AxisError):
            getattr(km, op)(km.asarray(xc), axis=axis)
        return
    a = km.asarray(xc)
    # float sums: pairwise on both sides, in different orders
    scale = float(np.abs(xc.astype(np.float64)).sum()) if xc.dtype == FLOAT32 and xc.size else 0.0
    atol = 1e-6 * scale + 1e-6 if op in ("sum", "mean") else 0.0
    _both(lambda: _reference_reduction(op, xc, axis, keepdims),
          lambda: getattr(km, op)(a, axis=axis, keepdims=keepdims),
          lambda got, expect: _assert_equal(got, expect, 1e-5, atol))


# ---- matmul ------------------------------------------------------------------------------------

@SETTINGS
@given(data=st.data(), dtype=st.sampled_from([np.float32, np.int32, np.uint32, np.bool_,
                                                 np.float64, np.int64]))
def test_matmul_of_random_shapes_equals_numpy_or_value_error(data, dtype):
    nd_a, nd_b = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    dims = st.integers(0, 6)
    shape_a = tuple(data.draw(dims) for _ in range(nd_a))
    shape_b = tuple(data.draw(dims) for _ in range(nd_b))
    if data.draw(st.booleans()) and nd_a and nd_b:    # mostly matching inner dimensions
        k = shape_a[-1]
        shape_b = shape_b[:-2] + (k,) + shape_b[-1:] if nd_b >= 2 else (k,)
    x = data.draw(host_arrays([dtype], shape_a, small=True))
    y = data.draw(host_arrays([dtype], shape_b, small=True))
    xc, yc = x.astype(canon(x.dtype)), y.astype(canon(y.dtype))

    def ref():
        if xc.dtype == FLOAT32:
            out = np.matmul(xc.astype(np.float64), yc.astype(np.float64)).astype(np.float32)
        else:
            out = np.matmul(xc, yc)
        return out.astype(canon(out.dtype))
    a, b = km.asarray(xc), km.asarray(yc)

    def check(got, expect):
        if expect.dtype != FLOAT32:
            return _assert_equal(got, expect)
        # float32 products summed in another order: the error bound is eps * (|A| @ |B|)
        bound = np.matmul(np.abs(xc.astype(np.float64)), np.abs(yc.astype(np.float64)))
        assert got.shape == expect.shape and got.dtype == FLOAT32
        np.testing.assert_array_less(np.abs(got.numpy() - expect), 1e-6 * bound + 1e-30)
    _both(ref, lambda: a @ b, check)
