"""numpy's polynomial functions (coefficients highest power first): polyval, polyfit, polyadd,
polysub, polymul, polyder, polyint, and poly, polydiv, roots.

polyval is Horner's rule over the elements (lazy, fused); polyfit a least-squares fit: the
scaled Vandermonde matrix and its QR factorization (``linalg.qr``: on the device for a tall
matrix), the small R's SVD on the host for numpy's rank and cutoff, Q^T y on the device. The
arithmetic of coefficient arrays (add, subtract, multiply: a convolution, derivatives and
integrals) runs on the device; poly (products of roots or a characteristic polynomial), polydiv
(a long division with numpy's trailing-zero trimming) and roots (eigenvalues of the companion
matrix) run on a host copy of the few coefficients, as ``linalg`` does small matrices. Complex
results, which kompute_ml cannot hold, raise TypeError.
"""

import warnings

import numpy as np

from .. import array as _a
from .._array.dtypes import FLOAT64, default_int, device_dtype
from . import linalg as _linalg
from . import manipulation as _m
from ._common import arr as _arr, on as _on
from .numeric import vander
from .signal import convolve

__all__ = ["poly", "polyadd", "polyder", "polydiv", "polyfit", "polyint", "polymul", "polysub",
           "polyval", "roots"]

Array = _a.Array


def _atleast_1d(x):
    return x.reshape(1) if x.ndim == 0 else x


def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``: Horner's rule,
    lazy on the device.

    Parameters
    ----------
    p : array_like
        1-D coefficients, highest power first.
    x : array_like
        Where to evaluate.

    Returns
    -------
    Array
        The values, of numpy's dtype (``p``'s and ``x``'s result type).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.polyval(km.asarray([3.0, 0.0, 1.0]), km.asarray([5.0])).numpy()
    array([76.], dtype=float32)
    """
    p, x = _on(p, x)
    y = _a.zeros(x.shape, x.dtype, x.device)
    for k in range(p.shape[0] if p.ndim else 1):
        y = y * x + (p[k] if p.ndim else p)
    return y


def _pad_front(x, n):
    return _m.concat([_a.zeros((n,), x.dtype, x.device), x]) if n else x


def _add(a1, a2, sign):
    a, b = (_atleast_1d(v) for v in _on(a1, a2))
    diff = b.shape[0] - a.shape[0]
    if diff > 0:
        a = _pad_front(a, diff)
    elif diff < 0:
        b = _pad_front(b, -diff)
    return a + b if sign > 0 else a - b


def polyadd(a1, a2):
    """The sum of two polynomials (the shorter padded with leading zeros), on the device.

    Parameters
    ----------
    a1 : array_like
        Coefficients, highest power first.
    a2 : array_like
        Coefficients, highest power first.

    Returns
    -------
    Array
        The sum's coefficients.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.polyadd(km.asarray([1, 2]), km.asarray([9, 5, 4])).numpy()
    array([9, 6, 6])
    """
    return _add(a1, a2, 1)


def polysub(a1, a2):
    """The difference of two polynomials (the shorter padded with leading zeros).

    Parameters
    ----------
    a1 : array_like
        Coefficients of the minuend, highest power first.
    a2 : array_like
        Coefficients of the subtrahend.

    Returns
    -------
    Array
        The difference's coefficients.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.polysub(km.asarray([2, 10, -2]), km.asarray([3, 10, -4])).numpy()
    array([-1,  0,  2])
    """
    return _add(a1, a2, -1)


def polymul(a1, a2):
    """The product of two polynomials: the convolution of their coefficients (device).

    Parameters
    ----------
    a1 : array_like
        Coefficients, highest power first.
    a2 : array_like
        Coefficients, highest power first.

    Returns
    -------
    Array
        The product's coefficients.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.polymul(km.asarray([1, 2, 3]), km.asarray([9, 5, 1])).numpy()
    array([ 9, 23, 38, 17,  3])
    """
    a, b = (_atleast_1d(v) for v in _on(a1, a2))
    return convolve(a, b)


def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial (coefficients times their powers, on the
    device).

    Parameters
    ----------
    p : array_like
        Coefficients, highest power first.
    m : int, default=1
        The order of the derivative.

    Returns
    -------
    Array
        The derivative's coefficients.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.polyder(km.asarray([1, 1, 1, 1])).numpy()
    array([3, 2, 1])
    """
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = _arr(p)
    for _ in range(m):
        n = p.shape[0] - 1
        p = p[:-1] * _a.arange(n, 0, -1, dtype=default_int(p.device), device=p.device)
    return p


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial, the integration constants ``k`` (zeros by
    default) as its lowest coefficients (on the device).

    Parameters
    ----------
    p : array_like
        Coefficients, highest power first.
    m : int, default=1
        The order of the antiderivative.
    k : scalar or array_like, optional
        The integration constants, the first integration's first.

    Returns
    -------
    Array
        The antiderivative's coefficients (float).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.polyint(km.asarray([3.0, 2.0, 1.0])).numpy()
    array([1., 1., 1., 0.])
    """
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    p = _arr(p)
    if k is None:
        k = np.zeros(m, float)
    k = np.atleast_1d(k.numpy() if isinstance(k, Array) else k)
    if len(k) == 1 and m > 1:
        k = k[0] * np.ones(m, float)
    if len(k) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    dev = p.device
    for j in range(m):
        n = p.shape[0]
        quotient = p / _a.arange(n, 0, -1, dtype=default_int(dev), device=dev)
        const = _a.asarray(np.asarray(k[j:j + 1]), device=dev)
        dt = device_dtype(np.result_type(quotient.dtype, const.dtype), dev)
        p = _m.concat([quotient.astype(dt, copy=False), const.astype(dt, copy=False)])
    return p


def _host_real(res, name, device):
    res = np.asarray(res)
    if np.iscomplexobj(res):
        if np.all(res.imag == 0):
            res = res.real
        else:
            raise TypeError(f"{name}: the result is complex ({res!r}); kompute_ml has no "
                            f"complex dtype")
    return _a.asarray(res, device=device)


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (or a square matrix's
    characteristic polynomial): numpy's, on a host copy (a product of few factors, or an
    eigenvalue problem).

    Parameters
    ----------
    seq_of_zeros : array_like
        The roots (1-D), or a square matrix.

    Returns
    -------
    Array
        The coefficients, highest power first, of numpy's dtype (TypeError where they are
        complex).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.poly(km.asarray([1.0, 2.0])).numpy()
    array([ 1., -3.,  2.], dtype=float32)
    """
    x = seq_of_zeros
    dev = x.device if isinstance(x, Array) else None
    h = x.numpy() if isinstance(x, Array) else x
    return _host_real(np.poly(h), "poly", dev)


