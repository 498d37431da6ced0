"""Reductions against numpy: every op, axis and dtype; float32 and float64 precision; edges; both
tree paths."""

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kompute_ml._array import reduction as _reduction
import kompute_ml as km
from kompute_ml import array as ka
from kompute_ml._array import dtypes as _dtypes

SETTINGS = settings(max_examples=int(os.environ.get("KM_HYPOTHESIS_EXAMPLES", 25)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
OPS = ["sum", "mean", "max", "min", "argmax", "argmin"]
FLOATS = [np.float32, np.float64]      # float64 parity runs where the device has it
F64_RTOL = 1e-12


def ours(dtype):
    """numpy's dtype on the default device (float64 -> float32 where the device lacks it)."""
    return _dtypes.device_dtype(dtype, km.get_device())


def reference(x, op, axis, keepdims):
    """numpy's answer, float sums and means in float64."""
    if x.dtype == np.float32 and op in ("sum", "mean"):
        x = x.astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(getattr(x, op)(axis=axis, keepdims=keepdims))


def check(got, x, op, axis=None, keepdims=False, rtol=1e-5):
    want = reference(x, op, axis, keepdims)
    assert isinstance(got, ka.Array)
    assert got.shape == want.shape
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert got.dtype == ours(np.asarray(getattr(x, op)(axis=axis)).dtype)
    value = got.numpy()
    if got.dtype == np.float64:
        # sums in double: pairwise-like, error a few ulp of the sum of magnitudes
        scale = np.nansum(np.abs(x.astype(np.float64)), initial=0) * 1e-15 if op in ("sum", "mean") else 0
        if op == "mean" and x.size:
            scale /= max(1, x.size // max(1, np.asarray(want).size))
        np.testing.assert_allclose(value, want, rtol=F64_RTOL, atol=scale, equal_nan=True)
    elif got.dtype == np.float32:
        scale = np.nanmax(np.abs(x), initial=0) * max(1, x.size) ** 0.5 * 1e-6 if op == "sum" else 1e-6
        np.testing.assert_allclose(value, want, rtol=rtol, atol=scale, equal_nan=True)
    else:
        np.testing.assert_array_equal(value, want.astype(got.dtype))


def values(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype in FLOATS:
        return rng.standard_normal(shape).astype(dtype)
    lo = 0 if dtype == np.uint32 else -1000
    return rng.integers(lo, 1000, shape).astype(dtype)


@SETTINGS
@given(shape=st.lists(st.integers(1, 9), min_size=0, max_size=4).map(tuple),
       op=st.sampled_from(OPS),
       dtype=st.sampled_from([np.float32, np.float64, np.int32, np.uint32, np.bool_]),
       data=st.data(), keepdims=st.booleans(), seed=st.integers(0, 2 ** 31))
def test_reductions_like_numpy(shape, op, dtype, data, keepdims, seed):
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    x = values(np.random.default_rng(seed), shape, dtype)
    check(getattr(km.asarray(x), op)(axis=axis, keepdims=keepdims), x, op, axis, keepdims)


@pytest.mark.parametrize("shape", [(3, 5000), (5000, 3), (2, 700, 3), (4097,), (1, 1, 2049)])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_long_axes_take_several_passes(shape, op, dtype):
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    a = km.asarray(x)
    for axis in [None] + list(range(len(shape))):
        check(getattr(a, op)(axis=axis), x, op, axis)


@pytest.mark.parametrize("op", ["sum", "max", "min", "mean"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint32])
def test_shared_memory_path_matches_the_subgroup_path(monkeypatch, op, dtype):
    x = values(np.random.default_rng(2), (3, 3000), dtype)
    a = km.asarray(x)
    with_subgroups = a.sum(axis=1) if op == "sum" else getattr(a, op)(axis=1)
    monkeypatch.setattr(_reduction, "_has_subgroup_reduce", lambda device: False)
    monkeypatch.setattr(_reduction, "_plans", {})       # (the plans cache the kernel variant)
    without = getattr(a, op)(axis=1)
    check(without, x, op, 1)
    check(with_subgroups, x, op, 1)


@pytest.mark.parametrize("subgroup", [True, False])
@pytest.mark.parametrize("n", [8193, 3 * 8192 + 1, 100003, 2 ** 20 + 4])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint32, np.bool_])
def test_a_whole_array_reduction_is_one_dispatch(monkeypatch, n, dtype, subgroup):
    """Past one block of reduce_rows, reducing every element of a realized array is one dispatch
    (the last workgroup to finish combines the partials through the scratch): numpy's answers,
    several recorded before one submit (the scratch's counter back at 0 for each)."""
    monkeypatch.setattr(_reduction, "_plans", {})
    if not subgroup:
        monkeypatch.setattr(_reduction, "_has_subgroup_reduce", lambda device: False)
    x = values(np.random.default_rng(n), (n,), dtype)
    a = km.asarray(x)
    km.synchronize()
    ops = ["sum", "max", "min", "mean"]
    got = {}
    for op in ops:
        getattr(a, op)()            # planned (and the scratch made, a fill), then replayed:
        before = km.stats()["dispatches"]
        got[op] = getattr(a, op)()
        assert km.stats()["dispatches"] - before == 1, op
    batch = [getattr(a, op)() for op in ops for _ in range(3)]     # nothing waits in between
    for op in ops:
        check(got[op], x, op)
    for k, op in enumerate(op for op in ops for _ in range(3)):
        check(batch[k], x, op)


def test_float32_sum_of_ten_million_is_accurate():
    x = np.random.default_rng(3).random(10 ** 7, dtype=np.float32)
    a = km.asarray(x)
    exact = x.sum(dtype=np.float64)
    assert abs(float(a.sum()) - exact) / exact <= 1e-6
    assert abs(float(a.mean()) - exact / x.size) / (exact / x.size) <= 1e-6
    y = x.reshape(1000, 10000)
    np.testing.assert_allclose(km.asarray(y).sum(axis=0).numpy(), y.sum(axis=0, dtype=np.float64),
                               rtol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_and_ties_follow_numpy(dtype):
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 2.0, -1.0, -1.0], [5.0, 4.0, 5.0, 4.0]],
                 dtype)
    a = km.asarray(x)
    for op in OPS:
        for axis in (None, 0, 1):
            check(getattr(a, op)(axis=axis), x, op, axis)
    big = np.zeros(5000, dtype)
    big[[1234, 4000]] = np.nan
    check(km.asarray(big).max(), big, "max")
    check(km.asarray(big).argmin(), big, "argmin")
    ties = np.zeros(5000, np.int32)
    ties[[17, 3000, 4999]] = 9
    check(km.asarray(ties).argmax(), ties, "argmax")


