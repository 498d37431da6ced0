"""Fusion: lazy elementwise expressions become one generated kernel, compiled once per shape."""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml import array as ka
from kompute_ml._array import codegen as _codegen
from kompute_ml._array import fusion as _fusion
from kompute_ml._runtime import stream as _stream
def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.fixture
def counters(device):
    """Flush pending work, zero the counters, hand back a reader of them."""
    km.synchronize()
    _stream.reset_stats()
    return km.stats


def test_exp_of_mul_add_is_one_dispatch_and_one_compile(counters):
    x, y, z = rand(1000, 1), rand(1000, 2), rand(1000, 3)
    a, b, c = km.asarray(x), km.asarray(y), km.asarray(z)
    km.synchronize()
    _stream.reset_stats()
    out = km.exp(a * b + c)
    assert out.is_lazy and counters()["dispatches"] == 0      # nothing ran yet
    got = out.numpy()
    s = counters()
    assert s["dispatches"] == 1
    assert s["shader_compiles"] <= 1          # 0 when an earlier run left it in the disk cache
    np.testing.assert_allclose(got, np.exp(x.astype(np.float64) * y + z), rtol=2e-6)


def test_a_loop_compiles_nothing_after_its_first_iteration(counters):
    a = km.asarray(rand((64, 32)))
    w = km.asarray(rand(32))
    km.tanh(a * w - 0.5).numpy()                      # first iteration: may compile
    _stream.reset_stats()
    kernels = _fusion.cached_kernels()
    for step in range(5):
        out = km.tanh(a * w - 0.5 * step)             # new scalar each time: same kernel
        out.numpy()
    s = counters()
    assert s["shader_compiles"] == 0 and _fusion.cached_kernels() == kernels
    assert s["dispatches"] == 5
    assert s["pipelines_created"] <= 1                # pooled buffers come back: pipelines too


def test_sizes_and_scalar_values_are_not_part_of_the_kernel(counters, device):
    def key_of(arr):
        plan = _fusion._trace(ka.node_of(arr))
        return _fusion._key(plan, *_fusion._push_words(plan, device))

    k1 = key_of(km.asarray(rand((3, 4))) * 2.0 + km.asarray(rand(4)))
    k2 = key_of(km.asarray(rand((50, 7))) * -9.5 + km.asarray(rand(7)))
    assert k1 == k2
    k3 = key_of(km.asarray(rand((3, 4))) * 2.0 + km.asarray(rand((3, 1))))   # other pattern
    assert k3 != k1
    k4 = key_of(km.asarray(rand((3, 4))) * 2 + km.asarray(rand(4)))          # int scalar: float too
    assert k4 == k1
    k5 = key_of(km.asarray(np.ones((3, 4), np.int32)) * 2 + km.asarray(rand(4)))
    assert k5 != k1                                                          # other dtypes


def test_identical_inputs_share_a_binding_and_subexpressions_are_computed_once(device):
    x, y = rand(10, 1), rand(10, 2)
    a, b = km.asarray(x), km.asarray(y)
    t = a * b
    r = t * t + a
    plan = _fusion._trace(ka.node_of(r))
    assert len(plan.buffers) == 2
    source = _fusion.kernel_source(ka.node_of(r), device)
    assert source.count("(x0 * x1)") == 1
    np.testing.assert_allclose(r.numpy(), (x * y) ** 2 + x, rtol=2e-6)
    same = a * a
    assert len(_fusion._trace(ka.node_of(same)).buffers) == 1
    np.testing.assert_allclose(same.numpy(), x * x)


def test_same_shape_inputs_index_linearly_and_broadcasts_coalesce(device):
    a, b = km.asarray(rand((2, 3, 4))), km.asarray(rand((2, 3, 4)))
    src = _fusion.kernel_source(ka.node_of(a + b), device)
    assert "in0[i]" in src and "in1[i]" in src and "%" not in src
    c = km.asarray(rand((1, 3, 1)))
    plan = _fusion._trace(ka.node_of(a + c))
    assert len(plan.dims) == 3                  # (2, 3, 4) with c varying along the middle only
    d = km.asarray(rand((5, 1, 1, 6)))
    e = km.asarray(rand((5, 1, 1, 6)))
    assert len(_fusion._trace(ka.node_of(d * e)).dims) == 1


def test_reads_and_non_elementwise_operations_realize(counters):
    x = rand((4, 6))
    a = km.asarray(x)
    t = a * 2
    assert t.is_lazy
    r = t.reshape(6, 4)
    assert not t.is_lazy and not r.is_lazy
    np.testing.assert_allclose(r.numpy(), (x * 2).reshape(6, 4))
    u = a + 1
    s = u.max()
    assert not u.is_lazy
    np.testing.assert_allclose(float(s), (x + 1).max(), rtol=1e-6)
    # a sum reads a lazy expression's operands in one kernel instead: the expression stays lazy
    v = a + 1
    s0 = km.stats()
    s = v.sum()
    assert v.is_lazy and km.stats()["fused_reductions"] - s0["fused_reductions"] == 1
    np.testing.assert_allclose(float(s), (x + 1).sum(dtype=np.float64), rtol=1e-5)
    np.testing.assert_allclose(v.numpy(), x + 1, rtol=1e-6)


