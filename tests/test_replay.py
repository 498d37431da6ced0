"""Record once, submit many: a repeated batch replays its recorded command buffer (no timing)."""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml import array as ka
from kompute_ml._array import fusion as _fusion
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as _stream

ADD = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(push_constant) uniform P { uint n; float inc; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) a[i] += pc.inc;
}
"""


def _delta(s0, s1, *names):
    return {k: s1[k] - s0[k] for k in names}


def test_repeated_op_records_nothing_new(device):
    """From its third run on, `c = a * b + 1` and a readback of it record no command."""
    rng = np.random.default_rng(0)
    a_host = rng.standard_normal(1000).astype(np.float32)
    b_host = rng.standard_normal(1000).astype(np.float32)
    a = km.asarray(a_host, device=device)
    b = km.asarray(b_host, device=device)
    for _ in range(3):                      # first seen, then kept: replayed from the third on
        (a * b + 1).numpy()
    s0 = km.stats()
    want = a_host.astype(np.float64) * b_host + 1
    for _ in range(10):
        got = (a * b + 1).numpy()
        # atol: a GPU may fuse a * b + 1 into one fma (one rounding); near a * b = -1 that
        # differs from numpy's two roundings by an ulp of a * b, large relative to the result
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    d = _delta(s0, km.stats(), "ops_recorded", "replays", "submits", "dispatches")
    assert d == {"ops_recorded": 0, "replays": 10, "submits": 10, "dispatches": 10}


def test_replay_carries_new_push_values_and_host_data(device, configure):
    """A replay is keyed by push words (new scalars record anew) and re-reads staging memory.

    The buffer is one whose device memory the host cannot write in place (as a discrete GPU's
    without resizable BAR): its upload and download are commands of the replayed batch."""
    spirv = km.compile_glsl(ADD)
    n = 100
    configure(direct_writes=False)
    _memory.free_all_blocks(device)         # (a cached buffer of this size may be writable)
    buf = _memory.alloc(device, 4 * n)
    assert buf._block.direct is None
    try:
        def step(x, inc):
            _stream.upload(buf, x)
            _stream.dispatch_1d(device, spirv, [buf], n, push=_stream.pack("If", n, inc))
            return _stream.download(buf, n, np.float32)

        for k in range(3):
            x = np.full(n, float(k), np.float32)
            np.testing.assert_array_equal(step(x, 1.0), x + 1)
        s0 = km.stats()
        x = np.arange(n, dtype=np.float32)              # new data through the same command buffer
        np.testing.assert_array_equal(step(x, 1.0), x + 1)
        d = _delta(s0, km.stats(), "ops_recorded", "replays")
        assert d == {"ops_recorded": 0, "replays": 1}
        s0 = km.stats()
        np.testing.assert_array_equal(step(x, 2.5), x + 2.5)   # other push words: recorded
        d = _delta(s0, km.stats(), "ops_recorded", "replays")
        assert d == {"ops_recorded": 3, "replays": 0}
    finally:
        buf.release()


def test_scalar_readback_replays(device):
    """`float(x.sum())` repeated replays its dispatches and readback as one recorded batch."""
    x_host = np.arange(5000, dtype=np.float32) / 5000
    x = km.asarray(x_host, device=device)
    for _ in range(3):
        float((x * x).sum())
    s0 = km.stats()
    for _ in range(5):
        assert abs(float((x * x).sum()) - float((x_host.astype(np.float64) ** 2).sum())) < 1e-2
    d = _delta(s0, km.stats(), "ops_recorded", "replays", "submits")
    assert d["ops_recorded"] == 0 and d["replays"] == d["submits"] == 5


def test_dropped_tensor_drops_its_replays(device):
    """When the pool drops a tensor, the command buffers recorded over it are dropped too."""
    spirv = km.compile_glsl(ADD)
    buf = _memory.alloc(device, 256)
    uid = buf.uid
    for _ in range(2):
        _stream.dispatch_1d(device, spirv, [buf], 64, push=_stream.pack("If", 64, 1.0))
        km.synchronize(device)
    st = _stream._stream(device)
    kept = [sig for sig in st.by_uid[uid] if sig in st.replays]
    assert kept
    buf.release()
    _memory.free_all_blocks(device)
    assert not any(sig in st.replays for sig in kept) and uid not in st.by_uid


ADD2 = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(set = 0, binding = 1) buffer B { float b[]; };
layout(push_constant) uniform P { uint n; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) a[i] += b[i];
}
"""


def test_buffer_living_on_forgets_the_keys_of_dropped_ones(device):
    """A buffer bound with many short-lived ones (a reduction's scratch) names only the pipelines
    and batches still kept: each dropped buffer's keys leave the long-lived one's set too (they
    once stayed there, ~200 bytes an op for as long as it lived)."""
    spirv = km.compile_glsl(ADD2)
    keep = _memory.alloc(device, 256)
    uid = keep.uid
    st = _stream._stream(device)
    named = []
    for _ in range(3):
        for _ in range(50):
            fresh = _memory.alloc(device, 256)
            for _ in range(2):               # twice: the batch is seen, then kept for replay
                _stream.dispatch_1d(device, spirv, [keep, fresh], 64, push=_stream.pack("I", 64))
                km.synchronize(device)
            fresh.release()
        live = set(st.pipelines) | set(st.replays) | set(st.seen)
        assert st.by_uid[uid] and st.by_uid[uid] <= live
        _memory.free_all_blocks(device)      # the pool drops the fresh buffers' tensors
        named.append(len(st.by_uid.get(uid, ())))
    # every key naming `keep` also named a fresh buffer, all dropped now
    assert named == [0, 0, 0], named
    assert set(st.key_uids) <= set(st.pipelines) | set(st.replays) | set(st.seen)
    keep.release()
    _memory.free_all_blocks(device)
    assert uid not in st.by_uid

