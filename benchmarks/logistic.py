"""LogisticRegression fit time and test accuracy: kompute_ml vs scikit-learn (and torch on CUDA).

For each size (rows x features x classes; default: n in {1e4, 1e5, 1e6} x d in {32, 256, 512} x
classes in {2, 10}, minus what does not fit a few minutes) a ``make_classification`` problem is
split into training rows and 20,000 test rows (standardized with the training rows' statistics),
then fitted by

- kompute_ml: ``LogisticRegression(solver=s)`` for each of ``--solvers`` (default 'auto' — the
  default — 'lbfgs' and 'adam'), on the default Vulkan device; wall time of ``fit`` from host
  numpy arrays (upload included) and, for 'auto', from device data (``km.asarray``), after a
  warm-up fit of the same shape (shader compiles, pipelines, pooled buffers);
- scikit-learn: ``LogisticRegression(max_iter=300)`` (lbfgs, float64, all cores);
- torch (only where ``torch.cuda.is_available()``): full-batch ``optim.LBFGS`` (strong Wolfe;
  upload of X inside the timing), and the micro-batch Adam loop written plainly (mini-batch
  Adam on mean log-loss + ||W||^2 / (2 C n), kompute_ml's batch size, step size, schedule and
  stopping rule; data already on the GPU; at most TORCH_ADAM_EPOCHS epochs and about
  TORCH_ADAM_BUDGET_S seconds), ``torch.cuda.synchronize()`` before the clock stops;
- scikit-learn on torch (same condition): scikit-learn's ``LogisticRegression(max_iter=300)``
  fitted on torch CUDA tensors through ``array_api_dispatch`` (the data on the GPU before the
  clock starts: the peer of kompute_ml's fit from device data).

Held-out accuracies are recorded beside every time, and ``time_to_sklearn_accuracy``: per method,
the time to reach scikit-learn's held-out accuracy (less ACC_SLACK): the fit's time for the
full-batch solvers that reach it, the first epoch's elapsed time that reaches it for torch Adam,
and for kompute_ml Adam the time of the shortest fit of 1, 2, 4, 8, 16 epochs that reaches it.

Results go to ``benchmarks/results/<device-slug>-logistic.json``::

    {"device", "driver", "cpu", "date", "command",
     "results": [{"name": "logistic_binary_10000x32", "unit": "s", "kompute_ml": ...,
                  "baselines": {"sklearn": ..., "torch": ...}, "accuracy": {...}, ...}]}

    python benchmarks/logistic.py [--sizes 10000x32x2,100000x512x10] [--epochs E] [--reps 1]
"""

import argparse
import os
import statistics
import sys
import time
import warnings

os.environ.setdefault("SCIPY_ARRAY_API", "1")   # scikit-learn's array API path (before scipy)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402  (the results file and the machine's description)

DEFAULT_SIZES = ",".join(f"{n}x{d}x{k}" for n in (10000, 100000, 1000000) for d in (32, 256, 512)
                         for k in (2, 10) if n * d * k <= 1000000 * 256 * 2)
N_TEST = 20000


def make_problem(n, d, k, seed=0):
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=n + N_TEST, n_features=d, n_informative=max(2, d // 4),
                               n_redundant=0, n_classes=k, n_clusters_per_class=1,
                               class_sep=2.0, flip_y=0.01, random_state=seed)
    X = X.astype(np.float32)
    Xtr, Xte, ytr, yte = X[:n], X[n:], y[:n], y[n:]
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0) + 1e-6
    return (Xtr - mu) / sd, (Xte - mu) / sd, ytr, yte


timed = _common.timed
_FIT_COUNTERS = ("pipelines_created", "shader_compiles", "submits", "bytes_uploaded")


