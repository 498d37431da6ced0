"""Transposes through transpose.comp's 32 x 32 shared-memory tiles (the strided gather read or
wrote 32 words apart): every walk that moves whole matrices' columns into rows (2-D ``.T``,
``mT`` of stacks, permutations that coalesce into one) against numpy, at sizes around the tiles,
every dtype, grids the kernel walks past its workgroup count, and an offset into the source."""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._array import indexing as _indexing
from kompute_ml._array.dtypes import FLOAT32, has_float64

SHAPES = [(2, 2), (31, 33), (32, 32), (33, 31), (1, 7), (7, 1), (1000, 3), (3, 1000),
          (257, 1025), (64, 4097)]


def _dtypes(device):
    out = [np.float32, np.int32, np.uint32, np.bool_]
    return out + [np.float64] if has_float64(device) else out


@pytest.mark.parametrize("shape", SHAPES)
def test_matrix_transposes_like_numpy(device, shape):
    rng = np.random.default_rng(sum(shape))
    for dtype in _dtypes(device):
        h = (rng.standard_normal(shape) * 1000).astype(dtype)
        a = km.asarray(h, device=device)
        np.testing.assert_array_equal(a.T.numpy(), h.T)
        np.testing.assert_array_equal(km.matrix_transpose(a).numpy(), h.T)


@pytest.mark.parametrize("shape, axes", [
    ((3, 45, 70), (0, 2, 1)), ((5, 1, 33, 40), (0, 1, 3, 2)), ((2, 3, 4, 5), (2, 3, 0, 1)),
    ((2, 3, 4, 5), (3, 0, 1, 2)), ((2, 3, 4, 5), (0, 1, 3, 2)), ((6, 7, 8), (1, 2, 0)),
    # not a matrix transpose after coalescing: the gather
    ((2, 3, 4, 5), (3, 1, 0, 2)), ((4, 5, 6), (2, 1, 0)), ((4, 5, 6), (1, 0, 2))])
def test_permutations_like_numpy(device, shape, axes):
    h = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(km.asarray(h, device=device).transpose(axes).numpy(),
                                  np.transpose(h, axes))


def test_which_walks_take_the_tiles():
    assert _indexing._matrix_transpose([256, 1000000], [1, 256]) == (1, 1000000, 256)
    assert _indexing._matrix_transpose([3, 70, 45], [3150, 1, 70]) == (3, 45, 70)
    assert _indexing._matrix_transpose([1000000, 256], [256, 1]) is None      # a copy
    assert _indexing._matrix_transpose([5, 4, 6], [1, 30, 5]) is None         # (4, 5, 6) reversed
    assert _indexing._matrix_transpose([1, 7], [1, 1]) is None


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_grids_past_the_workgroup_count(device, monkeypatch, limit):
    monkeypatch.setattr(_indexing, "_TRANSPOSE_MAX_GROUPS", limit)
    rng = np.random.default_rng(limit)
    h = rng.standard_normal((5, 100, 70)).astype(np.float32)
    np.testing.assert_array_equal(km.asarray(h, device=device).mT.numpy(), np.swapaxes(h, 1, 2))
    h = rng.standard_normal((130, 97)).astype(np.float32)
    np.testing.assert_array_equal(km.asarray(h, device=device).T.numpy(), h.T)


def test_an_offset_into_the_source(device):
    h = np.arange(3 * 40 * 50, dtype=np.float32)
    src = km.asarray(h, device=device)
    # elements 2000 ... 3999 of the source as a 40 x 50 matrix, transposed
    buf, shape, _ = _indexing.gather(src._realize(), h.shape, FLOAT32, device, 2000, (50, 40),
                                     (1, 50))
    got = km.Array._new(device, shape, FLOAT32, buf=buf).numpy()
    np.testing.assert_array_equal(got, h[2000:4000].reshape(40, 50).T)