def test_empty_reductions():
    z = km.zeros((0, 3))
    check(z.sum(axis=0), np.zeros((0, 3), np.float32), "sum", 0)
    check(z.sum(), np.zeros((0, 3), np.float32), "sum")
    check(z.max(axis=1), np.zeros((0, 3), np.float32), "max", 1)
    with pytest.warns(RuntimeWarning):
        m = z.mean(axis=0)
    assert np.isnan(m.numpy()).all() and m.shape == (3,)
    for op in ["max", "min", "argmax", "argmin"]:
        with pytest.raises(ValueError):
            getattr(z, op)(axis=0)
    check(km.asarray(4.0).sum(), np.float32(4.0), "sum")
    check(km.asarray(np.int32(4)).argmax(), np.int32(4), "argmax")


def test_axis_arguments_and_function_forms():
    x = np.random.default_rng(4).standard_normal((3, 4, 5)).astype(np.float32)
    a = km.asarray(x)
    for axis in [(0, 2), (1, 2), (0, 1, 2), ()]:
        for op in ["sum", "mean", "max", "min"]:
            check(getattr(a, op)(axis=axis), x, op, axis)
    check(km.sum(a, axis=1), x, "sum", 1)
    check(km.mean(a, axis=0, keepdims=True), x, "mean", 0, True)   # keyword axis: the Array API
    check(km.argmax(a, axis=-1), x, "argmax", -1)
    check(km.min(a), x, "min")
    assert isinstance(np.sum(a), ka.Array) and isinstance(np.mean(a, axis=0), ka.Array)
    assert a.sum(dtype=np.int32).dtype == np.int32
    with pytest.raises(np.exceptions.AxisError):
        a.sum(axis=3)
    with pytest.raises(TypeError):
        a.argmax(axis=(0, 1))
    with pytest.raises(ValueError):
        a.sum(axis=(0, 0))
    with pytest.raises(TypeError):
        a.sum(out=a)