def timed_km(fn, reps, detail, key):
    """``timed`` for a kompute_ml fit, also keeping in ``detail[key]`` every fit's seconds, the
    seconds Python's garbage collector ran inside each, and what the timed fits did (km.stats()
    counters: a fit that creates pipelines or compiles shaders pays for it in its time)."""
    import gc
    import kompute_ml as km
    pauses, start = [], [0.0]

    def on_gc(phase, info):                 # Python's collector, timed: a pause inside a fit
        if phase == "start":
            start[0] = time.perf_counter()
        else:
            pauses.append((info["generation"], time.perf_counter() - start[0]))
    before = km.stats()
    times, out, gc_s = [], None, []
    gc.callbacks.append(on_gc)
    try:
        for _ in range(reps):
            del pauses[:]
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
            gc_s.append(sum(p for _, p in pauses))
    finally:
        gc.callbacks.remove(on_gc)
    after = km.stats()
    detail[key] = {"times": [round(t, 4) for t in times], "gc_s": [round(t, 4) for t in gc_s],
                   **{c: after[c] - before[c] for c in _FIT_COUNTERS}}
    return statistics.median(times), out


class _TorchLR:
    """The ``lr`` attribute kompute_ml's PlateauSchedule divides, mapped onto a torch optimizer."""

    def __init__(self, opt):
        self.opt = opt

    @property
    def lr(self):
        return self.opt.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value):
        for group in self.opt.param_groups:
            group["lr"] = value


def torch_fit(torch, X, y, n_classes, batch, lr, epochs, tol, C=1.0, seed=0, budget_s=None):
    """Mini-batch Adam on mean log-loss + ||W||^2 / (2 C n), written plainly (data on the GPU),
    with kompute_ml's step-size schedule and stopping rule on the epoch loss; at most ``epochs``
    epochs and (``budget_s``) about that many seconds. Returns (W, b, epochs, snapshots): the
    elapsed seconds and parameters after each epoch (for the time to a given accuracy)."""
    from kompute_ml.linear_model import _optim
    n, d = X.shape
    k = 1 if n_classes == 2 else n_classes
    g = torch.Generator(device=X.device).manual_seed(seed)
    W = torch.zeros(d, k, device=X.device, requires_grad=True)
    b = torch.zeros(k, device=X.device, requires_grad=True)
    opt = torch.optim.Adam([W, b], lr=lr)
    schedule = _optim.PlateauSchedule(tol, 5, adaptive=True)
    snapshots, t0 = [], time.perf_counter()
    for epoch in range(epochs):
        perm = torch.randperm(n, device=X.device, generator=g)
        total = torch.zeros((), device=X.device)
        for s in range(0, n, batch):
            idx = perm[s:s + batch]
            z = X[idx] @ W + b
            if k == 1:
                loss = torch.nn.functional.binary_cross_entropy_with_logits(z[:, 0], y[idx].float())
            else:
                loss = torch.nn.functional.cross_entropy(z, y[idx])
            loss = loss + (W * W).sum() / (2 * C * n)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.detach() * idx.numel()
        # the epoch loss reaches the host, as kompute_ml's does (and synchronizes)
        epoch_loss = float(total) / n
        snapshots.append((time.perf_counter() - t0, W.detach().clone(), b.detach().clone()))
        if schedule.update(epoch_loss, _TorchLR(opt)):
            break
        if budget_s is not None and time.perf_counter() - t0 > budget_s:
            break
    return W.detach(), b.detach(), epoch + 1, snapshots


def accuracy(W, b, Xte, yte):
    """Held-out accuracy of the linear scores Xte @ W + b (W: d x 1 for two classes, d x k)."""
    z = Xte @ np.asarray(W) + np.asarray(b)
    pred = (z[:, 0] > 0).astype(int) if z.shape[1] == 1 else z.argmax(axis=1)
    return float((pred == yte).mean())


ACC_SLACK = 0.002          # "equal accuracy": within this much of scikit-learn's held-out accuracy
KM_ADAM_EPOCHS = (1, 2, 4, 8, 16)   # kompute_ml Adam fits tried for the time to that accuracy
TORCH_ADAM_EPOCHS = 30     # the torch mini-batch Adam baseline: at most this many epochs ...
TORCH_ADAM_BUDGET_S = 3.0  # ... and about this many seconds (it took 17.5 s at 1e5 x 512)


