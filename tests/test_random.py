"""kompute_ml.random: Philox4x32-10 on the device against a reference written from the paper,
Random123's published known answers, and statistical tests with fixed seeds."""

import math
import pickle

import numpy as np
import pytest
from scipy import stats

import kompute_ml as km
from kompute_ml import random as kmr
from kompute_ml._array import dtypes as _dtypes
from kompute_ml._runtime import stream as _stream

DEFAULT_INT = _dtypes.default_int(km.get_device())
# numpy's int64 / uint64 requests, as the default device holds them
I64, U64 = (np.dtype(np.int64), np.dtype(np.uint64)) if km.get_device().limits["int64"] else \
    (np.dtype(np.int32), np.dtype(np.uint32))

# ---------------------------------------------------------------------------------------------
# reference: Philox4x32-10 in numpy (uint64 holds each 32x32-bit product exactly)

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_MASK = np.uint64(0xFFFFFFFF)


def philox_ref(counter, key):
    """Philox4x32-10 of counters (4 arrays or ints of 32-bit words) under key (k0, k1)."""
    c = [np.asarray(w, dtype=np.uint64) for w in counter]
    k0, k1 = int(key[0]), int(key[1])
    for _ in range(10):
        p0, p1 = _M0 * c[0], _M1 * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p1 & _MASK,
             (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1), p0 & _MASK]
        k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
    return np.stack(c).astype(np.uint32)


