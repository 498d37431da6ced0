"""Full-batch LogisticRegression on a GPU: per-evaluation device time and fit wall clocks.

    python tools/perf/logreg_fullbatch.py [--sizes 1000000x256x2,200000x128x10] [--out F.json]
    python tools/perf/logreg_fullbatch.py --profile --sizes 200000x64x2,100000x256x2

With --newton, per size only :func:`newton_passes` (numpy, no device). With --profile, per size only :func:`fit_profile`: a device-data fit's counts per evaluation and
its time per L-BFGS iteration split into device round trips, evaluation host work, the driver's
host work, plus the fixed per-fit cost.

Otherwise, per size (make_classification, standardized; 20,000 held-out rows):
- device time of one loss + gradient evaluation (Vulkan timestamps): the micro-batch kernel
  pair (``_loss.LogLossProgram``, the old full-batch path) vs the one-pass kernels: the tiled
  ``logreg_fused.comp`` and ``logreg_lanes.comp`` swept over lanes per row, rows in flight and
  workgroups (one line per layout: device ms and GB/s); the default layout's time, and the
  wall clock of one evaluation (upload W, two dispatches, one download);
- micro-batch Adam (batch 256): wall time per step with the epoch recorded once and replayed,
  and with every step recorded (the earlier path);
- upload of X: the first of a shape (creates the kp tensor: allocating and touching 2 x X's
  bytes of device and staging memory) and the second (the pooled buffer, as a fit pays);
- ``fit`` wall clock: kompute_ml ``solver='auto'`` from host numpy and from device data
  (``km.asarray``), median of 3 after a warm-up fit of the same shape; its iterations;
- scikit-learn ``LogisticRegression(max_iter=300)`` (lbfgs, all cores);
- torch ``optim.LBFGS`` (strong Wolfe) on the full batch, upload of X inside the timing
  (where CUDA is available), stopping at max|grad| <= 1e-4 or 100 iterations;
with held-out accuracies. JSON lines to ``--out``.
"""

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),   # tools/perf, then benchmarks/ (_common, run_all)
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")]
import _common  # noqa: E402  (timing)
from _common import torch_lbfgs  # noqa: E402

N_TEST = 20000