def measure(dev, n, d, k, epochs, reps, torch=None, solvers=("auto", "lbfgs", "adam")):
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    import kompute_ml as km
    from kompute_ml.linear_model import LogisticRegression, _logistic, _optim
    from _common import torch_lbfgs
    Xtr, Xte, ytr, yte = make_problem(n, d, k)
    batch = _logistic._auto_batch(n, km.get_device(dev), d)

    opts = {} if epochs is None else {"max_iter": epochs, "tol": None}

    def km_fit(solver, X=Xtr, y=ytr):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # a ConvergenceWarning at max_iter
            return LogisticRegression(solver=solver, random_state=0, device=dev,
                                      **opts).fit(X, y)
    row = {"name": f"logistic_{'binary' if k == 2 else f'{k}class'}_{n}x{d}", "unit": "s",
           "baselines": {}, "accuracy": {}, "solvers": {}, "n": n, "d": d, "classes": k,
           "batch": batch, "solver": "auto", "epochs": {}, "fits": {}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # lbfgs may stop at max_iter on big problems
        sk_s, sk = timed(lambda: SkLogisticRegression(max_iter=300).fit(Xtr, ytr), 1)
    row["baselines"]["sklearn"] = round(sk_s, 4)
    sk_acc = float(sk.score(Xte, yte))
    row["accuracy"]["sklearn"] = round(sk_acc, 4)
    row["sklearn_iterations"] = int(sk.n_iter_[0])
    target = sk_acc - ACC_SLACK
    row["time_to_sklearn_accuracy"] = {"sklearn": round(sk_s, 4)}

    for solver in solvers:
        km_fit(solver)                             # warm-up: shaders, pipelines, pool
        km_s, clf = timed_km(lambda: km_fit(solver), reps, row["fits"], solver)
        row["solvers"][solver] = round(km_s, 4)
        acc = float(clf.score(Xte, yte))
        row["accuracy"][f"kompute_ml_{solver}"] = round(acc, 4)
        row["epochs"][f"kompute_ml_{solver}"] = int(clf.n_iter_[0])
        if solver != "adam" and acc >= target:
            row["time_to_sklearn_accuracy"][f"kompute_ml_{solver}"] = round(km_s, 4)
        if solver == "auto":
            row["kompute_ml"] = round(km_s, 4)
            row["accuracy"]["kompute_ml"] = row["accuracy"]["kompute_ml_auto"]
            # X and y on the device (as scikit-learn-on-torch's tensors below)
            Xd, yd = km.asarray(Xtr, device=dev), km.asarray(ytr, device=dev)
            km_fit(solver, Xd, yd)
            dev_s, clf = timed_km(lambda: km_fit(solver, Xd, yd), reps, row["fits"],
                                  "auto_device_data")
            row["solvers"]["auto_device_data"] = round(dev_s, 4)
            del Xd, yd
        if solver == "adam":
            # the fewest epochs (of a doubling series) that reach scikit-learn's accuracy
            for e in KM_ADAM_EPOCHS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    e_s, clf = timed(lambda: LogisticRegression(
                        solver="adam", random_state=0, device=dev, max_iter=e,
                        tol=None).fit(Xtr, ytr), 1)
                if clf.score(Xte, yte) >= target:
                    row["time_to_sklearn_accuracy"]["kompute_ml_adam"] = round(e_s, 4)
                    row["epochs"]["kompute_ml_adam_to_accuracy"] = e
                    break

    row.setdefault("kompute_ml", row["solvers"][solvers[0]])
    row["accuracy"].setdefault("kompute_ml", row["accuracy"][f"kompute_ml_{solvers[0]}"])

    if torch is not None:
        torch_lbfgs(torch, Xtr[:1000], ytr[:1000], k)
        t_s, (W, b) = timed(lambda: torch_lbfgs(torch, Xtr, ytr, k), reps)
        z = Xte @ W + b
        pred = (z[:, 0] > 0).astype(int) if k == 2 else z.argmax(axis=1)
        row["baselines"]["torch_lbfgs"] = round(t_s, 4)
        torch_lbfgs_acc = float((pred == yte).mean())
        row["accuracy"]["torch_lbfgs"] = round(torch_lbfgs_acc, 4)
        Xt = torch.from_numpy(Xtr).cuda()
        yt = torch.from_numpy(ytr.astype(np.int64)).cuda()
        lr = _optim.AUTO_LR["adam"]

        def t_fit():
            out = torch_fit(torch, Xt, yt, k, batch, lr, epochs or TORCH_ADAM_EPOCHS,
                            None if epochs else 1e-4, budget_s=TORCH_ADAM_BUDGET_S)
            torch.cuda.synchronize()
            return out
        torch_fit(torch, Xt[:4096], yt[:4096], k, batch, lr, 1, None)     # warm-up: kernels
        t_s, (W, b, t_epochs, snaps) = timed(t_fit, 1)
        row["epochs"]["torch"] = t_epochs
        row["baselines"]["torch"] = round(t_s, 4)
        row["accuracy"]["torch"] = round(accuracy(W.cpu().numpy(), b.cpu().numpy(), Xte, yte), 4)
        for elapsed, Ws, bs in snaps:
            if accuracy(Ws.cpu().numpy(), bs.cpu().numpy(), Xte, yte) >= target:
                row["time_to_sklearn_accuracy"]["torch_adam"] = round(elapsed, 4)
                break
        if torch_lbfgs_acc >= target:
            row["time_to_sklearn_accuracy"]["torch_lbfgs"] = row["baselines"]["torch_lbfgs"]
        # scikit-learn's own LogisticRegression (lbfgs) on torch CUDA tensors through
        # array_api_dispatch: the data on the GPU before the clock starts, as kompute_ml's
        # device-data fit ("auto_device_data")
        import sklearn
        Xg = torch.from_numpy(Xtr).cuda()
        yg = torch.from_numpy(ytr.astype(np.int64)).cuda()

        def sk_torch():
            with sklearn.config_context(array_api_dispatch=True), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = SkLogisticRegression(max_iter=300).fit(Xg, yg)
            torch.cuda.synchronize()
            return est
        sk_torch()                                 # warm-up: kernels, cuBLAS handles
        st_s, est = timed(sk_torch, reps)
        row["baselines"]["sklearn_torch"] = round(st_s, 4)
        W = est.coef_.T.cpu().numpy().astype(np.float64)
        b = est.intercept_.cpu().numpy().astype(np.float64)
        st_acc = accuracy(W, b, Xte, yte)
        row["accuracy"]["sklearn_torch"] = round(st_acc, 4)
        if st_acc >= target:
            row["time_to_sklearn_accuracy"]["sklearn_torch"] = round(st_s, 4)
        del Xg, yg
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES,
                        help="comma-separated ROWSxFEATURESxCLASSES")
    parser.add_argument("--epochs", type=int, default=None,
                        help="run exactly this many epochs (default: stop on the loss, <= 100)")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--solvers", default="auto,lbfgs,adam")
    parser.add_argument("--device", default=None)
    parser.add_argument("--out", default=None, help="results file (default: by device name)")
    args = parser.parse_args(argv)

    import kompute_ml as km
    dev = km.get_device(args.device)
    torch = None
    try:
        import torch as _torch
        if _torch.cuda.is_available():
            torch = _torch
    except ImportError:
        pass
    print(f"device: {dev.name} ({dev.info.driver}); cpu: {_common.cpu_name()}; "
          f"torch CUDA: {'yes' if torch is not None else 'no'}")
    path = args.out or os.path.join(_common.RESULTS_DIR, _common.slug(dev.name) + "-logistic.json")
    rows = []
    for spec in args.sizes.split(","):
        n, d, k = (int(v) for v in spec.lower().split("x"))
        row = measure(dev, n, d, k, args.epochs, args.reps, torch,
                      solvers=tuple(args.solvers.split(",")))
        rows.append(row)
        base = "  ".join(f"{name} {s:.3f} s" for name, s in row["baselines"].items())
        acc = "  ".join(f"{name} {a:.4f}" for name, a in row["accuracy"].items())
        print(f"{row['name']:32s} kompute_ml {row['kompute_ml']:.3f} s  {base}   accuracy: {acc}",
              flush=True)
        _common.write_results(dev, rows, path=path)    # after each row: a cut-off run keeps them
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