def test_repeated_expression_skips_trace_and_codegen(device):
    """A repeated `c = a * b + 1` is realized from its signature: no trace, codegen or compile,
    no new pipeline, and its submit replays; new scalar values still reach the kernel."""
    rng = np.random.default_rng(1)
    a_host = rng.standard_normal(1000).astype(np.float32)
    b_host = rng.standard_normal(1000).astype(np.float32)
    a = km.asarray(a_host, device=device)
    b = km.asarray(b_host, device=device)
    for _ in range(3):
        (a * b + 1).numpy()
    kernels = _fusion.cached_kernels()
    s0 = km.stats()
    for k in range(5):
        got = (a * b + 1).numpy()
        np.testing.assert_allclose(got, a_host.astype(np.float64) * b_host + 1,
                                   rtol=1e-6, atol=1e-6)
    d = _delta(s0, km.stats(), "traces", "fast_realizations", "shader_compiles",
               "pipelines_created", "ops_recorded", "replays")
    assert d == {"traces": 0, "fast_realizations": 5, "shader_compiles": 0,
                 "pipelines_created": 0, "ops_recorded": 0, "replays": 5}
    assert _fusion.cached_kernels() == kernels
    s0 = km.stats()
    for k in range(3):                        # other scalar values: same kernel, new push words
        np.testing.assert_allclose((a * b + (2.5 + k)).numpy(),
                                   a_host.astype(np.float64) * b_host + 2.5 + k,
                                   rtol=1e-6, atol=1e-5)
    d = _delta(s0, km.stats(), "traces", "fast_realizations", "shader_compiles")
    assert d == {"traces": 0, "fast_realizations": 3, "shader_compiles": 0}


def test_fast_path_keeps_aliasing_order_and_sharing_apart(device):
    """Signatures that differ only in which operands alias, in argument order or in a shared
    subexpression never take each other's kernels."""
    x_host = np.arange(1, 9, dtype=np.float32)
    y_host = x_host[::-1].copy()
    x, y = km.asarray(x_host, device=device), km.asarray(y_host, device=device)
    for _ in range(2):                        # the second round runs on the fast path
        np.testing.assert_array_equal((x - y).numpy(), x_host - y_host)
        np.testing.assert_array_equal((y - x).numpy(), y_host - x_host)
        np.testing.assert_array_equal((x - x).numpy(), np.zeros(8, np.float32))
        np.testing.assert_array_equal((2.0 - x).numpy(), 2 - x_host)
        np.testing.assert_array_equal((x - 2.0).numpy(), x_host - 2)
        t = x * 3.0                           # read twice: a shared subexpression (traced)
        np.testing.assert_array_equal((t + t).numpy(), x_host * 6)
        u, v = x * 3.0, x * 5.0               # the same shape of tree, distinct scalars
        np.testing.assert_array_equal((u + v).numpy(), x_host * 8)


def test_realized_subexpression_sends_its_parents_back_to_the_trace(device):
    """A lazy parent built before its child was realized keeps numpy's eager values when an
    input is then written in place (the fast path's flattened operands are stale by then)."""
    x_host = np.arange(8, dtype=np.float32)
    x = km.asarray(x_host, device=device)
    for _ in range(2):
        (x * 2.0 + 1.0).numpy()               # the signature is known to the fast path
    t = x * 2.0
    c = t + 1.0
    t.numpy()                                 # t realized while c still reads it lazily
    s0 = km.stats()
    # a kernel writing x in place (what km.Kernel does): lazy readers of x realize first, but
    # c reads t, not x; from its flattened operands it would read the new x
    buf = ka.writable_buffer_of(x)
    _stream.upload(buf, np.full(8, 100.0, np.float32))
    np.testing.assert_array_equal(c.numpy(), x_host * 2 + 1)
    d = _delta(s0, km.stats(), "fast_realizations", "traces")
    assert d == {"fast_realizations": 0, "traces": 1}


def test_repeated_download_replays_its_copy(device, configure):
    """A download of a buffer read before, with nothing pending, replays the recorded copy to its
    staging memory (nothing recorded, one submit) and returns what the device wrote since; with
    work pending it goes with that work in one batch; a read past the end is a ValueError."""
    configure(direct_reads=False)   # the copy path on any device
    spirv = km.compile_glsl(ADD)
    n = 10007
    buf = _memory.alloc(device, 4 * n)
    try:
        x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
        _stream.upload(buf, x)
        for _ in range(3):
            np.testing.assert_array_equal(_stream.download(buf, n, np.float32), x)
        want = x.copy()
        for k in range(1, 4):
            want += np.float32(1)
            _stream.dispatch_1d(device, spirv, [buf], n, push=_stream.pack("If", n, 1.0))
            km.synchronize(device)
            s0 = km.stats()
            got = _stream.download(buf, n, np.float32)
            d = _delta(s0, km.stats(), "ops_recorded", "replays", "submits", "bytes_downloaded")
            assert d == {"ops_recorded": 0, "replays": 1, "submits": 1, "bytes_downloaded": 4 * n}
            np.testing.assert_array_equal(got, want)
        # pending work goes in the download's batch: one submit, the new values
        _stream.dispatch_1d(device, spirv, [buf], n, push=_stream.pack("If", n, 1.0))
        s0 = km.stats()
        np.testing.assert_array_equal(_stream.download(buf, n - 7, np.float32, 28),
                                      (want + np.float32(1))[7:])
        assert _delta(s0, km.stats(), "submits")["submits"] == 1
        with pytest.raises(ValueError, match="exceed"):
            _stream.download(buf, n, np.float32, buf.nbytes - 4 * n + 4)
    finally:
        buf.release()