def roots(p):
    """The roots of the polynomial ``p``: the eigenvalues of its companion matrix, numpy's
    on a host copy of the few coefficients; complex roots raise TypeError (no complex dtype).

    Parameters
    ----------
    p : array_like
        1-D coefficients, highest power first.

    Returns
    -------
    Array
        The roots (float64).

    Examples
    --------
    >>> import kompute_ml as km
    >>> sorted(km.roots(km.asarray([1.0, -3.0, 2.0])).numpy().tolist())
    [1.0, 2.0]
    """
    x = _arr(p)
    return _host_real(np.roots(x.numpy()), "roots", x.device)


def polydiv(u, v):
    """Quotient and remainder of the polynomial division ``u / v``: numpy's long division
    (and its trimming of the remainder's leading zeros) on a host copy of the coefficients.

    Parameters
    ----------
    u : array_like
        The dividend's coefficients, highest power first.
    v : array_like
        The divisor's coefficients.

    Returns
    -------
    q : Array
        The quotient's coefficients (float).
    r : Array
        The remainder's coefficients.

    Examples
    --------
    >>> import kompute_ml as km
    >>> q, r = km.polydiv(km.asarray([3.0, 5.0, 2.0]), km.asarray([2.0, 1.0]))
    >>> q.numpy(), r.numpy()
    (array([1.5 , 1.75], dtype=float32), array([0.25], dtype=float32))
    """
    a, b = _on(u, v)
    q, r = np.polydiv(a.numpy(), b.numpy())
    return _a.asarray(q, device=a.device), _a.asarray(r, device=a.device)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree ``deg`` through the points ``(x, y)``: numpy's
    method (the Vandermonde matrix's columns scaled to unit norm, a least-squares solve with
    numpy's rank cutoff), its QR factorization on the device where ``linalg.qr`` is.

    Parameters
    ----------
    x : array_like
        1-D sample points.
    y : array_like
        1-D values, or 2-D: one fit per column.
    deg : int
        The degree.
    rcond : float, optional
        Singular values below ``rcond`` times the largest are dropped (default:
        ``len(x) * eps``).
    full : bool, default=False
        Also return the residuals, the rank, the singular values and ``rcond``.
    w : array_like, optional
        Weights of the points.
    cov : bool or 'unscaled', default=False
        Also return the coefficients' covariance matrix.

    Returns
    -------
    p : Array
        Coefficients, highest power first (float64; a column per fit for 2-D ``y``).
    residuals, rank, singular_values, rcond
        With ``full``: numpy's diagnostics.
    V : Array
        With ``cov``: the covariance matrix.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.asarray([0.0, 1.0, 2.0, 3.0])
    >>> km.polyfit(x, 2 * x + 1, 1).numpy().round(6)
    array([2., 1.])
    """
    order = int(deg) + 1
    xa, ya = _on(x, y)
    dev = xa.device
    f = device_dtype(FLOAT64, dev)
    xa, ya = xa.astype(f), ya.astype(f)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if xa.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if xa.size == 0:
        raise TypeError("expected non-empty vector for x")
    if ya.ndim < 1 or ya.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if xa.shape[0] != ya.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(xa) * np.finfo(np.dtype(f)).eps
    lhs = vander(xa, order)
    rhs = ya
    if w is not None:
        wa = (w if isinstance(w, Array) else _a.asarray(w, device=dev)).astype(f)
        if wa.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if wa.shape[0] != ya.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * wa.reshape(-1, 1)
        rhs = rhs * (wa.reshape(-1, 1) if rhs.ndim == 2 else wa)
    scale = _a.sqrt(_m.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s, vt = _lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=2)
    if full:
        return c, resids, rank, _a.asarray(s, device=dev), rcond
    if cov:
        vbase = _a.asarray(_inv_gram(s, vt), device=dev) / _linalg.outer(scale, scale)
        if cov == "unscaled":
            fac = 1
        else:
            if len(xa) <= order:
                raise ValueError("the number of data points must exceed order to scale the "
                                 "covariance matrix")
            fac = resids / (len(xa) - order)
        if ya.ndim == 1:
            return c, vbase * fac
        return c, vbase.reshape(order, order, 1) * fac
    return c


def _inv_gram(s, vt):
    """(A^T A)^-1 from A's singular values and right vectors: V S^-2 V^T (host, n x n)."""
    v = vt.T
    return (v / s ** 2) @ v.T


def _lstsq(a, b, rcond):
    """numpy's ``lstsq(a, b, rcond)`` of a (m, n) Array with m >= n or not: the SVD of ``a``
    from its QR factorization (R's SVD on the host, n x n), the minimum-norm solution over
    the singular values above ``rcond`` times the largest; Q^T b and the residuals on the
    device. Returns (x, residuals, rank, singular values, V^T)."""
    m, n = a.shape
    dev = a.device
    if m >= n:
        q, r = _linalg.qr(a)
        u_r, s, vt = np.linalg.svd(r.numpy().astype(np.float64))
        proj = _linalg.matmul(q.mT, b if b.ndim == 2 else b.reshape(-1, 1)).numpy()
        ub = u_r.T @ proj
    else:
        u, s, vt = np.linalg.svd(a.numpy().astype(np.float64), full_matrices=False)
        ub = u.T @ (b.numpy() if b.ndim == 2 else b.numpy().reshape(-1, 1))
    cutoff = rcond * (s.max() if s.size else 0.0)
    keep = s > cutoff
    rank = int(keep.sum())
    inv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
    x = vt.T @ (inv[:, None] * ub)
    xs = _a.asarray(x if b.ndim == 2 else x.reshape(-1), dtype=a.dtype, device=dev)
    if rank == n and m > n:
        res = b - _linalg.matmul(a, xs if b.ndim == 2 else xs.reshape(-1, 1)).reshape(b.shape)
        resids = _m.sum(res * res, axis=0).reshape(-1)
    else:
        resids = _a.zeros((0,), a.dtype, dev)
    return xs, resids, rank, s, vt
