"""LogisticRegression: scikit-learn's estimator contract, trained on a Vulkan device.

The class is thin: it validates, encodes the labels and weights, and orchestrates. The device
work (upload, fused gradient kernels, optimizer steps) lives in ``_loss.py``; step sizes, the
convergence test and the L-BFGS driver in ``_optim.py``.
"""

import functools
import numbers
import warnings

import numpy as np
import scipy.sparse
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state, compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d, validate_data
# Private, with no public form yet: parameter validation as scikit-learn's own estimators do it
# (the error messages users know). pyproject.toml bounds scikit-learn above for these two lines.
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from .._runtime import device as _device
from ..array import Array, buffer_of
from ..errors import DeviceNotFoundError
from . import _fullbatch, _loss, _optim, _shards

__all__ = ["LogisticRegression"]

# X with at least this many elements is predicted on the device (below, numpy is faster anywhere)
_PREDICT_ON_DEVICE = 1 << 21
_AUTO_BATCH_MIN = 16
_AUTO_STEPS_PER_EPOCH = 32     # 'auto' batches give this many steps per epoch on small data


_F32_MAX = float(np.finfo(np.float32).max)
_F32_TINY = float(np.finfo(np.float32).tiny)
# largest sum of sample weights: leaves float32 room for per-sample losses and features of ~1e8
_MAX_WEIGHT_SUM = 1e30
# largest penalty strength times learning rate of the micro-batch solvers: the device squares the
# gradient l2 * w (Adam's second moment) in float32, and after a first step |w| is about the
# learning rate; past sqrt(float32 max) ~ 1.8e19 the square overflows, Adam's steps become 0 and
# the coefficients freeze at +-lr with a huge loss (C=1e-30 did that, silently)
_MAX_PENALTY_STEP = 1e18


# Fits of data that lives elsewhere (a dask array spread over workers): the distributed layer
# registers itself here on import (kompute_ml.dask), so this layer never imports a higher one.
_COLLECTIONS = []


def register_collection(accepts, fit, predict):
    """Route ``fit``/``predict*`` of inputs for which ``accepts(X)`` is true to ``fit(est, X, y,
    sample_weight)`` and ``predict(est, X, method)`` (used by kompute_ml.dask)."""
    _COLLECTIONS.append((accepts, fit, predict))


def _collection(X):
    for entry in _COLLECTIONS:
        if entry[0](X):
            return entry
    return None


def _predicts_collections(method):
    """A prediction method of a fitted estimator that hands a registered collection (a dask
    array) to its ``predict`` (block by block, a collection back) and anything else to ``method``."""
    @functools.wraps(method)
    def dispatch(self, X):
        check_is_fitted(self)
        other = _collection(X)
        if other is not None:
            return other[2](self, X, method.__name__)
        return method(self, X)
    return dispatch


def _check_float32_range(X):
    """The device computes in float32: a finite value past its range would become inf there."""
    if X.dtype == np.float32:          # finite float32 values are in range by definition
        return
    data = X.data if hasattr(X, "toarray") else X
    largest = max(data.max(), -data.min()) if data.size else 0.0   # no |X| temporary
    if largest > _F32_MAX:
        raise ValueError(f"X holds values beyond float32's range (largest magnitude "
                         f"{largest:.3g} > {_F32_MAX:.3g}); the device computes in "
                         f"float32: scale X first (e.g. sklearn.preprocessing.StandardScaler)")


def _validate_X(estimator, X, reset, finite_on_device=False):
    """X as the device will read it: a kompute_ml Array is checked where it is (no round trip)
    and returned realized as float32; anything else goes through scikit-learn's validate_data.
    ``finite_on_device``: the NaN / inf (and, for host data, float32 range) tests are left to
    the caller: an Array's to the fused kernel's first pass (or :func:`_assert_finite_device`
    where no fused pass runs), host data's to :func:`_assert_finite_host` or the predicting
    kernel's test."""
    if not isinstance(X, Array):
        X = validate_data(estimator, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=reset, ensure_all_finite=not finite_on_device)
        if not finite_on_device:
            _check_float32_range(X)
        return X
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D array, got a {X.ndim}D kompute_ml Array of shape "
                         f"{X.shape}")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"Found array with {X.shape[0]} sample(s) and {X.shape[1]} feature(s) "
                         f"(shape={X.shape}) while a minimum of 1 is required.")
    if X.dtype != np.float32:
        X = X.astype(np.float32)
    if not finite_on_device:
        _assert_finite_device(X)
    # n_features_in_ / feature_names_in_ set or checked without converting X to numpy
    validate_data(estimator, X, reset=reset, skip_check_array=True)
    buffer_of(X)        # a lazy X is computed once, here, not by each pass that reads it
    return X


