"""The array API used from 4 threads at once on one device gives the same results as serial use.

Each worker runs a deterministic mix of fused elementwise expressions, reductions (full and along
an axis), matmuls, indexing and user kernels on its own data; the results are compared with the
same work done serially on the main thread. A fifth pass shares read-only inputs between the
threads (the same realized arrays, the same lazy expression), which exercises the generated-kernel
cache, the pipeline cache and the pool under contention.
"""

import sys
import threading

import numpy as np
import pytest

import kompute_ml as km
from test_threads import AXPY          # y += a * x; bindings 0: x, 1: y

N_THREADS = 4


def _inputs(seed):
    rng = np.random.default_rng(seed)
    m, k, n = (int(v) for v in rng.integers(3, 40, size=3))
    return {
        "a": rng.standard_normal((m, k)).astype(np.float32),
        "b": rng.standard_normal((k, n)).astype(np.float32),
        "v": rng.standard_normal(k).astype(np.float32),
        "i": rng.integers(-50, 50, size=(m, k)).astype(np.int32),
        "s": float(rng.uniform(0.5, 2.0)),
    }


def _work(data, kernel, rounds=6):
    """The array workload of one thread: a list of numpy results (the same on every run)."""
    a, b = km.asarray(data["a"]), km.asarray(data["b"])
    v, iv, s = km.asarray(data["v"]), km.asarray(data["i"]), data["s"]
    out = []
    for r in range(rounds):
        e = km.exp(a * (0.1 * r)) - s * a + km.sqrt(km.abs(a))        # one fused kernel
        out.append(e.numpy())
        out.append(np.asarray(e.sum(axis=0)))
        out.append(float(e.max()))
        out.append(np.asarray((iv * (r + 1) + 3).sum(axis=1)))        # int32 reduction
        out.append(np.asarray(km.argmin(iv - r, axis=0)))
        out.append((a @ b).numpy())                                   # gemm
        out.append((a @ v).numpy())                                   # gemv
        out.append(np.asarray(km.where(a > 0, a, -a)[1:, ::2]))       # fused, then a gather
        if kernel is not None:
            y = km.zeros(v.shape)
            kernel(v, y, grid=v.size, push=(v.size, float(r)))
            out.append(y.numpy())
    return out


def _compare(got, expect):
    assert len(got) == len(expect)
    for g, e in zip(got, expect):
        # identical inputs, kernels and reduction trees: the results are bit-identical
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


def _run_threads(fn, args_per_thread):
    results, errors = [None] * len(args_per_thread), []
    barrier = threading.Barrier(len(args_per_thread))

    def target(i):
        try:
            barrier.wait()                  # start together: maximal overlap
            results[i] = fn(*args_per_thread[i])
        except BaseException as exc:      # reported on the main thread
            errors.append(exc)

    threads = [threading.Thread(target=target, args=(i,)) for i in range(len(args_per_thread))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a worker thread hangs"
    if errors:
        raise errors[0]
    return results


@pytest.fixture(autouse=True)
def _switch_often():
    """Let threads switch every few bytecodes instead of every 5 ms: races show up, if any."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


@pytest.fixture(scope="module")
def axpy():
    from kompute_ml.kernel import Kernel
    return Kernel.from_glsl(AXPY)


def test_four_threads_of_array_work_match_serial(device, axpy):
    datas = [_inputs(seed) for seed in range(N_THREADS)]
    serial = [_work(d, axpy) for d in datas]
    for _ in range(2):
        threaded = _run_threads(_work, [(d, axpy) for d in datas])
        for got, expect in zip(threaded, serial):
            _compare(got, expect)


def test_four_threads_sharing_inputs_match_serial(device):
    data = _inputs(42)
    a, b = km.asarray(data["a"]), km.asarray(data["b"])

    def shared(k, lazy, lazy2):
        # every thread reads (and so realizes) the same lazy arrays: one wins, the others
        # must find the result, never a half-realized array
        if k % 2:
            return [(lazy2 @ b).numpy(), (lazy + k).numpy(), np.asarray(a.T[::-1])]
        return [np.asarray((lazy2 + k).sum(axis=0)), (lazy * k).numpy(), np.asarray((a * k).sum())]

    for r in range(12):
        def fresh():
            lazy = km.tanh(a) * 2.0 + float(r)
            return lazy, lazy * 3.0 - a
        expect = [shared(k, *fresh()) for k in range(N_THREADS)]
        lazy, lazy2 = fresh()
        got = _run_threads(shared, [(k, lazy, lazy2) for k in range(N_THREADS)])
        for g, e in zip(got, expect):
            _compare(g, e)


def test_threads_making_many_expressions_of_one_array(device):
    """Lazy arrays register as readers of their inputs' buffers; 4 threads doing it at once
    (past the pruning threshold of the reader list) must not corrupt that list."""
    a = km.asarray(np.arange(16, dtype=np.float32))

    def many(k):
        keep = []
        for r in range(400):
            keep.append(a * float(r + k))
            if len(keep) > 100:
                del keep[:50]
        return [x.numpy() for x in keep[-3:]]

    got = _run_threads(many, [(k,) for k in range(N_THREADS)])
    for k, outs in enumerate(got):
        for r, out in zip(range(397, 400), outs):
            np.testing.assert_array_equal(out, np.arange(16, dtype=np.float32) * np.float32(r + k))


def test_threads_leave_no_tensors_behind(device, axpy):
    import gc
    # a first use makes the device's lasting scratch buffers (the split-K products' counts and
    # partials); run alone, this test would count them as left behind
    _work(_inputs(99), axpy, 1)
    km.synchronize()
    gc.collect()
    live0 = km.stats()["tensors_live"]
    datas = [_inputs(100 + seed) for seed in range(N_THREADS)]
    _run_threads(_work, [(d, axpy, 2) for d in datas])
    km.synchronize()
    gc.collect()
    assert km.stats()["tensors_live"] == live0
