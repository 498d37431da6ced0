"""The stream's two ways to record a dispatch build the same work: ``dispatch`` (every check,
every call) and ``prepare`` + ``dispatch_ready`` (the per-op path, checked once) record the same
Dispatch operation (key, tensors, pipeline, push words), hit the same cached pipeline, and their
batches replay the same recorded command buffer. On the driver, with the results checked."""

import numpy as np
import pytest

from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as S


@pytest.mark.parametrize("n", [1, 64, 1000, 70001])
def test_dispatch_and_dispatch_ready_record_the_same_operation(device, copy_add, n):
    S.synchronize(device)
    st = S._stream(device)
    a = _memory.alloc(device, 4 * n)
    b = _memory.alloc(device, 4 * n)
    try:
        host = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        S.upload(a, host)
        S.synchronize(device)
        push = S.pack("If", n, 0.25)
        groups = S.groups_1d(device, n, 64)
        S.dispatch(device, copy_add, [a, b], groups, push)
        slow = st.ops[-1]
        ready = S.prepare(device, copy_add, groups)
        S.dispatch_ready(device, ready, [a, b], push)
        fast = st.ops[-1]
        assert type(slow) is type(fast) is S.Dispatch
        assert slow.key == fast.key and slow.uids == fast.uids == (a.uid, b.uid)
        assert slow.algo is fast.algo and slow.push == fast.push == push
        pipelines = len(st.pipelines)
        S.synchronize(device)
        np.testing.assert_array_equal(S.download(b, n, np.float32), host + np.float32(0.25))
        # the two ways' batches are one signature: the second submit of either replays
        for record in (lambda: S.dispatch(device, copy_add, [a, b], groups, push),
                       lambda: S.dispatch_ready(device, ready, [a, b], push)) * 2:
            record()
            S.synchronize(device)
        assert len(st.pipelines) == pipelines
        sig = (slow.key,)
        assert sig in st.replays
    finally:
        S.synchronize(device)
        a.release()
        b.release()
