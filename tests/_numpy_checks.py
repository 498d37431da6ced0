"""Shared by the numpy-namespace tests (test_numpy_functions.py, test_numpy_functions_more.py):
random host data of every dtype, numpy's result or error as the reference, and ``check``, which
runs ``km.<name>`` and numpy's own ``np.<name>`` on Arrays against it."""

import warnings

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._array.dtypes import device_dtype

DTYPES = [np.float32, np.float64, np.int32, np.uint32, np.bool_]
NUMERIC = [np.float32, np.float64, np.int32, np.uint32]
FLOATS = [np.float32, np.float64]
SHAPES = [(), (0,), (1,), (7,), (3, 5), (2, 0, 3), (2, 3, 4), (70001,)]
BIG = 70001                    # past one workgroup grid of the scans and reductions


def _dev():
    return km.get_device()


def data(shape, dtype, *, seed=0, special=False, low=None, high=None):
    """Random host data of ``shape`` and ``dtype`` (``special``: NaNs and infinities mixed in)."""
    return np.asarray(_data(shape, dtype, seed, special, low, high))


def _data(shape, dtype, seed, special, low, high):
    rng = np.random.default_rng([seed, len(shape), *shape, np.dtype(dtype).num])
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = (0 if dt.kind == "u" else -50) if low is None else low
        return rng.integers(lo, 50 if high is None else high, shape).astype(dt)
    x = np.asarray(rng.standard_normal(shape) * 10).astype(dt)
    if low is not None:
        x = np.asarray(rng.uniform(low, high, shape)).astype(dt)
    if special and x.size:
        flat = x.reshape(-1)
        picks = rng.integers(0, flat.size, builtins_max(1, flat.size // 5))
        flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf], dt), picks.size)
    return x


def builtins_max(a, b):
    return a if a > b else b


def _to_km(v):
    if isinstance(v, np.ndarray):
        return km.asarray(v)
    if isinstance(v, (list, tuple)):
        return type(v)(_to_km(e) for e in v)
    return v


def reference(name, *args, **kw):
    """numpy's result, or the exception type it raises."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return getattr(np, name)(*args, **kw)
        except (ValueError, TypeError, ZeroDivisionError, IndexError) as exc:
            # the built-in class numpy's error derives from (UFuncTypeError is a TypeError)
            return next(t for t in (ZeroDivisionError, TypeError, ValueError, IndexError)
                        if isinstance(exc, t))


def assert_matches(res, exp, *, rtol, atol):
    if isinstance(exp, (tuple, list)):
        assert isinstance(res, (tuple, list)) and len(res) == len(exp), (res, exp)
        for r, e in zip(res, exp):
            assert_matches(r, e, rtol=rtol, atol=atol)
        return
    if isinstance(exp, (bool, int)) and not isinstance(exp, np.generic):
        assert type(res) is type(exp) and res == exp, (res, exp)
        return
    assert isinstance(res, km.Array), type(res)
    exp = np.asarray(exp)
    assert res.shape == exp.shape, (res.shape, exp.shape)
    want = device_dtype(exp.dtype, _dev())
    if want == np.float16:
        # numpy's float16 results of bools are float32 in kompute_ml (these checks draw no
        # float16 inputs: tests/test_small_dtypes.py checks those)
        want = np.dtype(np.float32)
    assert res.dtype == want, (res.dtype, exp.dtype)
    got = res.numpy()
    if exp.dtype.kind == "f":
        np.testing.assert_allclose(got, exp.astype(got.dtype), rtol=rtol, atol=atol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got, exp.astype(got.dtype))


def check(name, *args, rtol=None, atol=0.0, dispatch=True, **kw):
    """``km.<name>`` and ``np.<name>`` on Arrays give numpy's result (or numpy's error);
    ``dispatch=False``: only ``km.<name>`` (numpy's function takes no array to dispatch on)."""
    exp = reference(name, *args, **kw)
    kargs = [_to_km(a) for a in args]
    kkw = {k: _to_km(v) for k, v in kw.items()}
    if rtol is None:
        f32 = any(np.asarray(a).dtype == np.float32 for a in _leaves(args))
        rtol = 2e-5 if f32 else 1e-11
    for fn in (getattr(km, name), getattr(np, name))[:2 if dispatch else 1]:
        if isinstance(exp, type):
            with pytest.raises(exp):
                fn(*kargs, **kkw)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                res = fn(*kargs, **kkw)
            assert_matches(res, exp, rtol=rtol, atol=atol)
    return exp


def _leaves(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from _leaves(a)
        elif isinstance(a, np.ndarray):
            yield a


ids = {"ids": lambda v: np.dtype(v).name if isinstance(v, type) else str(v)}