def test_long_chains_realize_in_pieces_without_recursion():
    x = rand(100)
    a = km.asarray(x)
    acc = a
    for _ in range(500):
        acc = acc + 1.0
    np.testing.assert_allclose(acc.numpy(), x + 500, rtol=1e-5)
    b = a
    for _ in range(20):
        b = b + b * 0.5                     # a DAG whose tree would double each step
    np.testing.assert_allclose(b.numpy(), x * 1.5 ** 20, rtol=1e-4)


@pytest.mark.parametrize("limit", [None, 3])
def test_more_inputs_than_bindings_split_the_kernel(device, monkeypatch, limit):
    if limit is not None:                       # a device with few bindings (Vulkan allows 4)
        monkeypatch.setattr(_fusion, "input_limit", lambda dev: limit)
    limit = _fusion.input_limit(device)
    if limit > 60:
        pytest.skip(f"{limit} bindings: the kernel never needs splitting at MAX_NODES")
    xs = [rand(16, seed) for seed in range(limit + 5)]
    total = km.asarray(xs[0])
    for x in xs[1:]:
        total = total + km.asarray(x)
    np.testing.assert_allclose(total.numpy(), np.sum(xs, axis=0, dtype=np.float64), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("words", [None, 8])
def test_more_scalars_than_push_constants_are_baked_into_the_source(device, monkeypatch, words):
    if words is not None:                       # a device with a small push-constant block
        monkeypatch.setattr(_fusion, "push_limit_words", lambda dev: words)
    if _fusion.push_limit_words(device) > 40:
        pytest.skip("40 scalars fit this device's push constants")
    x = rand(8)
    a = km.asarray(x)
    out, ref = a, x.astype(np.float64)
    for k in range(20):                 # 40 scalars: more than 128 bytes of push constants
        out = out * 0.5 + k
        ref = ref * 0.5 + k
    plan = _fusion._trace(ka.node_of(out))
    assert _fusion._push_words(plan, device)[0]       # baked
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5)


def test_mixed_dtypes_in_one_kernel(counters):
    i = np.arange(10, dtype=np.int32)
    f = rand(10)
    a, b = km.asarray(i), km.asarray(f)
    km.synchronize()
    _stream.reset_stats()
    r = km.where((a % 3 == 0) | ~(b > 0), b * a, -a / 2)
    got = r.numpy()
    assert counters()["dispatches"] == 1
    want = np.where((i % 3 == 0) | ~(f > 0), f * i, -i / 2)
    np.testing.assert_allclose(got, want, rtol=2e-6)
    # numpy's dtype: int / int is float64, and so is float32 meeting it (float32 without float64)
    assert r.dtype == (np.float64 if km.get_device().limits["float64"] else np.float32)


def test_kernel_buffer_realizes_lazy_readers_first():
    a = km.asarray([1.0, 2.0])
    b = a * 10
    c = b + a
    assert b.is_lazy and c.is_lazy
    ka.writable_buffer_of(a)
    assert not b.is_lazy
    np.testing.assert_array_equal(c.numpy(), [11, 22])


def test_fused_sum_invocations_add_more_vectors_on_large_arrays():
    per = _codegen.sum_vec4_per_thread
    assert per(0) == per(1) == per(10 ** 6) == _codegen.SUM_VEC4_PER_THREAD
    assert per(1 << 26) == _codegen.SUM_VEC4_MAX
    sizes = [1 << k for k in range(10, 32)] + [3 * 10 ** 7 + 1]
    for n in sizes:
        p = per(n)
        assert _codegen.SUM_VEC4_PER_THREAD <= p <= _codegen.SUM_VEC4_MAX
        if p > _codegen.SUM_VEC4_PER_THREAD:     # grown only while the grid stays this wide
            assert -(-n // (4 * p * _codegen.LOCAL_SIZE)) >= _codegen.SUM_GROUPS
    assert [per(n) for n in sorted(sizes)] == sorted(per(n) for n in sizes)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_sums_with_more_vectors_per_invocation_match_numpy(device, monkeypatch, dtype):
    # SUM_GROUPS 1: small arrays take the large counts (8 ... 64 4-vectors per invocation,
    # blocks of 8192 ... 65536 elements), with partial blocks, vectors and a grid of one
    monkeypatch.setattr(_codegen, "SUM_GROUPS", 1)
    monkeypatch.setattr(_fusion, "_sums", {})           # (entries made here stay here)
    rng = np.random.default_rng(11)
    seen = set()
    for n in (1, 3, 4097, 8193, 20001, 40003, 65535, 65536, 65537, 200003, 1 << 20):
        x = rng.standard_normal(n).astype(dtype)
        y = rng.random(n).astype(dtype)
        a, b = km.asarray(x), km.asarray(y)
        seen.add(_codegen.sum_vec4_per_thread(n))
        s0 = km.stats()
        got = (a * b + 1).sum()
        assert km.stats()["fused_reductions"] - s0["fused_reductions"] == 1
        assert km.stats()["dispatches"] - s0["dispatches"] <= 2     # (+ a new scratch's fill)
        want = (x.astype(np.float64) * y + 1).sum()
        # (float64 is narrowed to float32 on a device without it)
        tol = (1e-5 if got.dtype == np.float32 else 1e-12) * np.abs(x * y + 1).sum()
        assert abs(float(got) - want) <= tol, n
        ones = km.ones(n, dtype=got.dtype)
        assert float((ones * ones).sum()) == n          # every element counted once
    assert seen >= {8, 16, 32, 64}
