"""float32 matmul precision: km.set_float32_matmul_precision, matmul(precision=), and the accuracy
of each mode against a float64 reference (on a device without cooperative matrices every mode
computes exactly; the tests that need them skip there, naming why)."""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml import array
from kompute_ml._array import coopmat as _coopmat

MODES = ("highest", "high", "medium")
U = 2.0 ** -24          # float32's unit roundoff


def _coopmat_device():
    dev = km.get_device()
    if not _coopmat.available(dev):
        pytest.skip(f"{dev.name} reports no 16x16x16 float16 cooperative matrix with float32 "
                    f"accumulators (limits['cooperative_matrix_properties']): 'high' and 'medium' "
                    f"run the exact float32 kernel here")
    return dev


def _error(c, a, b, a_is_t=False):
    """max |C - A B| / max (|A| |B|), the reference in float64."""
    a64 = a.astype(np.float64).T if a_is_t else a.astype(np.float64)
    b64 = b.astype(np.float64)
    ref = a64 @ b64
    scale = (np.abs(a64) @ np.abs(b64)).max()
    return float(np.abs(c.astype(np.float64) - ref).max() / scale)


def _tolerance(mode, K):
    # float32's classical bound K u (twice it); "medium": float16's rounding of both operands
    # (2 x 2^-11 relative per product) on top
    return 2 * K * U + (2.0 ** -9 if mode == "medium" else 0.0)


@pytest.fixture(autouse=True)
def _restore_precision():
    yield
    km.config.reset("matmul_precision")


def test_default_is_highest_and_setting_round_trips():
    assert km.get_float32_matmul_precision() == "highest"
    for mode in MODES:
        km.set_float32_matmul_precision(mode)
        assert km.get_float32_matmul_precision() == mode
        assert km.config.get("matmul_precision") == mode
    km.set_float32_matmul_precision("highest")
    with km.config.set(matmul_precision="medium"):
        assert km.get_float32_matmul_precision() == "medium"
    assert km.get_float32_matmul_precision() == "highest"


@pytest.mark.parametrize("bad", ["HIGH", "low", "", None, 1, "default"])
def test_bad_precision_names_the_argument(bad):
    with pytest.raises(ValueError, match="set_float32_matmul_precision: precision must be "
                                         "'highest', 'high' or 'medium'"):
        km.set_float32_matmul_precision(bad)
    assert km.get_float32_matmul_precision() == "highest"
    a = km.ones((2, 2))
    if bad is not None:
        with pytest.raises(ValueError, match="matmul: precision must be"):
            km.matmul(a, a, precision=bad)


def test_environment_variable(monkeypatch):
    from kompute_ml import config
    opt = config.OPTIONS["matmul_precision"]
    assert opt.env == "KOMPUTE_ML_MATMUL_PRECISION"
    assert opt.from_env(None) == "highest"
    assert opt.from_env(" Medium ") == "medium"
    with pytest.raises(ValueError, match="KOMPUTE_ML_MATMUL_PRECISION must be"):
        opt.from_env("fast")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", [(1, 1, 1), (67, 130, 45), (300, 257, 190), (129, 33, 260)])
def test_each_mode_is_accurate(mode, shape):
    M, K, N = shape
    rng = np.random.default_rng(M * K + N)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.uniform(-3, 3, (K, N)).astype(np.float32)
    c = km.matmul(km.asarray(a), km.asarray(b), precision=mode).numpy()
    assert c.dtype == np.float32 and c.shape == (M, N)
    assert _error(c, a, b) <= _tolerance(mode, K)
    # the setting, through @
    km.set_float32_matmul_precision(mode)
    assert np.array_equal((km.asarray(a) @ km.asarray(b)).numpy(), c)


@pytest.mark.parametrize("mode", MODES)
def test_transposed_operand_read_in_place(mode):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((333, 70)).astype(np.float32)
    y = rng.standard_normal((333, 41)).astype(np.float32)
    xd = km.asarray(x)
    c = km.matmul(xd.T, km.asarray(y), precision=mode).numpy()
    assert _error(c, x, y, a_is_t=True) <= _tolerance(mode, 333)
    g = km.matmul(xd.T, xd, precision=mode).numpy()
    assert _error(g, x, x, a_is_t=True) <= _tolerance(mode, 333)


