"""numpy's small functions about arrays and dtypes: array2string, array_repr, array_str,
apply_over_axes, common_type, isfortran, mask_indices, min_scalar_type, mintypecode,
real_if_close, typename. (numpy's ``array`` is ``kompute_ml.asarray``: the package's
``array`` is its array module.)

The printing functions format the values on the host (a download: a string is what they make,
as ``repr`` of an Array does); apply_over_axes and mask_indices run their function on Arrays
(device work); the dtype functions look at dtypes only.
"""

import numpy as np

from .. import array as _a
from .._array.dtypes import INT32, device_dtype
from . import manipulation as _m
from ._common import arr as _arr

__all__ = ["apply_over_axes", "array2string", "array_repr", "array_str",
           "common_type", "isfortran", "mask_indices", "min_scalar_type", "mintypecode",
           "real_if_close", "typename"]

Array = _a.Array

mintypecode = np.mintypecode      # pure Python over type characters (no arrays)
typename = np.typename


def _host(a):
    return a.numpy() if isinstance(a, Array) else np.asarray(a)


def array2string(a, max_line_width=None, precision=None, suppress_small=None, separator=" ",
                 prefix="", *, formatter=None, threshold=None, edgeitems=None, sign=None,
                 floatmode=None, suffix="", legacy=None):
    """numpy's text of the values (formatted on the host: a download).

    Parameters
    ----------
    a : array_like
        The array.
    max_line_width, precision, suppress_small, separator, prefix, formatter, threshold, \
edgeitems, sign, floatmode, suffix, legacy
        numpy's formatting options.

    Returns
    -------
    str
        The text.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.array2string(km.asarray([1.0, 2.5]))
    '[1.  2.5]'
    """
    return np.array2string(_host(a), max_line_width, precision, suppress_small, separator,
                           prefix, formatter=formatter, threshold=threshold,
                           edgeitems=edgeitems, sign=sign, floatmode=floatmode, suffix=suffix,
                           legacy=legacy)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """numpy's ``str`` of the values (formatted on the host: a download).

    Parameters
    ----------
    a : array_like
        The array.
    max_line_width : int, optional
        The line width.
    precision : int, optional
        Digits of floats.
    suppress_small : bool, optional
        Print numbers near zero as zero.

    Returns
    -------
    str
        The text.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.array_str(km.asarray([1, 2]))
    '[1 2]'
    """
    return np.array_str(_host(a), max_line_width, precision, suppress_small)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """numpy's ``repr`` of the values as a numpy array would print (formatted on the host: a
    download).

    Parameters
    ----------
    arr : array_like
        The array.
    max_line_width : int, optional
        The line width.
    precision : int, optional
        Digits of floats.
    suppress_small : bool, optional
        Print numbers near zero as zero.

    Returns
    -------
    str
        The text.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.array_repr(km.asarray([1, 2]))
    'array([1, 2])'
    """
    return np.array_repr(_host(arr), max_line_width, precision, suppress_small)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied over each of ``axes`` in turn, each result kept with the
    array's number of dimensions (numpy's rule; ``func`` runs on Arrays).

    Parameters
    ----------
    func : callable
        ``func(array, axis)``, returning an array of the same number of dimensions or one
        fewer.
    a : array_like
        The input.
    axes : int or sequence of int
        The axes.

    Returns
    -------
    Array
        The result, of ``a``'s number of dimensions.

    Examples
    --------
    >>> import numpy as np, kompute_ml as km
    >>> km.apply_over_axes(np.sum, km.ones((2, 3, 4)), [0, 2]).numpy()
    array([[[8.],
            [8.],
            [8.]]], dtype=float32)
    """
    val = _arr(a)
    n = val.ndim
    axes = (axes,) if np.ndim(axes) == 0 else axes
    for axis in axes:
        axis = axis + n if axis < 0 else axis
        res = func(val, axis)
        if res.ndim != val.ndim:
            res = _m.expand_dims(res, axis=axis)
            if res.ndim != val.ndim:
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val


def common_type(*arrays):
    """The float type numpy's ``common_type`` gives (integers: float64, mapped onto the
    device's: float32 where it lacks float64).

    Parameters
    ----------
    *arrays : array_like
        The arrays.

    Returns
    -------
    type
        ``numpy.float32`` or ``numpy.float64``.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.common_type(km.asarray([1.0]), km.asarray([1]))
    <class 'numpy.float64'>
    """
    dev = next((x.device for x in arrays if isinstance(x, Array)), None) or \
        _a._get_device(None)
    res = np.common_type(*(np.zeros((0,), x.dtype) if isinstance(x, Array) else x
                           for x in arrays))
    if np.dtype(res).kind == "c":
        raise TypeError("common_type: complex arrays are not supported")
    return device_dtype(res, dev).type


def isfortran(a):
    """Whether ``a`` is Fortran-ordered and not C-ordered: False for an Array (C order
    always), numpy's answer for a numpy array.

    Parameters
    ----------
    a : array_like
        The array.

    Returns
    -------
    bool
        The answer.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.isfortran(km.zeros((2, 3)))
    False
    """
    return False if isinstance(a, Array) else np.isfortran(a)


def min_scalar_type(a):
    """numpy's smallest dtype that holds ``a`` (an Array: its dtype), mapped onto the default
    device's dtypes (8- and 16-bit ones to 32 bits on a device without 8/16-bit storage).

    Parameters
    ----------
    a : scalar or array_like
        The value.

    Returns
    -------
    numpy.dtype
        The dtype.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.min_scalar_type(10)
    dtype('uint8')
    """
    if isinstance(a, Array):
        return a.dtype
    dt = np.min_scalar_type(a)
    if dt.kind == "c":
        raise TypeError("min_scalar_type: complex values are not supported")
    return device_dtype(dt, _a._get_device(None))


def real_if_close(a, tol=100):
    """``a`` itself: real arrays are already real (kompute_ml has no complex dtype).

    Parameters
    ----------
    a : array_like
        The input.
    tol : float, default=100
        Accepted for numpy's signature.

    Returns
    -------
    Array
        ``a``.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.asarray([1.0])
    >>> km.real_if_close(x) is x
    True
    """
    return _arr(a)


def mask_indices(n, mask_func, k=0):
    """The indices where ``mask_func(ones((n, n)), k)`` is nonzero (e.g. ``triu``'s: the upper
    triangle), on the device.

    Parameters
    ----------
    n : int
        The side of the square.
    mask_func : callable
        ``mask_func(array, k)`` of an (n, n) Array, as ``triu`` or ``tril``.
    k : int, default=0
        Passed on.

    Returns
    -------
    tuple of Array
        Row and column indices (the default integer, as nonzero's).

    Examples
    --------
    >>> import kompute_ml as km
    >>> rows, cols = km.mask_indices(3, km.triu)
    >>> rows.numpy().tolist(), cols.numpy().tolist()
    ([0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2])
    """
    m = _a.ones((n, n), INT32)
    try:
        res = mask_func(m, k)
    except TypeError:
        res = mask_func(m, k=k)          # the Array API's tril/triu take k by keyword
    return _m.nonzero(_arr(res) != 0)

