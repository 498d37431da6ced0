"""The per-op host path: what a repeated op or scalar readback costs, proven by counters (no timing).

A repeated ``c = a * b + 1`` realized and synchronized is one dispatch in one replayed submit; a
repeated ``float((a * b).sum())`` is ONE dispatch at every size (the sum fused with its
expression, the last workgroup adding the partials) and one replayed submit that also carries
the readback; neither records or traces anything new, and the sum allocates nothing.
"""

import gc
import mmap
import threading
import weakref

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml import array as ka
from kompute_ml._array import dtypes as _dtypes
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as _stream

NAMES = ("dispatches", "submits", "replays", "ops_recorded", "traces", "fast_realizations",
         "fused_reductions")


def _delta(s0, s1):
    return {k: s1[k] - s0[k] for k in NAMES}


def _pair(device, n, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    return x, y, km.asarray(x, device=device), km.asarray(y, device=device)


def test_repeated_realize_is_one_replayed_dispatch(device):
    x, y, a, b = _pair(device, 1000)
    for _ in range(3):                      # compile, first seen, kept
        c = a * b + 1
        c._realize()
        km.synchronize(device)
    s0 = km.stats()
    for _ in range(10):
        c = a * b + 1
        c._realize()
        km.synchronize(device)
    assert _delta(s0, km.stats()) == {"dispatches": 10, "submits": 10, "replays": 10,
                                      "ops_recorded": 0, "traces": 0, "fast_realizations": 10,
                                      "fused_reductions": 0}
    np.testing.assert_allclose(c.numpy(), x.astype(np.float64) * y + 1, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("read", [float, lambda s: s.item(), lambda s: float(s.numpy())],
                         ids=["float", "item", "numpy"])
def test_repeated_scalar_readback_is_one_dispatch_one_submit(device, read):
    x, y, a, b = _pair(device, 1000, seed=1)
    want = float((x.astype(np.float64) * y).sum())
    for _ in range(3):
        read((a * b).sum())
    s0 = km.stats()
    for _ in range(10):
        got = read((a * b).sum())
        assert abs(got - want) <= 1e-5 * np.abs(x.astype(np.float64) * y).sum()
    assert _delta(s0, km.stats()) == {"dispatches": 10, "submits": 10, "replays": 10,
                                      "ops_recorded": 0, "traces": 0, "fast_realizations": 0,
                                      "fused_reductions": 10}


def test_bool_of_a_fused_sum_is_one_submit(device):
    # garbage an earlier test in this process left in cycles gives its buffers back to the pool
    # now, not in the middle of the measured step (where a buffer of a lower uid, handed out
    # instead of the warm-up's, would record the batch anew: seen once in the H100 suite)
    gc.collect()
    _, _, a, b = _pair(device, 500, seed=2)
    for _ in range(3):
        bool((a * a + b * b).sum() > 0)
    s0 = km.stats()
    assert bool((a * a + b * b).sum() > 0)
    d = _delta(s0, km.stats())
    # the sum (fused) and the comparison: two dispatches, one submit, nothing recorded
    assert (d["submits"], d["replays"], d["ops_recorded"], d["fused_reductions"]) == (1, 1, 0, 1)


@pytest.mark.parametrize("n", [1, 3, 1000, 8191, 8192, 8193, 100003, 1 << 20])
def test_fused_sum_matches_float64(device, n):
    x, y, a, b = _pair(device, n, seed=n)
    s0 = km.stats()
    got = float((a * b - 0.5).sum())
    assert km.stats()["fused_reductions"] - s0["fused_reductions"] == 1
    want = (x.astype(np.float64) * y - 0.5).sum()
    scale = np.abs(x.astype(np.float64) * y - 0.5).sum()
    assert abs(got - want) <= 1e-6 * scale + 1e-6


def test_fused_sum_shapes_scalars_and_aliasing(device):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((37, 41)).astype(np.float32)
    a = km.asarray(x, device=device)
    s = (a * a).sum(keepdims=True)                       # one buffer bound twice
    assert s.shape == (1, 1)
    np.testing.assert_allclose(s.numpy(), (x.astype(np.float64) ** 2).sum(keepdims=True),
                               rtol=1e-5)
    for c in (2.5, -1.0, 7.0, 2.5):                      # new push words, the same kernel
        np.testing.assert_allclose(float((a * c + 1.0).sum()),
                                   (x.astype(np.float64) * np.float32(c) + 1).sum(), rtol=1e-4,
                                   atol=1e-3)
    assert km.sum(a * 2).shape == ()
    # size-1 operands (a (1,) array, a 0-d array) are read once per invocation: still fused
    v = np.arange(1, 1001, dtype=np.float32) / 7
    av = km.asarray(v, device=device)
    one = km.asarray(np.array([2.0], np.float32), device=device)
    zero_d = km.asarray(np.float32(3.0), device=device)
    s0 = km.stats()
    np.testing.assert_allclose(float((av * zero_d + one).sum()),
                               (v.astype(np.float64) * 3 + 2).sum(), rtol=1e-6)
    assert km.stats()["fused_reductions"] - s0["fused_reductions"] == 1


def test_fused_sum_float64(device):
    if not device.limits.get("float64"):
        pytest.skip("the device has no float64 (shaderFloat64)")
    x, y, a, b = _pair(device, 30001, dtype=np.float64, seed=4)
    s0 = km.stats()
    s = (a * b + 1.25).sum()
    assert s.dtype == np.float64 and km.stats()["fused_reductions"] - s0["fused_reductions"] == 1
    want = (x * y + 1.25).sum()
    assert abs(float(s) - want) <= 1e-12 * np.abs(x * y + 1.25).sum()


def test_sums_that_are_not_fused_still_realize(device):
    rng = np.random.default_rng(5)
    x = rng.integers(-100, 100, 1000).astype(np.int32)
    m = rng.standard_normal((20, 50)).astype(np.float32)
    r = rng.standard_normal(50).astype(np.float32)
    ai, am, ar = (km.asarray(v, device=device) for v in (x, m, r))
    s0 = km.stats()
    assert int((ai * 3).sum()) == int((x * 3).sum())                    # int32: not fused
    assert int((am > 0).sum()) == int((m > 0).sum())                    # bool
    np.testing.assert_allclose((am * 2).sum(axis=0).numpy(), (m * 2).sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(float((am * 2).mean()), (m.astype(np.float64) * 2).mean(),
                               rtol=1e-5)
    assert km.stats()["fused_reductions"] == s0["fused_reductions"]
    # broadcast (coordinates): realized first, then summed as a realized array is (one fused
    # dispatch over the result), so the sum is the realized array's, to the bit
    t0 = km.stats()["traces"]
    got = float((am * ar).sum())
    np.testing.assert_allclose(got, (m.astype(np.float64) * r).sum(), rtol=1e-4, atol=1e-4)
    assert km.stats()["fused_reductions"] == s0["fused_reductions"] + 1
    assert km.stats()["traces"] >= t0 + 1
    assert got == float(km.asarray(m * r, device=device).sum())


def test_a_sum_does_not_depend_on_when_operands_were_realized(device):
    """A Node built before another's realization bumped the epoch is flattened again: its sum
    (and its realization) take the kernels a Node built after would, so the result is the same to
    the bit whatever another thread realized meanwhile."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((37, 29)).astype(np.float32)
    a = km.asarray(x, device=device)
    want = float((a * 2.5).sum())
    want_w = float(((km.tanh(a) * 3.0) - a).sum())
    early = a * 2.5                          # built now, summed after an epoch bump
    t = km.tanh(a)
    w = t * 3.0 - a                          # reads t, flattened
    other = km.exp(a)
    _ = other + 1                            # other is read by another Node
    e0 = km.stats()
    other._realize()                         # the bump: every Node built before is stale
    t._realize()
    assert km.stats()["fast_invalidations"] > e0["fast_invalidations"]
    e1 = km.stats()
    assert float(early.sum()) == want
    assert float(w.sum()) == want_w
    e2 = km.stats()
    # each one fused dispatch over its operands: neither expression was realized first
    assert e2["fused_reductions"] - e1["fused_reductions"] == 2
    assert e2["traces"] == e1["traces"] and e2["fast_realizations"] == e1["fast_realizations"]
    assert early.is_lazy and w.is_lazy


def test_fused_sum_reads_the_values_of_its_time(device):
    """A lazy expression keeps numpy's eager values when an operand is written in place after,
    and one whose operand was realized since (its flattened operands stale) takes the trace."""
    x = np.arange(100, dtype=np.float32)
    a = km.asarray(x, device=device)
    v = a * 2
    a[0] = 1000.0                           # v computes first: its sum sees the old a
    assert float(v.sum()) == float((x * 2).sum())
    u = a * 3
    w = u + 1
    u._realize()                            # w's flattened operands are now stale
    want = (np.where(np.arange(100) == 0, 1000.0, x) * 3 + 1).sum()
    assert float(w.sum()) == pytest.approx(want, rel=1e-6)


def test_per_op_counters_add_up_across_threads_and_reset(device):
    _, _, a, b = _pair(device, 256, seed=6)
    (a * b)._realize()
    km.synchronize(device)
    _stream.reset_stats()
    assert {k: km.stats()[k] for k in ("dispatches", "submits", "fast_realizations")} == \
        {"dispatches": 0, "submits": 0, "fast_realizations": 0}

    def work():
        for _ in range(20):
            (a * b + 1)._realize()
            km.synchronize(device)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = km.stats()
    assert s["dispatches"] == 80 and s["submits"] >= 1
    assert s["fast_realizations"] + s["traces"] == 80


def test_timeout_variable_is_read_at_every_submit(device, monkeypatch):
    a = km.asarray(np.ones(10, np.float32), device=device)
    monkeypatch.setenv(_stream.TIMEOUT_ENV, "soon")
    with pytest.raises(ValueError, match=_stream.TIMEOUT_ENV):
        (a + 1).numpy()
    monkeypatch.setenv(_stream.TIMEOUT_ENV, "60")
    np.testing.assert_array_equal((a + 1).numpy(), 2)
    monkeypatch.delenv(_stream.TIMEOUT_ENV)
    np.testing.assert_array_equal((a + 2).numpy(), 3)


@pytest.mark.parametrize("n", [8193, 1 << 20])
def test_large_fused_sum_is_one_dispatch(device, n):
    """Past one workgroup's 8192 elements the last workgroup to finish sums the partials in the
    same dispatch: every size is one dispatch, and the scratch counter is ready for the next."""
    x, y, a, b = _pair(device, n, seed=7)
    want = (x.astype(np.float64) * y).sum()
    scale = np.abs(x.astype(np.float64) * y).sum()
    float((a * b).sum())
    s0 = km.stats()
    for _ in range(3):                       # the counter is reset by each dispatch
        got = float((a * b).sum())
        assert abs(got - want) <= 1e-6 * scale
    d = _delta(s0, km.stats())
    assert (d["dispatches"], d["submits"], d["fused_reductions"]) == (3, 3, 3)


def test_repeated_scalar_readback_allocates_nothing(device):
    """The result of a fused sum is one of the device's result buffers, handed out again once
    the caller lets go of it: no pool allocation, no new tensor, at any size."""
    for n in (1000, 100003):
        x, y, a, b = _pair(device, n, seed=8)
        for _ in range(3):
            float((a * b).sum())
        first = weakref.ref(ka.buffer_of((a * b).sum()))
        gc.collect()                # (earlier tests' garbage: not collected during the loop)
        live = _memory.pool_stats(device)["tensors_live"]
        for _ in range(20):
            s = (a * b).sum()
            assert ka.buffer_of(s) is first()       # the same Buffer object: nothing allocated
            del s
        assert _memory.pool_stats(device)["tensors_live"] == live


def test_held_sums_keep_their_values(device):
    """A result still held (by an Array, or by a lazy expression reading it) is never the
    buffer of a later sum; past the device's two result buffers, sums take pool buffers."""
    x, y, a, b = _pair(device, 20000, seed=9)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    held = [(a * b + float(k)).sum() for k in range(5)]      # five alive at once
    lazy = held[0] * 2.0                                     # reads held[0]'s buffer
    bufs = {id(ka.buffer_of(s)) for s in held}
    assert len(bufs) == 5
    ref0 = (xd * yd).sum()
    del held[0]
    for k in range(3):
        float((a * b - 1.0).sum())                           # may reuse freed result buffers
    for k, s in enumerate(held, start=1):
        assert float(s) == pytest.approx((xd * yd + k).sum(), rel=1e-5, abs=1e-3)
    assert float(lazy) == pytest.approx(2 * ref0, rel=1e-5, abs=1e-3)
    s = (a * b).sum()                   # `s = ...` in a loop: the old s is alive at the call
    for _ in range(4):
        s = (a * b).sum()
        assert float(s) == pytest.approx(ref0, rel=1e-5, abs=1e-3)


def test_fused_sums_of_many_sizes_share_the_scratch(device):
    """Multi-workgroup sums of different sizes (the scratch grows, its counter zeroed once and
    reset by every dispatch) interleaved with one-workgroup sums all match float64."""
    rng = np.random.default_rng(10)
    sizes = [8193, 1 << 20, 50000, 5000, 1 << 21, 8193, 100]
    data = {n: rng.standard_normal(n).astype(np.float32) for n in set(sizes)}
    arrays = {n: km.asarray(v, device=device) for n, v in data.items()}
    for n in sizes * 2:
        v = data[n].astype(np.float64)
        got = float((arrays[n] * 0.5 + 0.25).sum())
        assert abs(got - (v * 0.5 + 0.25).sum()) <= 1e-6 * np.abs(v * 0.5 + 0.25).sum() + 1e-6


def test_fused_sum_float64_many_workgroups(device):
    """float64 sums take the shared-memory trees: past one workgroup too, exact to ~1e-12."""
    if not device.limits.get("float64"):
        pytest.skip("the device has no float64 (shaderFloat64)")
    for n in (8193, 1 << 20):
        x, y, a, b = _pair(device, n, dtype=np.float64, seed=11)
        # the first sum of a size may grow the device's shared scratch buffer (one more dispatch
        # zeroes its counter; an earlier test may have left it smaller or larger): repeats count
        got = float((a * b).sum())
        assert abs(got - (x * y).sum()) <= 1e-12 * np.abs(x * y).sum()
        s0 = km.stats()
        for _ in range(2):
            got = float((a * b).sum())
            assert abs(got - (x * y).sum()) <= 1e-12 * np.abs(x * y).sum()
        assert km.stats()["dispatches"] - s0["dispatches"] == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_of_a_realized_array_is_one_dispatch(device, dtype):
    """``a.sum()`` of a realized float array takes the fused sum too (the identity expression
    over it): one dispatch at every size, nothing allocated on a repeat, numpy's value."""
    if dtype == np.float64 and not device.limits.get("float64"):
        pytest.skip("the device has no float64 (shaderFloat64)")
    for n, shape in ((1, ()), (777, (777,)), (1 << 20, (1 << 10, 1 << 10))):
        x = np.random.default_rng(n).standard_normal(shape).astype(dtype)
        a = km.asarray(x, device=device)
        float(a.sum())
        s0 = km.stats()
        got = float(km.sum(a))
        d = _delta(s0, km.stats())
        assert (d["dispatches"], d["submits"], d["fused_reductions"]) == (1, 1, 1)
        tol = 1e-12 if dtype == np.float64 else 1e-6
        assert abs(got - x.astype(np.float64).sum()) <= tol * np.abs(x).sum() + tol
        assert a.sum(keepdims=True).shape == (1,) * x.ndim


def test_fused_sum_without_subgroups(device, monkeypatch):
    """The shared-memory variant (devices without subgroup arithmetic) gives the same sums:
    one workgroup, several, the counter reset between dispatches."""
    from kompute_ml._array import fusion as _fusion
    asked = []
    monkeypatch.setattr(_fusion, "_subgroup_sum", lambda device: asked.append(device) or False)
    for n in (4099, 8192 * 3 + 5, 300007):       # sizes (signatures) no other test sums
        x, y, a, b = _pair(device, n, seed=12)
        want = ((x.astype(np.float64) + 1) * y - 0.25).sum()
        scale = np.abs((x.astype(np.float64) + 1) * y - 0.25).sum()
        for _ in range(2):
            got = float(((a + 1.0) * b - 0.25).sum())
            assert abs(got - want) <= 1e-6 * scale
    assert len(asked) == 3            # each size planned without subgroups (one kernel compiled)


def test_fused_sum_is_accurate_where_sequential_float32_is_not(device):
    """1 + many tiny values: a sequential float32 sum would lose them; the fused sum's trees
    keep the error near float32's rounding of the total."""
    n = 1 << 22
    x = np.full(n, 1e-4, np.float32)
    x[0] = 1.0
    a = km.asarray(x, device=device)
    want = x.astype(np.float64).sum()
    assert abs(float((a * 1.0).sum()) - want) <= 1e-5 * want


@pytest.mark.parametrize("dtype,scalars", [(np.float64, (2.5, -1e-300, 3)), (np.int32, (7, -3, 2)),
                                           (np.uint32, (7, 3, 2)), (np.float32, (2.5, 1e-3, 3))])
def test_fast_path_scalar_words_by_dtype(device, dtype, scalars):
    """Realizations from the signature alone push each scalar as its dtype's words (a float64 as
    two), the same values a trace would push."""
    if dtype == np.float64 and not device.limits.get("float64"):
        pytest.skip("the device has no float64 (shaderFloat64)")
    x = (np.arange(1, 65) % 13).astype(dtype)
    a = km.asarray(x, device=device)
    s0 = km.stats()
    for s in scalars * 2:                      # the second round: from the signature
        got = ((a * s) + s).numpy()
        want = (x * np.asarray(s, dtype)) + np.asarray(s, dtype)
        if np.issubdtype(dtype, np.floating):
            # a*s + s may be contracted into one fma (NVIDIA does; numpy rounds twice)
            np.testing.assert_allclose(got, want.astype(dtype), rtol=2 * np.finfo(dtype).eps)
        else:
            np.testing.assert_array_equal(got, want.astype(dtype))
    assert km.stats()["fast_realizations"] - s0["fast_realizations"] >= len(scalars)


# -- km.asarray of a plain host array: the path without conversions (array._upload_as_is) ----

def _as_is_cases():
    rng = np.random.default_rng(11)
    return {
        "float32 odd": rng.standard_normal(1001).astype(np.float32),
        "float32 2-D": rng.standard_normal((37, 29)).astype(np.float32),
        "float32 0-d": np.array(2.5, np.float32),
        "int32": rng.integers(-2**31, 2**31, 4099, dtype=np.int64).astype(np.int32),
        "uint32": rng.integers(0, 2**32, 513, dtype=np.uint64).astype(np.uint32),
        "float64 odd": rng.standard_normal(1003),     # (a device without float64: declined)
        "float64 2-D": rng.standard_normal((5, 3)),
        # (a device without int64: declined)
        "int64": rng.integers(-2**63, 2**63 - 1, 1001, dtype=np.int64),
        "uint64": rng.integers(2**62, 2**64 - 1, (9, 7), dtype=np.uint64),
        # C-contiguous but not aligned (a buffer's bytes from an odd offset), read-only
        "float32 unaligned": np.frombuffer(
            b"\x00" + rng.standard_normal(777).astype(np.float32).tobytes(), np.float32, offset=1),
        # past RING_MIN_BYTES: a storage buffer, through the staging ring / in place
        "float32 ringed": rng.standard_normal((1 << 18) + 7).astype(np.float32),
    }


@pytest.mark.parametrize("name", list(_as_is_cases()))
def test_asarray_of_a_plain_host_array_takes_the_path_without_conversions(device, name,
                                                                          monkeypatch):
    h = _as_is_cases()[name]
    taken = []
    real = ka._upload_as_is

    def spy(obj, dev):
        out = real(obj, dev)
        taken.append(out is not None)
        return out
    monkeypatch.setattr(ka, "_upload_as_is", spy)
    s0 = km.stats()
    as_is = h.dtype != np.float64 or _dtypes.has_float64(device)
    if h.dtype in (np.int64, np.uint64) and not _dtypes.has_int64(device):
        pytest.skip("the device has no shaderInt64 (test_int64.py narrows such data)")
    for a in (km.asarray(h, device=device), ka.asarray(h, device=device)):
        assert a.shape == h.shape and a.device is device
        assert a.dtype == (h.dtype if as_is else np.float32)
        np.testing.assert_array_equal(a.numpy(), h.astype(a.dtype))
    assert taken == [as_is, as_is]
    assert km.stats()["bytes_uploaded"] - s0["bytes_uploaded"] == 2 * h.nbytes
    # the default device, and a device named by index, land where the general path puts them
    np.testing.assert_array_equal(km.asarray(h).numpy(), h)
    assert km.asarray(h, device=device.index).device is km.get_device(device.index)


@pytest.mark.parametrize("name,make", [
    ("empty", lambda: np.zeros(0, np.float32)),
    ("empty 2-D", lambda: np.zeros((3, 0), np.int32)),
    ("strided", lambda: np.arange(40, dtype=np.float32)[::3]),
    ("Fortran order", lambda: np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))),
    ("big-endian", lambda: np.arange(9, dtype=">f4")),
    ("big-endian int16", lambda: np.arange(-5, 5, dtype=">i2")),
    ("bool", lambda: np.arange(6) % 2 == 0),
    ("big-endian float16", lambda: np.arange(5, dtype=">f2")),
    ("subclass", lambda: np.arange(6, dtype=np.float32).view(np.recarray)),
])
def test_asarray_of_other_host_arrays_takes_the_general_path(device, name, make, monkeypatch):
    h = make()
    taken = []
    real = ka._upload_as_is
    monkeypatch.setattr(ka, "_upload_as_is",
                        lambda obj, dev: taken.append(real(obj, dev)) or taken[-1])
    a = km.asarray(h, device=device)
    assert all(t is None for t in taken)
    want = np.asarray(h)
    assert a.shape == want.shape
    np.testing.assert_array_equal(a.numpy(), want.astype(a.dtype))


def test_asarray_of_float64_on_a_device_without_float64_narrows(device, monkeypatch):
    # the device's limits as a device without shaderFloat64 reports them: the general path's
    # narrowing to float32, not float64 words in a float32 array
    monkeypatch.setitem(device.limits, "float64", False)
    h = np.linspace(-1, 1, 1001)
    a = km.asarray(h, device=device)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a.numpy(), h.astype(np.float32))


