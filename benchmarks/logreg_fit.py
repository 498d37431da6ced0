"""The logreg_fit row of run_all.py: LogisticRegression fit, n x d float32, 2 classes, 10 epochs,
batch 4096, Adam, data already on the device; vs the same mini-batch algorithm written plainly in
torch on CUDA, and scikit-learn (lbfgs) on the host CPU.
"""

import statistics
import time

import numpy as np

EPOCHS = 10
BATCH = 4096


def make_data(n, d, seed=0):
    """n rows of one fixed linear problem (the same true w for every seed: train and test agree)."""
    w = np.random.default_rng(12345).standard_normal(d).astype(np.float32) / np.sqrt(d)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d), dtype=np.float32)
    logits = X @ w + 0.1 * rng.standard_normal(n).astype(np.float32)
    y = (logits > 0).astype(np.int64)
    return X, y


def measure(dev, cuda, n, d, reps=3):
    import kompute_ml as km
    from kompute_ml import LogisticRegression
    import logistic
    X, y = make_data(n, d)
    Xte, yte = make_data(20000, d, seed=1)
    Xd, yd = km.asarray(X, device=dev), km.asarray(y.astype(np.int32), device=dev)
    km.synchronize(dev)

    def km_fit():
        clf = LogisticRegression(solver="adam", batch_size=BATCH, max_iter=EPOCHS, tol=None,
                                 shuffle=True, random_state=0, device=dev)
        clf.fit(Xd, yd)
        return clf
    clf = km_fit()                                   # warm-up: compiles, pipelines
    acc = float(clf.score(Xte, yte))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        km_fit()
        times.append(time.perf_counter() - t0)
    km_s = statistics.median(times)
    base, accs = {}, {"kompute_ml": acc}
    if "torch" in cuda:
        torch = cuda["torch"]
        Xt, yt = torch.from_numpy(X).cuda(), torch.from_numpy(y).cuda()

        def torch_fit():
            # logistic.py's plain torch loop; tol=None: all EPOCHS epochs, as kompute_ml's above
            return logistic.torch_fit(torch, Xt, yt, 2, BATCH, lr=1e-2, epochs=EPOCHS, tol=None)
        torch_fit()
        torch.cuda.synchronize()
        tt = []
        for _ in range(reps):
            t0 = time.perf_counter()
            w, b = torch_fit()[:2]
            torch.cuda.synchronize()
            tt.append(time.perf_counter() - t0)
        base["torch"] = statistics.median(tt)
        accs["torch"] = logistic.accuracy(w.cpu().numpy(), b.cpu().numpy(), Xte, yte)
    from sklearn.linear_model import LogisticRegression as SkLR
    sk_n = min(n, 200000)                              # lbfgs on the full 10^6 x 256 takes minutes
    t0 = time.perf_counter()
    sk = SkLR(max_iter=200).fit(X[:sk_n], y[:sk_n])
    sk_s = time.perf_counter() - t0
    base["sklearn_lbfgs"] = sk_s * (n / sk_n)
    accs["sklearn_lbfgs"] = float(sk.score(Xte, yte))
    return {"name": "logreg_fit", "unit": "s", "kompute_ml": km_s, "kompute_ml_wall": km_s,
            "baselines": base, "accuracy": accs, "n": n, "d": d, "epochs": EPOCHS, "batch": BATCH,
            "note": (f"sklearn lbfgs fitted on {sk_n} rows and scaled linearly to {n}"
                     if sk_n < n else "")}