def _assert_finite_device(X):
    """NaN / inf in a device Array, tested where it is (two reductions, two scalars back)."""
    # max and min propagate NaN, and are +-inf exactly when an entry is
    if not (np.isfinite(float(X.max())) and np.isfinite(float(X.min()))):
        raise ValueError("Input X contains NaN or infinity.")


def _assert_finite_host(X):
    """The checks ``finite_on_device`` skipped, on the host: NaN / inf, then float32's range."""
    from sklearn.utils import assert_all_finite
    assert_all_finite(X.data if scipy.sparse.issparse(X) else X, input_name="X")
    _check_float32_range(X)


def _validate_Xy(estimator, X, y, reset, finite_on_device=False):
    """fit's (X, y): X as :func:`_validate_X` gives it, y a 1-D numpy array of its length.

    ``finite_on_device``: leave NaN / inf / float32 range to the fused kernel's first pass
    (``_fullbatch``), so that the host reads X once (while uploading it), not three times.
    """
    if not isinstance(X, Array):
        X, y = validate_data(estimator, X, y, accept_sparse="csr",
                             dtype=[np.float64, np.float32], reset=reset,
                             ensure_all_finite=not finite_on_device)
        if not finite_on_device:
            _check_float32_range(X)
        return X, y
    X = _validate_X(estimator, X, reset, finite_on_device)
    y = column_or_1d(np.asarray(y), warn=True)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                         f"[{X.shape[0]}, {y.shape[0]}]")
    return X, y


def _check_sample_weight(sample_weight, n_samples):
    """sample_weight as float64 of shape (n_samples,): ones when None, a scalar broadcast, else
    finite and non-negative (scikit-learn's rules, through its public check_array; its own helper
    is private and wants X, which may be a kompute_ml Array on the device)."""
    if sample_weight is None:
        return np.ones(n_samples)
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, sample_weight, dtype=np.float64)
    # copy: the caller's array is never written (the weights are scaled by class weights later)
    weights = check_array(sample_weight, ensure_2d=False, dtype=np.float64, order="C", copy=True,
                          input_name="sample_weight")
    if weights.ndim != 1 or weights.shape[0] != n_samples:
        raise ValueError(f"sample_weight.shape == {weights.shape}, expected ({n_samples},)!")
    if np.any(weights < 0):
        raise ValueError("Negative values in data passed to sample_weight")
    return weights


def _encode_labels(y):
    """(sorted distinct labels, code of each label): np.unique's answer, in O(n) for integers
    of a moderate range (a counting pass instead of a sort: 1e6 labels in a few ms)."""
    if y.dtype.kind in "iu" and y.size and y.ndim == 1:
        lo, hi = int(y.min()), int(y.max())
        if hi - lo <= 1:          # the minimum and the maximum occur: no counting pass
            return np.arange(lo, hi + 1).astype(y.dtype), (y - lo if lo else y)
        if hi - lo < 1 << 20:
            shifted = y - lo if lo else y
            present = np.flatnonzero(np.bincount(shifted, minlength=hi - lo + 1))
            if present.size == hi - lo + 1:      # every value in lo..hi occurs: codes = y - lo
                return (present + lo).astype(y.dtype), shifted
            lookup = np.zeros(hi - lo + 1, dtype=np.intp)
            lookup[present] = np.arange(present.size)
            return (present + lo).astype(y.dtype), lookup[shifted]
    classes = np.unique(y)
    return classes, np.searchsorted(classes, y)


# integer labels on the device spanning at most this many values are encoded there (one
# counting pass of n x span comparisons); wider ones go through the host's _encode_labels
_DEVICE_LABEL_SPAN = 64
_UNIT_WEIGHT_BITS = int(np.float32(1.0).view(np.uint32))


