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

    python benchmarks/small_buffer_ab.py [--sizes 1e3,1e4,1e5,2.5e5] [--rounds 5] [--creation]
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    dev = km.get_device(); km.asarray(np.ones(4, np.float32)); km.synchronize(dev)
    print(f"device: {dev.name}")
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


if __name__ == "__main__":
    main()
