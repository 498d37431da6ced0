"""numpy's functions of the namespace's second part (einsum, histograms, quantiles, unique, pad,
...) against numpy: ``km.<name>`` and numpy's own ``np.<name>`` on Arrays (through
``__array_function__``) give numpy's values, shape and dtype mapped onto kompute_ml's, or raise
numpy's error (see _numpy_checks.check)."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kompute_ml as km
from kompute_ml._array.dtypes import device_dtype, has_int64

from _denormals import FLT_MIN, flushed, keeps_denormals
from _numpy_checks import BIG, DTYPES, FLOATS, NUMERIC, assert_matches, check, data, ids

INTS = [np.int32, np.uint32]
INTS64 = [np.int64, np.uint64]     # (int32 / uint32 on a device without shaderInt64)


# ---- einsum -------------------------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ii", [(4, 4)]),
    ("ii->i", [(4, 4)]), ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]), ("ij->j", [(3, 4)]),
    ("i,i", [(5,), (5,)]), ("i,i->i", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("ij...,jk...->ik...", [(3, 4, 2), (4, 5, 2)]), ("iij,jk->ik", [(3, 3, 4), (4, 5)]),
    ("ij,ij->i", [(3, 4), (3, 4)]), ("i,i", [(3,), (1,)]), ("ijk,jil->kl", [(3, 4, 5), (4, 3, 2)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 6)]), ("i,j,k->ijk", [(2,), (3,), (4,)]),
    (",ij->ij", [(), (2, 3)]), ("ij,ij,ij->", [(2, 3), (2, 3), (2, 3)]), ("ab,ab->ba", [(0, 3), (0, 3)]),
    ("ij,jk->ik", [(3, 0), (0, 5)]), ("iii->i", [(3, 3, 3)]), ("ji", [(3, 4)]),
    ("i,i", [(BIG,), (BIG,)]), ("ij,kj->ik", [(70, 300), (60, 300)]),
]


@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES, ids=lambda v: str(v))
def test_einsum(subscripts, shapes, dtype):
    ops = [data(s, dtype, seed=k, low=-3 if dtype != np.uint32 else 0, high=4) if
           np.dtype(dtype).kind in "iu" else data(s, dtype, seed=k) for k, s in enumerate(shapes)]
    rtol = 1e-4 if dtype == np.float32 else None
    for optimize in (False, True, "greedy", "optimal"):
        check("einsum", subscripts, *ops, optimize=optimize, rtol=rtol, atol=1e-3)


def test_einsum_interleaved_dtype_and_errors():
    a, b = data((3, 4), np.float32), data((4, 5), np.float32, seed=1)
    check("einsum", a, [0, 1], b, [1, 2], [0, 2], rtol=1e-5)
    check("einsum", a, [0, 1], b, [1, 2], rtol=1e-5)
    check("einsum", a, [Ellipsis, 1], b, [1, Ellipsis], rtol=1e-5)
    check("einsum", "ij,jk", a, b, dtype=np.float64)
    check("einsum", "ij,jk", a, b, dtype=np.int32)                    # not 'safe': TypeError
    check("einsum", "ij,jk", a, b, dtype=np.int32, casting="unsafe")
    i = data((3, 4), np.int32)
    check("einsum", "ij,jk", i, b)                                     # mixed: float64
    check("einsum", "ij,jk", a, data((5, 6), np.float32))              # sizes differ
    check("einsum", "ij->k", a)                                        # label not in the input
    check("einsum", "i,i,i", data((3,), np.float32), data((3,), np.float32))   # too few operands
    check("einsum", "ij,jk->ii", a, b)                                 # repeated output label
    check("einsum", "i", a)                                            # too few labels
    check("einsum", "ij,jk", a, b, optimize="bogus")
    with pytest.raises(TypeError):
        km.einsum("ij,jk", km.asarray(a), km.asarray(b), out=km.zeros((3, 5)))
    with pytest.raises(ValueError):
        km.einsum()


@pytest.mark.parametrize("optimize", ["greedy", "optimal", False, True])
def test_einsum_path_is_numpys(optimize):
    shapes = [(2, 3), (3, 40), (40, 5), (5, 6)]
    ops = [data(s, np.float32, seed=k) for k, s in enumerate(shapes)]
    exp = np.einsum_path("ij,jk,kl,lm->im", *ops, optimize=optimize)
    for fn in (km.einsum_path, np.einsum_path):
        got = fn("ij,jk,kl,lm->im", *[km.asarray(o) for o in ops], optimize=optimize)
        assert got == exp


@st.composite
def _einsum_problems(draw):
    """A random einsum: 1-3 operands over labels a-e (repeats allowed), sizes 0-4 (1s to
    broadcast), an explicit or implicit output."""
    labels = "abcde"
    size = {c: draw(st.integers(0, 4)) for c in labels}
    n_ops = draw(st.integers(1, 3))
    subs = [draw(st.text(alphabet=labels, min_size=0, max_size=4)) for _ in range(n_ops)]
    used = sorted(set("".join(subs)))
    out = None
    if draw(st.booleans()):
        out = "".join(draw(st.permutations(used))[:draw(st.integers(0, len(used)))])
    shapes = []
    for s in subs:
        # a label broadcasts (size 1) per operand, all its occurrences alike: the sizes of a
        # label repeated in one operand must match (numpy's rule)
        ones = {c: draw(st.integers(0, 5)) == 0 for c in sorted(set(s))}
        shapes.append(tuple(1 if ones[c] else size[c] for c in s))
    return ",".join(subs) + ("" if out is None else "->" + out), shapes


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=_einsum_problems(), dtype=st.sampled_from([np.float64, np.int32, np.bool_]),
       optimize=st.sampled_from([False, "greedy", "optimal"]), seed=st.integers(0, 99))
def test_einsum_random_problems(problem, dtype, optimize, seed):
    subscripts, shapes = problem
    ops = [data(s, dtype, seed=seed + k, low=-3, high=4) if dtype == np.int32 else
           data(s, dtype, seed=seed + k) for k, s in enumerate(shapes)]
    check("einsum", subscripts, *ops, optimize=optimize, atol=1e-9)


# ---- bincount, digitize, histograms -------------------------------------------------------------

@pytest.mark.parametrize("dtype", INTS + INTS64 + [np.bool_], **ids)
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (BIG,)], ids=str)
def test_bincount(shape, dtype, sort_path):
    x = data(shape, dtype, low=0, high=40)
    check("bincount", x)
    check("bincount", x, minlength=60)
    for wt in (np.float32, np.float64, np.int32, np.bool_):
        check("bincount", x, weights=data(shape, wt, seed=1), rtol=1e-9, atol=1e-9)
    check("bincount", x, weights=data(shape, np.float32, seed=1)[:-1] if shape[0] else
          data((3,), np.float32))                                        # lengths differ


def test_bincount_many_bins_and_grids(narrow_grid_device):
    # past the shared count table (4096 bins): one atomic add per element into device memory
    x = data((BIG,), np.int32, low=0, high=50000)
    check("bincount", x)
    check("bincount", x, weights=data((BIG,), np.float64, seed=2), rtol=1e-9, atol=1e-9)
    # a device of 8 workgroups along x: the per-element kernel's 2-D grid, the shared one capped
    for high in (20, 9000):
        h = data((5000,), np.int32, low=0, high=high)
        res = km.bincount(km.asarray(h, device=narrow_grid_device))
        assert res.device is narrow_grid_device
        np.testing.assert_array_equal(res.numpy(), np.bincount(h))


def test_bincount_refuses_what_numpy_refuses():
    check("bincount", data((5,), np.float32))                          # not integers
    check("bincount", np.array([1, -1, 2], np.int32))                  # negative
    check("bincount", np.array(3, np.int32))                           # 0-d
    check("bincount", data((2, 2), np.int32, low=0))                   # 2-D
    check("bincount", data((5,), np.int32, low=0), minlength=-1)
    check("bincount", data((5,), np.int32, low=0), minlength=None)
    check("bincount", data((5,), np.int32, low=0), minlength=2.5)
    check("bincount", np.array([1, -1, 2], np.int64))                  # negative int64
    with pytest.raises(ValueError):
        km.bincount(km.asarray(np.array([2 ** 31 + 5], np.uint32)))   # no int32 bin index
    if has_int64(km.get_device()):
        with pytest.raises(ValueError):
            km.bincount(km.asarray(np.array([2 ** 40], np.int64)))


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (9,), (3, 4), (BIG,)], ids=str)
def test_digitize(shape, dtype):
    x = data(shape, dtype, special=dtype in FLOATS)
    edges = [-5, 0, 3, 10] if dtype != np.uint32 else [1, 4, 9, 20]
    for bins in (np.array(edges, dtype), np.array(edges[::-1], dtype),
                 np.array([2, 2, 2], dtype), np.array([1], dtype), np.array([], dtype),
                 np.array([-1.5, 0.5, 2.25]), np.array([3, 3, 5, 5, 8], dtype)):
        check("digitize", x, bins)
        check("digitize", x, bins, right=True)
        check("digitize", x, km.asarray(bins))
        check("digitize", x, km.asarray(bins), right=True)
    check("digitize", x, np.array([0, 3, 1], dtype))                   # not monotonic
    check("digitize", x, km.asarray(np.array([0, 3, 1], dtype)))
    check("digitize", x, np.array([3, 3, 5, 4], dtype))
    check("digitize", x, km.asarray(np.array([5, 5, 3, 4], dtype)))
    check("digitize", x, np.zeros((2, 2), dtype))                       # 2-D bins
    check("digitize", x, np.array(1, dtype))                            # 0-d bins
    if dtype in FLOATS:
        check("digitize", x, np.array([np.nan, 1.0, 2.0], dtype))      # not monotonic


HIST_DTYPES = [np.float32, np.float64, np.int32, np.uint32]


@pytest.mark.parametrize("dtype", HIST_DTYPES, **ids)
@pytest.mark.parametrize("shape", [(0,), (1,), (9,), (4, 5), (BIG,)], ids=str)
def test_histogram(shape, dtype, sort_path):
    x = data(shape, dtype)
    w = data(shape, np.float64, seed=1, low=0, high=2)
    for bins in (10, 1, 7, 300, np.array([-30.0, -1.0, 0.0, 0.5, 3.0, 40.0]),
                 np.array([0, 1, 1, 2], dtype)):
        check("histogram", x, bins=bins)
        check("histogram", x, bins=bins, range=(-5, 8))
        check("histogram", x, bins=bins, density=True)
        check("histogram", x, bins=bins, weights=w, rtol=1e-9, atol=1e-9)
        check("histogram_bin_edges", x, bins=bins)
    check("histogram", x, bins=4, weights=data(shape, np.float32, seed=2), rtol=2e-5, atol=1e-5)
    check("histogram", x, bins=4, weights=data(shape, np.int32, seed=2))
    check("histogram", x, bins=np.array([0.5, 1.5], dtype), range=(0, 1))   # bins win


@pytest.mark.parametrize("bins", ["auto", "fd", "doane", "scott", "stone", "rice", "sturges",
                                  "sqrt"])
@pytest.mark.parametrize("dtype", [np.float64, np.int32], **ids)
def test_histogram_bin_estimators(bins, dtype):
    for shape in [(1,), (40,), (3000,)]:
        x = data(shape, dtype, low=-100, high=100)
        check("histogram", x, bins=bins)
        check("histogram", x, bins=bins, range=(-20, 50))
        check("histogram_bin_edges", x, bins=bins)
    check("histogram", np.full((9,), 3.0), bins=bins)                   # no spread
    check("histogram", np.zeros((0,)), bins=bins)


def test_dtype_classes_name_their_dtype():
    """numpy's DType classes (np.dtypes.Float64DType: what numpy 2.5's histogram passes to
    np.subtract) name the same dtype as its instance, in ufuncs and constructors."""
    a = km.asarray(np.arange(5.0))
    got = np.subtract(a, a[::-1], dtype=np.dtypes.Float32DType)
    assert isinstance(got, km.Array) and got.dtype == np.float32
    np.testing.assert_array_equal(got.numpy(), np.arange(5.0) - np.arange(5.0)[::-1])
    assert km.asarray([1, 2], dtype=np.dtypes.Int32DType).dtype == np.int32
    with pytest.raises(TypeError, match="dtype object"):
        km.asarray([1, 2], dtype=np.dtypes.ObjectDType)


def test_histogram_edges_and_nans():
    x = np.array([0.0, 0.1, 0.2, 0.30000000000000004, 1.0, 1.0, np.nan, -np.inf, np.inf])
    check("histogram", x, bins=3, range=(0, 1))                         # NaNs, infs outside
    check("histogram", x[:6], bins=10)                                  # values on the edges
    check("histogram", np.linspace(0, 1, 101, dtype=np.float32), bins=10)
    check("histogram", np.linspace(-3, 7, 1001), bins=37)
    check("histogram", np.array([5, 5, 5], np.int32))                   # one value: +-0.5


def test_histogram_refuses_what_numpy_refuses():
    x = data((9,), np.float32)
    check("histogram", np.array([1.0, np.nan], np.float32))            # autodetected range: nan
    check("histogram", np.array([1.0, np.inf], np.float32))
    check("histogram", x, bins=0)
    check("histogram", x, bins=2.5)
    check("histogram", x, bins="bogus")
    check("histogram", x, bins="auto", weights=data((9,), np.float32))
    check("histogram", x, weights=data((8,), np.float32))
    check("histogram", x, range=(2, 1))
    check("histogram", x, range=(0, np.inf))
    check("histogram", x, bins=np.array([3.0, 1.0, 2.0]))              # not increasing
    check("histogram", x, bins=np.zeros((2, 2)))
    check("histogram", x, bins=km.asarray(np.array([3.0, 1.0, 2.0])), dispatch=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32], **ids)
def test_histogramdd_and_2d(dtype, sort_path):
    for n in (0, 1, 50, BIG):
        s = data((n, 3), dtype)
        check("histogramdd", s)
        check("histogramdd", s, bins=(2, 3, 4))
        check("histogramdd", s, bins=[np.array([-10.0, 0.0, 10.0]), 3, np.array([-1.0, 1.0])])
        check("histogramdd", s, bins=4, range=[(-5, 5), None, (0, 1)], density=True)
        check("histogramdd", s, bins=3, weights=data((n,), np.float64, seed=1), rtol=1e-9,
              atol=1e-9)
        x, y = s[:, 0].copy(), s[:, 1].copy()
        check("histogram2d", x, y)
        check("histogram2d", x, y, bins=(3, 5))
        check("histogram2d", x, y, bins=np.array([-20.0, 0.0, 20.0]))
        check("histogram2d", x, y, bins=[np.array([-20.0, 0.0, 20.0]), 4], density=True)
    s = data((20, 2), dtype)
    check("histogramdd", s, bins=(2, 3, 4))                            # one bins too many
    check("histogramdd", s, range=[(0, 1)])
    check("histogramdd", s, bins=0)
    check("histogramdd", s, bins=[np.array([2.0, 1.0]), 3])
    check("histogramdd", data((20,), dtype))                           # 1-D: one dimension
    check("histogramdd", [data((20,), dtype), data((20,), dtype, seed=1)], bins=3)


# ---- quantiles ----------------------------------------------------------------------------------

METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
           "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
           "normal_unbiased", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_quantile_methods(method, dtype):
    for shape in [(1,), (2,), (7,), (8,), (3, 5), (2, 3, 4)]:
        x = data(shape, dtype)
        for q in (0.3, 0.0, 1.0, [0.0, 0.25, 0.5, 0.999, 1.0], np.array([[0.1], [0.9]]),
                  np.float32(0.5)):
            check("quantile", x, q, method=method)
            if len(shape) > 1:
                check("quantile", x, q, method=method, axis=-1)
                check("quantile", x, q, method=method, axis=(0, -1), keepdims=True)
        check("percentile", x, [5, 50, 95], method=method, axis=0)
        check("percentile", x, 37.5, method=method, keepdims=True)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", FLOATS, **ids)
def test_nanquantile_methods(method, dtype):
    for shape in [(1,), (7,), (8,), (4, 6), (2, 3, 4)]:
        x = data(shape, dtype, special=True)
        x.reshape(-1)[::4] = np.nan
        if x.ndim == 2:
            x[1] = np.nan                                   # a slice of NaNs only
        for q in (0.3, [0.0, 0.5, 1.0]):
            check("nanquantile", x, q, method=method)
            check("quantile", x, q, method=method)                      # NaN propagates
            if len(shape) > 1:
                check("nanquantile", x, q, method=method, axis=-1)
                check("nanquantile", x, q, method=method, axis=0, keepdims=True)
                check("quantile", x, q, method=method, axis=-1)
        check("nanpercentile", x, [10, 90], method=method)


@pytest.mark.parametrize("method", ["linear", "lower", "midpoint", "hazen",
                                    "closest_observation"])
@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_quantiles_past_one_grid_on_both_sort_paths(method, dtype, sort_path):
    x = data((BIG,), dtype, special=dtype in FLOATS)
    m = data((7, BIG // 7 + 1), dtype, special=dtype in FLOATS)
    check("quantile", x, [0.0, 0.3, 0.5, 1.0], method=method)
    check("quantile", m, 0.7, method=method, axis=0)
    check("nanquantile", x, [0.0, 0.3, 0.5, 1.0], method=method)
    check("nanquantile", m, 0.2, method=method, axis=1)
    check("nanquantile", m.T.copy(), [0.2, 0.9], method=method, axis=0)
    check("median", x)
    check("nanmedian", m, axis=1)


@pytest.mark.parametrize("dtype", NUMERIC + [np.bool_], **ids)
@pytest.mark.parametrize("shape", [(0,), (1,), (2,), (7,), (3, 4), (2, 3, 4), (3, 0)],
                         ids=str)
def test_median(shape, dtype, sort_path):
    x = data(shape, dtype, special=dtype in FLOATS)
    check("median", x)
    for axis in range(-len(shape), len(shape)):
        check("median", x, axis=axis)
        check("median", x, axis=axis, keepdims=True)
    if len(shape) > 1:
        check("median", x, axis=(0, 1))
    check("nanmedian", x)
    if len(shape) > 1:
        check("nanmedian", x, axis=-1)
        check("nanmedian", x, axis=0, keepdims=True)


def test_median_of_huge_floats_and_ties():
    big = np.finfo(np.float32).max
    check("median", np.array([big, big, 1.0], np.float32))              # no overflow of one
    check("median", np.array([big, big], np.float32))                   # numpy's inf
    check("median", np.array([2 ** 31 - 1, 2 ** 31 - 2], np.int32))     # exact, no wrap
    check("quantile", np.array([1.0, np.inf]), 1.0)                     # numpy's nan
    check("quantile", np.array([-(2 ** 31), 2 ** 31 - 1], np.int32), 0.5)


def test_quantile_weights(sort_path):
    x = data((30,), np.float64)
    w = data((30,), np.float64, seed=1, low=0, high=3)
    for q in (0.0, 0.2, [0.1, 0.5, 1.0]):
        check("quantile", x, q, method="inverted_cdf", weights=w)
        check("percentile", x, np.asarray(q) * 100, method="inverted_cdf", weights=w)
    m = data((4, 30), np.float32)
    check("quantile", m, [0.3, 0.6], axis=1, method="inverted_cdf", weights=w)
    check("quantile", m, 0.5, axis=1, method="inverted_cdf", weights=data((4, 30), np.float64))
    check("quantile", x, 0.5, weights=w)                                # not inverted_cdf
    check("quantile", x, 0.5, method="inverted_cdf", weights=-w)
    check("quantile", x, 0.5, method="inverted_cdf", weights=np.zeros(30))
    check("quantile", m, 0.5, axis=1, method="inverted_cdf", weights=w[:7])


def test_quantile_refuses_what_numpy_refuses():
    x = data((9,), np.float32)
    check("quantile", x, 1.5)
    check("quantile", x, -0.1)
    check("quantile", x, np.nan)
    check("percentile", x, 101)
    check("quantile", x, 0.5, method="bogus")
    check("quantile", np.zeros((0,), np.float32), 0.5)                  # IndexError
    check("quantile", x, np.zeros((2, 2, 2)))
    check("quantile", data((3, 4), np.float32), 0.5, axis=(0, 0))
    check("quantile", data((3, 4), np.float32), 0.5, axis=2)
    check("quantile", data((5,), np.bool_), 0.5)                        # numpy's bool subtract
    check("quantile", data((5,), np.bool_), 0.5, method="lower")
    check("nanquantile", np.zeros((0, 3), np.float32), 0.5, axis=0)
    check("nanmedian", np.zeros((0,), np.float32))
    with pytest.raises(TypeError):
        km.median(km.asarray(x), out=km.zeros(()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 40), rows=st.integers(1, 4), q=st.lists(st.floats(0, 1), min_size=1,
                                                                 max_size=4),
       method=st.sampled_from(METHODS), dtype=st.sampled_from(NUMERIC),
       nan=st.booleans(), seed=st.integers(0, 99))
def test_quantiles_random_inputs(n, rows, q, method, dtype, nan, seed):
    x = data((rows, n), dtype, seed=seed, special=nan and dtype in FLOATS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("quantile", "nanquantile"):
            check(name, x, q, method=method, axis=1)
        check("median", x, axis=1)
        check("nanmedian", x, axis=1)


def test_functions_dispatch_and_have_examples():
    """Every function of the modules here is numpy's through __array_function__, and each
    has a docstring Example that runs."""
    import doctest
    from kompute_ml._api import (construction, einsum, histograms, introspection, padding,
                                 polynomial, protocols, quantiles, signal, ufuncs)
    table = protocols._functions()
    ufunc_table = protocols._ufuncs()
    for mod in (einsum, histograms, quantiles, padding, signal, polynomial, construction,
                introspection):
        for name in mod.__all__:
            fn = getattr(mod, name)
            if getattr(fn, "__module__", None) != mod.__name__:
                continue                  # numpy's own pure-Python helper (mintypecode)
            # (a name numpy dropped, as row_stack, is ours alone: nothing to dispatch from)
            if name not in protocols._NOT_DISPATCHED and hasattr(np, name):
                assert table.get(getattr(np, name)) is fn, name
            assert ">>> " in (fn.__doc__ or ""), name
        result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, (mod.__name__, result)
    for name in ("cbrt", "gcd", "lcm", "frexp", "spacing", "bitwise_count"):
        assert ufunc_table[name] is getattr(ufuncs, name), name      # numpy's ufuncs
    assert_matches(km.einsum("i,i", km.asarray([1.0, 2.0]), km.asarray([3.0, 4.0])),
                   np.float32(11.0), rtol=0, atol=0)


# ---- unique -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (9,), (4, 6), (2, 3, 4), (0, 3), (3, 0),
                                   (BIG,)], ids=str)
def test_unique(shape, dtype, sort_path):
    x = data(shape, dtype, special=dtype in FLOATS, low=0, high=4)
    if x.dtype.kind == "f":
        x = np.asarray(np.round(x / 8))                               # repeats
    flags = [(False, False, False), (True, False, False), (False, True, False),
             (False, False, True), (True, True, True)]
    nans = x.dtype.kind == "f" and np.isnan(x).sum() > 1
    for ri, rv, rc in flags:
        for equal_nan in (True, False):
            if nans and rv and not ri and not equal_nan:
                # which of the distinct NaNs each NaN maps to is numpy's sort's choice (its
                # quicksort here): the inverse must rebuild x
                values, inverse = km.unique(km.asarray(x), False, True, equal_nan=False)
                np.testing.assert_array_equal(values.numpy()[inverse.numpy()], x)
                continue
            check("unique", x, ri, rv, rc, equal_nan=equal_nan)
        for axis in range(-len(shape), len(shape)):
            if shape[axis] <= 300 or len(shape) == 1:
                check("unique", x, ri, rv, rc, axis=axis)
    check("unique", x, axis=len(shape))                               # AxisError
    # sorted=False leaves numpy's order open (a hash table's for integers): ours is sorted
    assert_matches(km.unique(km.asarray(x), sorted=False),
                   np.sort(np.unique(x, sorted=False)), rtol=0, atol=0)


def test_unique_rows_with_nans_and_negative_zero():
    x = np.array([[np.nan, 1.0], [np.nan, 1.0], [0.0, 2.0], [-0.0, 2.0], [0.0, -1.0]])
    for axis in (0, 1):
        check("unique", x, True, True, True, axis=axis)
    check("unique", np.array([np.nan, 0.0, -0.0, np.nan, 1.0]), True, True, True)
    check("unique", np.array([np.nan, 0.0, -0.0, np.nan, 1.0]), True, True, True,
          equal_nan=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.integers(0, 12), cols=st.integers(0, 4), dtype=st.sampled_from(DTYPES),
       axis=st.sampled_from([None, 0, 1]), flags=st.tuples(st.booleans(), st.booleans(),
                                                           st.booleans()),
       seed=st.integers(0, 99))
def test_unique_random_inputs(rows, cols, dtype, axis, flags, seed):
    x = data((rows, cols), dtype, seed=seed, low=0, high=3)
    if x.dtype.kind == "f":
        x = np.asarray(np.round(x / 10))
    check("unique", x, *flags, axis=axis)


# ---- pad ----------------------------------------------------------------------------------------

PAD_MODES = [("constant", {}), ("constant", {"constant_values": 3}),
             ("constant", {"constant_values": (1, 2)}), ("edge", {}), ("wrap", {}),
             ("reflect", {}), ("symmetric", {}), ("reflect", {"reflect_type": "odd"}),
             ("symmetric", {"reflect_type": "odd"}), ("linear_ramp", {}),
             ("linear_ramp", {"end_values": (5, -2)}), ("maximum", {}),
             ("minimum", {"stat_length": 2}), ("mean", {}), ("mean", {"stat_length": (1, 3)}),
             ("median", {}), ("median", {"stat_length": 2})]


@pytest.mark.parametrize("mode,kw", PAD_MODES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_pad(mode, kw, dtype):
    for shape in [(), (1,), (5,), (3, 4), (2, 3, 2), (0, 3)]:
        x = data(shape, dtype, low=0 if dtype == np.uint32 else -20, high=20)
        widths = [0, 2, (1, 3), 7, 12, {0: (2, 1)}, {-1: 3}] if shape else [0, ()]
        if len(shape) > 1:
            widths.append(((1, 2), (3, 0)) + ((2, 2),) * (len(shape) - 2))
        for pw in widths:
            # a ramp's values near the edge cancel: float32's rounding there is absolute
            check("pad", x, pw, mode, atol=1e-4 if dtype == np.float32 else 1e-9, **kw)
    check("pad", data((BIG,), dtype), (3, 5), mode, rtol=1e-5, **kw)


def test_pad_empty_mode_shape_and_center():
    x = data((3, 4), np.float32)
    res = km.pad(km.asarray(x), (1, 2), "empty")
    assert res.shape == (6, 7) and res.dtype == np.float32
    np.testing.assert_array_equal(res.numpy()[1:4, 1:5], x)
    res = np.pad(km.asarray(x), 1, mode="empty")
    assert isinstance(res, km.Array) and res.shape == (5, 6)


def test_pad_callable_mode_runs_numpys_callback():
    def pad_with(vector, pad_width, iaxis, kwargs):
        vector[:pad_width[0]] = kwargs.get("value", 10)
        vector[vector.size - pad_width[1]:] = -1
    x = data((3, 4), np.int32)
    check("pad", x, 2, pad_with)
    check("pad", x, (1, 2), pad_with, value=7)


def test_pad_refuses_what_numpy_refuses():
    x = data((3, 4), np.float32)
    check("pad", x, 2, "bogus")
    check("pad", x, 2, "edge", constant_values=3)                       # not that mode's option
    check("pad", x, -1)
    check("pad", x, 1.5)
    check("pad", x, ((1, 2), (3, 4), (5, 6)))                           # too many axes
    check("pad", np.zeros((0, 3), np.float32), 1, "edge")                # empty axis
    check("pad", np.zeros((0, 3), np.float32), ((0, 0), (1, 1)), "reflect")
    check("pad", x, 1, "maximum", stat_length=0)
    check("pad", data((4,), np.int32), 1, "constant", constant_values=np.nan)
    # the mean of no elements (NaN) into integers: numpy writes INT_MIN; here numpy's
    # error for a NaN assigned into an integer array
    with pytest.raises(ValueError):
        km.pad(km.asarray(data((4,), np.int32)), 1, "mean", stat_length=0)
    check("pad", x, 1, "constant", constant_values=((1, 2, 3),))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       widths=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=3,
                       max_size=3),
       mode=st.sampled_from(PAD_MODES), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 99))
def test_pad_random_inputs(shape, widths, mode, dtype, seed):
    x = data(tuple(shape), dtype, seed=seed, low=0, high=30)
    check("pad", x, tuple(widths[:len(shape)]), mode[0], atol=1e-4, **mode[1])


# ---- elementwise: cbrt, gcd, lcm, frexp, spacing, bitwise_count, angle, i0 ----------------------

@pytest.mark.parametrize("name", ["cbrt", "spacing", "frexp", "angle", "i0"])
@pytest.mark.parametrize("dtype", DTYPES, **ids)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (BIG,)], ids=str)
def test_float_functions(name, shape, dtype):
    x = data(shape, dtype, special=dtype in FLOATS)
    if dtype == np.bool_ and name in ("cbrt", "spacing", "frexp"):
        # numpy computes bools in float16 here; ours in float32 (float16's closest dtype)
        exp = getattr(np, name)(x.astype(np.float32))
        for fn in (getattr(km, name), getattr(np, name)):
            assert_matches(fn(km.asarray(x)), exp, rtol=1e-6, atol=0)
        return
    check(name, x, atol=1e-300)


def _check_flushing(x):
    """float32 subnormals ``x`` on a device that flushes them: each result is numpy's for the
    value or for the value read as a zero of its sign, or, where that is below FLT_MIN in
    magnitude, any value below FLT_MIN (a zero, or the subnormal passed through)."""
    with np.errstate(all="ignore"):
        for name in ("cbrt", "spacing", "frexp", "angle"):
            got = getattr(km, name)(km.asarray(x))
            parts = zip(*(r if isinstance(r, tuple) else (r,) for r in
                          (got, getattr(np, name)(x), getattr(np, name)(flushed(x)))))
            for g, w, w0 in parts:
                g = g.numpy()
                small = (np.abs(g) <= FLT_MIN) & (np.abs(w0) <= FLT_MIN)
                assert ((g == w) | (g == w0) | small).all(), (name, x, g, w, w0)


def test_float_functions_special_values():
    for dt in FLOATS:
        info = np.finfo(dt)
        x = np.array([info.smallest_subnormal, -info.smallest_subnormal, info.tiny / 3,
                      info.tiny, info.max, -info.max, 0.0, -0.0, 1.0, 2.0, 0.5, -0.75,
                      np.inf, -np.inf, np.nan, 3.0e-3, 7.0e20], dt)
        if dt == np.float32 and not keeps_denormals():
            _check_flushing(x[:3])
            x = x[3:]
        for name in ("cbrt", "spacing", "frexp", "angle"):
            check(name, x)
        check("angle", x, deg=True)
    check("i0", np.array([0.0, 1.0, 8.0, 8.5, 30.0, -30.0, 700.0, np.inf, np.nan]))


@pytest.mark.parametrize("name", ["gcd", "lcm"])
@pytest.mark.parametrize("dtypes", [(np.int32, np.int32), (np.uint32, np.uint32),
                                    (np.int32, np.uint32), (np.float32, np.int32),
                                    (np.bool_, np.bool_)], ids=str)
@pytest.mark.parametrize("shapes", [((), ()), ((0,), (0,)), ((7,), (7,)), ((3, 1), (4,)),
                                    ((BIG,), (BIG,))], ids=str)
def test_gcd_lcm(name, dtypes, shapes):
    a = data(shapes[0], dtypes[0], low=-60, high=60) if dtypes[0] == np.int32 else \
        data(shapes[0], dtypes[0])
    b = data(shapes[1], dtypes[1], seed=1, low=-60, high=60) if dtypes[1] == np.int32 else \
        data(shapes[1], dtypes[1], seed=1)
    check(name, a, b)
    check(name, a, 12)


def test_gcd_lcm_extremes():
    lo = np.iinfo(np.int32).min
    check("gcd", np.array([lo, lo, 0, 7, -7], np.int32), np.array([0, 2, 0, -14, 0], np.int32))
    check("lcm", np.array([lo, 46341, 0, 4, -6], np.int32),
          np.array([1, 46340, 0, 6, 4], np.int32))                    # products past int32 wrap
    check("gcd", np.array([4294967295, 12], np.uint32), np.array([5, 4294967292], np.uint32))
    if has_int64(km.get_device()):             # Euclid in 64 bits (gcd.comp's KM_WIDE)
        lo = np.iinfo(np.int64).min
        check("gcd", np.array([lo, lo, 0, 7, -7, 3 * 2 ** 40], np.int64),
              np.array([0, 2, 0, -14, 0, 2 ** 41], np.int64))
        check("lcm", np.array([lo, 3037000500, 0, 4, -6], np.int64),
              np.array([1, 3037000499, 0, 6, 4], np.int64))           # products past int64 wrap
        check("gcd", np.array([2 ** 64 - 1, 12], np.uint64),
              np.array([5, 2 ** 64 - 4], np.uint64))
        for name in ("gcd", "lcm"):
            check(name, data((BIG,), np.int64, low=-2 ** 40, high=2 ** 40),
                  data((BIG,), np.uint32, seed=1, high=2 ** 31))    # int64 with uint32: int64


@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_bitwise_count(dtype):
    for shape in [(), (0,), (9,), (BIG,)]:
        x = data(shape, dtype, low=-2 ** 31 if dtype == np.int32 else 0, high=2 ** 31 - 1)
        check("bitwise_count", x)
    check("bitwise_count", np.array([np.iinfo(np.int32).min, -1, 0], np.int32))
    check("bitwise_count", np.array([np.iinfo(np.uint32).max], np.uint32))
    if has_int64(km.get_device()):
        for dt in INTS64:
            info = np.iinfo(dt)
            check("bitwise_count", data((BIG,), dt, low=info.min, high=2 ** 63 - 1))
            check("bitwise_count", np.array([info.min, info.max, 0, 2 ** 40 + 3], dt))


# ---- sequences: convolve, correlate, interp, gradient, unwrap, windows --------------------------

@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_convolve_correlate(name, dtype):
    for na, nv in [(1, 1), (7, 3), (3, 7), (8, 8), (BIG, 5), (40, 1)]:
        a = data((na,), dtype, low=-4, high=5) if dtype == np.int32 else data((na,), dtype)
        v = data((nv,), dtype, seed=1, low=-4, high=5) if dtype == np.int32 else \
            data((nv,), dtype, seed=1)
        for mode in ("full", "same", "valid"):
            check(name, a, v, mode, rtol=1e-4 if dtype == np.float32 else None, atol=1e-4)
    check(name, data((5,), dtype), data((0,), dtype))
    check(name, data((0,), dtype), data((5,), dtype))
    check(name, data((5,), dtype), data((3,), dtype), "bogus")
    check(name, data((2, 5), dtype), data((3,), dtype))
    check(name, np.array(3.0, np.float32), data((3,), np.float32))


def test_convolve_in_blocks(monkeypatch):
    from kompute_ml._api import signal
    monkeypatch.setattr(signal, "_WINDOW_BLOCK", 64)          # many blocks of window rows
    check("convolve", data((1001,), np.float64), data((9,), np.float64, seed=1))
    check("correlate", data((1001,), np.float64), data((9,), np.float64, seed=1), "same")


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_interp(dtype):
    xp = np.sort(data((20,), dtype, low=0, high=100))
    if dtype in INTS:
        xp = np.unique(xp)
    fp = data(xp.shape, np.float64, seed=1)
    for x in (data((50,), np.float64, seed=2, low=-10, high=110), xp.astype(np.float64),
              data((3, 4), dtype, seed=3), data((BIG,), np.float32, seed=4, low=-10, high=110),
              np.array([np.nan, np.inf, -np.inf, 0.0])):
        check("interp", x, xp, fp)
        check("interp", x, xp, fp, left=-1.0, right=99.0)
        check("interp", x, xp, fp, period=150.0)              # (no two points coincide)
    check("interp", np.array([0.5]), np.array([1.0]), np.array([2.0]))       # one point
    check("interp", np.array([0.5]), np.array([1.0, 2.0]), np.array([2.0]))  # lengths differ
    check("interp", np.array([0.5]), np.array([]), np.array([]))
    check("interp", np.array([0.5]), np.array([1.0, 2.0]), np.array([2.0, 3.0]), period=0)
    check("interp", np.array([1.5]), np.array([1.0, 2.0]), np.array([np.inf, np.inf]))


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_gradient(dtype):
    for shape in [(5,), (4, 6), (3, 4, 5), (BIG,)]:
        f = data(shape, dtype)
        for edge_order in (1, 2):
            check("gradient", f, edge_order=edge_order, rtol=1e-4, atol=1e-4)
            check("gradient", f, 0.5, edge_order=edge_order, rtol=1e-4, atol=1e-4)
            check("gradient", f, axis=0, edge_order=edge_order, rtol=1e-4, atol=1e-4)
            coords = [np.cumsum(data((s,), np.float64, seed=k, low=0.5, high=2.0))
                      for k, s in enumerate(shape)]
            check("gradient", f, *coords, edge_order=edge_order, rtol=1e-4, atol=1e-4)
            check("gradient", f, *[np.arange(s) * 2 for s in shape], edge_order=edge_order,
                  rtol=1e-4, atol=1e-4)
    f = data((4, 6), dtype)
    check("gradient", f, 1.0, 2.0, axis=(1, 0))
    check("gradient", data((1,), dtype))                                  # too short
    check("gradient", data((2,), dtype), edge_order=2)
    check("gradient", f, edge_order=3)
    check("gradient", f, 1.0, 2.0, 3.0)                                   # too many spacings
    check("gradient", f, np.arange(5), 1.0)                               # wrong length


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_unwrap(dtype):
    for shape in [(1,), (9,), (4, 7), (BIG,)]:
        p = np.cumsum(data(shape, np.float64, low=-2.5, high=2.5), axis=-1).astype(dtype) \
            if dtype in FLOATS else data(shape, dtype, low=-20, high=20)
        check("unwrap", p, rtol=1e-4 if dtype == np.float32 else None, atol=1e-3)
        check("unwrap", p, discont=4.0, atol=1e-3)
        if dtype != np.uint32:                # numpy's own arithmetic overflows for uint32
            check("unwrap", p, period=7, atol=1e-3)
            check("unwrap", p, period=360, atol=1e-3)
        if len(shape) > 1:
            check("unwrap", p, axis=0, atol=1e-3)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows(name):
    for m in (-1, 0, 1, 2, 5, 6, 1001):
        exp = getattr(np, name)(m).astype(np.float32)
        assert_matches(getattr(km, name)(m), exp, rtol=1e-6, atol=1e-7)
    with pytest.raises(TypeError):
        getattr(km, name)(2.5)


def test_kaiser():
    for m, beta in [(0, 1.0), (1, 5.0), (5, 0.0), (12, 14.0), (1001, 8.6)]:
        assert_matches(km.kaiser(m, beta), np.kaiser(m, beta).astype(np.float32), rtol=1e-6,
                       atol=1e-7)


# ---- polynomials --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_polyval_and_arithmetic(dtype):
    p = data((5,), dtype, low=-3, high=4)
    q = data((3,), dtype, seed=1, low=-3, high=4)
    for x in (data((7,), dtype, low=-2, high=3), data((3, 4), np.float64), data((BIG,),
                                                                             np.float32)):
        check("polyval", p, x, rtol=1e-4 if x.dtype == np.float32 else None, atol=1e-3)
    for a, b in ((p, q), (q, p), (p, p), (p[:1], q)):
        for name in ("polyadd", "polysub", "polymul"):
            check(name, a, b)
    for m in (0, 1, 2, 7):
        check("polyder", p, m)
        check("polyint", p, m)
        check("polyint", p, m, k=[1.5] * max(m, 1))
    check("polyint", p, 2, k=3.0)
    check("polyder", p, -1)
    check("polyint", p, -1)
    check("polyint", p, 3, k=[1.0, 2.0])


def test_poly_roots_polydiv():
    check("poly", np.array([1.0, 2.0, -3.0]))
    check("poly", np.array([[1.0, 2.0], [3.0, 4.0]]))
    check("roots", np.array([1.0, -6.0, 11.0, -6.0]))
    check("roots", np.array([0.0, 1.0, -3.0, 0.0]))
    for u, v in [([3.0, 5.0, 2.0], [2.0, 1.0]), ([1.0, 0.0, -1.0], [1.0, 1.0]),
                 ([1.0], [2.0, 3.0])]:
        check("polydiv", np.array(u), np.array(v))
    with pytest.raises(TypeError):                            # complex roots: no dtype for them
        km.roots(km.asarray([1.0, 0.0, 1.0]))


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_polyfit(dtype):
    x = np.linspace(-1, 1, 40).astype(dtype) if dtype in FLOATS else \
        np.arange(-20 if dtype == np.int32 else 0, 40).astype(dtype)[:40]
    y = (3 * x.astype(np.float64) ** 2 - x + 0.5 + data((40,), np.float64, seed=1) * 0.01)
    for deg in (0, 1, 2, 5):
        check("polyfit", x, y, deg, rtol=1e-6, atol=1e-8)
        check("polyfit", x, y, deg, w=data((40,), np.float64, seed=2, low=0.5, high=2),
              rtol=1e-6, atol=1e-8)
        check("polyfit", x, np.stack([y, 2 * y], axis=1), deg, rtol=1e-6, atol=1e-8)
    res = km.polyfit(km.asarray(x), km.asarray(y), 2, full=True)
    exp = np.polyfit(x, y, 2, full=True)
    assert_matches(res[0], exp[0], rtol=1e-6, atol=1e-8)
    assert_matches(res[1], exp[1], rtol=1e-5, atol=1e-12)
    assert res[2] == exp[2]
    np.testing.assert_allclose(res[3].numpy(), exp[3], rtol=1e-8)
    for cov in (True, "unscaled"):
        c, v = km.polyfit(km.asarray(x), km.asarray(y), 2, cov=cov)
        np.testing.assert_allclose(v.numpy(), np.polyfit(x, y, 2, cov=cov)[1], rtol=1e-5,
                                   atol=1e-14)
    big = data((BIG,), np.float64, low=-1, high=1)
    check("polyfit", big, 2 * big ** 3 - big, 3, rtol=1e-6, atol=1e-8)
    with pytest.warns(np.exceptions.RankWarning):
        km.polyfit(km.asarray(np.ones(5)), km.asarray(np.arange(5.0)), 2)
    check("polyfit", x, y, -1)
    check("polyfit", x.reshape(4, 10), y, 1)
    check("polyfit", x[:0], y[:0], 1)
    check("polyfit", x, y[:5], 1)
    check("polyfit", x, y, 1, w=np.ones(3))
    check("polyfit", x[:3], y[:3], 3, cov=True)


# ---- building and rearranging -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_insert(dtype):
    for shape in [(0,), (1,), (7,), (3, 4), (BIG,)]:
        x = data(shape, dtype)
        n = shape[-1]
        for obj in (0, n, -1, [0, n], [1, 1, 0], slice(0, n, 2), [], np.array([2]), [-1]):
            for values in (data((), dtype, seed=1), data((3,), dtype, seed=2)):
                check("insert", x, obj, values)
                if len(shape) > 1:
                    one = np.atleast_1d(values)[:1]
                    check("insert", x, obj, one, axis=1)
                    check("insert", x, obj, data((shape[0],), dtype, seed=3) if
                          np.ndim(obj) == 0 else one, axis=0)
        check("insert", x, n + 1, 0)                               # out of bounds
        check("insert", x, [[0]], 0)                               # 2-D index
        check("insert", x, [0.5], 0)                               # not integers
    check("insert", data((4,), np.int32), 1, 2.7)                  # floats truncate
    check("insert", data((4,), np.int32), np.array([True, False, True, False]), 5)   # a mask
    check("insert", data((4,), np.int32), np.array([[True, False]]), 5)
    check("insert", data((4,), np.int32), [0.5, 1.5], 5)           # IndexError


def test_rollaxis_row_stack():
    x = data((2, 3, 4, 5), np.float32)
    for axis in range(-4, 4):
        for start in range(-4, 5):
            check("rollaxis", x, axis, start)
    check("rollaxis", x, 4)
    check("rollaxis", x, 0, 6)
    for tup in ([data((3,), np.float32), data((3,), np.float32, seed=1)],
                [data((2, 3), np.int32), data((1, 3), np.int32)]):
        if hasattr(np, "row_stack"):        # numpy's deprecated alias of vstack (later gone)
            check("row_stack", tup)
        with pytest.warns(DeprecationWarning):
            got = km.row_stack([km.asarray(t) for t in tup])
        assert_matches(got, np.vstack(tup), rtol=0, atol=0)
    with pytest.warns(DeprecationWarning):
        km.row_stack([km.asarray([1.0])])


def test_apply_along_axis():
    x = data((3, 4, 5), np.float32)
    for axis in (0, 1, 2, -1):
        check("apply_along_axis", np.sum, axis, x, rtol=1e-5)
        check("apply_along_axis", np.cumsum, axis, x, rtol=1e-5)
        check("apply_along_axis", lambda v: np.stack([v.max(), v.min()]), axis, x)
        check("apply_along_axis", lambda v: np.outer(v, v), axis, x, rtol=1e-5)
    check("apply_along_axis", np.sum, 0, data((0, 3), np.float32))
    check("apply_along_axis", np.sum, 3, x)


@pytest.mark.parametrize("dtype", NUMERIC, **ids)
def test_piecewise(dtype):
    for shape in [(), (9,), (3, 4), (BIG,)]:
        x = data(shape, dtype)
        check("piecewise", x, [x < 0, x >= 5], [3, lambda v: v * 2])
        check("piecewise", x, [x < 0], [lambda v: -v, 7])                     # the otherwise
        check("piecewise", x, x > 3, [lambda v: v + 1])
        check("piecewise", x, [x < 0, x > 0], [1])                            # too few
    check("piecewise", np.array(3.0, np.float32), [True], [lambda v: v * 2])


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.bool_], **ids)
def test_packbits_unpackbits(dtype):
    for shape in [(0,), (1,), (9,), (3, 17), (2, 3, 9), (BIG,)]:
        x = data(shape, dtype, low=0, high=2)
        for bitorder in ("big", "little"):
            check("packbits", x, bitorder=bitorder)
            for axis in range(len(shape)):
                check("packbits", x, axis=axis, bitorder=bitorder)
    check("packbits", data((5,), np.float32))
    check("packbits", data((5,), np.int32), bitorder="middle")
    for shape in [(0,), (3,), (4, 5), (BIG,)]:
        b = data(shape, np.uint8, low=0, high=256)
        for bitorder in ("big", "little"):
            check("unpackbits", b, bitorder=bitorder)
            if b.size:                        # (numpy's counts past an empty b: its garbage)
                check("unpackbits", b, axis=len(shape) - 1, count=5, bitorder=bitorder)
            check("unpackbits", b, axis=0, count=-3, bitorder=bitorder)
            if b.size:
                check("unpackbits", b, count=8 * b.size + 4, bitorder=bitorder)
    check("unpackbits", data((5,), np.int32))


def test_creation_from_python_objects():
    check("fromfunction", lambda i, j: i * 10 + j, (3, 4), dispatch=False)
    check("fromfunction", lambda i, j: i * 10 + j, (3, 4), dtype=np.int32, dispatch=False)
    check("fromfunction", lambda i: i % 3 == 0, (BIG,), dispatch=False)
    raw = np.arange(10, dtype=np.float32).tobytes()
    check("frombuffer", raw, dtype=np.float32, dispatch=False)
    check("frombuffer", raw, dtype=np.int32, count=3, offset=8, dispatch=False)
    check("frombuffer", raw, dtype=np.float64, dispatch=False)
    check("frombuffer", b"abc", dtype=np.int32, dispatch=False)       # not a whole item
    check("fromiter", [k * 0.5 for k in range(9)], dtype=np.float32, dispatch=False)
    check("fromiter", range(5), dtype=np.int32, count=3, dispatch=False)
    check("fromiter", range(2), dtype=np.int32, count=3, dispatch=False)     # too few
    like = km.zeros(())
    for res in (np.frombuffer(raw, dtype=np.float32, like=like),
                np.fromiter(range(4), dtype=np.int32, like=like),
                np.fromfunction(lambda i: i * 2, (4,), dtype=np.int32, like=like)):
        assert isinstance(res, km.Array)


def test_require_and_shared_memory():
    x = data((3, 4), np.float32)
    for req in (None, "C", "CW", ["A", "O"], "E", "F", ["C_CONTIGUOUS", "WRITEABLE"]):
        check("require", x, requirements=req, dispatch=False)
        check("require", x, np.float64, requirements=req, dispatch=False)
        assert_matches(km.require(km.asarray(x), np.float64, req), x.astype(np.float64),
                       rtol=0, atol=0)
        # numpy's require dispatches on like= only: of an Array it converts (a download)
        assert isinstance(np.require(km.asarray(x), requirements=req), np.ndarray)
        assert isinstance(np.require(x, requirements=req, like=km.zeros(())), km.Array)
    check("require", x, requirements="CF", dispatch=False)
    a = km.asarray(x)
    assert km.require(a) is a and km.require(a, requirements="O") is not a
    r = a.reshape(12)
    for fn in (km.shares_memory, km.may_share_memory, np.shares_memory, np.may_share_memory):
        assert fn(a, a) and fn(a, r) and not fn(a, a.copy()) and not fn(a, x)
        assert not fn(a, a + 1)


# ---- printing, dtypes and the rest --------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, **ids)
def test_printing_functions(dtype):
    for shape in [(), (0,), (5,), (3, 4), (2000,)]:
        x = data(shape, dtype)
        for name in ("array2string", "array_str", "array_repr"):
            exp = getattr(np, name)(x)
            for fn in (getattr(km, name), getattr(np, name)):
                assert fn(km.asarray(x)) == exp.replace("dtype=int64", "dtype=int32")
    x = data((4,), np.float64)
    assert km.array2string(km.asarray(x), precision=2, separator=",") == \
        np.array2string(x, precision=2, separator=",")


def test_apply_over_axes_and_mask_indices():
    x = data((3, 4, 5), np.float32)
    for axes in (0, [0, 2], (1, -1), []):
        check("apply_over_axes", np.sum, x, axes, rtol=1e-5, atol=1e-5)
    check("apply_over_axes", lambda a, axis: a.sum(axis=axis).sum(), x, [0])   # wrong ndim
    for n, k in ((4, 0), (5, 1), (5, -2), (0, 0)):
        for fn in (np.triu, np.tril):
            exp = np.mask_indices(n, fn, k)
            assert_matches(km.mask_indices(n, fn, k), exp, rtol=0, atol=0)
        assert_matches(km.mask_indices(n, km.triu, k), np.mask_indices(n, np.triu, k), rtol=0,
                       atol=0)


def test_dtype_functions():
    f32, f64, i32 = (km.asarray(np.zeros(2, d)) for d in (np.float32, np.float64, np.int32))
    assert km.common_type(f32) is np.float32
    assert km.common_type(f32, f64) is np.float64 and km.common_type(i32) is np.float64
    assert np.common_type(f32, i32) is np.float64                      # through numpy's name
    assert km.isfortran(f32) is False and km.isfortran(np.zeros((2, 2), order="F"))
    assert km.min_scalar_type(f32) == np.float32 and km.min_scalar_type(i32) == np.int32
    dev = km.get_device()
    for v in (10, -1, 300, -40000, 1e300, 0.5):       # numpy's, mapped onto the device's dtypes
        assert km.min_scalar_type(v) == device_dtype(np.min_scalar_type(v), dev), v
    assert km.min_scalar_type(1e300) == np.float64
    assert np.min_scalar_type(i32) == np.int32
    assert km.mintypecode("idf") == np.mintypecode("idf") and km.typename("d") == np.typename("d")
    assert km.real_if_close(f32) is f32 and np.real_if_close(f32) is f32
    with pytest.raises(TypeError):
        km.common_type(np.zeros(2, complex))
