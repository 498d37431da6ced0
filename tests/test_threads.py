"""One device used from several threads at once gives the same results as serial use."""

import threading

import numpy as np

import kompute_ml as km
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as _stream
AXPY = """#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; float a; } pc;
void main() {
    uint i = km_global_index();
    if (i >= pc.n) return;
    y[i] += pc.a * x[i];
}
"""


def _work(device, spirv, seed, out, idx):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5000))
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    bx, by = _memory.alloc(device, x.nbytes), _memory.alloc(device, y.nbytes)
    _stream.upload(bx, x)
    _stream.upload(by, y)
    expect = y.copy()
    for k in range(20):
        a = float(k) * 0.5
        _stream.dispatch_1d(device, spirv, [bx, by], n, push=_stream.pack("If", n, a))
        expect += np.float32(a) * x
    out[idx] = (_stream.download(by, n, np.float32), expect)


def test_four_threads_share_a_device(device):
    spirv = km.compile_glsl(AXPY)
    for rnd in range(3):
        out = [None] * 8
        threads = [threading.Thread(target=_work, args=(device, spirv, 100 * rnd + i, out, i))
                   for i in range(8)]
        for t in threads[:4]:
            t.start()
        for t in threads[:4]:
            t.join()
        for t in threads[4:]:
            t.start()
        for t in threads[4:]:
            t.join()
        for got, expect in out:
            np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-5)


def test_four_threads_fitting_give_the_serial_models(device):
    """LogisticRegression fits in 4 threads at once equal the same fits run one after another."""
    import warnings
    from kompute_ml.linear_model import LogisticRegression
    rng = np.random.default_rng(5)
    X = rng.standard_normal((400, 6)).astype(np.float32)
    ys = [(X[:, 0] + 0.3 * X[:, 1] > 0).astype(int), X[:, :4].argmax(axis=1)]
    jobs = [(solver, ys[i % 2], i) for i, solver in enumerate(["adam", "sgd", "lbfgs", "adam",
                                                               "sgd", "lbfgs", "adam", "lbfgs"])]

    def fit(job):
        solver, y, seed = job
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = LogisticRegression(solver=solver, max_iter=5, tol=None, random_state=seed,
                                     device=device).fit(X, y)
        return clf.coef_.copy(), clf.intercept_.copy(), clf.predict_proba(X)

    serial = [fit(job) for job in jobs]
    threaded = [None] * len(jobs)

    def run(i):
        threaded[i] = fit(jobs[i])

    for start in (0, 4):
        threads = [threading.Thread(target=run, args=(i,)) for i in range(start, start + 4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for (c0, b0, p0), (c1, b1, p1) in zip(serial, threaded):
        np.testing.assert_array_equal(c1, c0)
        np.testing.assert_array_equal(b1, b0)
        np.testing.assert_array_equal(p1, p0)
