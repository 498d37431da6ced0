"""One device used from several threads at once gives the same results as serial use."""

import threading

import numpy as np

import kompute_ml as km
from kompute_ml import _memory, _stream

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
