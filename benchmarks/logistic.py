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
  stopping rule; data already on the GPU), ``torch.cuda.synchronize()`` before the clock stops.

Held-out accuracies are recorded beside every time: compare times at equal accuracy.

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

import numpy as np

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


def timed(fn, reps):
    times, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
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


def torch_fit(torch, X, y, n_classes, batch, lr, epochs, tol, C=1.0, seed=0):
    """Mini-batch Adam on mean log-loss + ||W||^2 / (2 C n), written plainly (data on the GPU),
    with kompute_ml's step-size schedule and stopping rule on the epoch loss."""
    from kompute_ml.linear_model import _optim
    n, d = X.shape
    k = 1 if n_classes == 2 else n_classes
    g = torch.Generator(device=X.device).manual_seed(seed)
    W = torch.zeros(d, k, device=X.device, requires_grad=True)
    b = torch.zeros(k, device=X.device, requires_grad=True)
    opt = torch.optim.Adam([W, b], lr=lr)
    schedule = _optim.PlateauSchedule(tol, 5, adaptive=True)
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
        # the epoch loss reaches the host, as kompute_ml's does
        if schedule.update(float(total) / n, _TorchLR(opt)):
            break
    return W.detach(), b.detach(), epoch + 1


def measure(dev, n, d, k, epochs, reps, torch=None, solvers=("auto", "lbfgs", "adam")):
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    import kompute_ml as km
    from kompute_ml.linear_model import LogisticRegression, _logistic, _optim
    from logreg_fullbatch import torch_lbfgs
    Xtr, Xte, ytr, yte = make_problem(n, d, k)
    batch = _logistic._auto_batch(n)

    opts = {} if epochs is None else {"max_iter": epochs, "tol": None}

    def km_fit(solver, X=Xtr, y=ytr):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # a ConvergenceWarning at max_iter
            return LogisticRegression(solver=solver, random_state=0, device=dev,
                                      **opts).fit(X, y)
    row = {"name": f"logistic_{'binary' if k == 2 else f'{k}class'}_{n}x{d}", "unit": "s",
           "baselines": {}, "accuracy": {}, "solvers": {}, "n": n, "d": d, "classes": k,
           "batch": batch, "solver": "auto", "epochs": {}}
    for solver in solvers:
        km_fit(solver)                             # warm-up: shaders, pipelines, pool
        km_s, clf = timed(lambda: km_fit(solver), reps)
        row["solvers"][solver] = round(km_s, 4)
        row["accuracy"][f"kompute_ml_{solver}"] = round(float(clf.score(Xte, yte)), 4)
        row["epochs"][f"kompute_ml_{solver}"] = int(clf.n_iter_[0])
        if solver == "auto":
            row["kompute_ml"] = round(km_s, 4)
            row["accuracy"]["kompute_ml"] = row["accuracy"]["kompute_ml_auto"]
            Xd = km.asarray(Xtr, device=dev)
            km_fit(solver, Xd)
            dev_s, clf = timed(lambda: km_fit(solver, Xd), reps)
            row["solvers"]["auto_device_data"] = round(dev_s, 4)
            del Xd

    row.setdefault("kompute_ml", row["solvers"][solvers[0]])
    row["accuracy"].setdefault("kompute_ml", row["accuracy"][f"kompute_ml_{solvers[0]}"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # lbfgs may stop at max_iter on big problems
        sk_s, sk = timed(lambda: SkLogisticRegression(max_iter=300).fit(Xtr, ytr), 1)
    row["baselines"]["sklearn"] = round(sk_s, 4)
    row["accuracy"]["sklearn"] = round(float(sk.score(Xte, yte)), 4)
    row["sklearn_iterations"] = int(sk.n_iter_[0])

    if torch is not None:
        torch_lbfgs(torch, Xtr[:1000], ytr[:1000], k)
        t_s, (W, b) = timed(lambda: torch_lbfgs(torch, Xtr, ytr, k), reps)
        z = Xte @ W + b
        pred = (z[:, 0] > 0).astype(int) if k == 2 else z.argmax(axis=1)
        row["baselines"]["torch_lbfgs"] = round(t_s, 4)
        row["accuracy"]["torch_lbfgs"] = round(float((pred == yte).mean()), 4)
        Xt = torch.from_numpy(Xtr).cuda()
        yt = torch.from_numpy(ytr.astype(np.int64)).cuda()
        lr = _optim.AUTO_LR["adam"]

        def t_fit():
            out = torch_fit(torch, Xt, yt, k, batch, lr, epochs or 100,
                            None if epochs else 1e-4)
            torch.cuda.synchronize()
            return out
        t_fit()
        t_s, (W, b, t_epochs) = timed(t_fit, reps)
        row["epochs"]["torch"] = t_epochs
        z = Xte @ W.cpu().numpy() + b.cpu().numpy()
        pred = (z[:, 0] > 0).astype(int) if k == 2 else z.argmax(axis=1)
        row["baselines"]["torch"] = round(t_s, 4)
        row["accuracy"]["torch"] = round(float((pred == yte).mean()), 4)
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
