"""The stream's states and transitions (stream.STATES, stream.TRANSITIONS): each transition made
by the real operations that make it, on the real driver, the state checked before and after;
and the recorded operations as the small classes the batch holds (Dispatch, SyncDevice,
SyncLocal)."""

import time

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._runtime import memory as _memory
from kompute_ml._runtime import stream as S

N = 3001


def _made(before, event, after):
    """The transition (before, event) was just made and led to ``after``: the table agrees."""
    assert S.TRANSITIONS[(before, event)] == after, (before, event, after)


@pytest.fixture
def st(device):
    S.synchronize(device)
    stream = S._stream(device)
    assert stream.state == S.IDLE
    yield stream
    S.synchronize(device)


@pytest.fixture
def bufs(device):
    a = _memory.alloc(device, 4 * N)
    b = _memory.alloc(device, 4 * N)
    S.upload(a, np.arange(N, dtype=np.float32))
    S.synchronize(device)
    yield a, b
    S.synchronize(device)
    a.release()
    b.release()


def test_record_and_submit(device, st, bufs, copy_add):
    a, b = bufs
    _memory.write(a, np.arange(N, dtype=np.float32))   # its staging, which the copy carries
    S.stage_upload(a)
    assert st.state == S.PENDING and type(st.ops[-1]) is S.SyncDevice
    assert st.ops[-1].uids == (a.uid,) and st.ops[-1].key == ("u", a.uid)
    _made(S.IDLE, "record", S.PENDING)
    S.dispatch_1d(device, copy_add, [a, b], N, push=S.pack("If", N, 2.0))
    op = st.ops[-1]
    assert st.state == S.PENDING and type(op) is S.Dispatch
    assert op.uids == (a.uid, b.uid) and op.key[0] == "d" and op.push == S.pack("If", N, 2.0)
    S.stage_download(b)
    assert type(st.ops[-1]) is S.SyncLocal and st.ops[-1].key == ("l", b.uid)
    _made(S.PENDING, "record", S.PENDING)
    S.flush(device)
    assert st.state == S.IDLE and not st.ops
    _made(S.PENDING, "submit", S.IDLE)
    got = _memory.read(b, N, np.float32)            # the SyncLocal left it in the staging
    np.testing.assert_array_equal(got, np.arange(N, dtype=np.float32) + 2.0)


def test_launch_and_land(device, st, bufs, copy_add, configure):
    configure(early_submit=True)
    a, b = bufs
    push = S.pack("If", N, 1.0)
    for _ in range(2):                              # seen, then recorded for replay
        S.dispatch_1d(device, copy_add, [a, b], N, push=push)
        S.synchronize(device)
    S.dispatch_1d(device, copy_add, [a, b], N, push=push)
    assert st.state == S.IN_FLIGHT and type(st.flight) is S.Flight and not st.ops
    assert type(st.flight.ops[-1]) is S.Dispatch
    _made(S.PENDING, "launch", S.IN_FLIGHT)
    S.stage_download(b)
    assert st.state == S.IN_FLIGHT and len(st.ops) == 1
    _made(S.IN_FLIGHT, "record", S.IN_FLIGHT)
    S.flush(device)
    assert st.state == S.IDLE and st.flight is None
    _made(S.IN_FLIGHT, "submit", S.IDLE)
    np.testing.assert_array_equal(_memory.read(b, N, np.float32),
                                  np.arange(N, dtype=np.float32) + 1.0)


def test_capture(device, st, bufs, copy_add):
    a, b = bufs
    seen = []

    def fn():
        seen.append(st.state)
        S.dispatch_1d(device, copy_add, [a, b], N, push=S.pack("If", N, 3.0))
        seen.append(st.state)

    rec = S.record(device, fn)
    assert seen == [S.CAPTURING, S.CAPTURING] and st.state == S.IDLE
    _made(S.IDLE, "capture", S.CAPTURING)
    _made(S.CAPTURING, "record", S.CAPTURING)
    _made(S.CAPTURING, "end_capture", S.IDLE)
    assert [type(op) for op in rec.ops] == [S.Dispatch]
    _memory.write(a, np.arange(N, dtype=np.float32))
    S.stage_upload(a)                               # pending work: record() submits it first
    assert st.state == S.PENDING
    rec2 = S.record(device, lambda: seen.append(st.state))
    assert seen[-1] == S.CAPTURING and st.state == S.IDLE
    _made(S.PENDING, "capture", S.CAPTURING)
    rec.run()
    np.testing.assert_array_equal(S.download(b, N, np.float32),
                                  np.arange(N, dtype=np.float32) + 3.0)
    rec.release()
    rec2.release()


