"""The micro-batch trainers' row shuffle made on the device (shaders/permute.comp, _loss.permute_rows):
each chunk's ``idx`` is a keyed pseudo-random permutation of its rows, the same as a numpy model of
the kernel's bijection, spread like a random permutation, reproducible from the estimator's
random_state."""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as _stream
from kompute_ml.linear_model import LogisticRegression, _loss

_MULTIPLIERS = (0x9E3779B1, 0x85EBCA6B, 0xC2B2AE35, 0x27D4EB2F)


def reference(n, key):
    """permute.comp in numpy: four rounds of (add a key word, multiply by an odd constant, xorshift)
    on b-bit words, then the cycle walk into [0, n)."""
    bits = (n - 1).bit_length()
    mask, shift = np.uint64((1 << bits) - 1), np.uint64(max(1, (bits + 1) // 2))

    def rounds(x):
        for k, m in zip(key, _MULTIPLIERS):
            x = ((x + np.uint64(k)) * np.uint64(m)) & mask
            x ^= x >> shift
        return x

    x = rounds(np.arange(n, dtype=np.uint64))
    out = x >= n
    while out.any():
        x[out] = rounds(x[out])
        out = x >= n
    return x.astype(np.uint32)


def permutation(device, n, seed):
    buf = _memory.alloc(device, 4 * max(n, 1))
    try:
        rng = np.random.default_rng(seed)
        key = np.random.default_rng(seed).integers(0, 1 << 32, size=4, dtype=np.uint64)
        _loss.permute_rows(device, buf, n, rng)
        got = _stream.download(buf, n, np.uint32)
    finally:
        buf.release()
    return got, [int(k) for k in key]


@pytest.mark.parametrize("n", [1, 2, 3, 7, 255, 256, 257, 4097, 65536, 65537, 300001])
def test_each_size_gets_the_kernels_permutation(device, n):
    for seed in (0, 1):
        got, key = permutation(device, n, seed)
        np.testing.assert_array_equal(np.sort(got), np.arange(n, dtype=np.uint32))
        np.testing.assert_array_equal(got, reference(n, key))


def test_no_rows_draws_the_key_and_dispatches_nothing(device):
    rng, twin = np.random.default_rng(5), np.random.default_rng(5)
    buf = _memory.alloc(device, 4)
    try:
        km.synchronize(device)
        before = km.stats()["dispatches"]
        _loss.permute_rows(device, buf, 0, rng)
        assert km.stats()["dispatches"] == before
    finally:
        buf.release()
    twin.integers(0, 1 << 32, size=4, dtype=np.uint64)
    assert rng.integers(1 << 30) == twin.integers(1 << 30)      # the same draws either way


def test_spread_like_a_random_permutation(device):
    n = 100003
    got, _ = permutation(device, n, 11)
    x = got.astype(np.int64)
    # neighbours in the order are unrelated rows: |x[i+1] - x[i]| < n / 100 about 2 % of the time
    near = np.mean(np.abs(np.diff(x)) < n / 100)
    assert 0.015 < near < 0.025, near
    assert abs(np.corrcoef(np.arange(n), x)[0, 1]) < 0.02
    # the first batch of 4096 rows covers the data evenly: chi-square over 16 bins, 15 degrees of
    # freedom, below its 99.9 % point
    hist = np.bincount(x[:4096] * 16 // n, minlength=16)
    assert ((hist - 256.0) ** 2 / 256.0).sum() < 37.7
    # and the steps from one row to the next are spread over the data: 64 bins, 63 degrees
    steps = np.bincount(np.diff(x) % n * 64 // n, minlength=64)
    assert ((steps - steps.mean()) ** 2 / steps.mean()).sum() < 103.4


def test_keys_choose_the_permutation(device):
    a, _ = permutation(device, 1000, 0)
    b, _ = permutation(device, 1000, 0)
    c, _ = permutation(device, 1000, 1)
    np.testing.assert_array_equal(a, b)
    assert np.mean(a == c) < 0.05


@pytest.mark.parametrize("make_rng", [np.random.RandomState, np.random.default_rng])
def test_dataset_shuffle_permutes_every_chunk(device, monkeypatch, make_rng):
    d = 5
    monkeypatch.setattr(_loss, "_CHUNK_BYTES", 4 * d * 37)      # chunks of 37 rows
    X = np.random.default_rng(0).standard_normal((200, d)).astype(np.float32)
    codes = np.arange(200, dtype=np.int64) % 2
    data = _loss.DeviceDataset(device, X, codes, np.ones(200))
    try:
        rows = [c.rows for c in data.chunks]
        assert len(rows) == 6 and sum(rows) == 200 and max(rows) <= 37
        orders = []
        for seed in (3, 3, 4):
            order = data.shuffle(make_rng(seed))
            assert sorted(order) == list(range(len(rows)))
            orders.append([_stream.download(c.idx, c.rows, np.uint32) for c in data.chunks])
            for got, r in zip(orders[-1], rows):
                np.testing.assert_array_equal(np.sort(got), np.arange(r, dtype=np.uint32))
        for a, b in zip(orders[0], orders[1]):
            np.testing.assert_array_equal(a, b)                  # the same seed: the same order
        assert any(not np.array_equal(a, c) for a, c in zip(orders[0], orders[2]))
    finally:
        data.release()


@pytest.mark.parametrize("solver", ["adam", "sgd"])
def test_shuffled_fits_follow_random_state(device, solver):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((3000, 8)).astype(np.float32)
    y = (X @ rng.standard_normal(8) + 0.3 * rng.standard_normal(3000) > 0).astype(int)

    def fit(seed):
        clf = LogisticRegression(solver=solver, batch_size=64, max_iter=3, tol=None,
                                 shuffle=True, random_state=seed, device=device)
        return clf.fit(X, y)

    a, b, c = fit(0), fit(0), fit(1)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)
    assert a.score(X, y) > 0.9 and c.score(X, y) > 0.9
