"""Where the time of a LogisticRegression epoch goes: host recording vs device kernels.

    python tools/perf/logreg_profile.py [--n 200000] [--d 256] [--k 1] [--batch 4096]
                                        [--two | --pair]

One epoch of micro-batch Adam on data already on the device, three ways: the wall clock of
``LogLossProgram.epoch`` (the epoch recorded once, then each run one replayed submit and the
losses read back; also the process CPU time, which on lavapipe counts the driver's threads and is
steadier than the wall clock on a shared machine); the time to record the same steps without
submitting (Python and kp's command recording); and the device time of each kernel from Vulkan
timestamps (kp writes one after every recorded operation, which adds a drain per kernel: the
replayed wall clock is the figure of a step), split into the gradient kernel and the update
kernel where a step is two. It also prints the dispatches per step (a replayed epoch records
none). By default a step is what the rule picks (_loss.step_fused: one dispatch, logreg_step with
FUSED, on a CPU device; two on a GPU); ``--two`` forces the two-dispatch path (logreg_step +
logreg_step_update); ``--pair`` steps with the kernels the micro-batch solvers used before
logreg_step (logreg_grad + logreg_update); ``--ab`` times the one- and the two-dispatch step
interleaved (the one-dispatch step forced where the rule picks two); ``--groups`` / ``--rows``
sweep the step's shape.
A diagnostic (docs/decisions/0003-fused-micro-batch-step.md), not a headline figure. The issue's case:

    python tools/perf/logreg_profile.py --n 1000000 --d 256 --batch 256 [--two | --pair]

and on lavapipe (process CPU per step; --ab 20 interleaves both paths in one process):

    python tools/perf/logreg_profile.py --n 16384 --d 256 --batch 256 [--two] [--ab 20]
"""

import argparse
import statistics
import time

import numpy as np

import kompute_ml as km
from kompute_ml._runtime import stream as _stream
from kompute_ml.linear_model import _loss, _optim


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--k", type=int, default=1, help="logits: 1 (binary) or the class count")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--device", default=None)
    ap.add_argument("--pair", action="store_true",
                    help="step with the full-batch kernels (logreg_grad + logreg_update): the "
                         "micro-batch kernels before logreg_step, for comparison")
    ap.add_argument("--two", action="store_true",
                    help="step with two dispatches (logreg_step + logreg_step_update), the "
                         "fallback of the one-dispatch step")
    ap.add_argument("--ab", type=int, default=0, metavar="EPOCHS",
                    help="also time the one- and the two-dispatch step in one process, their "
                         "replayed epochs interleaved EPOCHS times each (fairer than two runs on "
                         "a shared machine)")
    ap.add_argument("--groups", type=int, default=0,
                    help="a sweep of the step's shape: G workgroups of batch / G rows "
                         "(_loss.STEP_GROUPS_GPU = G and _loss.step_rows at its least, "
                         "ceil(64 / d))")
    ap.add_argument("--rows", type=int, default=0,
                    help="rows per workgroup at least (_loss.step_rows; the rule's otherwise)")
    args = ap.parse_args(argv)
    if args.groups:
        _loss.STEP_GROUPS_GPU = args.groups
        _loss.step_rows = lambda device, d: -(-64 // d)
    if args.rows:
        _loss.step_rows = lambda device, d: args.rows
    dev = km.get_device(args.device)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.n, args.d)).astype(np.float32)
    codes = rng.integers(0, max(2, args.k), args.n).astype(np.uint32)
    sw = np.ones(args.n)
    data = _loss.DeviceDataset(dev, X, codes, sw)
    prog = _loss.LogLossProgram(data, args.k, l2=1e-6, fit_intercept=True, batch_size=args.batch)
    prog.total_weight = float(args.n)
    if args.pair:
        prog.layout = None
    if args.pair or args.two:
        prog.fused = False
    per_step = 1 if prog.fused else 2               # dispatches (and timestamps) per step
    prog.set_state(np.zeros((args.k, args.d + 1), np.float32))
    opt = _optim.make_optimizer("adam", 1e-3, 1.0)
    steps = prog.steps
    # the timed submit (one timestamp per operation) holds at most this many steps
    timed_steps = min(steps, (_stream.MAX_PENDING - 2) // per_step)
    km.synchronize(dev)
    before = km.stats()["dispatches"]
    prog.epoch(opt)                                   # warm-up: pipelines, the recorded epoch
    recorded = km.stats()["dispatches"] - before
    prog.epoch(opt)
    replayed = km.stats()["dispatches"] - before - recorded

    walls, cpus = [], []
    for _ in range(5):
        t0, c0 = time.perf_counter(), time.process_time()
        prog.epoch(opt)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)

    def record(limit=None):
        B = prog.batch_size
        step = 0
        for chunk in data.chunks:
            for offset in range(0, chunk.rows, B):
                if limit is not None and step >= limit:
                    return
                count = min(B, chunk.rows - offset)
                mode, scale, lr, b1, b2, eps = opt.step_push(count)
                prog._step(chunk, offset, count, mode, prog.P + step, scale, lr, b1, b2, eps)
                step += 1

    recs = []
    for _ in range(5):
        t0 = time.perf_counter()
        record()
        recs.append(time.perf_counter() - t0)
        km.synchronize(dev)

    # per-operation device times: timestamps after each op of one submit
    st = _stream._stream(dev)
    with dev.lock:
        _stream._submit(st)
        saved = st.sequence
        seq = dev.manager.sequence(0, 2 * _stream.MAX_PENDING + 2)
        st.sequence = seq
        try:
            record(timed_steps)
            stamps = []
            _stream._submit(st, on_done=lambda s: stamps.extend(s.get_timestamps()))
        finally:
            st.sequence = saved
            seq.destroy()
    period = float(dev.limits.get("timestamp_period_ns") or 1.0) * 1e-9
    d = np.diff(np.asarray(stamps, dtype=np.float64)) * period
    grad, upd = d[0::per_step], d[1::per_step]
    if prog.layout is None:
        layout = "logreg_grad + logreg_update"
    elif prog.fused:
        layout = ("logreg_step FUSED (R=%d rows x %d workgroups, QC=%d; the last workgroup sums "
                  "and steps)" % prog.layout[:3])
    else:
        layout = ("logreg_step (R=%d rows x %d workgroups, QC=%d) + logreg_step_update "
                  "(%d lanes)" % prog.layout)
    print(f"device: {dev.name}; n={args.n} d={args.d} K={args.k} batch={args.batch}: {steps} steps")
    print(f"  kernels: {layout}")
    print(f"  dispatches per step {recorded / steps:.2f} (recorded epoch), "
          f"{replayed} in a replayed epoch; one pipeline barrier before each dispatch")
    print(f"  epoch wall clock          {statistics.median(walls) * 1e3:9.2f} ms "
          f"({statistics.median(walls) / steps * 1e6:.1f} us/step)")
    print(f"  epoch process CPU time    {statistics.median(cpus) * 1e3:9.2f} ms "
          f"({statistics.median(cpus) / steps * 1e6:.1f} us/step; lavapipe's threads included)")
    print(f"  recording only            {statistics.median(recs) * 1e3:9.2f} ms "
          f"({statistics.median(recs) / steps * 1e6:.1f} us/step)")
    print(f"  device, {timed_steps} steps timed    {d.sum() * 1e3:9.2f} ms "
          f"({d.sum() / timed_steps * 1e6:.1f} us/step, a timestamp after each dispatch)")
    if per_step == 1:
        print(f"  device, fused kernel      {np.median(grad) * 1e6:9.1f} us/step (median)")
    else:
        print(f"  device, grad kernel       {np.median(grad) * 1e6:9.1f} us/step (median)")
        print(f"  device, update kernel     {np.median(upd) * 1e6:9.1f} us/step (median)")
    prog.release()
    if args.ab:
        _interleaved(data, args, steps)
    data.release()