def test_reductions_of_lazy_expressions():
    x = np.random.default_rng(5).standard_normal(3000).astype(np.float32)
    a = km.asarray(x)
    np.testing.assert_allclose(float((a * a).sum()), (x.astype(np.float64) ** 2).sum(), rtol=1e-5)
    assert int((a > 0).sum()) == int((x > 0).sum())


@pytest.mark.slow
def test_reductions_at_max_storage_buffer_range(device):
    n = min(device.max_buffer_bytes // 4, 2 ** 25)
    x = np.random.default_rng(6).random(n, dtype=np.float32)
    a = km.asarray(x)
    exact = x.sum(dtype=np.float64)
    assert abs(float(a.sum()) - exact) / exact <= 1e-6
    assert int(a.argmax()) == int(x.argmax())
    # more than 65535 workgroups of each reduction kernel
    cols = a.reshape(2, n // 2).sum(axis=0)
    np.testing.assert_allclose(cols.numpy(), x.reshape(2, -1).sum(axis=0, dtype=np.float64),
                               rtol=1e-6)
    rows = a.reshape(n // 512, 512).max(axis=1)
    np.testing.assert_array_equal(rows.numpy(), x.reshape(-1, 512).max(axis=1))


def test_long_rows_take_more_elements_per_invocation():
    for cpu, most, groups in ((False, _reduction.FINISH_PER_MAX, _reduction.FINISH_GROUPS),
                              (True, _reduction.FINISH_PER_MAX_CPU, _reduction.FINISH_GROUPS_CPU)):
        per = lambda r: _reduction.finish_per_thread(r, cpu)      # noqa: E731
        assert per(8193) == per(2 ** 18) == _reduction.PER_THREAD
        assert per(1 << 30) == most
        for r in [1 << k for k in range(9, 32)]:
            p = per(r)
            assert _reduction.PER_THREAD <= p <= most
            if p > _reduction.PER_THREAD:         # grown only while the grid stays this wide
                assert -(-r // (256 * p)) >= groups


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint32])
def test_one_dispatch_reductions_with_more_elements_per_invocation(monkeypatch, dtype):
    # FINISH_GROUPS 1: rows of tens of thousands take the large counts (64, 128 per invocation),
    # 4-vectors and not (odd lengths), blocks partly filled, two workgroups or many (never one:
    # a row of one block would take the passes)
    for name, value in (("FINISH_GROUPS", 1), ("FINISH_GROUPS_CPU", 1), ("FINISH_PER_MAX", 128),
                        ("FINISH_PER_MAX_CPU", 128), ("_plans", {})):
        monkeypatch.setattr(_reduction, name, value)    # (the same counts on any device)
    seen = set()
    for n in (32768, 32771, 65535, 65537, 131072, 300001):
        seen.add(_reduction.finish_per_thread(n))
        x = values(np.random.default_rng(n), (n,), dtype)
        a = km.asarray(x)
        for op in ("sum", "max", "min", "mean"):
            getattr(a, op)()
            before = km.stats()["dispatches"]
            got = getattr(a, op)()
            assert km.stats()["dispatches"] - before == 1, op
            check(got, x, op)
        if dtype == np.float32:
            assert float(km.ones(n, dtype=np.float32).sum()) == n   # every element once
    assert seen == {64, 128}