def _encode_device_labels(y, X):
    """(sorted distinct labels, :class:`_loss.DeviceMeta`) for integer or bool labels ``y``
    that are a 1-D kompute_ml Array on X's device, encoded there with unit sample weights:
    the host reads the labels' minimum, maximum and (past two values) per-value counts, never
    the n labels. None where the host path applies (another dtype or device, a label range
    wider than _DEVICE_LABEL_SPAN, no rows)."""
    from .._api import manipulation as _manipulation
    from .. import array as _arr
    n = X.shape[0]
    if (not isinstance(y, Array) or y.ndim != 1 or y.dtype.kind not in "iub"
            or y.device is not X.device or n == 0):
        return None
    if y.shape[0] != n:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                         f"[{n}, {y.shape[0]}]")
    yi = y.astype(np.int32) if y.dtype.kind == "b" else y
    lo, hi = int(_arr.min(yi)), int(_arr.max(yi))
    span = hi - lo + 1
    if span > _DEVICE_LABEL_SPAN:
        return None
    shifted = yi - lo if lo else yi
    if span <= 2:          # the minimum and the maximum occur: every value of lo..hi does
        present = np.arange(span)
    else:
        values = _arr.arange(span, dtype=shifted.dtype, device=y.device)
        counts = _arr.sum(_arr.equal(_arr.reshape(shifted, (n, 1)), values), axis=0).numpy()
        present = np.flatnonzero(counts)
    codes = shifted
    if present.size < span:        # values missing inside lo..hi: codes through a lookup
        lookup = np.zeros(span, dtype=np.int32)
        lookup[present] = np.arange(present.size, dtype=np.int32)
        codes = _manipulation.take(_arr.asarray(lookup, device=y.device), shifted)
    classes = (present + lo).astype(np.dtype(y.dtype))
    column = _arr.arange(2, dtype=np.uint32, device=y.device)
    meta = _arr.where(_arr.equal(column, 0), _arr.reshape(codes.astype(np.uint32), (n, 1)),
                      np.uint32(_UNIT_WEIGHT_BITS))
    return classes, _loss.DeviceMeta(meta)


def _check_targets(y):
    """check_classification_targets, without its O(n) unique pass for 1-D integer labels (always
    'binary' or 'multiclass': valid; 25 ms at 1e6 labels, a third of a GPU fit's budget)."""
    if isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "iub":
        return
    check_classification_targets(y)