def test_asarray_of_a_plain_host_array_checks_like_the_general_path(device):
    h = np.ones(8, np.float32)
    # dtype= and copy= take the general path's answers
    assert km.asarray(h, dtype=km.int32, device=device).dtype == np.int32
    with pytest.raises(ValueError, match="copy=False"):
        km.asarray(h, copy=False, device=device)
    np.testing.assert_array_equal(km.asarray(h, copy=True, device=device).numpy(), h)
    with pytest.raises(km.DeviceNotFoundError):
        km.asarray(h, device="no such device anywhere")
    # a C-contiguous float32 array of more elements than the device can bind: the general
    # path's DeviceLimitError, nothing read (an anonymous mapping: no host memory is touched)
    nbytes = device.max_buffer_bytes // 16 * 16 + 16
    with mmap.mmap(-1, nbytes) as mem:
        big = np.frombuffer(mem, dtype=np.float32)
        assert type(big) is np.ndarray and big.flags.c_contiguous
        with pytest.raises(km.DeviceLimitError, match="maxStorageBufferRange"):
            km.asarray(big, device=device)
        del big


# -- unary functions and operators: the per-op path (array._fast_unary) ------------------------

UNARY = [("exp", km.exp, np.exp), ("sqrt", km.sqrt, np.sqrt), ("negative", lambda a: -a, np.negative),
         ("absolute", abs, np.absolute), ("log1p", km.log1p, np.log1p),
         ("invert", lambda a: ~a, np.invert)]


