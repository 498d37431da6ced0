"""No leaks: a long mixed workload keeps tensors, bytes, pipelines and the process RSS flat."""

import gc
import resource

import numpy as np

import kompute_ml as km
from kompute_ml._runtime import stream as _stream
def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2 ** 20


def _mixed_step(i, rng_data):
    a = km.asarray(rng_data[i % 7])
    b = km.asarray(rng_data[(i + 3) % 7])
    c = km.exp(a * 0.01) + b * float(i % 5) - 1.0      # one fused kernel
    s = c.sum()                                           # a reduction
    m = (a.reshape(8, -1) @ b.reshape(-1, 8))             # a matmul
    if i % 50 == 0:                                       # some readbacks, most work stays lazy
        return float(s) + float(m.sum())
    return None


def test_ten_thousand_iterations_stay_flat(device):
    rng = np.random.default_rng(0)
    rng_data = [rng.standard_normal(512).astype(np.float32) for _ in range(7)]
    for i in range(300):                                 # warm-up: compiles, pipelines, pool buckets
        _mixed_step(i, rng_data)
    km.synchronize()
    gc.collect()
    s0, rss0 = km.stats(), _rss_mb()
    for i in range(10_000):
        _mixed_step(i, rng_data)
    km.synchronize()
    gc.collect()
    s1, rss1 = km.stats(), _rss_mb()
    assert s1["tensors_live"] == s0["tensors_live"]
    assert s1["bytes_allocated"] <= s0["bytes_allocated"]
    assert s1["pipelines_created"] - s0["pipelines_created"] <= 8, (s0, s1)
    assert s1["shader_compiles"] == s0["shader_compiles"]
    assert rss1 - rss0 < 64, f"RSS grew from {rss0:.0f} MiB to {rss1:.0f} MiB"
    assert _stream.pipelines_cached(device) <= _stream.MAX_PIPELINES


def test_two_hundred_fits_stay_flat(device):
    """200 fits (mixed solvers, binary and multinomial) keep the pool, pipelines and RSS flat."""
    from kompute_ml.linear_model import LogisticRegression
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 12)).astype(np.float32)
    y2, y3 = (X[:, 0] > 0).astype(int), (X[:, :3].argmax(axis=1))
    configs = [("adam", y2), ("sgd", y3), ("lbfgs", y2), ("adam", y3)]

    def fit(i):
        solver, y = configs[i % len(configs)]
        clf = LogisticRegression(solver=solver, max_iter=3, tol=None, random_state=i,
                                 device=device).fit(X, y)
        assert clf.predict(X[:5]).shape == (5,)

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # ConvergenceWarning at max_iter
        for i in range(20):                      # warm-up
            fit(i)
        km.synchronize()
        gc.collect()
        s0, rss0 = km.stats(), _rss_mb()
        for i in range(200):
            fit(i)
    km.synchronize()
    gc.collect()
    s1, rss1 = km.stats(), _rss_mb()
    assert s1["tensors_live"] == s0["tensors_live"], (s0, s1)
    assert s1["bytes_allocated"] <= s0["bytes_allocated"], (s0, s1)
    assert s1["pipelines_created"] - s0["pipelines_created"] <= 8, (s0, s1)
    assert s1["shader_compiles"] == s0["shader_compiles"]
    assert rss1 - rss0 < 64, f"RSS grew from {rss0:.0f} MiB to {rss1:.0f} MiB"
