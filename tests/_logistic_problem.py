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
