"""Host side of the optimizers: step sizes and schedules, the L-BFGS driver, numpy references.

The device applies the updates (``shaders/logreg_step_apply.glsl``: in the step's one dispatch,
by the last workgroup to finish its partial gradients, or in ``logreg_step_update.comp`` on the
two-dispatch path; docs/logistic.md has the rule). What changes from step to step is computed here: for an epoch
recorded step by step, the bias-corrected step size travels as push constants
(:meth:`Adam.step_push`); for a replayed epoch the device reads the first step count and the
hyper-parameters from a buffer and derives each step's corrections itself. The ``reference_*``
functions are the same updates in numpy float64, for the tests.
"""

import contextlib
import math
import threading

import numpy as np
import scipy.optimize

from ._loss import MODE_ADAM, MODE_SGD

__all__ = ["Adam", "SGDMomentum", "make_optimizer", "sgd_auto_lr", "PlateauSchedule",
           "minimize_lbfgs", "reference_adam_step", "reference_sgd_step"]

AUTO_LR = {"adam": 5e-2}     # sgd: sgd_auto_lr, from the data
_LR_DIVISOR = 5.0          # 'auto' schedule: the step size is divided by this on each plateau
_MAX_DIVISIONS = 3         # ... at most this many times, then a plateau ends training


class Adam:
    """Adam (Kingma & Ba) with bias correction folded into the step size and epsilon."""

    mode = MODE_ADAM

    def __init__(self, lr, mean_weight=1.0, beta1=0.9, beta2=0.999, eps=1e-8, t=0):
        self.lr, self.beta1, self.beta2, self.eps = float(lr), beta1, beta2, eps
        self.mean_weight = float(mean_weight)
        self.t = int(t)

    def step_push(self, count):
        """(mode, gradient scale, lr, beta1, beta2, eps) of the next step over ``count`` rows."""
        self.t += 1
        c2 = math.sqrt(1.0 - self.beta2 ** self.t)
        lr_t = self.lr * c2 / (1.0 - self.beta1 ** self.t)
        return (self.mode, 1.0 / (count * self.mean_weight), lr_t, self.beta1, self.beta2,
                self.eps * c2)


class SGDMomentum:
    """SGD with (Nesterov) momentum: v = mu v - lr g;  w += mu v - lr g  (Nesterov) or v."""

    mode = MODE_SGD

    def __init__(self, lr, mean_weight=1.0, momentum=0.9, nesterov=True, t=0):
        self.lr, self.momentum, self.nesterov = float(lr), momentum, nesterov
        self.mean_weight = float(mean_weight)
        self.t = int(t)

    def step_push(self, count):
        self.t += 1
        return (self.mode, 1.0 / (count * self.mean_weight), self.lr, self.momentum, 0.0,
                1.0 if self.nesterov else 0.0)


SGD_LR_SCALE = 1.0


def sgd_auto_lr(X, weights, n_logits, fit_intercept):
    """learning_rate='auto' of 'sgd': 1 / L, L the weighted mean smoothness of a row's loss.

    The log-loss of a row x has a gradient Lipschitz constant of ||x||^2 / 4 (sigmoid) or at
    most ||x||^2 / 2 (softmax), plus 1 for the intercept's constant feature. A step of 1 / L is
    within the stability bound of Nesterov momentum 0.9 (about 1.36 / L on a quadratic), whatever
    the scale of the features.
    """
    if hasattr(X, "multiply"):
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    elif hasattr(X, "_realize"):                 # a kompute_ml Array: row norms on the device
        sq = (X * X).sum(axis=1).numpy().astype(np.float64)
    else:
        sq = np.einsum("ij,ij->i", X, X, dtype=np.float64)
    if fit_intercept:
        sq = sq + 1.0
    L = (0.25 if n_logits == 1 else 0.5) * float(np.dot(weights, sq) / np.sum(weights))
    return SGD_LR_SCALE / max(L, 1e-12)


def make_optimizer(solver, lr, mean_weight, t=0):
    """The optimizer of a micro-batch solver ('adam' or 'sgd')."""
    if solver == "adam":
        return Adam(lr, mean_weight, t=t)
    return SGDMomentum(lr, mean_weight, t=t)