@pytest.mark.parametrize("name,ours,theirs", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.bool_])
def test_unary_per_op_path_matches_numpy(device, name, ours, theirs, dtype, monkeypatch):
    rng = np.random.default_rng(5)
    h = (rng.integers(0, 50, 1001) if dtype != np.float32 else rng.random(1001) * 50).astype(dtype)
    a = km.asarray(h, device=device)
    taken = []
    real = ka._fast_unary
    monkeypatch.setattr(ka, "_fast_unary", lambda op, x: taken.append(op) or real(op, x))
    try:
        with np.errstate(all="ignore"):
            want = theirs(h)
    except TypeError:                       # numpy refuses (-bool, ~float): so do we, each time
        for _ in range(2):
            with pytest.raises(TypeError):
                ours(a)
        assert taken                        # (refused on the per-op path, not past it)
        return
    got = ours(a)
    assert taken == [name]
    # numpy's float16 results of bools are float32 here (docs/arrays.md, "Differences")
    expect = np.float32 if want.dtype == np.float16 else km.asarray(want, device=device).dtype
    assert got.dtype == expect and got.shape == want.shape
    rtol = 2e-6
    if want.dtype.kind == "f":
        with np.errstate(all="ignore"):
            want = theirs(h.astype(np.float64))
        rtol = max(rtol, float(np.finfo(got.dtype).eps))
    np.testing.assert_allclose(got.numpy().astype(np.float64), want.astype(np.float64),
                               rtol=rtol, atol=0)


