"""The lock order of kompute_ml/_locks.py, checked at every acquisition under
KOMPUTE_ML_DEBUG_LOCKS=1 (read at import: each case runs in a fresh interpreter). `make
test-validation` runs the whole suite, the threads tests among it, in that mode."""

import os
import subprocess
import sys
import textwrap

from kompute_ml import _locks


def _run(code, debug=True):
    env = dict(os.environ)
    env.pop(_locks.DEBUG_ENV, None)
    if debug:
        env[_locks.DEBUG_ENV] = "1"
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 0, f"exit {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def test_a_lock_taken_against_the_order_raises():
    out = _run('''
    import numpy as np
    import kompute_ml as km
    from kompute_ml import _locks
    from kompute_ml._array import fusion
    dev = km.get_device()
    assert _locks.DEBUG
    with fusion._realize_lock:                  # realize, then device: the order
        with dev.lock:
            assert [l.name for l in _locks.held()] == ["realize", f"device {dev.index}"]
    try:
        with dev.lock:
            with fusion._realize_lock:
                pass
    except _locks.LockOrderError as exc:
        assert "'realize'" in str(exc) and f"'device {dev.index}'" in str(exc), exc
        assert isinstance(exc, km.KomputeMLError) and isinstance(exc, RuntimeError)
        print("refused:", exc)
    else:
        raise AssertionError("no LockOrderError")
    assert _locks.held() == []                  # nothing stays recorded after the refusal
    with dev.lock, dev.lock:                    # a re-entrant lock again: allowed
        pass
    plain = _locks.make("leaf lock", "leaf")
    with plain:
        try:
            plain.acquire()
        except _locks.LockOrderError as exc:
            print("self:", exc)
        else:
            raise AssertionError("a plain lock taken twice must be refused, not deadlock")
    # a try-lock cannot deadlock: not held to the order
    with dev.lock:
        assert fusion._realize_lock.acquire(False)
        fusion._realize_lock.release()
    assert float((km.asarray(np.arange(10, dtype=np.float32)) * 2).sum()) == 90.0
    ''')
    assert "refused:" in out and "self:" in out


def test_two_devices_locks_in_the_order_of_their_keys():
    out = _run('''
    from kompute_ml import _locks
    a = _locks.make("device a", "device", reentrant=True, key=1)
    b = _locks.make("device b", "device", reentrant=True, key=2)
    with a, b:
        pass
    try:
        with b, a:
            pass
    except _locks.LockOrderError as exc:
        print("refused:", exc)
    ''')
    assert "refused:" in out


def test_without_the_debug_mode_locks_are_plain():
    out = _run('''
    import threading
    from kompute_ml import _locks
    assert not _locks.DEBUG
    print(type(_locks.make("x", "leaf")) is type(threading.Lock()),
          type(_locks.make("y", "device", reentrant=True)) is type(threading.RLock()))
    ''', debug=False)
    assert out.split() == ["True", "True"]


def test_an_unknown_rank_is_refused():
    try:
        _locks.make("x", "outermost")
    except ValueError as exc:
        assert "outermost" in str(exc)
    else:
        raise AssertionError("no ValueError")