def _interleaved(data, args, steps):
    """Replayed epochs of the fused and the two-dispatch step, alternating: per step, the median
    and the least wall clock and process CPU time of each."""
    runs = {}
    for name, fused in (("one dispatch", True), ("two dispatches", False)):
        prog = _loss.LogLossProgram(data, args.k, l2=1e-6, fit_intercept=True,
                                    batch_size=args.batch)
        prog.total_weight = float(args.n)
        # (the one-dispatch step forced where the kernel applies, also where the rule picks two)
        prog.fused = fused and prog.layout is not None and prog.P <= _loss.STEP_FUSED_MAX_PARAMS
        prog.set_state(np.zeros((args.k, args.d + 1), np.float32))
        opt = _optim.make_optimizer("adam", 1e-3, 1.0)
        prog.epoch(opt)                               # recorded
        prog.epoch(opt)
        runs[name] = (prog, opt, [], [])
    for _ in range(args.ab):
        for prog, opt, walls, cpus in runs.values():
            t0, c0 = time.perf_counter(), time.process_time()
            prog.epoch(opt)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
    print(f"  interleaved, {args.ab} replayed epochs each (us/step: median / least):")
    rule = _loss.step_fused(data.device, args.d, args.k,
                            _loss.step_layout(data.device, args.d, args.k, args.batch))
    for name, (prog, _, walls, cpus) in runs.items():
        w = [x / steps * 1e6 for x in walls]
        c = [x / steps * 1e6 for x in cpus]
        label = name + (" (the rule's)" if rule == (name == "one dispatch") else "")
        print(f"    {label:16s} wall {statistics.median(w):8.1f} / {min(w):8.1f}   "
              f"process CPU {statistics.median(c):8.1f} / {min(c):8.1f}")
        prog.release()


if __name__ == "__main__":
    main()