def _auto_batch(n, device, d):
    """batch_size='auto' on ``device`` for ``d`` features: the rows that fill the device in one
    step, ``step_groups(device) * fill_rows(device, d)`` (256 workgroups of ceil(4096 / d) rows on
    a GPU: 4096 rows at 256 features; on a CPU device one workgroup of ceil(2048 / d) rows per
    core), and at least 32 steps per epoch on small data (but >= 16 rows)."""
    fill = _loss.step_groups(device) * _loss.fill_rows(device, d)
    return int(max(1, min(n, fill, max(_AUTO_BATCH_MIN, n // _AUTO_STEPS_PER_EPOCH))))


class LogisticRegression(ClassifierMixin, BaseEstimator):
    """Logistic regression (binary and multinomial) trained on a Vulkan device.

    Minimizes scikit-learn's objective ``sum_i s_i * logloss_i + ||coef||^2 / (2 C)`` (the
    intercept is not penalized; ``s_i`` are the sample weights times the class weights), in
    float32 on the device. Binary problems use one logit and the sigmoid, three or more classes
    the softmax (multinomial). X and y are uploaded once per fit. ``'lbfgs'`` computes the loss and
    gradient in one fused pass over X per evaluation; a micro-batch step (``'adam'``, ``'sgd'``)
    is one dispatch for small problems and two otherwise (the rule: docs/logistic.md), an epoch
    one submit, and only the epoch's losses and the parameters come back to the host.

    Parameters
    ----------
    penalty : {'l2'} or None, default='l2'
        ``'l2'``: the ``||coef||^2 / (2 C)`` term; None: no penalty.
    C : float, default=1.0
        Inverse of the regularization strength; must be positive.
    fit_intercept : bool, default=True
        Whether to learn an intercept per logit.
    solver : {'auto', 'adam', 'sgd', 'lbfgs'}, default='auto'
        ``'auto'``: ``'lbfgs'`` when X, as float32, takes at most half of the device's memory
        (``device_local_memory``; always where the driver does not say), ``'adam'`` otherwise
        and for ``partial_fit`` (whose data arrive in parts).
        ``'adam'``: micro-batch Adam. ``'sgd'``: micro-batch SGD with Nesterov momentum 0.9.
        Both minimize the weight-averaged objective (mean loss + ``||coef||^2 / (2 C S)``, S the
        total weight: the same minimizer). ``'lbfgs'``: scipy's L-BFGS-B on the host, with
        full-batch loss and gradient computed on the device in one fused pass over X per
        evaluation (only the parameters and the gradient cross the bus); the most precise
        match of scikit-learn's solution.
    batch_size : int or 'auto', default='auto'
        Rows per micro-batch step ('adam', 'sgd'). ``'auto'``: the rows that fill the device in
        one step, ``min(groups * rows, max(16, n_samples // 32), n_samples)``: on a GPU 256
        workgroups of ``ceil(4096 / n_features)`` rows (4096 rows at 256 features); on a CPU
        device one workgroup per CPU core (at most 32) of ``ceil(2048 / n_features)`` rows (rows
        at most 64 per workgroup). A step costs about the same on a GPU up to that size
        (latency-bound), so smaller batches only add steps and noise.
    learning_rate : float or 'auto', default='auto'
        Step size of 'adam'/'sgd'. ``'auto'``: 0.05 for 'adam'; for 'sgd' ``1 / L`` with L the
        weighted mean Lipschitz constant of a row's loss gradient (``(||x||^2 + 1) / 4`` binary,
        ``/ 2`` multinomial), so that unscaled features are safe. Either is divided by 5 each time
        the epoch loss stalls for ``n_iter_no_change`` epochs (three times at most; the next stall
        ends training). A float is kept constant and the first stall ends training.
    max_iter : int, default=100
        Maximum number of epochs ('adam', 'sgd') or of iterations ('lbfgs').
    tol : float or None, default=1e-4
        'adam'/'sgd': an epoch improves when its loss (the averaged objective) is below the best
        so far minus ``tol``; None: always run ``max_iter`` epochs. 'lbfgs': the gradient
        tolerance (scipy's ``gtol``).
    n_iter_no_change : int, default=5
        Epochs without improvement that make a stall ('adam', 'sgd').
    shuffle : bool, default=True
        Visit the rows in a new random order every epoch ('adam', 'sgd'). The order is an index
        permutation the device makes per epoch (a keyed pseudo-random permutation, the key
        drawn from ``random_state``); X never moves.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling.
    class_weight : dict, 'balanced' or None, default=None
        Weights of the classes (``{label: weight}``), multiplied into the sample weights.
        ``'balanced'``: ``n_samples / (n_classes * np.bincount(y))``.
    warm_start : bool, default=False
        Start from the previous ``coef_`` and ``intercept_`` when their shapes fit.
    verbose : int, default=0
        1 or more: a progress bar (tqdm) with the epoch loss.
    device : None, int, str, kompute_ml.Device or list of them, default=None
        The Vulkan device (``kompute_ml.get_device`` semantics); None: the default device. A
        list: ``fit`` splits a dense host X's rows across those devices (full batch: solver
        'auto' or 'lbfgs'), each device computing its rows' loss and gradient at once, in
        shares that follow their measured speeds (a device that would slow the fit gets none;
        ``device_rows_`` tells the split); predictions run on the first.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels, sorted.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients (one row for a binary problem: the logit of ``classes_[1]``).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts (zeros when ``fit_intercept=False``).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the features seen in ``fit``, when X has string column names.
    n_iter_ : ndarray of shape (1,)
        Epochs ('adam', 'sgd') or L-BFGS iterations run ('lbfgs', and 'auto' on data that
        fits the device).
    device_rows_ : ndarray of shape (n_devices,)
        Only after a fit with a list of devices: the rows each device held.
    loss_curve_ : list of float
        The objective (averaged over the total sample weight) after each epoch, or at each
        L-BFGS iteration.

    See Also
    --------
    sklearn.linear_model.LogisticRegression : the same model, fitted on the CPU.

    Notes
    -----
    Computations on the device are float32; ``coef_`` and ``intercept_`` are float64 copies.
    Data larger than one storage buffer (the device's ``max_storage_buffer_range``) is split into
    row chunks; data larger than device memory can be streamed through ``partial_fit``.
    Sparse X is accepted and densified one chunk at a time. ``predict`` and friends run on the
    device for large X and in numpy otherwise; a fitted model unpickled where no Vulkan device
    exists predicts with numpy (with a warning).

    Examples
    --------
    >>> import numpy as np
    >>> from kompute_ml.linear_model import LogisticRegression
    >>> X = np.array([[0, 0], [1, 0], [1, 0], [1, 1], [1, 1]], dtype=np.float32)
    >>> y = np.array([0, 0, 0, 1, 1])
    >>> clf = LogisticRegression(solver="lbfgs").fit(X, y)
    >>> clf.predict(X).tolist()
    [0, 0, 0, 1, 1]
    >>> clf.predict_proba(X).shape
    (5, 2)
    """

    _parameter_constraints = {
        "penalty": [StrOptions({"l2"}), None],
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions({"auto", "adam", "sgd", "lbfgs"})],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left"), None],
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "device": [None, Interval(numbers.Integral, 0, None, closed="left"), str,
                   _device.Device, _device.DeviceInfo, list, tuple],
    }

    def __init__(self, penalty="l2", *, C=1.0, fit_intercept=True, solver="auto",
                 batch_size="auto", learning_rate="auto", max_iter=100, tol=1e-4,
                 n_iter_no_change=5, shuffle=True, random_state=None, class_weight=None,
                 warm_start=False, verbose=0, device=None):
        self.penalty = penalty
        self.C = C
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.random_state = random_state
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.verbose = verbose
        self.device = device

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True          # densified one chunk at a time
        return tags

    # -- fitting ---------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model to the training data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data (converted to float32 on the device).
        y : array-like of shape (n_samples,)
            Target labels, of any type (at least two distinct values).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples (all ones when None).

        Returns
        -------
        self : LogisticRegression
            The fitted estimator.
        """
        other = _collection(X)
        if other is not None:         # a dask array: fitted on the Client's workers
            return other[1](self, X, y, sample_weight)
        finite_on_device = self.solver != "sgd" and self.solver != "adam"
        encoded = None
        if isinstance(X, Array) and sample_weight is None and self.class_weight is None:
            encoded = _encode_device_labels(y, X)     # labels on the device stay there
        if encoded is not None:
            X = _validate_X(self, X, True, finite_on_device)
            classes, codes = encoded
        else:
            X, y = _validate_Xy(self, X, y, reset=True, finite_on_device=finite_on_device)
            _check_targets(y)
            classes, codes = _encode_labels(y)
        weights = self._weights(X, y, sample_weight, classes)
        self.classes_ = classes
        warm = (self.warm_start and hasattr(self, "coef_")
                and self.coef_.shape == self._coef_shape(X.shape[1]))
        W = self._packed_params() if warm else None
        self.loss_curve_ = []
        self._partial_state = None
        if isinstance(self.device, (list, tuple)):
            self._run_sharded(X, codes, weights, W)
        else:
            self._run(X, codes, weights, W, partial=False)
        return self

    def _devices(self):
        """The devices of ``device=[...]`` (a fit across them), checked."""
        if not self.device:
            raise ValueError("device=[] names no device: give one or more")
        return [_device.get_device(spec) for spec in self.device]

    def _run_sharded(self, X, codes, weights, W0):
        """The full-batch fit with X's rows split across ``self.device``'s devices."""
        devices = self._devices()
        if self.solver not in ("auto", "lbfgs"):
            raise ValueError(f"a fit across devices (device={self.device!r}) is full batch: "
                             f"solver must be 'auto' or 'lbfgs', got {self.solver!r}")
        if isinstance(X, Array) or scipy.sparse.issparse(X):
            raise ValueError("a fit across devices splits a dense host X (numpy) by rows; got "
                             f"{'a kompute_ml Array' if isinstance(X, Array) else 'sparse X'}")
        n, d = X.shape
        K = 1 if len(self.classes_) == 2 else len(self.classes_)
        if W0 is None:
            W0 = np.zeros((K, d + 1))
        rows = _shards.plan_shares(n, [_shards.probe(dev, d, K) for dev in devices])
        parts, start = [], 0
        for dev, r in zip(devices, rows):
            if r:
                parts.append((dev, X[start:start + r], codes[start:start + r],
                              weights[start:start + r]))
            start += r
        total = _loss.total_weight(weights)
        l2 = 1.0 / (self.C * total) if self.penalty == "l2" else 0.0
        prog = _shards.ShardedLogLoss(parts, K, l2=l2, fit_intercept=self.fit_intercept)
        try:
            prog.total_weight = total
            W, n_iter = self._run_lbfgs(prog, W0, X)
        finally:
            prog.release()
        W = np.asarray(W, dtype=np.float64)
        self.coef_ = np.ascontiguousarray(W[:, :-1])
        self.intercept_ = W[:, -1].copy() if self.fit_intercept else np.zeros(K)
        self.n_iter_ = np.array([n_iter], dtype=np.int32)
        self.device_rows_ = np.array(rows, dtype=np.int64)

    def _micro_batch_solver(self):
        return self.solver != "lbfgs"

    def _full_batch(self, dev, X):
        """solver='auto''s rule: full batch when X (as float32) fits the device's memory budget."""
        if self.solver == "lbfgs":
            return True
        return self.solver == "auto" and _fullbatch.fits_device(dev, *X.shape)

    @available_if(_micro_batch_solver)
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Run one epoch over a batch of data, continuing from the current state.

        Each call uploads its data, runs one epoch of the micro-batch solver and keeps the
        optimizer's state on the host, so data larger than device memory can be streamed through
        in parts. The L2 term is scaled by the weight of each call's data. Only the micro-batch
        solvers have this method (``hasattr(LogisticRegression(solver='lbfgs'), 'partial_fit')``
        is False).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A batch of training data.
        y : array-like of shape (n_samples,)
            Its labels.
        classes : array-like of shape (n_classes,), default=None
            All the labels of the problem: required on the first call, ignored afterwards.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples.

        Returns
        -------
        self : LogisticRegression
            The updated estimator.
        """
        first = not hasattr(self, "classes_")
        X, y = _validate_Xy(self, X, y, reset=first)
        check_classification_targets(y)
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            if isinstance(self.class_weight, str):
                raise ValueError("class_weight='balanced' is not supported for partial_fit: pass "
                                 "compute_class_weight('balanced', classes=classes, y=y) computed "
                                 "on a large enough sample of the targets as class_weight.")
            classes = np.unique(np.asarray(classes))
        else:
            if classes is not None and not np.array_equal(np.unique(classes), self.classes_):
                raise ValueError(f"`classes={np.unique(classes)!r}` is not the same as on the "
                                 f"first call to partial_fit, which was {self.classes_!r}")
            classes = self.classes_
        unknown = np.setdiff1d(np.unique(y), classes)
        if unknown.size:
            raise ValueError(f"y contains labels not in classes: {unknown!r}")
        weights = self._weights(X, y, sample_weight, classes)
        if first:
            self.classes_ = classes
            self.loss_curve_ = []
            self._partial_state = None
        codes = np.searchsorted(classes, y)
        W = None if first else self._packed_params()
        self._run(X, codes, weights, W, partial=True)
        return self

    def _weights(self, X, y, sample_weight, classes):
        """Sample weights times class weights (float64); the errors scikit-learn gives."""
        if len(classes) < 2:
            raise ValueError("This solver needs samples of at least 2 classes in the data, but "
                             f"the data contains only one class: {classes[0]!r}")
        if sample_weight is None and self.class_weight is None:
            # unit weights: a read-only view of one 1.0, no n-sized array and no O(n) checks
            # (three passes and two 8 MB temporaries at 1e6 rows: ~10 ms of a fit's fixed cost)
            weights = np.broadcast_to(np.float64(1.0), (X.shape[0],))
            total, smallest = float(X.shape[0]), 1.0
        else:
            weights = _check_sample_weight(sample_weight, X.shape[0])
            if self.class_weight is not None:
                cw = compute_class_weight(self.class_weight, classes=classes, y=y)
                weights = weights * cw[np.searchsorted(classes, y)]
            if not np.any(weights > 0):
                raise ValueError("The sample weights (times the class weights) are all zero: "
                                 "at least one sample needs a non-zero weight")
            total, smallest = float(np.sum(weights)), float(np.min(weights[weights > 0]))
        # the device sums weighted losses and gradients in float32: weights summing past
        # _MAX_WEIGHT_SUM (or below float32's normal range) would overflow (or vanish) there and
        # leave a zero model and a nan loss, silently
        if not total <= _MAX_WEIGHT_SUM or smallest < _F32_TINY:
            raise ValueError(
                f"The sample weights (times the class weights) range from {smallest:g} to "
                f"{float(np.max(weights)):g} and sum to {total:g}; the device computes in "
                f"float32, so they must sum to at most {_MAX_WEIGHT_SUM:g} and each non-zero "
                f"weight be at least {_F32_TINY:g}. Divide them by a common factor and multiply "
                "C by the same factor (the fit is unchanged)")
        return weights

    def _coef_shape(self, n_features):
        k = len(self.classes_)
        return (1 if k == 2 else k, n_features)

    def _packed_params(self):
        """coef_ with intercept_ as a last column: the device's K x (d + 1) layout."""
        coef = self.coef_.toarray() if scipy.sparse.issparse(self.coef_) else self.coef_
        return np.hstack([coef, np.asarray(self.intercept_).reshape(-1, 1)])

    def _run(self, X, codes, weights, W0, partial):
        if isinstance(self.device, (list, tuple)):
            raise ValueError(f"device={self.device!r} (a fit across devices) is for fit with "
                             "the full-batch solver; partial_fit trains on one device")
        n, d = X.shape
        K = 1 if len(self.classes_) == 2 else len(self.classes_)
        if W0 is None:
            W0 = np.zeros((K, d + 1))
        dev = _device.get_device(self.device)
        if isinstance(X, Array) and X.device is not dev:
            if self.device is not None:
                raise ValueError(f"X is on {X.device.name!r} but device={self.device!r} names "
                                 f"{dev.name!r}; move X with km.asarray(X, device=...)")
            dev = X.device             # no device chosen: train where the data is
        total = _loss.total_weight(weights)
        l2 = 1.0 / (self.C * total) if self.penalty == "l2" else 0.0
        micro = partial or not self._full_batch(dev, X)
        fused = None if micro else _fullbatch.fused_layout(dev, d, K)
        if fused is None and not partial and self.solver not in ("sgd", "adam"):
            # fit left NaN / inf to the fused kernel's check
            if isinstance(X, Array):
                _assert_finite_device(X)
            else:
                _assert_finite_host(X)
        batch = None
        if micro:
            batch = _auto_batch(n, dev, d) if self.batch_size == "auto" else min(int(self.batch_size), n)
        dense = fused is not None and not isinstance(X, Array) and not scipy.sparse.issparse(X)
        if dense:                  # contiguous rows: X goes straight into staging memory
            data = _fullbatch.DenseDataset(dev, X, codes, weights)
        else:        # the fused pass reads rows in order: no index buffer
            data = _loss.DeviceDataset(dev, X, codes, weights, index=fused is None)
        prog = None
        try:
            if fused is not None:
                prog = _fullbatch.FusedLogLoss(data, K, l2=l2, fit_intercept=self.fit_intercept,
                                               layout_=fused)
            else:
                prog = _loss.LogLossProgram(data, K, l2=l2, fit_intercept=self.fit_intercept,
                                            batch_size=batch)
            prog.total_weight = total
            if micro:
                W, n_iter = self._run_micro(prog, data, W0, total / n, partial, X, weights)
            else:
                W, n_iter = self._run_lbfgs(prog, W0, X)
        finally:
            if prog is not None:
                prog.release()
            data.release()
        W = np.asarray(W, dtype=np.float64)
        self.coef_ = np.ascontiguousarray(W[:, :-1])
        self.intercept_ = W[:, -1].copy() if self.fit_intercept else np.zeros(K)
        self.n_iter_ = np.array([n_iter], dtype=np.int32)

    def _reg(self, prog, W):
        coef = np.asarray(W[:, :-1], dtype=np.float64)
        return 0.5 * prog.l2 * float(np.sum(coef * coef))

    def _run_micro(self, prog, data, W0, mean_weight, partial, X, weights):
        rng = check_random_state(self.random_state)
        auto = self.learning_rate == "auto"
        solver = "adam" if self.solver == "auto" else self.solver   # 'auto' streams with Adam
        if not auto:
            lr = float(self.learning_rate)
        elif solver == "adam":
            lr = _optim.AUTO_LR["adam"]
        else:
            lr = _optim.sgd_auto_lr(X, weights, prog.K, self.fit_intercept)
        state = getattr(self, "_partial_state", None) if partial else None
        if state is not None:
            opt = _optim.make_optimizer(solver, state["lr"], mean_weight, t=state["t"])
            prog.set_state(W0, state["M"], state["V"])
            rng = state.get("rng", rng)
        else:
            opt = _optim.make_optimizer(solver, lr, mean_weight)
            prog.set_state(W0)
        if prog.l2 * opt.lr > _MAX_PENALTY_STEP:
            raise ValueError(
                f"C={self.C:g} is too small for solver={solver!r}: the penalty strength "
                f"1 / (C * sum of sample weights) = {prog.l2:g} times the learning rate "
                f"{opt.lr:g} exceeds {_MAX_PENALTY_STEP:g}, past which the device's float32 "
                "steps overflow. Raise C (coefficients are ~0 at such a C anyway), or use "
                "solver='lbfgs'")
        schedule = _optim.PlateauSchedule(self.tol, self.n_iter_no_change, adaptive=auto)
        epochs = 1 if partial else self.max_iter
        bar = self._progress(epochs)
        W, converged, epoch = W0, False, 0
        try:
            for epoch in range(1, epochs + 1):
                order = data.shuffle(rng) if self.shuffle else None
                loss_sum, W = prog.epoch(opt, order)
                loss = loss_sum / prog.total_weight + self._reg(prog, W)
                if not np.isfinite(loss):
                    # with a tiny C the penalty (1 / (C * sum of weights)) dominates each step
                    cause = (f"C={self.C:g} is too small (penalty strength {prog.l2:g} per "
                             f"step of learning rate {opt.lr:g}): raise C, or lower the "
                             "learning rate") if prog.l2 * opt.lr > 1 else (
                        f"the learning rate ({opt.lr:g}) is too large for this data: lower "
                        "it, or scale X (StandardScaler)")
                    raise ValueError(f"Floating-point overflow: the loss became {loss} at "
                                     f"epoch {epoch}; {cause}")
                self.loss_curve_.append(loss)
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(loss=f"{loss:.6g}", lr=f"{opt.lr:.3g}")
                if not partial and schedule.update(loss, opt):
                    converged = True
                    break
        finally:
            if bar is not None:
                bar.close()
        if partial:
            W, M, V = prog.get_state()
            self._partial_state = {"t": opt.t, "lr": opt.lr, "M": M, "V": V, "rng": rng}
            previous = int(self.n_iter_[0]) if hasattr(self, "n_iter_") else 0
            return W, previous + 1
        if not converged and self.tol is not None:
            warnings.warn(f"{self.solver} did not converge in {self.max_iter} epochs (the epoch "
                          f"loss still improved by more than tol={self.tol}); increase max_iter",
                          ConvergenceWarning)
        return W, epoch

    def _run_lbfgs(self, prog, W0, X=None):
        free = np.ones(W0.shape, dtype=bool)       # the parameters L-BFGS sees
        if not self.fit_intercept:
            free[:, -1] = False

        def fun(w):
            if self.fit_intercept:                  # every parameter is free: views, no copies
                f, g = prog.loss_gradient(w.reshape(free.shape))
                return f, g.reshape(-1)
            W = np.zeros(free.shape)
            W[free] = w
            f, g = prog.loss_gradient(W)
            return f, g[free]

        bar = self._progress(self.max_iter)

        def callback(intermediate_result):
            self.loss_curve_.append(float(intermediate_result.fun))
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{intermediate_result.fun:.6g}")

        try:
            res = _optim.minimize_lbfgs(fun, np.asarray(W0, dtype=np.float64)[free],
                                        max_iter=self.max_iter, tol=self.tol, callback=callback)
        except ValueError:
            if X is not None and not isinstance(X, Array):
                _assert_finite_host(X)       # the precise message: range, or NaN / inf
            raise
        finally:
            if bar is not None:
                bar.close()
        if res.status == 1:
            warnings.warn(f"lbfgs did not converge in {self.max_iter} iterations; increase "
                          "max_iter or scale the data", ConvergenceWarning)
        if not self.loss_curve_:
            self.loss_curve_.append(float(res.fun))
        W = np.zeros(free.shape)
        W[free] = res.x
        return W, max(1, int(res.nit))

    def _progress(self, total):
        if not self.verbose:
            return None
        from tqdm.auto import tqdm
        return tqdm(total=total, desc=f"LogisticRegression({self.solver})",
                    unit="epoch" if self.solver in ("adam", "sgd") else "it")

    # -- prediction ------------------------------------------------------------------------
    @_predicts_collections
    def decision_function(self, X):
        """Decision values (logits) of the samples.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            For a binary problem the logit of ``classes_[1]``; otherwise one column per class.
        """
        if isinstance(X, Array):       # on the device already: scored there, only scores return
            X = _validate_X(self, X, reset=False)
            return self._scores(_loss.decision_function(X.device, X, self._packed_params()))
        # NaN / inf / float32's range: tested on the host for small or sparse X; a large dense X
        # predicted on the device is tested there, as its rows are read (scikit-learn's host
        # test took most of a large predict: decision 0022)
        X = _validate_X(self, X, reset=False, finite_on_device=True)
        dev = None
        if X.shape[0] * X.shape[1] >= _PREDICT_ON_DEVICE:
            dev = self._predict_device()
        if dev is None or scipy.sparse.issparse(X):
            _assert_finite_host(X)
        scores = None
        if dev is not None:
            scores = _loss.decision_function(dev, X, self._packed_params(),
                                             check=not scipy.sparse.issparse(X))
            if np.isnan(scores).any():
                _assert_finite_host(X)      # raises scikit-learn's error for what X holds
            scores = scores.astype(np.float64)
        if scores is None:
            coef = self.coef_.toarray() if scipy.sparse.issparse(self.coef_) else self.coef_
            scores = np.asarray(X @ coef.T, dtype=np.float64) + self.intercept_
        return self._scores(scores)

    @staticmethod
    def _scores(scores):
        scores = np.asarray(scores, dtype=np.float64)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def _predict_device(self):
        """The device to predict on, or None (with a warning) where no Vulkan device is usable."""
        try:
            if isinstance(self.device, (list, tuple)):
                return self._devices()[0]
            return _device.get_device(self.device)
        except DeviceNotFoundError as exc:
            warnings.warn(f"predicting with numpy: {exc}", UserWarning, stacklevel=3)
            return None

    @_predicts_collections
    def predict(self, X):
        """Predict the class labels of the samples.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        scores = self.decision_function(X)
        idx = (scores > 0).astype(np.intp) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[idx]

    @_predicts_collections
    def predict_proba(self, X):
        """Probability of each class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        return softmax(scores, axis=1)

    @_predicts_collections
    def predict_log_proba(self, X):
        """Logarithm of the probability of each class (computed stably from the logits).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([log_expit(-scores), log_expit(scores)])
        return log_softmax(scores, axis=1)