@pytest.mark.parametrize("mode", MODES)
def test_rows_and_columns_of_any_magnitude(mode):
    """float16 holds 65504 at most: the power-of-two scaling per row of A and column of B keeps
    rows of 1e30 and of 1e-30 accurate, each relative to its own size."""
    rng = np.random.default_rng(7)
    M, K, N = 40, 96, 36
    a = rng.standard_normal((M, K)) * np.logspace(-15, 15, M)[:, None]
    b = rng.standard_normal((K, N)) * np.logspace(10, -10, N)[None, :]
    a, b = a.astype(np.float32), b.astype(np.float32)
    c = km.matmul(km.asarray(a), km.asarray(b), precision=mode).numpy()
    assert np.isfinite(c).all()
    ref = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    assert (np.abs(c - ref) / scale).max() <= _tolerance(mode, K)


@pytest.mark.parametrize("mode", ["high", "medium"])
def test_empty_and_zero_operands(mode):
    z = km.matmul(km.zeros((5, 0)), km.zeros((0, 4)), precision=mode).numpy()
    assert z.shape == (5, 4) and not z.any()
    assert km.matmul(km.zeros((0, 3)), km.ones((3, 4)), precision=mode).shape == (0, 4)
    zero_rows = np.ones((6, 8), np.float32)
    zero_rows[2] = 0
    c = km.matmul(km.asarray(zero_rows), km.ones((8, 3)), precision=mode).numpy()
    assert np.array_equal(c, zero_rows @ np.ones((8, 3), np.float32))


def test_other_dtypes_and_vectors_stay_exact():
    rng = np.random.default_rng(3)
    ai = rng.integers(-1000, 1000, (33, 40)).astype(np.int32)
    bi = rng.integers(-1000, 1000, (40, 17)).astype(np.int32)
    assert np.array_equal(km.matmul(km.asarray(ai), km.asarray(bi), precision="medium").numpy(),
                          ai @ bi)
    a = rng.standard_normal((50, 64)).astype(np.float32)
    v = rng.standard_normal(64).astype(np.float32)
    got = km.matmul(km.asarray(a), km.asarray(v), precision="medium").numpy()
    np.testing.assert_allclose(got, a @ v, rtol=1e-5, atol=1e-5)


def test_scale_exponents_match_numpy():
    """gemm_scale.comp (it needs no cooperative matrices): per row of A and column of B, 15 -
    the binary exponent of the largest finite magnitude, clamped to [-63, 63]; 63 for zeros."""
    dev = km.get_device()
    rng = np.random.default_rng(11)
    M, K, N = 70, 2100, 300          # K past one row chunk (32 x the subgroup) and column chunk
    a = (rng.standard_normal((M, K)) * np.logspace(-25, 25, M)[:, None]).astype(np.float32)
    a[3] = 0
    a[4, 7] = np.inf                 # ignored: the finite largest counts
    a[5] = np.float32(1e-40)         # subnormal rows clamp
    b = (rng.standard_normal((K, N)) * np.logspace(10, -10, N)[None, :]).astype(np.float32)
    b[:, 9] = 0

    def want(x, axis):
        x = np.where(np.isfinite(x), np.abs(x), 0).max(axis=axis).astype(np.float64)
        _, ex = np.frexp(x)
        return np.where(x == 0, 63, np.clip(15 - ex, -63, 63))

    for a_trans in (False, True):
        abuf = array.buffer_of(km.asarray(a.T.copy() if a_trans else a))
        bbuf = array.buffer_of(km.asarray(b))
        e = _coopmat._exponents(dev, abuf, bbuf, M, N, K, a_trans)
        got = array.from_buffer(e, (M + N,), np.int32).numpy()
        np.testing.assert_array_equal(got[:M], want(a, 1))
        np.testing.assert_array_equal(got[M:], want(b, 0))


def test_coopmat_path_runs_and_meets_float32_accuracy():
    """On a device with cooperative matrices: "medium" is measurably the float16 product (its
    error is float16's, not float32's), "high" is as accurate as the exact float32 kernel's
    bound, and both match numpy on edges past the 128 x 128 tiles."""
    _coopmat_device()
    rng = np.random.default_rng(1)
    M, K, N = 517, 1000, 389
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    ad, bd = km.asarray(a), km.asarray(b)
    err = {m: _error(km.matmul(ad, bd, precision=m).numpy(), a, b) for m in MODES}
    assert err["medium"] > 10 * err["highest"]
    assert 2.0 ** -18 < err["medium"] <= _tolerance("medium", K)
    # float32's accuracy: within a few of the exact kernel's error, or of float32's rounding
    assert err["high"] <= max(4 * err["highest"], 16 * U)