def test_repeated_unary_over_an_expression_is_one_replayed_dispatch(device):
    x, y, a, b = _pair(device, 1000, seed=8)
    for _ in range(3):
        c = km.exp(-(a * b))
        c._realize()
        km.synchronize(device)
    s0 = km.stats()
    for _ in range(10):
        c = km.exp(-(a * b))
        c._realize()
        km.synchronize(device)
    assert _delta(s0, km.stats()) == {"dispatches": 10, "submits": 10, "replays": 10,
                                      "ops_recorded": 0, "traces": 0, "fast_realizations": 10,
                                      "fused_reductions": 0}
    np.testing.assert_allclose(c.numpy(), np.exp(-(x.astype(np.float64) * y)), rtol=2e-6)


def test_unary_per_op_path_keeps_numpys_eager_semantics(device):
    # the lazy result reads its operand's buffer: a write into the operand afterwards does not
    # change it (the reader is noted, as the binary path notes it), and a lazy operand is fused
    h = np.arange(8, dtype=np.float32)
    a = km.asarray(h, device=device)
    e = km.exp(a)
    n = -(a + 1)
    a[...] = 100.0
    np.testing.assert_allclose(e.numpy(), np.exp(h), rtol=2e-6)
    np.testing.assert_array_equal(n.numpy(), -(h + 1))
    np.testing.assert_array_equal(abs(km.asarray(-h, device=device)).numpy(), h)


