import cProfile, pstats, io, sys, time, warnings, os
sys.path.insert(0, "benchmarks")
import numpy as np
import logistic as L
import kompute_ml as km
from kompute_ml import LogisticRegression
from sklearn.linear_model import LogisticRegression as SK
warnings.simplefilter("ignore")
try:
    import torch
except ImportError:
    torch = None
dev = km.get_device()
if "--history" in sys.argv:
    L.measure(None, 10000, 512, 10, None, 1, torch)
Xtr, Xte, ytr, yte = L.make_problem(100000, 32, 2)
SK(max_iter=300).fit(Xtr, ytr)
def fit(solver):
    return LogisticRegression(solver=solver, random_state=0).fit(Xtr, ytr)
for solver in ("auto", "lbfgs", "auto"):
    fit(solver)
    for r in range(4):
        s0 = km.stats(); pr = cProfile.Profile(); t = time.perf_counter()
        pr.enable(); fit(solver); pr.disable()
        dt = time.perf_counter() - t; s1 = km.stats()
        print(solver, "%.1f ms" % (dt * 1e3), {k: s1[k] - s0[k] for k in ("pipelines_created", "shader_compiles", "submits", "dispatches") })
        if dt > 0.02:
            s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(8); print(s.getvalue()[-2500:])
