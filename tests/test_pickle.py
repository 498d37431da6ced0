"""Pickling and copying Arrays and Devices: host round trips, no Vulkan handles crossing."""

import copy
import pickle
import subprocess
import sys

import numpy as np
import pytest

import kompute_ml as km


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.bool_])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (2, 0, 3)])
def test_array_pickle_round_trip(dtype, shape):
    rng = np.random.default_rng(0)
    host = (rng.standard_normal(shape) * 100).astype(dtype)
    a = km.asarray(host)
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype == a.dtype and b.shape == a.shape and b.device is a.device
    np.testing.assert_array_equal(b.numpy(), host)


def test_lazy_array_pickles_its_values():
    a = km.arange(5) * 2 + 1
    assert a.is_lazy
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)).numpy(), np.arange(5) * 2 + 1)


def test_copy_and_deepcopy_are_independent_arrays():
    a = km.asarray([1.0, 2.0, 3.0])
    for b in (copy.copy(a), copy.deepcopy(a)):
        assert b is not a
        b[0] = 10.0
        np.testing.assert_array_equal(a.numpy(), [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(b.numpy(), [10.0, 2.0, 3.0])


def test_device_pickles_to_the_same_device():
    dev = km.get_device()
    assert pickle.loads(pickle.dumps(dev)) is dev
    assert copy.copy(dev) is dev and copy.deepcopy(dev) is dev
    assert copy.deepcopy({"device": dev, "x": km.ones(2)})["device"] is dev


def test_unknown_device_name_raises_naming_it():
    from kompute_ml._runtime.device import _device_from_description
    with pytest.raises(km.DeviceNotFoundError, match="no-such-gpu"):
        _device_from_description(0, "no-such-gpu")


def test_array_from_an_unknown_device_lands_on_the_default():
    from kompute_ml.array import _from_pickle
    a = _from_pickle(np.arange(3, dtype=np.int32), 99, "no-such-gpu")
    assert a.device is km.get_device()
    np.testing.assert_array_equal(a.numpy(), [0, 1, 2])


def test_pickle_and_deepcopy_in_a_fresh_process_print_nothing_to_stderr():
    code = (
        "import copy, pickle, kompute_ml as km\n"
        "a = km.ones(3); d = km.get_device()\n"
        "b = pickle.loads(pickle.dumps(a)); c = copy.deepcopy(a)\n"
        "e = pickle.loads(pickle.dumps(d)); f = copy.deepcopy({'d': d, 'a': a})\n"
        "assert b.tolist() == c.tolist() == [1.0, 1.0, 1.0] and e is d and f['d'] is d\n"
        "del a, b, c, f\n"
        "import gc; gc.collect()\n"
        "print('ok')\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"
    assert "Exception ignored" not in res.stderr and "Traceback" not in res.stderr


def test_pickle_crosses_processes():
    a = km.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    data = pickle.dumps(a)
    code = ("import pickle, sys, kompute_ml as km\n"
            "a = pickle.loads(sys.stdin.buffer.read())\n"
            "print(a.dtype, a.shape, a.sum().item(), a.device is km.get_device())\n")
    res = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr.decode()
    assert res.stdout.decode().split() == ["float32", "(2,", "3)", "15.0", "True"]
    assert b"Exception ignored" not in res.stderr


def test_estimator_with_a_device_clones_and_pickles():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.base import clone
    est = km.LogisticRegression(device=km.get_device())
    assert clone(est).get_params()["device"] is km.get_device()
    assert pickle.loads(pickle.dumps(est)).get_params()["device"] is km.get_device()
    del sklearn


def test_unpickles_onto_the_pinned_default_device(device):
    """A process (or thread) that names its device — as each Dask worker does through
    KOMPUTE_ML_DEVICE — receives Arrays there, not on the device they were sent from."""
    other = km.Device(device.info)          # a second Device object: its own manager and buffers
    try:
        data = pickle.dumps(km.arange(5, dtype=np.float32))
        assert pickle.loads(data).device is device            # not pinned: where it came from
        with km.use_device(other):
            got = pickle.loads(data)
        assert got.device is other
        np.testing.assert_array_equal(got.numpy(), np.arange(5))
    finally:
        other.close()