def make_problem(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    m = n + N_TEST
    centers = rng.standard_normal((k, d)).astype(np.float32) * (2.0 / np.sqrt(d) * 4)
    y = rng.integers(0, k, m)
    X = rng.standard_normal((m, d), dtype=np.float32)
    X += centers[y]
    mu, sd = X[:n].mean(0), X[:n].std(0) + 1e-6
    X -= mu
    X /= sd
    return X[:n], X[n:], y[:n], y[n:]


med = _common.timed


def eval_times(km, dev, Xtr, ytr, k):
    from kompute_ml._runtime import stream as _stream
    from kompute_ml.linear_model import _fullbatch, _loss
    n, d = Xtr.shape
    K = 1 if k == 2 else k
    sw = np.ones(n)
    W = np.zeros((K, d + 1))
    out = {}
    data = _loss.DeviceDataset(dev, Xtr, ytr, sw)
    old = _loss.LogLossProgram(data, K, l2=1.0 / n, fit_intercept=True)
    old.total_weight = float(n)
    old.loss_gradient(W)

    def rec_old():
        for i, c in enumerate(data.chunks):
            used = old._grad(c, 0, c.rows, accumulate=i > 0)
        old._update(used, _loss.MODE_GRADIENT, old.P, 1.0 / n)
    out["old_device_ms"] = 1e3 * min(_stream.device_time(dev, rec_old) for _ in range(5))
    out["old_wall_ms"] = 1e3 * med(lambda: old.loss_gradient(W), 10)[0]
    old.release()
    data.release()
    # the first upload of a shape creates X's kp tensor (device memory and its staging memory,
    # allocated and touched: most of the time at 1 GB); the fit reuses the pooled buffer, so the
    # second upload is what a fit from numpy pays
    for key in ("upload_cold_s", "upload_warm_s"):
        t0 = time.perf_counter()
        dd = _fullbatch.DenseDataset(dev, Xtr, ytr, sw)
        km.synchronize(dev)
        out[key] = time.perf_counter() - t0
        if key == "upload_cold_s":
            dd.release()
    out["layouts"] = sweep(dev, dd, K, W, n, d)
    best = min(out["layouts"], key=lambda r: r["device_ms"])
    out["best_layout"] = best
    fb = _fullbatch.FusedLogLoss(dd, K, l2=1.0 / n, fit_intercept=True)
    fb.total_weight = float(n)
    fb.loss_gradient(W)
    out["layout"] = fb.lay
    out["groups"] = fb.groups
    out["fused_device_ms"] = 1e3 * min(_stream.device_time(dev, lambda: fb.record(False))
                                       for _ in range(5))
    out["fused_check_device_ms"] = 1e3 * min(_stream.device_time(dev, lambda: fb.record(True))
                                             for _ in range(3))
    out["fused_wall_ms"] = 1e3 * med(lambda: fb.loss_gradient(W), 20)[0]
    out["bytes_per_pass"] = 4 * n * d
    out["fused_GBps"] = 4 * n * d / (out["fused_device_ms"] * 1e-3) / 1e9
    fb.release()
    dd.release()
    return out


def micro_step_times(dev, Xtr, ytr, k, batch=256, epochs=3):
    """Wall time per micro-batch Adam step: an epoch recorded once, then replayed (one submit
    per epoch), against recording every step (the path before replay)."""
    from kompute_ml.linear_model import _loss, _optim
    n, d = Xtr.shape
    K = 1 if k == 2 else k
    sw = np.ones(n)
    out = {}
    data = _loss.DeviceDataset(dev, Xtr, ytr, sw)
    try:
        for replay in (True, False):
            prog = _loss.LogLossProgram(data, K, l2=1.0 / n, fit_intercept=True,
                                        batch_size=batch)
            prog.total_weight = float(n)
            prog.replay = replay
            opt = _optim.make_optimizer("adam", 0.05, 1.0)
            prog.set_state(np.zeros((K, d + 1)))
            rng = np.random.default_rng(0)
            data.shuffle(rng)
            prog.epoch(opt)                       # records (replay) / warms the pipelines
            times = []
            for _ in range(epochs if replay else 1):
                data.shuffle(rng)
                t0 = time.perf_counter()
                prog.epoch(opt)
                times.append(time.perf_counter() - t0)
            key = "replayed" if replay else "recorded"
            out[f"adam_{key}_us_per_step"] = 1e6 * min(times) / prog.steps
            if replay:
                out["adam_steps_per_epoch"] = prog.steps
            prog.release()
    finally:
        data.release()
    return out


def fit_profile(km, Xtr, ytr, reps=5):
    """Where a device-data fit's time goes, per L-BFGS iteration, counted without timing first.

    ``LogisticRegression().fit(km.asarray(X), y)`` (solver='auto', full batch), the fastest of
    ``reps`` after a warm-up: iterations, evaluations, submits (stream submits + replays),
    dispatches recorded, bytes up and down per evaluation; then the wall clock split into the
    device round trips (kp's submit + wait: kernels, copies and the fence), the host work of the
    evaluations (writing W, reading the gradient, the objective's sums), the L-BFGS driver's host
    work (scipy and the wrapper) and the fixed cost outside the minimizer (validation, labels,
    weights, meta upload, buffers); and the host parts again in this thread's CPU time.
    """
    from kompute_ml._runtime import kp as _kp
    from kompute_ml._runtime import stream as _stream
    from kompute_ml.linear_model import LogisticRegression, _fullbatch, _optim
    Xd = km.asarray(Xtr)
    LogisticRegression().fit(Xd, ytr)
    T = {}
    kp_eval, lg, mini = _kp.sequence_eval, _fullbatch.FusedLogLoss.loss_gradient, \
        _optim.minimize_lbfgs

    def timed(key, fn, count=None):
        def wrapper(*args, **kwargs):
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                T[key] = T.get(key, 0.0) + time.perf_counter() - t0
                T[key + "_cpu"] = T.get(key + "_cpu", 0.0) + time.thread_time() - c0
                if count:
                    T[count] = T.get(count, 0) + 1
        return wrapper
    best = None
    try:
        _kp.sequence_eval = timed("submit_wait", kp_eval, "submits")
        _fullbatch.FusedLogLoss.loss_gradient = timed("evals", lg, "nfev")
        _optim.minimize_lbfgs = timed("minimize", mini)
        for _ in range(reps):
            T.clear()
            km.synchronize()
            _stream.reset_stats()
            t0, c0 = time.perf_counter(), time.thread_time()
            clf = LogisticRegression().fit(Xd, ytr)
            T["fit"] = time.perf_counter() - t0
            T["fit_cpu"] = time.thread_time() - c0
            T["stats"] = km.stats()
            T["nit"] = int(clf.n_iter_[0])
            if best is None or T["fit"] < best["fit"]:
                best = dict(T)
    finally:
        _kp.sequence_eval = kp_eval
        _fullbatch.FusedLogLoss.loss_gradient = lg
        _optim.minimize_lbfgs = mini
    s, nit, nfev = best["stats"], best["nit"], best["nfev"]
    ms = 1e3 / nit
    return {
        "fit_ms": round(1e3 * best["fit"], 2), "iterations": nit, "evaluations": nfev,
        # kp submits (stream batches, replayed or not, and recorded sequences), not the stream's
        # counters: a replayed batch counts as a submit and a replay there, a recorded one as a replay
        "submits_per_evaluation": round(best["submits"] / nfev, 3),
        "dispatches_recorded": s["dispatches"],
        "bytes_down_per_evaluation": round(s["bytes_downloaded"] / nfev, 1),
        "per_iteration_ms": round(best["minimize"] * ms, 3),
        "submit_wait_ms": round(best["submit_wait"] * ms, 3),
        "eval_host_ms": round((best["evals"] - best["submit_wait"]) * ms, 3),
        "driver_host_ms": round((best["minimize"] - best["evals"]) * ms, 3),
        "fixed_ms": round(1e3 * (best["fit"] - best["minimize"]), 2),
        # the same split in this thread's CPU time (robust on a loaded machine; kp's fence
        # poll spins in submit_wait)
        "eval_host_cpu_ms": round((best["evals_cpu"] - best["submit_wait_cpu"]) * ms, 3),
        "driver_host_cpu_ms": round((best["minimize_cpu"] - best["evals_cpu"]) * ms, 3),
        "fixed_cpu_ms": round(1e3 * (best["fit_cpu"] - best["minimize_cpu"]), 2),
    }


def newton_passes(X, y, C=1.0):
    """Passes over X to convergence of the multinomial objective (float64 numpy, the same
    objective as the device's): L-BFGS-B (one pass per function + gradient evaluation) vs
    Newton-CG / trust-region Newton-CG with Hessian-vector products (at best one pass each, as a
    fused kernel would do them). Decides whether an on-device Hv is worth a kernel."""
    import scipy.optimize
    from scipy.special import logsumexp, softmax
    n, d = X.shape
    K = int(y.max()) + 1
    Y = np.eye(K)[y]
    Xb = np.hstack([X, np.ones((n, 1))])
    l2 = 1.0 / (C * n)
    count = {"fg": 0, "hv": 0}

    def fg(w):
        count["fg"] += 1
        W = w.reshape(K, d + 1)
        Z = Xb @ W.T
        f = (logsumexp(Z, axis=1) - (Z * Y).sum(1)).mean() + 0.5 * l2 * (W[:, :-1] ** 2).sum()
        G = (softmax(Z, axis=1) - Y).T @ Xb / n
        G[:, :-1] += l2 * W[:, :-1]
        return f, G.ravel()

    def hvp(w, v):
        count["hv"] += 1
        W, V = w.reshape(K, d + 1), v.reshape(K, d + 1)
        Pr = softmax(Xb @ W.T, axis=1)
        R = Xb @ V.T
        H = (Pr * R - Pr * (Pr * R).sum(1, keepdims=True)).T @ Xb / n
        H[:, :-1] += l2 * V[:, :-1]
        return H.ravel()
    rows = []
    for method, opts in (("L-BFGS-B", {"maxiter": 1000, "gtol": 1e-4,
                                       "ftol": 64 * float(np.finfo(np.float64).eps)}),
                         ("Newton-CG", {"xtol": 1e-8}), ("trust-ncg", {"gtol": 1e-4})):
        count.update(fg=0, hv=0)
        extra = {} if method == "L-BFGS-B" else {"hessp": hvp}
        res = scipy.optimize.minimize(fg, np.zeros(K * (d + 1)), jac=True, method=method,
                                      options=opts, **extra)
        rows.append({"method": method, "iterations": int(res.nit), "fg": count["fg"],
                     "hv": count["hv"], "passes": count["fg"] + count["hv"],
                     "objective": float(res.fun)})
    return rows


def sweep(dev, dd, K, W, n, d):
    """Device time of one pass (kernel + the partials' sum) for several layouts: the tiled
    logreg_fused.comp and logreg_lanes.comp over lanes per row, rows in flight and workgroups."""
    from kompute_ml._runtime import stream as _stream
    from kompute_ml.linear_model import _fullbatch
    configs = [("tiles", _fullbatch.layout(dev, d, K), None)]
    sg = int(dev.subgroup_size or 0)
    for lanes in sorted({min(sg, 32), min(sg, 16)}):
        for unroll in (1, 2, 4):
            lay = _fullbatch.lanes_layout(dev, d, K, lanes=lanes, unroll=unroll)
            for groups in (264, 528, 1056, 2112):
                if lay is not None:
                    configs.append((f"lanes L={lanes} U={unroll} groups={groups}", lay, groups))
    rows = []
    for name, lay, groups in configs:
        if lay is None:
            continue
        try:
            fb = _fullbatch.FusedLogLoss(dd, K, l2=1.0 / n, fit_intercept=True, layout_=lay,
                                         groups=groups)
        except ValueError:
            continue
        fb.total_weight = float(n)
        f0, g0 = fb.loss_gradient(W)              # compile, bind; the check pass
        ms = 1e3 * min(_stream.device_time(dev, lambda: fb.record(False)) for _ in range(5))
        row = {"layout": name, "groups": fb.groups, "device_ms": round(ms, 4),
               "GBps": round(4 * n * d / (ms * 1e-3) / 1e9, 1), "loss": f0}
        print("   ", json.dumps(row), flush=True)
        rows.append(row)
        fb.release()
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000000x256x2,200000x128x10,100000x512x2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--skip-old", action="store_true")
    ap.add_argument("--newton", action="store_true",
                    help="only passes over X to convergence: L-BFGS vs Newton-CG (numpy)")
    ap.add_argument("--profile", action="store_true",
                    help="only the per-iteration profile of a device-data fit (fit_profile)")
    args = ap.parse_args(argv)
    import kompute_ml as km
    from kompute_ml.linear_model import LogisticRegression
    from sklearn.linear_model import LogisticRegression as Sk
    try:
        import torch
        torch = torch if torch.cuda.is_available() else None
    except ImportError:
        torch = None
    dev = km.get_device()
    print(f"device: {dev.name}", flush=True)
    for spec in args.sizes.split(","):
        n, d, k = (int(v) for v in spec.split("x"))
        Xtr, Xte, ytr, yte = make_problem(n, d, k)
        row = {"n": n, "d": d, "classes": k}
        if args.newton:
            for r in newton_passes(Xtr.astype(np.float64), ytr):
                print(json.dumps({**row, **r}), flush=True)
            continue
        if args.profile:
            row.update(fit_profile(km, Xtr, ytr, args.reps))
            print(json.dumps(row), flush=True)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps(row) + "\n")
            continue
        try:
            if not args.skip_old:
                row.update(eval_times(km, dev, Xtr, ytr, k))
        except Exception as exc:            # keep the fit timings
            row["eval_error"] = repr(exc)
        try:
            row.update(micro_step_times(dev, Xtr, ytr, k))
        except Exception as exc:
            row["micro_error"] = repr(exc)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            LogisticRegression().fit(Xtr, ytr)                       # warm-up, same shape
            s, clf = med(lambda: LogisticRegression().fit(Xtr, ytr), args.reps)
            row["km_auto_numpy_s"] = s
            row["km_iters"] = int(clf.n_iter_[0])
            row["km_acc"] = float(clf.score(Xte, yte))
            Xd = km.asarray(Xtr)
            LogisticRegression().fit(Xd, ytr)
            s, clf2 = med(lambda: LogisticRegression().fit(Xd, ytr), args.reps)
            row["km_auto_device_s"] = s
            row["km_device_acc"] = float(clf2.score(Xte, yte))
            # the fixed per-fit cost of device data: a 1-iteration fit (validation, labels,
            # meta upload, buffers, the checked first pass, ~2 evaluations) minus its passes
            s1, _ = med(lambda: LogisticRegression(max_iter=1).fit(Xd, ytr), args.reps)
            row["km_device_1iter_s"] = s1
            del Xd
            s, sk = med(lambda: Sk(max_iter=300).fit(Xtr, ytr), 1)
            row["sklearn_s"] = s
            row["sklearn_iters"] = int(sk.n_iter_[0])
            row["sklearn_acc"] = float(sk.score(Xte, yte))
        if torch is not None:
            torch_lbfgs(torch, Xtr[:1000], ytr[:1000], k)
            s, (W, b) = med(lambda: torch_lbfgs(torch, Xtr, ytr, k), args.reps)
            z = Xte @ W + b
            pred = (z[:, 0] > 0).astype(int) if k == 2 else z.argmax(1)
            row["torch_lbfgs_s"] = s
            row["torch_acc"] = float((pred == yte).mean())
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
