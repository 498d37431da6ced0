"""Small new buffers with and without their segment's shared buffer (kp patch 0026), interleaved.

Two sets of small segments in one process, one made with ``Segments.set_shared(True)`` (each
small tensor a range of its segment's one Vulkan buffer), one without (a buffer per tensor, bound
in its segment: the way before the patch). For each size and each set, alternately, in
``--rounds`` rounds: kp's own creation of a small tensor from Python (``Manager.tensor_in_segments``),
``km.asarray(h)`` + synchronize into a new buffer (the pool's cached buffers dropped before each
call, as transfer_sweep.py's "auto new buffer"), into a cached one, and into a cached one after
the same drop and creation on a buffer of another size (transfer_sweep.py's "auto after a drop":
the host's caches as cold as the new buffer's call finds them). Prints the median of the round
medians, µs, the new buffer's ratios to both, and its range over the rounds.

``--creation``: the two sets are both shared, one making its new buffers by the pool's direct
small-buffer step (``memory.direct_small_creation``, session 20), the other the general way.

``--keep``: a user's loop instead of the drop before each call. ``--reps`` times
``keep.append(km.asarray(h)); km.synchronize()`` (every array a new buffer, none given back until
the loop ends) against ``x = km.asarray(h); km.synchronize(); del x`` (the upload itself, into
the buffer the last one gave back), the two loops alternated in ``--rounds`` rounds; per call µs,
median and mean (a loop's total) of the round figures, and their ratios.

    python tools/perf/small_buffer_ab.py [--sizes 1e3,1e4,1e5,2.5e5] [--rounds 5] [--creation]
    python tools/perf/small_buffer_ab.py --keep [--reps 400] [--rounds 7]
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
import transfer_sweep as T  # noqa: E402

import kompute_ml as km  # noqa: E402
from kompute_ml._runtime import kp as K  # noqa: E402
from kompute_ml._runtime import memory as M  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e3,1e4,1e5,2.5e5")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--creation", action="store_true",
                    help="direct small-buffer creation against the general one (both shared)")
    ap.add_argument("--keep", action="store_true",
                    help="a loop keeping each new array against one dropping each")
    ap.add_argument("--reps", type=int, default=400, help="calls per loop (--keep)")
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    dev = km.get_device(); km.asarray(np.ones(4, np.float32)); km.synchronize(dev)
    print(f"device: {dev.name}")
    if args.keep:
        return keep_loops(dev, sizes, args.rounds, args.reps)
    mgr = dev.manager; kpm = K._module()
    pool = M._pool(dev)
    sets = {}
    # name -> (shared, direct small creation)
    variants = {"direct": (True, True), "general": (True, False)} if args.creation else \
        {"shared": (True, True), "own": (False, True)}
    names = tuple(variants)
    for name, (shared, _) in variants.items():
        s = mgr.segments(M.SEGMENT_BYTES); s.set_shared(shared); sets[name] = s
        keep = [mgr.tensor_in_segments(1024, s, True, kpm.TensorTypes.device) for _ in range(4)]
        del keep
    def raw(s, count, reps=400):
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter(); t = mgr.tensor_in_segments(count, s, True, kpm.TensorTypes.device)
            ts.append(time.perf_counter() - t0); del t
        return np.median(ts) * 1e6
    def asarray_new(h, reps=200):
        ts = []
        for _ in range(reps):
            T._drop_cached(dev); t0 = time.perf_counter(); km.asarray(h, device=dev); km.synchronize(dev)
            ts.append(time.perf_counter() - t0)
        return np.median(ts) * 1e6
    def asarray_after_drop(h, reps=200):
        # the control of asarray_new: the same drop and creation before each call, of a buffer of
        # another size, this size's kept (transfer_sweep.py's "auto after a drop")
        ts = []
        for _ in range(reps):
            T._drop_other(dev, h.nbytes)
            t0 = time.perf_counter(); km.asarray(h, device=dev); km.synchronize(dev)
            ts.append(time.perf_counter() - t0)
        return np.median(ts) * 1e6
    def asarray_cached(h, reps=200):
        ts = []
        km.asarray(h, device=dev); km.synchronize(dev)
        for _ in range(reps):
            t0 = time.perf_counter(); km.asarray(h, device=dev); km.synchronize(dev)
            ts.append(time.perf_counter() - t0)
        return np.median(ts) * 1e6
    res = {}
    for rnd in range(args.rounds):
        for n in sizes:
            h = np.ones(n, np.float32)
            for name in names:
                T._drop_cached(dev); pool.segments = sets[name]
                M.direct_small_creation = variants[name][1]
                res.setdefault((n, name, "raw"), []).append(raw(sets[name], n))
                res.setdefault((n, name, "new"), []).append(asarray_new(h))
                res.setdefault((n, name, "cached"), []).append(asarray_cached(h))
                res.setdefault((n, name, "dropped"), []).append(asarray_after_drop(h))
    for n in sizes:
        line = [f"n={n}"]
        for name in names:
            r, nw, c, d = (np.median(res[(n, name, k)]) for k in ("raw", "new", "cached", "dropped"))
            line.append(f"{name}: kp create {r:.2f} new {nw:.1f} cached {c:.1f} ratio {nw/c:.2f} "
                        f"after a drop {d:.1f} ratio {nw/d:.2f} "
                        f"[new {min(res[(n,name,'new')]):.1f}-{max(res[(n,name,'new')]):.1f}]")
        print("  ".join(line), flush=True)


def keep_loops(dev, sizes, rounds, reps):
    """``--keep``: per call µs of a loop keeping each new array and of one dropping each, for
    kompute_ml and, where they load, torch (``torch.from_numpy(h).cuda()``) and CuPy
    (``cupy.asarray(h)``), each call synchronized, the libraries' loops interleaved."""
    from run_all import cuda_sync, load_cuda, to_cuda
    makers = {"kompute_ml": (lambda h: km.asarray(h, device=dev), lambda: km.synchronize(dev))}
    for name, lib in load_cuda().items():
        makers[name] = (lambda h, name=name, lib=lib: to_cuda(name, lib, h), cuda_sync(lib))

    def loop(h, lib, keep):
        make, sync = makers[lib]
        kept, ts = [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            x = make(h)
            sync()
            ts.append(time.perf_counter() - t0)
            if keep:
                kept.append(x)
            del x
        del kept                # (outside the timed calls: the arrays given back at once)
        return np.median(ts) * 1e6, np.mean(ts) * 1e6
    print(f"{reps} calls a loop, {rounds} rounds alternated; µs per call: median [mean]")
    ways = [(lib, keep) for lib in makers for keep in (True, False)]
    for n in sizes:
        h = np.ones(n, np.float32)
        for way in ways:        # warm-up: segments made, the bucket cached
            loop(h, *way)
        got = {way: [] for way in ways}
        for r in range(rounds):
            for way in ways[r % len(ways):] + ways[:r % len(ways)]:
                got[way].append(loop(h, *way))
        fig = {way: [float(np.median([g[i] for g in got[way]])) for i in (0, 1)] for way in ways}
        parts = []
        for lib in makers:
            (kmed, kmean), (dmed, dmean) = fig[(lib, True)], fig[(lib, False)]
            parts.append(f"{lib}: new, kept {kmed:6.1f} [{kmean:6.1f}] into the given-back "
                         f"buffer {dmed:6.1f} [{dmean:6.1f}] ratio {kmed / dmed:.2f} "
                         f"[{kmean / dmean:.2f}]")
        print(f"n={n:>7} ({4 * n} B)  " + "  ".join(parts), flush=True)

if __name__ == "__main__":
    main()
