"""km.benchmark: wall and device time of public-API work, on the default device."""

import json
import math

import numpy as np
import pytest

import kompute_ml as km


def test_benchmark_times_lazy_work_on_the_device():
    a = km.asarray(np.arange(1 << 14, dtype=np.float32))
    r = km.benchmark(lambda x: km.exp(x * 0.001) + 1, a, n_repeat=4, n_warmup=1, name="exp")
    assert r.name == "exp"
    assert r.device_name == km.get_device().name
    assert r.wall_times.shape == (4,) and np.all(r.wall_times > 0)
    # lavapipe and GPUs have timestamps: one device time per repeat, each within its wall time's
    # order of magnitude (the device cannot take longer than the call that waited for it, plus
    # the timed submit's own overhead)
    assert r.device_times.shape == (4,) and np.all(r.device_times > 0)
    assert r.device_median < 10 * r.wall_times.max() + 0.01
    d = json.loads(json.dumps(r.to_dict()))
    assert d["n_repeat"] == 4 and d["wall_median_s"] == pytest.approx(r.wall_median)
    assert "exp" in repr(r) and "us" in repr(r)


def test_benchmark_without_device_time_when_the_work_reads_back():
    a = km.ones(1000)
    r = km.benchmark(lambda x: float(x.sum()), a, n_repeat=3, n_warmup=0)
    assert r.wall_times.shape == (3,)
    assert r.device_times.size == 0 and math.isnan(r.device_median)
    assert r.to_dict()["device_median_s"] is None


def test_benchmark_stops_at_max_duration_and_passes_kwargs():
    calls = []

    def f(x, *, scale):
        calls.append(scale)
        return x * scale

    r = km.benchmark(f, km.ones(10), kwargs={"scale": 3.0}, n_repeat=1000, n_warmup=0,
                     max_duration=1e-9)
    assert r.wall_times.size == 1 and r.device_times.size == 1
    assert set(calls) == {3.0}


@pytest.mark.parametrize("kw, msg", [({"n_repeat": 0}, "n_repeat"), ({"n_warmup": -1}, "n_warmup"),
                                     ({"max_duration": 0}, "max_duration")])
def test_benchmark_checks_its_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        km.benchmark(lambda: None, **kw)
    with pytest.raises(TypeError, match="callable"):
        km.benchmark(3)