def ref_blocks(key, first_block, n, attempt=0):
    """Words of blocks first_block .. as the device lays them out (block i -> outputs 4i..4i+3)."""
    blocks = first_block + np.arange(-(-n // 4), dtype=np.uint64)
    words = philox_ref([blocks & _MASK, blocks >> np.uint64(32), np.full_like(blocks, attempt),
                        np.zeros_like(blocks)], key)
    return words.T.reshape(-1)[:n]


def ref_integers(key, first_block, n, low, rng):
    """Lemire's method with the shader's retry counters (attempt a uses counter word 2 = a)."""
    out = np.empty(n, dtype=np.int64)
    threshold = (2**32 - rng) % rng
    pending = np.arange(n)
    attempt = 0
    words = ref_blocks(key, first_block, n).astype(np.uint64)
    while pending.size:
        prod = words[pending] * np.uint64(rng) if rng < 2**32 else words[pending] << np.uint64(32)
        ok = (prod & _MASK) >= np.uint64(threshold)
        out[pending[ok]] = low + (prod[ok] >> np.uint64(32)).astype(np.int64)
        pending = pending[~ok]
        attempt += 1
        assert attempt < 64
        if pending.size:
            words = ref_blocks(key, first_block, n, attempt).astype(np.uint64)
    return out


# Random123 (DEShawResearch/random123, tests/kat_vectors), philox4x32 10: counter, key, output
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("counter, key, expected", KAT)
def test_reference_matches_random123_known_answers(counter, key, expected):
    assert tuple(int(w) for w in philox_ref(counter, key)) == expected


def _bits_with_key(key, first_block, n):
    """The device's raw words for an explicit key and counter (the generator's state set)."""
    bg = kmr.Philox(0)
    bg._key, bg._counter = key, first_block
    return kmr.Generator(bg).bits(n).numpy()


def test_device_matches_random123_zero_vector():
    # the shader's counter is (block lo, block hi, attempt, 0): of the published vectors, the
    # all-zero one is a counter it uses; the other two keys are checked through the reference
    assert tuple(int(w) for w in _bits_with_key((0, 0), 0, 4)) == KAT[0][2]


def test_device_matches_the_reference_across_the_64_bit_counter_carry():
    key = (0xA4093822, 0x299F31D0)
    start = 2**32 - 3                    # blocks cross from low word 0xFFFFFFFF to high word 1
    got = _bits_with_key(key, start, 4 * 7 - 1)
    np.testing.assert_array_equal(got, ref_blocks(key, start, 4 * 7 - 1))


def test_device_matches_reference_all_ones_key_and_last_block():
    key = (0xFFFFFFFF, 0xFFFFFFFF)
    start = 2**64 - 1                    # the last block (counter words 0 and 1 all ones)
    got = _bits_with_key(key, start, 4)
    np.testing.assert_array_equal(got, philox_ref((0xFFFFFFFF, 0xFFFFFFFF, 0, 0), key).ravel())


# ---------------------------------------------------------------------------------------------
# exact agreement with the reference

def test_bits_random_and_counter_advance_match_the_reference():
    rng = km.random.default_rng(1234)
    key = rng.bit_generator.state["key"]
    a = rng.bits(10).numpy()                     # blocks 0..2
    u = rng.random(7).numpy()                    # blocks 3..4
    np.testing.assert_array_equal(a, ref_blocks(key, 0, 10))
    want = (ref_blocks(key, 3, 7) >> 8).astype(np.float64) * 2.0**-24
    np.testing.assert_array_equal(u, want.astype(np.float32))
    assert rng.bit_generator.state["counter"] == 5


@pytest.mark.parametrize("low, high", [(0, 3), (-5, 5), (-2**31, 2**30), (-2**31, 2**31 - 1),
                                       (-2**31, 2**31)])
def test_integers_match_lemire_reference(low, high):
    rng = km.random.default_rng(99)
    key = rng.bit_generator.state["key"]
    got = rng.integers(low, high, size=4099).numpy()
    np.testing.assert_array_equal(got, ref_integers(key, 0, 4099, low, high - low))


def test_normal_matches_box_muller_reference():
    rng = km.random.default_rng(5)
    key = rng.bit_generator.state["key"]
    got = rng.standard_normal(4001).numpy()
    w = ref_blocks(key, 0, 4004).astype(np.float64).reshape(-1, 4)
    u1 = (np.floor(w[:, 0::2] / 256) + 1) * 2.0**-24
    theta = np.pi * (np.floor(w[:, 1::2] / 256) * 2.0**-23 - 1)
    r = np.sqrt(-2 * np.log(u1))
    want = np.stack([r[:, 0] * np.cos(theta[:, 0]), r[:, 0] * np.sin(theta[:, 0]),
                     r[:, 1] * np.cos(theta[:, 1]), r[:, 1] * np.sin(theta[:, 1])], axis=1)
    np.testing.assert_allclose(got, want.reshape(-1)[:4001], rtol=1e-5, atol=2e-5)
    assert np.isfinite(got).all()


def test_split_grid_gives_the_same_bits(monkeypatch):
    dev = km.get_device()
    gx = dev.max_groups[0]
    if gx > 1 << 20:
        pytest.skip(f"the device's maxComputeWorkGroupCount[0] = {gx}: no 1-D grid to split")
    # workgroups of one invocation: gx + 2 groups need a 2-D grid at a modest size
    monkeypatch.setattr(kmr, "_LOCAL_SIZE", 1)
    n = 4 * (gx + 2) - 1
    assert _stream.groups_1d(dev, -(-n // 4), 1)[1] > 1
    rng = km.random.default_rng(77)
    key = rng.bit_generator.state["key"]
    np.testing.assert_array_equal(rng.bits(n).numpy(), ref_blocks(key, 0, n))


def test_large_size_matches_the_reference_at_sampled_positions():
    # at 4 outputs per invocation and 256 per workgroup, a grid past 65535 groups needs 2^26
    # outputs (256 MiB), more than lavapipe's maxStorageBufferRange (128 MiB): the split itself is
    # tested above with workgroups of one invocation; this checks a large buffer end to end
    n = 2**23 + 3
    rng = km.random.default_rng(2024)
    key = rng.bit_generator.state["key"]
    rng.bits(5)
    got = rng.bits(n).numpy()
    idx = np.r_[0:4096, n // 2: n // 2 + 7, n - 4096:n]
    want = philox_ref([(idx // 4 + 2) & 0xFFFFFFFF, (idx // 4 + 2) >> 32, 0 * idx, 0 * idx], key)
    np.testing.assert_array_equal(got[idx], want[idx % 4, np.arange(idx.size)])


# ---------------------------------------------------------------------------------------------
# reproducibility and independence

def test_same_seed_same_numbers_different_seeds_differ():
    a = km.random.default_rng(42).random(1000).numpy()
    b = km.random.default_rng(42).random(1000).numpy()
    c = km.random.default_rng(43).random(1000).numpy()
    np.testing.assert_array_equal(a, b)
    assert np.mean(a == c) < 0.01


def test_spawned_children_and_consecutive_calls_are_independent():
    rng = km.random.default_rng(8)
    x, y = rng.standard_normal(50_000).numpy(), rng.standard_normal(50_000).numpy()
    c1, c2 = (g.standard_normal(50_000).numpy() for g in rng.spawn(2))
    bound = 5 / math.sqrt(50_000)               # five standard errors of a correlation
    for p, q in [(x, y), (c1, c2), (x, c1)]:
        assert abs(np.corrcoef(p, q)[0, 1]) < bound
    # lag-1 correlation within one call (neighbouring outputs share a Philox block)
    assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < bound


def test_seed_sequence_and_generator_pickle():
    seq = np.random.SeedSequence(11)
    a = km.random.default_rng(seq).random(5).numpy()
    b = km.random.default_rng(np.random.SeedSequence(11)).random(5).numpy()
    np.testing.assert_array_equal(a, b)
    rng = km.random.default_rng(3)
    rng.random(9)
    clone = pickle.loads(pickle.dumps(rng))
    np.testing.assert_array_equal(clone.random(6).numpy(), rng.random(6).numpy())
    assert km.random.default_rng(rng) is rng
    assert km.random.default_rng(rng.bit_generator).bit_generator is rng.bit_generator


def test_randomstate_from_dask_style_state_and_module_functions():
    words = np.random.RandomState(0).randint(0, 2**32, size=624, dtype=np.uint32)
    a = kmr.RandomState(words).random_sample((3, 4)).numpy()
    b = kmr.RandomState(words.copy()).random_sample((3, 4)).numpy()
    np.testing.assert_array_equal(a, b)
    km.random.seed(5)
    x = km.random.random(4).numpy()
    km.random.seed(5)
    np.testing.assert_array_equal(km.random.random(4).numpy(), x)
    assert km.random.rand(2, 3).shape == (2, 3) and km.random.randn(4).shape == (4,)
    assert km.random.uniform(2, 3, size=5).shape == (5,)
    assert km.random.normal(size=(2, 2)).shape == (2, 2)
    assert km.random.standard_normal(3).dtype == np.float32
    assert km.random.randint(0, 9, size=3).dtype == DEFAULT_INT


def test_randomstate_methods_dask_calls():
    rs = kmr.RandomState(np.arange(624, dtype=np.uint32))
    # dask asks each method once with size=(0,)*ndim for the chunk's meta
    for method, args, kwargs in [("random_sample", (), {}), ("standard_normal", (), {}),
                                 ("normal", (1.0, 2.0), {}), ("uniform", (0.0, 1.0), {}),
                                 ("randint", (0, 10), {"dtype": "l"})]:
        meta = getattr(rs, method)(*args, size=(0, 0), **kwargs)
        assert meta.shape == (0, 0)
        chunk = getattr(rs, method)(*args, size=(3, 2), **kwargs)
        assert chunk.shape == (3, 2) and isinstance(chunk, km.Array)
    assert rs.randint(0, 10, size=4, dtype="l").dtype == I64
    rs.seed(1)
    assert rs.random(2).shape == (2,)


# ---------------------------------------------------------------------------------------------
# distributions (fixed seeds: each test is deterministic; p > 1e-3 is a check of the method)

def test_uniform_ks_range_and_moments():
    x = km.random.default_rng(2023).random(200_000).numpy().astype(np.float64)
    assert x.min() >= 0.0 and x.max() < 1.0
    assert stats.kstest(x, "uniform").pvalue > 1e-3
    assert abs(x.mean() - 0.5) < 5 * math.sqrt(1 / 12 / x.size)
    assert abs(x.var() - 1 / 12) < 5 * math.sqrt(1 / 180 / x.size)
    # 24 bits per value: every value is a multiple of 2^-24
    assert np.all(x * 2**24 == np.floor(x * 2**24))


def test_uniform_low_high_and_arrays():
    x = km.random.default_rng(1).uniform(-3.0, 5.0, size=100_000).numpy()
    assert x.dtype == np.float32 and x.min() >= -3.0 and x.max() <= 5.0
    assert stats.kstest(x, "uniform", args=(-3.0, 8.0)).pvalue > 1e-3
    y = km.random.default_rng(1).uniform(np.array([0.0, 10.0]), np.array([1.0, 20.0]),
                                         size=(50_000, 2)).numpy()
    assert y[:, 0].min() >= 0 and y[:, 0].max() <= 1 and y[:, 1].min() >= 10
    assert abs(y[:, 1].mean() - 15.0) < 0.1


def test_normal_ks_and_moments():
    z = km.random.default_rng(31337).standard_normal(200_000).numpy().astype(np.float64)
    assert z.dtype == np.float64 and np.isfinite(z).all()
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert abs(z.mean()) < 5 / math.sqrt(z.size)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / z.size)
    assert abs(stats.skew(z)) < 5 * math.sqrt(6 / z.size)
    assert abs(stats.kurtosis(z)) < 5 * math.sqrt(24 / z.size)


def test_normal_loc_scale_scalar_and_array():
    x = km.random.default_rng(4).normal(3.0, 0.5, size=100_000).numpy()
    assert stats.kstest((x - 3.0) / 0.5, "norm").pvalue > 1e-3   # (scipy 1.15 norm.cdf with args: TypeError)
    y = km.random.default_rng(4).normal(loc=np.array([0.0, 10.0]), scale=2.0,
                                        size=(50_000, 2)).numpy()
    assert abs(y[:, 0].mean()) < 0.05 and abs(y[:, 1].mean() - 10) < 0.05
    assert abs(y.std(axis=0) - 2).max() < 0.05
    assert km.random.default_rng(4).normal(np.zeros(3)).shape == (3,)
    np.testing.assert_array_equal(km.random.default_rng(0).normal(5.0, 0.0, size=3).numpy(), 5.0)


@pytest.mark.parametrize("low, high", [(0, 10), (-3, 4), (-2**31, 2**30)])
def test_integers_chi_square(low, high):
    # 10 and 7 are not powers of two; 3 * 2^30 is a range where half the modulo classes would
    # be biased by 1/3 without rejection (binned into 12 equal classes)
    x = km.random.default_rng(17).integers(low, high, size=120_000, dtype=np.int64)
    x = x.numpy().astype(np.int64)
    x = x - low
    k = high - low
    if k == 3 * 2**30:
        x, k = x // 2**28, 12
    assert x.min() >= 0 and x.max() < k
    counts = np.bincount(x, minlength=k)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_integers_ranges_dtypes_and_endpoint():
    rng = km.random.default_rng(6)
    a = rng.integers(5, size=1000).numpy()
    assert a.dtype == I64 and a.min() == 0 and a.max() == 4       # numpy's default: int64
    b = rng.integers(-2, 2, size=1000, endpoint=True).numpy()
    assert b.min() == -2 and b.max() == 2
    c = rng.integers(2**32 - 10, 2**32, size=1000, dtype=np.uint64).numpy()
    assert c.dtype == U64 and c.min() >= 2**32 - 10
    d = rng.integers(-2**31, 2**31, size=1000).numpy()
    assert d.min() < -2**30 and d.max() > 2**30
    assert rng.integers(7, 8, size=3).numpy().tolist() == [7, 7, 7]
    e = rng.integers(-3, 3, size=1000, dtype=np.int32).numpy()
    assert e.dtype == np.int32 and e.min() == -3 and e.max() == 2
    if I64 == np.int64:
        # 64-bit bounds: 32-bit offsets from low, every one of the range reached
        f = rng.integers(2**62, 2**62 + 5, size=1000).numpy()
        assert f.dtype == np.int64 and set(f.tolist()) == set(range(2**62, 2**62 + 5))
        g = rng.integers(2**64 - 2**32, 2**64, size=20000, dtype=np.uint64).numpy()
        assert g.dtype == np.uint64 and g.min() >= 2**64 - 2**32 and g.max() > 2**64 - 2**31
        h = rng.integers(-2**63, -2**63 + 2, size=100).numpy()
        assert set(h.tolist()) == {-2**63, -2**63 + 1}
        with pytest.raises(ValueError, match="more than 2\\*\\*32"):
            rng.integers(0, 2**33, size=3)


@pytest.mark.parametrize("size, shape", [(0, (0,)), (1, (1,)), (5, (5,)), (1023, (1023,)),
                                         ((3, 0), (3, 0)), ((2, 3, 5), (2, 3, 5)), (None, ())])
def test_sizes(size, shape):
    rng = km.random.default_rng(0)
    for x in (rng.random(size), rng.standard_normal(size), rng.integers(0, 3, size=size)):
        assert x.shape == shape
        v = x.numpy()
        assert v.shape == shape and np.isfinite(v.astype(np.float64)).all()


def test_default_dtypes_and_device():
    dev = km.get_device()
    rng = km.random.default_rng(0, device=dev)
    assert rng.random(2).device is dev and rng.random(2).dtype == np.float32
    assert rng.standard_normal(2).dtype == np.float32
    assert rng.integers(0, 2, size=2).dtype == I64
    assert rng.integers(0, 2, size=2, dtype=np.int16).dtype == \
        (np.int16 if dev.limits["storage16"] else np.int32)
    assert rng.bits(2).dtype == np.uint32


def test_float64_request_follows_the_device():
    """dask's Generator asks for float64 by default: float64 where the device has it, else
    float32 (as km.asarray maps float64 data)."""
    g = km.random.default_rng(5)
    want = np.float64 if km.get_device().limits["float64"] else np.float32
    assert g.random(4, dtype=np.float64).dtype == want
    assert g.standard_normal(4, dtype="f8").dtype == want


def _needs_float64():
    if not km.get_device().limits["float64"]:
        pytest.skip("the default device has no float64 (shaderFloat64)")


def _u53(hi, lo):
    """numpy's 53-bit uniform from two words: (hi >> 5) * 2^26 + (lo >> 6), times 2^-53."""
    return (np.floor(hi / 32) * 2.0**26 + np.floor(lo / 64)) * 2.0**-53


def _float64_draws(seed, method, n, per_row):
    """The generator default_rng(seed) after drawing ``n`` float64 values of ``method`` on the
    device, those values, and the reference words they come from, ``per_row`` words a row."""
    _needs_float64()
    rng = km.random.default_rng(seed)
    key = rng.bit_generator.state["key"]
    got = getattr(rng, method)(n, dtype=np.float64).numpy()
    rows = -(-n // (per_row // 2))                  # a row of 2k words gives k values
    return rng, got, ref_blocks(key, 0, per_row * rows).astype(np.float64).reshape(-1, per_row)


def test_float64_uniforms_are_53_bit_and_match_the_reference():
    rng, u, w = _float64_draws(77, "random", 4001, 2)
    want = _u53(w[:, 0], w[:, 1])
    np.testing.assert_array_equal(u, want)
    assert rng.bit_generator.state["counter"] == -(-2 * 4001 // 4)
    big = km.random.default_rng(2024).random(200_000, dtype=np.float64).numpy()
    assert big.min() >= 0.0 and big.max() < 1.0
    assert stats.kstest(big, "uniform").pvalue > 1e-3
    assert not np.all(big * 2**24 == np.floor(big * 2**24))      # finer than float32's grid


def test_float64_normals_match_box_muller_in_double():
    _, got, w = _float64_draws(8, "standard_normal", 3001, 4)
    u0, u1 = _u53(w[:, 0], w[:, 1]), _u53(w[:, 2], w[:, 3])
    r, t = np.sqrt(-2 * np.log(1 - u0)), np.pi * (2 * u1 - 1)
    want = np.stack([r * np.cos(t), r * np.sin(t)], axis=1).reshape(-1)[:3001]
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    z = km.random.default_rng(4).standard_normal(200_000, dtype=np.float64).numpy()
    assert stats.kstest(z, "norm").pvalue > 1e-3


# ---------------------------------------------------------------------------------------------
# bad input

@pytest.mark.parametrize("call, exc, match", [
    (lambda g: g.random(-1), ValueError, "negative"),
    (lambda g: g.random((2, -3)), ValueError, "negative"),
    (lambda g: g.random(2.5), TypeError, "size"),
    (lambda g: g.random(3, dtype=np.float16), TypeError, "float16"),
    (lambda g: g.standard_normal(3, dtype=np.int32), TypeError, "int32"),
    (lambda g: g.integers(5, 5), ValueError, "low >= high"),
    (lambda g: g.integers(6, 5, endpoint=True), ValueError, "low > high"),
    (lambda g: g.integers(0), ValueError, "low >= high"),
    (lambda g: g.integers(0, 10, dtype=np.float32), TypeError, "integer dtype"),
    (lambda g: g.integers(0, 2**31 + 1, dtype=np.int32), ValueError, "does not fit int32"),
    (lambda g: g.integers(0, 2**63 + 1), ValueError, "does not fit int(64|32)"),
    (lambda g: g.integers(-1, 3, dtype=np.uint32), ValueError, "does not fit uint32"),
    (lambda g: g.integers(0.5, 3), TypeError, "low must be an int"),
    (lambda g: g.integers(0, np.array([3, 4])), TypeError, "array-valued"),
    (lambda g: g.normal(0.0, -1.0, size=3), ValueError, "scale must be non-negative"),
    (lambda g: g.uniform(0.0, np.inf, size=3), ValueError, "high must be finite"),
    (lambda g: g.normal(np.zeros(3), size=4), ValueError, "broadcast"),
    (lambda g: g.random(3, out=np.zeros(3)), TypeError, "out="),
])
def test_bad_arguments_raise_clear_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call(km.random.default_rng(0))


def test_bad_seeds_and_bit_generators():
    with pytest.raises(TypeError, match="seed"):
        km.random.default_rng(-1)
    with pytest.raises(TypeError, match="seed"):
        km.random.default_rng("abc")
    with pytest.raises(TypeError, match="Philox"):
        kmr.Generator(np.random.PCG64(0))


def test_too_many_numbers_for_one_buffer():
    dev = km.get_device()
    with pytest.raises(km.DeviceLimitError, match="maxStorageBufferRange"):
        km.random.default_rng(0).random(dev.max_buffer_bytes // 4 + 1)


# ---------------------------------------------------------------------------------------------
# permutations and sampling (numpy's Generator methods)

def test_permutation_is_the_order_of_the_sorted_keys(sort_path):
    # the permutation sorts (high word, low word) keys, two raw words per element, by a stable
    # sort: on the device and on the host alike, so one seed gives one permutation everywhere
    for n in (1, 7, 5000, 70001):
        keys = km.random.default_rng(11).bits((2, n)).numpy()
        perm = km.random.default_rng(11).permutation(n)
        assert perm.dtype == np.int32 and perm.shape == (n,)
        np.testing.assert_array_equal(perm.numpy(), np.lexsort((keys[1], keys[0])))
    assert km.random.default_rng(11).permutation(0).shape == (0,)


def test_permutation_of_arrays_and_shuffle_in_place():
    rng = km.random.default_rng(5)
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    for axis in (0, 1, -1):
        res = rng.permutation(km.asarray(x), axis=axis).numpy()
        assert res.shape == x.shape
        # the slices along the axis, whole, in another order
        got = np.moveaxis(res, axis, 0).reshape(x.shape[axis], -1)
        want = np.moveaxis(x, axis, 0).reshape(x.shape[axis], -1)
        assert sorted(map(tuple, got.tolist())) == sorted(map(tuple, want.tolist()))
    assert sorted(rng.permutation([3, 1, 2]).numpy().tolist()) == [1, 2, 3]
    a = km.asarray(x)
    assert rng.shuffle(a, axis=1) is None
    np.testing.assert_array_equal(np.sort(a.numpy(), axis=1), x)
    for bad, exc in ((lambda: rng.shuffle(np.arange(3)), TypeError),
                     (lambda: rng.shuffle(km.asarray(3.0)), TypeError),
                     (lambda: rng.permutation(km.asarray(3.0)), np.exceptions.AxisError),
                     (lambda: rng.permutation(-1), ValueError),
                     (lambda: rng.permutation(km.asarray(x), axis=3), np.exceptions.AxisError)):
        with pytest.raises(exc):
            bad()


def test_permutation_chi_square_of_orders():
    # 2400 permutations of 4 elements: each of the 24 orders equally likely
    rng = km.random.default_rng(2024)
    codes = [int("".join(map(str, rng.permutation(4).numpy()))) for _ in range(2400)]
    _, counts = np.unique(codes, return_counts=True)
    assert counts.size == 24 and stats.chisquare(counts).pvalue > 1e-3


def test_choice_with_replacement_chi_square(sort_path):
    rng = km.random.default_rng(8)
    x = rng.choice(7, size=70_000).numpy()
    assert x.dtype == np.int32 and x.min() >= 0 and x.max() < 7
    assert stats.chisquare(np.bincount(x, minlength=7)).pvalue > 1e-3
    p = np.array([0.05, 0.25, 0.0, 0.4, 0.3])
    y = rng.choice(5, size=(200, 300), p=p).numpy()
    assert y.shape == (200, 300)
    counts = np.bincount(y.reshape(-1), minlength=5)
    assert counts[2] == 0
    keep = p > 0
    assert stats.chisquare(counts[keep], p[keep] * y.size).pvalue > 1e-3
    z = rng.choice(5, size=1000, p=km.asarray(p)).numpy()       # p as an Array
    assert (z != 2).all()
    pop = km.asarray(np.arange(40.0).reshape(8, 5))
    rows = rng.choice(pop, size=3, axis=0).numpy()
    assert rows.shape == (3, 5) and (rows[:, 1:] - rows[:, :-1] == 1).all()
    assert rng.choice(pop, size=(2, 2), axis=1).shape == (8, 2, 2)
    assert rng.choice(5).shape == ()


def test_choice_without_replacement(sort_path):
    rng = km.random.default_rng(9)
    for n, k in ((10, 10), (1000, 37), (70001, 5000)):
        s = rng.choice(n, size=k, replace=False).numpy()
        assert len(set(s.tolist())) == k and s.min() >= 0 and s.max() < n
    p = np.array([0.1, 0.2, 0.3, 0.4])
    s = rng.choice(4, size=4, replace=False, p=p).numpy()
    assert sorted(s.tolist()) == [0, 1, 2, 3]
    assert 0 not in rng.choice(4, size=3, replace=False, p=[0.0, 0.2, 0.3, 0.5]).numpy()
    # sampling without replacement by weights: the first draw follows p
    first = [int(rng.choice(4, size=2, replace=False, p=p).numpy()[0]) for _ in range(1500)]
    assert stats.chisquare(np.bincount(first, minlength=4), p * 1500).pvalue > 1e-3


@pytest.mark.parametrize("call, exc, match", [
    (lambda g: g.choice(5, size=6, replace=False), ValueError, "larger sample"),
    (lambda g: g.choice(3, p=[0.5, 0.5]), ValueError, "same size"),
    (lambda g: g.choice(3, p=[0.5, 0.6, -0.1]), ValueError, "non-negative"),
    (lambda g: g.choice(3, p=[0.5, 0.2, 0.2]), ValueError, "sum to 1"),
    (lambda g: g.choice(3, p=[[1.0, 0.0, 0.0]]), ValueError, "1-dimensional"),
    (lambda g: g.choice(3, p=[np.nan, 0.5, 0.5]), ValueError, "NaN"),
    (lambda g: g.choice(3, size=3, replace=False, p=[0.5, 0.5, 0.0]), ValueError, "non-zero"),
    (lambda g: g.choice(0, size=2), ValueError, "positive integer"),
    (lambda g: g.choice(km.zeros((0,)), size=2), ValueError, "empty"),
    (lambda g: g.choice(-2), ValueError, "positive"),
    (lambda g: g.choice(km.asarray(3.0)), ValueError, "0-d"),
    (lambda g: g.choice(km.asarray([1.0, 2.0]), p=km.asarray([0.5, 0.6])), ValueError, "sum"),
    (lambda g: g.exponential(-1.0), ValueError, "scale < 0"),
    (lambda g: g.gamma(-1.0), ValueError, "shape < 0"),
    (lambda g: g.gamma(1.0, -2.0), ValueError, "scale < 0"),
    (lambda g: g.gamma(np.ones(3)), TypeError, "array-valued"),
    (lambda g: g.standard_gamma(2.0, dtype=np.float64), TypeError, "float32"),
    (lambda g: g.beta(0.0, 1.0), ValueError, "a <= 0"),
    (lambda g: g.beta(1.0, -1.0), ValueError, "b <= 0"),
    (lambda g: g.poisson(-1.0), ValueError, "lam < 0"),
    (lambda g: g.poisson(2e6), ValueError, "too large"),
    (lambda g: g.poisson(np.nan), ValueError, "NaN"),
    (lambda g: g.multivariate_normal([0.0], [[1.0, 0.0]]), ValueError, "square"),
    (lambda g: g.multivariate_normal([0.0, 0.0], [[1.0]]), ValueError, "same length"),
    (lambda g: g.multivariate_normal([[0.0]], [[1.0]]), ValueError, "1 dimensional"),
    (lambda g: g.multivariate_normal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]],
                                     check_valid="raise"), ValueError, "positive-semidefinite"),
    (lambda g: g.multivariate_normal([0.0], [[1.0]], method="qr"), ValueError, "method"),
    (lambda g: g.standard_exponential(3, method="bogus"), ValueError, "method"),
])
def test_sampling_and_distribution_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call(km.random.default_rng(0))


# ---------------------------------------------------------------------------------------------
# more distributions: KS and chi-square tests with fixed seeds

def test_exponential_ks():
    rng = km.random.default_rng(41)
    x = rng.exponential(2.5, size=200_000).numpy().astype(np.float64)
    assert x.dtype == np.float64 and x.min() >= 0 and np.isfinite(x).all()
    assert stats.kstest(x, "expon", args=(0, 2.5)).pvalue > 1e-3
    y = rng.standard_exponential(100_000, dtype=np.float64).numpy()
    assert y.dtype == np.float64 and stats.kstest(y, "expon").pvalue > 1e-3
    z = rng.exponential(np.array([1.0, 4.0]), size=(50_000, 2)).numpy()
    assert abs(z.mean(axis=0) - [1.0, 4.0]).max() < 0.1


# (float32: below a shape of about 0.1 a visible share of the numbers underflows to 0)
@pytest.mark.parametrize("shape", [0.1, 0.5, 1.0, 2.5, 40.0, 1e4])
def test_gamma_ks(shape):
    x = km.random.default_rng(int(shape * 100) + 1).gamma(shape, 3.0, size=100_000).numpy()
    assert x.dtype == np.float32 and (x >= 0).all() and np.isfinite(x).all()
    assert stats.kstest(x.astype(np.float64), "gamma", args=(shape, 0, 3.0)).pvalue > 1e-3


def test_standard_gamma_zero_shape_and_beta_ks():
    rng = km.random.default_rng(3)
    assert (rng.standard_gamma(0.0, size=4).numpy() == 0).all()
    for a, b in ((0.5, 0.5), (2.0, 5.0), (30.0, 1.5)):
        x = rng.beta(a, b, size=100_000).numpy().astype(np.float64)
        assert (x >= 0).all() and (x <= 1).all()
        assert stats.kstest(x, "beta", args=(a, b)).pvalue > 1e-3


@pytest.mark.parametrize("lam", [0.0, 0.3, 4.0, 9.99, 10.0, 75.0, 4000.0, 9.9e5])
def test_poisson_chi_square(lam):
    x = km.random.default_rng(int(lam) + 7).poisson(lam, size=100_000).numpy()
    assert x.dtype == np.int32 and (x >= 0).all()
    if lam == 0:
        assert (x == 0).all()
        return
    # classes of expected count >= 50 (the tails merged), against scipy's pmf
    lo, hi = int(stats.poisson.ppf(1e-4, lam)), int(stats.poisson.ppf(1 - 1e-4, lam))
    edges = np.unique(np.linspace(lo, hi + 1, min(hi - lo + 2, 40)).astype(np.int64))
    cdf = stats.poisson.cdf(edges - 1, lam)
    probs = np.diff(np.concatenate([[0.0], cdf[1:-1], [1.0]]))
    counts = np.histogram(x, bins=np.concatenate([[-np.inf], edges[1:-1], [np.inf]]))[0]
    ok = probs * x.size >= 50
    expected = probs[ok] / probs[ok].sum() * counts[ok].sum()
    assert stats.chisquare(counts[ok], expected).pvalue > 1e-3
    assert abs(x.mean() - lam) < 5 * math.sqrt(lam / x.size)


@pytest.mark.parametrize("method", ["svd", "eigh", "cholesky"])
def test_multivariate_normal_moments(method):
    mean = np.array([1.0, -2.0, 0.5])
    cov = np.array([[2.0, 0.6, 0.2], [0.6, 1.0, -0.3], [0.2, -0.3, 0.5]])
    rng = km.random.default_rng(77)
    x = rng.multivariate_normal(mean, cov, size=(400, 500), method=method)
    assert x.shape == (400, 500, 3) and x.dtype == np.float32
    h = x.numpy().reshape(-1, 3).astype(np.float64)
    np.testing.assert_allclose(h.mean(axis=0), mean, atol=0.01)
    np.testing.assert_allclose(np.cov(h.T), cov, atol=0.02)
    # each coordinate is normal
    assert stats.kstest((h[:, 0] - mean[0]) / math.sqrt(cov[0, 0]), "norm").pvalue > 1e-3
    assert rng.multivariate_normal(mean, cov).shape == (3,)
    with pytest.warns(RuntimeWarning, match="positive-semidefinite"):
        rng.multivariate_normal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]])
