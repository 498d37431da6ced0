"""A full-batch fit over several devices of one process: X's rows split across them.

Each device holds a contiguous share of the rows and computes their loss and gradient with its
own fused pass (``_fullbatch.FusedLogLoss``); one evaluation submits every device's pass, then
waits for each and adds the partial sums on the host (P + 1 floats per device). The penalty is
added once, here.

The shares follow each device's measured speed (:func:`probe`): a device gets rows in proportion
to its throughput, and none where its fixed cost per evaluation would make the result slower
than the others alone (:func:`plan_shares`).
"""

import threading
import time

import numpy as np

from . import _fullbatch

__all__ = ["plan_shares", "probe", "ShardedLogLoss"]

_PROBE_ROWS = 1 << 17       # rows of the probe pass that measures the time per row
_MIN_GAIN = 0.02            # a device joins only if it shortens the predicted pass by this much:
                            # below, the wait for one more device costs more than it saves
_probes = {}                # (device, d, K) -> (seconds per row, fixed seconds per evaluation)
_probes_lock = threading.Lock()


def plan_shares(n, speeds):
    """Rows per device for ``n`` rows, from each device's ``(seconds per row, fixed seconds per
    evaluation)``: the split that ends every device's pass at the same time, over the devices
    that shorten it by at least _MIN_GAIN (fastest first; a device whose fixed cost is past
    the time the others already reach gets no rows). Returns a list of row counts summing to
    ``n``."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not speeds:
        raise ValueError("at least one device is needed")
    for per_row, fixed in speeds:
        if not (per_row > 0 and fixed >= 0 and np.isfinite(per_row) and np.isfinite(fixed)):
            raise ValueError(f"a device's speed must be a positive time per row and a "
                             f"non-negative fixed time, got {(per_row, fixed)}")
    order = sorted(range(len(speeds)), key=lambda j: (speeds[j][0] * n + speeds[j][1], j))
    chosen, best = [], None
    for j in order:
        trial = chosen + [j]
        # all end at T: rows_j = (T - fixed_j) / per_row_j, summing to n
        rate = sum(1.0 / speeds[i][0] for i in trial)
        T = (n + sum(speeds[i][1] / speeds[i][0] for i in trial)) / rate
        if any(T <= speeds[i][1] for i in trial):
            break                        # a device would get no rows at that time
        if best is not None and T > best * (1.0 - _MIN_GAIN):
            break
        chosen, best = trial, T
    rows = [0] * len(speeds)
    if n == 0:
        return rows
    exact = {i: (best - speeds[i][1]) / speeds[i][0] for i in chosen}
    for i in chosen:
        rows[i] = int(exact[i])
    # the remainder to the largest fractional parts (the fastest first among equals)
    rest = n - sum(rows)
    for i in sorted(chosen, key=lambda i: (rows[i] - exact[i], chosen.index(i)))[:rest]:
        rows[i] += 1
    return rows


def probe(device, d, K):
    """``(seconds per row, fixed seconds per evaluation)`` of ``device``'s fused pass for ``d``
    features and ``K`` logits (measured once per device and shape in a process): the fixed time
    is the best replayed evaluation over one row, the time per row the rest of the best one
    over _PROBE_ROWS random rows."""
    key = (device, int(d), int(K))
    with _probes_lock:
        hit = _probes.get(key)
    if hit is not None:
        return hit
    rng = np.random.default_rng(0)
    times = []
    for rows in (1, _PROBE_ROWS):
        X = rng.standard_normal((rows, d), dtype=np.float32)
        codes = rng.integers(0, max(K, 2), rows)
        data = _fullbatch.DenseDataset(device, X, codes, np.ones(rows))
        prog = None
        try:
            prog = _fullbatch.FusedLogLoss(data, K, l2=0.0, fit_intercept=True)
            prog.total_weight = float(rows)
            W = np.zeros((K, d + 1))
            prog.loss_gradient(W)                  # the checked first pass, then replays
            prog.loss_gradient(W)
            best = float("inf")
            for _ in range(5):
                t0 = time.perf_counter()
                prog.loss_gradient(W)
                best = min(best, time.perf_counter() - t0)
            times.append((rows, best))
        finally:
            if prog is not None:
                prog.release()
            data.release()
    (_, fixed), (rows, t) = times
    per_row = max((t - fixed) / rows, 1e-12)
    with _probes_lock:
        _probes[key] = (per_row, fixed)
    return per_row, fixed


class ShardedLogLoss:
    """Objective and gradient over rows split across devices; ``FusedLogLoss``'s interface.

    ``parts``: ``(device, X rows, codes, weights)`` per device with rows (host arrays).
    """

    def __init__(self, parts, n_logits, *, l2, fit_intercept):
        self.K, self.l2 = int(n_logits), float(l2)
        self.fit_intercept = bool(fit_intercept)
        self.progs, self._data = [], []
        self._total = None
        try:
            for device, X, codes, weights in parts:
                d = X.shape[1]
                lay = _fullbatch.fused_layout(device, d, self.K)
                if lay is None:
                    raise ValueError(f"no fused full-batch layout for {d} features x {self.K} "
                                     f"logits on {device.name!r}: a fit across devices needs one")
                data = _fullbatch.DenseDataset(device, X, codes, weights)
                self._data.append(data)
                self.progs.append(_fullbatch.FusedLogLoss(data, self.K, l2=0.0,
                                                          fit_intercept=fit_intercept,
                                                          layout_=lay))
        except BaseException:
            self.release()
            raise
        self.d = self.progs[0].d
        self.P = self.progs[0].P
        self.evaluations = 0

    @property
    def total_weight(self):
        return self._total

    @total_weight.setter
    def total_weight(self, value):
        self._total = value
        for p in self.progs:
            p.total_weight = value

    def loss_gradient(self, W):
        """Objective and gradient at W: every device's pass submitted, then each one awaited."""
        W = np.asarray(W, dtype=np.float64).reshape(self.K, self.d + 1)
        self.evaluations += 1
        started = []
        try:
            for p in self.progs:
                p.begin(W)
                started.append(p)
            results = [p.end() for p in self.progs]
        except BaseException:
            for p in started:                  # no evaluation left in flight
                if p._pending is not None:
                    try:
                        p.end()
                    except Exception:
                        pass
            raise
        f = sum(r[0] for r in results)
        G = np.sum([r[1] for r in results], axis=0)
        coef = W[:, :-1]
        f += 0.5 * self.l2 * float(np.sum(coef * coef))
        G[:, :-1] += self.l2 * coef
        return f, G

    def release(self):
        """Give every device's buffers back (idempotent)."""
        for p in self.progs:
            p.release()
        for data in self._data:
            data.release()
        self.progs, self._data = [], []