# -- the two-argument functions (km.add, km.maximum, ...): the operators' per-op paths ----------

@pytest.mark.parametrize("fn,ref", [(km.multiply, np.multiply), (km.maximum, np.maximum),
                                    (km.subtract, np.subtract), (km.atan2, np.arctan2),
                                    (km.remainder, np.remainder)],
                         ids=["multiply", "maximum", "subtract", "atan2", "remainder"])
def test_two_argument_functions_take_the_operators_path(device, fn, ref, monkeypatch):
    rng = np.random.default_rng(9)
    x = (rng.random(777) * 10 - 5).astype(np.float32)
    y = (rng.random(777) * 10 + 0.5).astype(np.float32)
    a, b = km.asarray(x, device=device), km.asarray(y, device=device)
    taken = []                          # (which per-op path, whether it made the result)

    def spy(tag, real):
        def call(*args):
            out = real(*args)
            taken.append((tag, out is not None))
            return out
        return call
    monkeypatch.setattr(ka, "_fast_binop", spy("f", ka._fast_binop))
    monkeypatch.setattr(ka, "_fast_rbinop", spy("r", ka._fast_rbinop))
    for got, want in ((fn(a, b), ref(x, y)), (fn(a, 2.0), ref(x, np.float32(2.0))),
                      (fn(3.0, b), ref(np.float32(3.0), y)), (fn(a, 2), ref(x, np.float32(2)))):
        assert got.dtype == np.float32 and got.shape == (777,)
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-6, atol=1e-6)
    assert taken == [("f", True), ("f", True), ("r", True), ("f", True)]
    # broadcasting, a numpy scalar, a host array: declined to the general path, numpy's answers
    taken.clear()
    np.testing.assert_allclose(fn(a, km.asarray(y[:1], device=device)).numpy(), ref(x, y[:1]),
                               rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(fn(a, np.float32(2.0)).numpy(), ref(x, np.float32(2.0)),
                               rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(fn(a, y).numpy(), ref(x, y), rtol=2e-6, atol=1e-6)
    assert taken == [("f", False)] * 3


def test_two_argument_functions_refuse_as_before(device):
    a = km.asarray(np.arange(4, dtype=np.float32), device=device)
    with pytest.raises(TypeError):
        km.add(a, "x")                      # not NotImplemented: the function raises
    with pytest.raises(ValueError, match="different devices|shapes|broadcast"):
        km.add(a, km.asarray(np.arange(3, dtype=np.float32), device=device))
    i = km.asarray(np.arange(4, dtype=np.int32), device=device)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        km.add(i, 2 ** 40)                  # a Python int past int32, as the operator refuses
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        i + 2 ** 40
