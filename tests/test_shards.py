"""A LogisticRegression fit across several devices of one process (device=[...]): the row
split (plan_shares), the fit against the one-device fit, and its errors. Two handles of the
default device stand for two devices (lavapipe in CI: two Vulkan devices of one driver)."""

import contextlib

import numpy as np
import pytest
from sklearn.datasets import make_classification

import kompute_ml as km
from kompute_ml._runtime import device as _device
from kompute_ml.linear_model import LogisticRegression, _shards


@pytest.fixture(scope="module")
def two_devices():
    first = km.get_device()
    second = _device.Device(first.info)        # a second Vulkan device of the same GPU
    yield first, second
    second.close()


@contextlib.contextmanager
def _speeds(devices, d, K, speeds):
    """The probe's record of each device's speed for (d, K) set to ``speeds`` meanwhile."""
    keys = [(dev, d, K) for dev in devices]
    saved = {k: _shards._probes.get(k) for k in keys}
    _shards._probes.update(zip(keys, speeds))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                _shards._probes.pop(k, None)
            else:
                _shards._probes[k] = v


def test_shares_follow_the_speeds():
    assert _shards.plan_shares(1000, [(1e-6, 0.0), (1e-6, 0.0)]) == [500, 500]
    # a device three times as fast gets three times the rows
    assert _shards.plan_shares(4000, [(3e-6, 0.0), (1e-6, 0.0)]) == [1000, 3000]
    rows = _shards.plan_shares(1001, [(1e-6, 1e-5), (2e-6, 1e-5), (1e-6, 0.0)])
    assert sum(rows) == 1001 and rows[0] > rows[1] and rows[2] > rows[0]
    # a fixed cost past what the fast device alone needs: that device gets nothing
    assert _shards.plan_shares(1000, [(1e-6, 0.0), (1e-7, 1.0)]) == [1000, 0]
    assert _shards.plan_shares(1000, [(1e-7, 1.0), (1e-6, 0.0)]) == [0, 1000]
    # a device 500 times slower would shorten the pass by 0.2 %: not worth waiting for
    assert _shards.plan_shares(10**6, [(1e-9, 5e-5), (5e-7, 0.0)]) == [10**6, 0]
    assert _shards.plan_shares(0, [(1e-6, 0.0), (1e-6, 0.0)]) == [0, 0]
    assert _shards.plan_shares(3, [(1e-6, 0.0)] * 5) == [1, 1, 1, 0, 0]


@pytest.mark.parametrize("speeds", [[], [(0.0, 0.0)], [(1e-6, -1.0)], [(float("nan"), 0.0)]])
def test_bad_speeds(speeds):
    with pytest.raises(ValueError):
        _shards.plan_shares(10, speeds)


def test_probe_measures_each_device(two_devices):
    for dev in two_devices:
        per_row, fixed = _shards.probe(dev, 7, 1)
        assert 0 < per_row < 1e-3 and fixed >= 0
        assert _shards.probe(dev, 7, 1) == (per_row, fixed)       # measured once


@pytest.mark.parametrize("classes,fit_intercept", [(2, True), (3, True), (2, False)])
def test_fit_across_devices_equals_one_device(two_devices, classes, fit_intercept):
    X, y = make_classification(n_samples=3001, n_features=9, n_informative=5,
                               n_classes=classes, random_state=classes)
    one = LogisticRegression(fit_intercept=fit_intercept).fit(X, y)
    # the placement's inputs set to equal speeds with no fixed cost, so that both devices get
    # rows (the measured ones depend on the device: on a GPU, 3001 rows are not worth a second
    # device's fixed cost, and the rule rightly leaves it out)
    K = 1 if classes == 2 else classes
    with _speeds(two_devices, 9, K, [(1e-6, 0.0), (1e-6, 0.0)]):
        both = LogisticRegression(fit_intercept=fit_intercept,
                                  device=list(two_devices)).fit(X, y)
    assert both.device_rows_.sum() == 3001 and (both.device_rows_ > 0).all()
    np.testing.assert_allclose(both.coef_, one.coef_, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(both.intercept_, one.intercept_, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(both.predict(X), one.predict(X))
    assert both.n_iter_[0] == pytest.approx(one.n_iter_[0], abs=2)


def test_a_slower_device_gets_fewer_rows(two_devices):
    """The split follows the speeds the probe measured: the second device's time per row set
    to four times the first's, it holds a fifth of the rows, and the model is unchanged."""
    fast, slow = two_devices
    X, y = make_classification(n_samples=5000, n_features=6, random_state=0)
    with _speeds(two_devices, 6, 1, [(1e-6, 0.0), (4e-6, 0.0)]):
        clf = LogisticRegression(device=[fast, slow]).fit(X, y)
    assert abs(int(clf.device_rows_[1]) - 1000) <= 1
    ref = LogisticRegression().fit(X, y)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-4, atol=1e-5)


def test_fit_across_devices_errors(two_devices):
    X, y = make_classification(n_samples=200, n_features=4, random_state=0)
    with pytest.raises(ValueError, match="solver must be 'auto' or 'lbfgs'"):
        LogisticRegression(solver="adam", device=list(two_devices)).fit(X, y)
    with pytest.raises(ValueError, match="dense host X"):
        LogisticRegression(device=list(two_devices)).fit(km.asarray(X.astype(np.float32)), y)
    with pytest.raises(ValueError, match="names no device"):
        LogisticRegression(device=[]).fit(X, y)
    with pytest.raises(ValueError, match="partial_fit trains on one device"):
        LogisticRegression(device=list(two_devices)).partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="NaN"):
        Xbad = X.copy()
        Xbad[150, 2] = np.nan
        LogisticRegression(solver="lbfgs", device=list(two_devices)).fit(Xbad, y)