def test_timed(device, st, bufs, copy_add):
    a, b = bufs
    seen = []

    def fn():
        seen.append(st.state)
        S.dispatch_1d(device, copy_add, [a, b], N, push=S.pack("If", N, 4.0))
        seen.append(st.state)

    seconds = S.device_time(device, fn)
    assert seen == [S.TIMED, S.TIMED] and st.state == S.IDLE
    assert seconds >= 0 or np.isnan(seconds)
    _made(S.IDLE, "time", S.TIMED)
    _made(S.TIMED, "record", S.TIMED)
    _made(S.TIMED, "end_time", S.IDLE)


def _until_recovered(device, st):
    """Submit until the lost work finished (LOST -> submit raises; then LOST -> recover)."""
    raised = 0
    for _ in range(600):
        try:
            S.synchronize(device)
            return raised
        except km.DeviceError as exc:
            assert "is lost" in str(exc), exc
            assert st.state == S.LOST
            raised += 1
            time.sleep(0.05)
    raise AssertionError("the device was still lost after 30 s")


@pytest.mark.parametrize("early", [False, True])
def test_timeout_lost_and_recover(device, st, slow_read, configure, early):
    """A submit whose wait runs out leaves the device LOST (its work still runs); submits raise
    while it runs, and the first after it finished recovers to IDLE. From PENDING (the wait
    of a submit) and from IN_FLIGHT (the wait for a batch submitted early)."""
    configure(early_submit=early)
    n = 1 << 22 if device.info.type != "cpu" else 1 << 12
    push = S.pack("II", n, 60000)
    a = _memory.alloc(device, 4 * n)
    b = _memory.alloc(device, 4 * n)
    try:
        S.upload(a, np.ones(n, np.float32))
        S.synchronize(device)
        if early:
            for _ in range(2):
                S.dispatch_1d(device, slow_read, [a, b], n, push=push)
                S.synchronize(device)
        S.dispatch_1d(device, slow_read, [a, b], n, push=push)
        before = st.state
        assert before == (S.IN_FLIGHT if early else S.PENDING)
        with pytest.raises(km.DeviceError) as info:
            S.synchronize(device, timeout=1e-4)
        if "within" not in str(info.value):
            pytest.skip("the work finished as the wait ran out (the device is not lost)")
        assert st.state == S.LOST and type(st.stuck) is S.Stuck
        _made(before, "timeout", S.LOST)
        if _until_recovered(device, st):
            _made(S.LOST, "submit", S.LOST)
        assert st.state == S.IDLE and st.stuck is None
        _made(S.LOST, "recover", S.IDLE)
    finally:
        _until_recovered(device, st)
        a.release()
        b.release()


# the test that makes each transition (each calls _made, which checks the table's answer)
COVERED = {
    (S.IDLE, "record"): "test_record_and_submit",
    (S.PENDING, "record"): "test_record_and_submit",
    (S.PENDING, "submit"): "test_record_and_submit",
    (S.PENDING, "launch"): "test_launch_and_land",
    (S.IN_FLIGHT, "record"): "test_launch_and_land",
    (S.IN_FLIGHT, "submit"): "test_launch_and_land",
    (S.IDLE, "capture"): "test_capture",
    (S.PENDING, "capture"): "test_capture",
    (S.CAPTURING, "record"): "test_capture",
    (S.CAPTURING, "end_capture"): "test_capture",
    (S.IDLE, "time"): "test_timed",
    (S.TIMED, "record"): "test_timed",
    (S.TIMED, "end_time"): "test_timed",
    (S.PENDING, "timeout"): "test_timeout_lost_and_recover",
    (S.IN_FLIGHT, "timeout"): "test_timeout_lost_and_recover",
    (S.LOST, "submit"): "test_timeout_lost_and_recover",
    (S.LOST, "recover"): "test_timeout_lost_and_recover",
}


def test_every_transition_has_its_test():
    """Every transition of the table is made by a test of this file, every state is in it."""
    assert set(COVERED) == set(S.TRANSITIONS)
    assert all(callable(globals().get(name)) for name in COVERED.values())
    assert set(S.STATES) == {a for a, _ in S.TRANSITIONS} | set(S.TRANSITIONS.values())
