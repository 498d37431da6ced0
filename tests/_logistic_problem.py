"""A random weighted logistic problem for the loss and step tests (test_logistic, test_logistic_steps)."""

import numpy as np


def problem(n, d, K, seed=0):
    """X (n x d float32), class codes (uint32, K classes, at least 2), sample weights in
    [0.5, 2) and a starting W (K x (d + 1) float32)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    codes = rng.integers(0, max(K, 2), n).astype(np.uint32)
    sw = rng.uniform(0.5, 2.0, n)
    W = (0.3 * rng.standard_normal((K, d + 1))).astype(np.float32)
    return X, codes, sw, W


def loss_residuals(X, codes, W):
    """Per-row log-loss and residuals (dloss/dlogits) in float64 at W (K x (d + 1), intercept
    last; K = 1: binary with codes 0/1), and X as float64."""
    from scipy.special import logsumexp, softmax
    X = X.astype(np.float64)
    n = X.shape[0]
    Z = X @ W[:, :-1].T + W[:, -1]
    if W.shape[0] == 1:
        z, t = Z[:, 0], (codes == 1).astype(float)
        loss = np.logaddexp(0, z) - t * z
        R = (1 / (1 + np.exp(-z)) - t)[:, None]
    else:
        loss = logsumexp(Z, axis=1) - Z[np.arange(n), codes]
        R = softmax(Z, axis=1)
        R[np.arange(n), codes] -= 1
    return X, loss, R
