"""Where a realized op's wall clock goes on the host: each kp call's time per op, and the Python.

For each case, ``--reps`` calls of the op with a synchronize, timed as a user waits for them; then
the same calls again with every kp call of the library's kp layer (``_runtime/kp.py``'s
``_call``) and the functions of ``--fns`` timed by name inside the op (nested ones are inside
their callers' figures), and a third time under cProfile (its own overhead included: read it for
the shape, not the sum). Cases:

- ``new_kept``: ``c = a * b + k`` over two arrays uploaded fresh, every array kept (a loop that
  keeps its results: the pool hands out new buffers, each needs its descriptor set and batch);
- ``new_dropped``: the same, each dropped (the pool's buffers come back: a replayed batch);
- ``xtv``: ``X.T @ v`` for X of ``--n`` × ``--d`` float32 (a gradient's product, mid-size).

    python tools/perf/host_split.py [--reps 200] [--n 100000] [--d 256] [--only new_kept,xtv]
"""

import argparse
import cProfile
import importlib
import collections
import io
import os
import pstats
import statistics
import time

import numpy as np

import kompute_ml as km
from kompute_ml._runtime import kp as _kpw
from kompute_ml._runtime import stream as _stream


def _cases(args, dev):
    rng = np.random.default_rng(0)
    h = rng.random(4096, dtype=np.float32)
    X = km.asarray(rng.random((args.n, args.d), dtype=np.float32))
    v = km.asarray(rng.random(args.n, dtype=np.float32))
    kept = []

    def new(keep):
        def setup(k):
            return km.asarray(h), km.asarray(h), float(k % 7)

        def call(arg):
            a, b, k = arg
            c = a * b + k
            c._realize()
            km.synchronize(dev)
            if keep:
                kept.append((a, b, c))
        return setup, call

    def xtv():
        def call(_):
            r = X.T @ v
            r._realize()
            km.synchronize(dev)
        return (lambda k: None), call
    return {"new_kept": new(True), "new_dropped": new(False), "xtv": xtv()}, kept


# where a new buffer's op goes besides kp's calls (timed by _call): the pool's miss, kp's direct
# tensor creation, the stream's slow path (a pipeline bound to new buffers), recording, clearing
FNS = ("_runtime.memory:_create,_runtime.kp:tensor_create_in_segments,_runtime.stream:dispatch,"
       "_runtime.stream:_record_into,_runtime.kp:sequence_clear,_runtime.stream:_eval,"
       "_runtime.stream:_submit")


_live = [False]      # timers count only inside the op's call, not in its set-up's uploads


def _timer(fn, name, acc, cnt):
    def timed(*a, **kw):
        if not _live[0]:
            return fn(*a, **kw)
        t = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            acc[name].append(time.perf_counter() - t)
            cnt[name] += 1
    return timed


def _run(setup, call, reps, around=None):
    ts = []
    for k in range(reps):
        arg = setup(k)
        _live[0] = True
        t0 = time.perf_counter()
        if around is None:
            call(arg)
        else:
            around(call, arg)
        ts.append(time.perf_counter() - t0)
        _live[0] = False
    return statistics.median(ts) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--only", default="new_kept,new_dropped,xtv")
    ap.add_argument("--top", type=int, default=18)
    ap.add_argument("--fns", default=FNS, help="module:function pairs timed (comma-separated)")
    args = ap.parse_args()
    dev = km.get_device()
    cases, kept = _cases(args, dev)
    acc, cnt = collections.defaultdict(list), collections.Counter()
    plain = _kpw._call

    def timed_call(action, device_name, fn, *a, **kw):
        if not _live[0]:
            return plain(action, device_name, fn, *a, **kw)
        t = time.perf_counter()
        try:
            return plain(action, device_name, fn, *a, **kw)
        finally:
            name = "kp." + getattr(fn, "__name__", type(fn).__name__)
            acc[name].append(time.perf_counter() - t)
            cnt[name] += 1
    wraps = [(_kpw, "_call", timed_call)]
    for spec in args.fns.split(","):            # module:function, timed wherever it is called
        mod_name, fn_name = spec.split(":")
        mod = importlib.import_module(f"kompute_ml.{mod_name}")
        wraps.append((mod, fn_name, _timer(getattr(mod, fn_name), f"{mod_name.split('.')[-1]}."
                                           f"{fn_name}", acc, cnt)))
    print(f"device: {dev.name}; µs per op: the wall clock, median of {args.reps}; each timed "
          "function: its mean per op [the median of one call] (calls per op)")
    for name in args.only.split(","):
        setup, call = cases[name]
        _run(setup, call, 10)                                   # warm-up
        _stream.reset_stats()
        wall = _run(setup, call, args.reps)
        st = km.stats()
        counts = "  ".join(f"{k} {st[k] / args.reps:.2f}" for k in
                           ("pipelines_created", "ops_recorded", "replays", "submits"))
        acc.clear()
        cnt.clear()
        saved = [(mod, fn_name, getattr(mod, fn_name)) for mod, fn_name, _ in wraps]
        for mod, fn_name, wrapped in wraps:
            setattr(mod, fn_name, wrapped)
        try:
            wall_t = _run(setup, call, args.reps)
        finally:
            for mod, fn_name, fn in saved:
                setattr(mod, fn_name, fn)
        # per op: the mean (every call's time over the ops) and the median of one call
        calls = "  ".join(f"{k} {sum(acc[k]) / args.reps * 1e6:.1f} "
                          f"[{statistics.median(acc[k]) * 1e6:.1f}] ({cnt[k] / args.reps:.2f})"
                          for k in sorted(acc, key=lambda k: sum(acc[k]), reverse=True))
        print(f"{name}: wall {wall:.1f} (timed {wall_t:.1f}); per op: {counts}\n  timed: {calls}",
              flush=True)
        print("  cProfile, per op: own µs, with callees µs, calls, function")
        prof = cProfile.Profile()
        _run(setup, call, args.reps, around=lambda c, a: prof.runcall(c, a))
        kept.clear()            # (kept through the three passes: every pass gets new buffers)
        rows = pstats.Stats(prof, stream=io.StringIO()).stats   # {(file, line, fn): (..)}
        top = sorted(rows.items(), key=lambda kv: kv[1][2], reverse=True)[:args.top]
        for (path, line, fn), (_, ncalls, tottime, cumtime, _) in top:
            where = f"{os.path.basename(path)}:{line}({fn})" if line else fn
            print(f"    {tottime / args.reps * 1e6:8.2f} {cumtime / args.reps * 1e6:9.2f} "
                  f"{ncalls / args.reps:6.2f}  {where}")


if __name__ == "__main__":
    main()