class PlateauSchedule:
    """Convergence test on the epoch loss, and the 'auto' learning-rate decay.

    An epoch "improves" when its loss is below the best so far minus ``tol``. After
    ``n_iter_no_change`` epochs without improvement, an adaptive schedule divides the step size
    by 5 (at most three times) and goes on; otherwise training has converged.
    ``tol=None`` never converges (all ``max_iter`` epochs run).
    """

    def __init__(self, tol, n_iter_no_change, adaptive):
        self.tol, self.patience, self.adaptive = tol, int(n_iter_no_change), adaptive
        self.best = math.inf
        self.bad = 0
        self.divisions = 0

    def update(self, loss, optimizer):
        """Record an epoch's loss; return True when training has converged."""
        if self.tol is None:
            return False
        if loss < self.best - self.tol:
            self.bad = 0
        else:
            self.bad += 1
        self.best = min(self.best, loss)
        if self.bad < self.patience:
            return False
        if self.adaptive and self.divisions < _MAX_DIVISIONS:
            self.divisions += 1
            optimizer.lr /= _LR_DIVISOR
            self.bad = 0
            self.best = loss        # improvements now count from where the smaller steps start
            return False
        return True


# BLAS threads during L-BFGS: scipy's L-BFGS-B update (setulb) calls BLAS on vectors of a few
# hundred parameters, where a multi-threaded BLAS (OpenBLAS by default) costs far more in thread
# hand-offs than the arithmetic: measured on lavapipe's 2 cores, 100000 x 256, 10 iterations:
# setulb 150-230 ms wall and 15-17 ms of the main thread's CPU with the default threads, 0.4-0.6 ms
# with one. The minimizer runs with one BLAS thread; the work that matters is on the device.
_blas_lock = threading.Lock()
_blas_state = {"controller": None, "users": 0, "limiter": None}


@contextlib.contextmanager
def _one_blas_thread():
    """BLAS limited to one thread while any L-BFGS fit runs (reference-counted: concurrent fits
    in threads restore the caller's setting once, when the last one ends)."""
    with _blas_lock:
        st = _blas_state
        if st["users"] == 0:
            try:
                if st["controller"] is None:     # enumerating the libraries costs ms: once
                    from threadpoolctl import ThreadpoolController
                    st["controller"] = ThreadpoolController()
                st["limiter"] = st["controller"].limit(limits=1, user_api="blas")
            except Exception:            # no threadpoolctl or an unknown BLAS: leave it be
                st["limiter"] = None
        st["users"] += 1
    try:
        yield
    finally:
        with _blas_lock:
            st["users"] -= 1
            if st["users"] == 0 and st["limiter"] is not None:
                st["limiter"].restore_original_limits()
                st["limiter"] = None


def minimize_lbfgs(fun, w0, *, max_iter, tol, callback=None):
    """scipy's L-BFGS-B on ``fun(w) -> (f, grad)``, with scikit-learn's LogisticRegression options.

    The same options as scikit-learn (even the float64 function tolerance: f and its gradient
    come from float32 sums, yet L-BFGS then follows scikit-learn's iterates to ~1e-6, where a
    float32-sized ftol would stop it early, at coefficients 1e-2 away). BLAS runs on one thread
    meanwhile (see ``_one_blas_thread``).
    """
    with _one_blas_thread():
        return scipy.optimize.minimize(
            fun, w0, method="L-BFGS-B", jac=True, callback=callback,
            options={"maxiter": int(max_iter), "maxls": 50,
                     "gtol": 0.0 if tol is None else tol,
                     "ftol": 64 * float(np.finfo(np.float64).eps)})


def reference_adam_step(W, M, V, grad, t, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    """One Adam step in numpy (textbook form); returns the new (W, M, V)."""
    M = beta1 * M + (1 - beta1) * grad
    V = beta2 * V + (1 - beta2) * grad * grad
    m_hat = M / (1 - beta1 ** t)
    v_hat = V / (1 - beta2 ** t)
    return W - lr * m_hat / (np.sqrt(v_hat) + eps), M, V


def reference_sgd_step(W, Vel, grad, lr, momentum=0.9, nesterov=True):
    """One SGD-momentum step in numpy; returns the new (W, velocity)."""
    Vel = momentum * Vel - lr * grad
    return W + (momentum * Vel - lr * grad if nesterov else Vel), Vel
