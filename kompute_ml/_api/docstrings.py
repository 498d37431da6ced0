"""numpydoc sections of the Array API functions (and numpy-style aliases), added to the
functions' own docstrings when kompute_ml._api is imported, as numpy's ``add_newdoc`` does: the
functions' modules stay short. A function's own docstring wins: its text, and any section it has;
an entry here gives the sections it lacks (and its summary where it has none). Each example runs
as a doctest (tests/test_docs.py)."""

import inspect
import re

_ORDER = ["Parameters", "Returns", "Raises", "See Also", "Notes", "Examples"]
_SECTION = re.compile(r"\n(\w[\w ]*)\n-{3,}\n")


def _split(doc):
    """(summary, {section: body}) of a numpydoc docstring."""
    parts = _SECTION.split("\n" + inspect.cleandoc(doc or ""))
    return parts[0].strip(), {parts[i]: parts[i + 1].strip("\n") for i in range(1, len(parts) - 1, 2)}


def merge(own, entry):
    """``own`` docstring with the sections of ``entry`` it lacks, in numpydoc's order."""
    summary, sections = _split(own)
    entry_summary, entry_sections = _split(entry)
    for name, body in entry_sections.items():
        sections.setdefault(name, body)
    names = sorted(sections, key=lambda n: _ORDER.index(n) if n in _ORDER else len(_ORDER))
    return (summary or entry_summary) + "".join(
        f"\n\n{n}\n{'-' * len(n)}\n{sections[n]}" for n in names) + "\n"


NAMESPACE = {
    'arange': """Parameters
----------
start : int or float
    The first value (or, with ``stop`` None, the end: values start at 0).
stop : int or float, optional
    The end.
step : int or float, default=1
    The spacing between values.
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.

Returns
-------
Array
    1-D Array.

Examples
--------
>>> import kompute_ml as km
>>> print(km.arange(5))
[0 1 2 3 4]
>>> print(km.arange(0.0, 1.0, 0.25))
[0.   0.25 0.5  0.75]
""",
    'asarray': """Returns
-------
Array
    Array on the device.
""",
    'empty': """A new Array of ``shape`` whose values are not set.

Parameters
----------
shape : int or tuple of int
    The shape of the result.
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.empty((2, 3)).shape)
(2, 3)
""",
    'empty_like': """A new uninitialized Array with ``x``'s shape and dtype.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.
shape : int or tuple of int
    The shape of the result.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.empty_like(km.ones((2, 2), dtype=km.int32)).dtype)
int32
""",
    'eye': """Parameters
----------
n_rows : int
    Number of rows.
n_cols : int, optional
    Number of columns; default: ``n_rows``.
k : int, default=0
    The diagonal: 0 the main one, positive above, negative below.
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.

Returns
-------
Array
    Array of shape (n_rows, n_cols).

Examples
--------
>>> import kompute_ml as km
>>> print(km.eye(2, 3, k=1))
[[0. 1. 0.]
 [0. 0. 1.]]
""",
    'from_dlpack': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.
copy : bool, optional
    True: always copy; False: never (raise where a copy is needed); None: copy only if needed.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> import numpy as np
>>> print(km.from_dlpack(np.arange(3, dtype=np.float32)))
[0. 1. 2.]
""",
    'full': """A new Array of ``shape`` filled with ``fill_value``.

Parameters
----------
shape : int or tuple of int
    The shape of the result.
fill_value : bool, int or float
    The value of every element.
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.full((2, 2), 7))
[[7 7]
 [7 7]]
""",
    'full_like': """A new Array with ``x``'s shape and dtype filled with ``fill_value``.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
fill_value : bool, int or float
    The value of every element.
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.
shape : int or tuple of int
    The shape of the result.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.full_like(km.zeros(3), 0.5))
[0.5 0.5 0.5]
""",
    'linspace': """Parameters
----------
start : int or float
    The first value (or, with ``stop`` None, the end: values start at 0).
stop : int or float, optional
    The end.
num : int
    The number of values.
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.
endpoint : bool, default=True
    Whether ``stop`` is the last value.

Returns
-------
Array
    1-D Array of ``num`` values.

Examples
--------
>>> import kompute_ml as km
>>> print(km.linspace(0, 1, 5))
[0.   0.25 0.5  0.75 1.  ]
""",
    'meshgrid': """Parameters
----------
*arrays : Array
    The input arrays.
indexing : {'xy', 'ij'}, default='xy'
    Cartesian (``'xy'``) or matrix (``'ij'``) indexing.

Returns
-------
list
    A list of Arrays, one per input.

Examples
--------
>>> import kompute_ml as km
>>> xs, ys = km.meshgrid(km.arange(3), km.arange(2))
>>> print(xs)
[[0 1 2]
 [0 1 2]]
>>> print(ys)
[[0 0 0]
 [1 1 1]]
""",
    'ones': """A new Array of ``shape`` filled with ones.

Parameters
----------
shape : int or tuple of int
    The shape of the result.
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.ones((2, 3), dtype=km.int32))
[[1 1 1]
 [1 1 1]]
""",
    'ones_like': """A new Array of ones with ``x``'s shape and dtype.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.
shape : int or tuple of int
    The shape of the result.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.ones_like(km.zeros((2,))))
[1. 1.]
""",
    'tril': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
k : int, default=0
    The diagonal: 0 the main one, positive above, negative below.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.tril(x))
[[1. 0.]
 [3. 4.]]
""",
    'triu': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
k : int, default=0
    The diagonal: 0 the main one, positive above, negative below.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.triu(x))
[[1. 2.]
 [0. 4.]]
""",
    'zeros': """A new Array of ``shape`` filled with zeros.

Parameters
----------
shape : int or tuple of int
    The shape of the result.
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.zeros((2, 2)))
[[0. 0.]
 [0. 0.]]
""",
    'zeros_like': """A new Array of zeros with ``x``'s shape and dtype.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.
shape : int or tuple of int
    The shape of the result.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.zeros_like(km.ones(3, dtype=km.int32)))
[0 0 0]
""",
    'astype': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
copy : bool, optional
    True: always copy; False: never (raise where a copy is needed); None: copy only if needed.
device : Device, int or str, optional
    Where the result lives (``get_device``'s argument); default: the default device.

Returns
-------
Array
    Array of ``dtype``.

Examples
--------
>>> import kompute_ml as km
>>> print(km.astype(km.asarray([1.7, -2.2]), km.int32))
[ 1 -2]
""",
    'can_cast': """Parameters
----------
from_ : dtype or Array
    The source dtype.
to : dtype
    The target dtype.

Returns
-------
bool
    The answer.

Examples
--------
>>> import kompute_ml as km
>>> print(km.can_cast(km.int32, km.float64))
True
>>> print(km.can_cast(km.float32, km.int32))
False
""",
    'finfo': """Parameters
----------
type : dtype or Array
    The dtype to describe.

Returns
-------
object
    An object with ``bits``, ``eps``, ``max``, ``min``, ``smallest_normal`` and ``dtype``.

Examples
--------
>>> import kompute_ml as km
>>> print(km.finfo(km.float32).bits, km.finfo(km.float32).eps)
32 1.1920928955078125e-07
""",
    'iinfo': """Parameters
----------
type : dtype or Array
    The dtype to describe.

Returns
-------
object
    An object with ``bits``, ``max``, ``min`` and ``dtype``.

Examples
--------
>>> import kompute_ml as km
>>> print(km.iinfo(km.int32).max)
2147483647
""",
    'isdtype': """Parameters
----------
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
kind : str, dtype or tuple
    ``'bool'``, ``'signed integer'``, ``'unsigned integer'``, ``'integral'``, ``'real floating'``, ``'complex floating'``, ``'numeric'``, a dtype, or a tuple of them.

Returns
-------
bool
    The answer.

Examples
--------
>>> import kompute_ml as km
>>> print(km.isdtype(km.float32, 'real floating'), km.isdtype(km.int32, 'real floating'))
True False
""",
    'result_type': """Parameters
----------
*arrays_and_dtypes : Array
    The input arrays.

Returns
-------
numpy.dtype
    The promoted dtype.

Examples
--------
>>> import kompute_ml as km
>>> print(km.result_type(km.int32, km.float32))
float64
""",
    '__array_namespace_info__': """Returns
-------
object
    An object with ``capabilities()``, ``default_device()``, ``default_dtypes()``, ``devices()`` and ``dtypes()``.

Examples
--------
>>> import kompute_ml as km
>>> info = km.__array_namespace_info__()
>>> print(sorted(info.capabilities()))
['boolean indexing', 'data-dependent shapes', 'max dimensions']
""",
    'abs': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([3, -1, 2])
>>> print(km.abs(x))
[3 1 2]
""",
    'acos': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, 0.0])
>>> print(km.acos(x).numpy().round(3))
[0.    1.571]
""",
    'acosh': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0])
>>> print(km.acosh(x))
[0.]
""",
    'asin': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0, 1.0])
>>> print(km.asin(x).numpy().round(3))
[0.    1.571]
""",
    'asinh': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0])
>>> print(km.asinh(x))
[0.]
""",
    'atan': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0, 1.0])
>>> print(km.atan(x).numpy().round(3))
[0.    0.785]
""",
    'atanh': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0, 1.0])
>>> print(km.atanh(x))
[ 0. inf]
""",
    'bitwise_invert': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0, 1, -2])
>>> print(km.bitwise_invert(x))
[-1 -2  1]
""",
    'ceil': """The smallest integer not below each element.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([-1.5, 0.2, 2.0])
>>> print(km.ceil(x))
[-1.  1.  2.]
""",
    'conj': """Complex conjugate; for the real dtypes kompute_ml holds, ``x`` itself.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, -2.0])
>>> print(km.conj(x))
[ 1. -2.]
""",
    'cos': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0, km.pi])
>>> print(km.cos(x))
[ 1. -1.]
""",
    'cosh': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0])
>>> print(km.cosh(x))
[1.]
""",
    'exp': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0, 1.0])
>>> print(km.exp(x).numpy().round(3))
[1.    2.718]
""",
    'expm1': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0, 1e-10])
>>> print(km.expm1(x))
[0.e+00 1.e-10]
""",
    'floor': """The largest integer not above each element.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([-1.5, 0.2, 2.0])
>>> print(km.floor(x))
[-2.  0.  2.]
""",
    'imag': """Imaginary part; zeros for the real dtypes kompute_ml holds.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, 2.0])
>>> print(km.imag(x))
[0. 0.]
""",
    'isfinite': """Whether each element is finite.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, km.inf, km.nan])
>>> print(km.isfinite(x))
[ True False False]
""",
    'isinf': """Whether each element is positive or negative infinity.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, -km.inf, km.nan])
>>> print(km.isinf(x))
[False  True False]
""",
    'isnan': """Whether each element is NaN.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, km.inf, km.nan])
>>> print(km.isnan(x))
[False False  True]
""",
    'log': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, km.e])
>>> print(km.log(x).numpy().round(3))
[0. 1.]
""",
    'log1p': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0, 1e-10])
>>> print(km.log1p(x))
[0.e+00 1.e-10]
""",
    'log2': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, 8.0])
>>> print(km.log2(x))
[0. 3.]
""",
    'log10': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, 1000.0])
>>> print(km.log10(x).numpy().round(3))
[0. 3.]
""",
    'logical_not': """Logical NOT, elementwise.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([True, False])
>>> print(km.logical_not(x))
[False  True]
""",
    'negative': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([3, -1, 2])
>>> print(km.negative(x))
[-3  1 -2]
""",
    'positive': """``+x``, elementwise (a copy).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([3, -1, 2])
>>> print(km.positive(x))
[ 3 -1  2]
""",
    'real': """Real part; ``x`` itself for the real dtypes kompute_ml holds.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, 2.0])
>>> print(km.real(x))
[1. 2.]
""",
    'reciprocal': """``1 / x``, elementwise.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, 4.0])
>>> print(km.reciprocal(x))
[1.   0.25]
""",
    'round': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.5, 1.5, -2.7])
>>> print(km.round(x))
[ 0.  2. -3.]
""",
    'sign': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([-3.0, 0.0, 2.0])
>>> print(km.sign(x))
[-1.  0.  1.]
""",
    'signbit': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([-1.0, -0.0, 2.0])
>>> print(km.signbit(x))
[ True  True False]
""",
    'sin': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0, km.pi / 2])
>>> print(km.sin(x))
[0. 1.]
""",
    'sinh': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0])
>>> print(km.sinh(x))
[0.]
""",
    'square': """``x * x``, elementwise.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([3, -1, 2])
>>> print(km.square(x))
[9 1 4]
""",
    'sqrt': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, 4.0, 9.0])
>>> print(km.sqrt(x))
[1. 2. 3.]
""",
    'tan': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0, km.pi / 4])
>>> print(km.tan(x).numpy().round(3))
[0. 1.]
""",
    'tanh': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0, 100.0])
>>> print(km.tanh(x))
[0. 1.]
""",
    'trunc': """Round toward zero, elementwise.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([-1.7, 1.7])
>>> print(km.trunc(x))
[-1.  1.]
""",
    'sigmoid': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0, 100.0])
>>> print(km.sigmoid(x))
[0.5 1. ]
""",
    'exp2': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    Elementwise result, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([0.0, 3.0])
>>> print(km.exp2(x))
[1. 8.]
""",
    'add': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1.0, 2.0, 3.0]); x2 = km.asarray([4.0, 5.0, 6.0])
>>> print(km.add(x1, x2))
[5. 7. 9.]
""",
    'atan2': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1.0, 0.0]); x2 = km.asarray([0.0, 1.0])
>>> print(km.atan2(x1, x2).numpy().round(3))
[1.571 0.   ]
""",
    'bitwise_and': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([12, 10, 7]); x2 = km.asarray([10, 3, 5])
>>> print(km.bitwise_and(x1, x2))
[8 2 5]
""",
    'bitwise_or': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([12, 10, 7]); x2 = km.asarray([10, 3, 5])
>>> print(km.bitwise_or(x1, x2))
[14 11  7]
""",
    'bitwise_xor': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([12, 10, 7]); x2 = km.asarray([10, 3, 5])
>>> print(km.bitwise_xor(x1, x2))
[6 9 2]
""",
    'bitwise_left_shift': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1, 2]); x2 = km.asarray([3, 1])
>>> print(km.bitwise_left_shift(x1, x2))
[8 4]
""",
    'bitwise_right_shift': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([8, 7]); x2 = km.asarray([3, 1])
>>> print(km.bitwise_right_shift(x1, x2))
[1 3]
""",
    'copysign': """The magnitude of ``x1`` with the sign of ``x2``, elementwise.

Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1.0, 2.0]); x2 = km.asarray([-1.0, 1.0])
>>> print(km.copysign(x1, x2))
[-1.  2.]
""",
    'divide': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1.0, 2.0, 3.0]); x2 = km.asarray([4.0, 5.0, 6.0])
>>> print(km.divide(x1, x2))
[0.25 0.4  0.5 ]
""",
    'equal': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1, 2]); x2 = km.asarray([1, 3])
>>> print(km.equal(x1, x2))
[ True False]
""",
    'not_equal': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1, 2]); x2 = km.asarray([1, 3])
>>> print(km.not_equal(x1, x2))
[False  True]
""",
    'floor_divide': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([12, 10, 7]); x2 = km.asarray([10, 3, 5])
>>> print(km.floor_divide(x1, x2))
[1 3 1]
""",
    'greater': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([12, 10, 7]); x2 = km.asarray([10, 3, 5])
>>> print(km.greater(x1, x2))
[ True  True  True]
""",
    'greater_equal': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([12, 10, 7]); x2 = km.asarray([10, 3, 5])
>>> print(km.greater_equal(x1, x2))
[ True  True  True]
""",
    'less': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([12, 10, 7]); x2 = km.asarray([10, 3, 5])
>>> print(km.less(x1, x2))
[False False False]
""",
    'less_equal': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([12, 10, 7]); x2 = km.asarray([10, 3, 5])
>>> print(km.less_equal(x1, x2))
[False False False]
""",
    'hypot': """``sqrt(x1**2 + x2**2)`` without overflow, elementwise.

Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([3.0]); x2 = km.asarray([4.0])
>>> print(km.hypot(x1, x2))
[5.]
""",
    'logaddexp': """``log(exp(x1) + exp(x2))`` without overflow, elementwise.

Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1000.0]); x2 = km.asarray([1000.0])
>>> print(km.logaddexp(x1, x2).numpy().round(3))
[1000.693]
""",
    'logical_and': """Logical AND, elementwise.

Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([True, True]); x2 = km.asarray([True, False])
>>> print(km.logical_and(x1, x2))
[ True False]
""",
    'logical_or': """Logical OR, elementwise.

Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([True, False]); x2 = km.asarray([False, False])
>>> print(km.logical_or(x1, x2))
[ True False]
""",
    'logical_xor': """Logical XOR, elementwise.

Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([True, True]); x2 = km.asarray([True, False])
>>> print(km.logical_xor(x1, x2))
[False  True]
""",
    'maximum': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1.0, 5.0]); x2 = km.asarray([3.0, 2.0])
>>> print(km.maximum(x1, x2))
[3. 5.]
""",
    'minimum': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1.0, 5.0]); x2 = km.asarray([3.0, 2.0])
>>> print(km.minimum(x1, x2))
[1. 2.]
""",
    'multiply': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1.0, 2.0, 3.0]); x2 = km.asarray([4.0, 5.0, 6.0])
>>> print(km.multiply(x1, x2))
[ 4. 10. 18.]
""",
    'nextafter': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1.0]); x2 = km.asarray([2.0])
>>> print(km.nextafter(x1, x2) > 1)
[ True]
""",
    'pow': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([2.0, 3.0]); x2 = km.asarray([3.0, 2.0])
>>> print(km.pow(x1, x2).numpy().round(3))
[8. 9.]
""",
    'remainder': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([7, -7]); x2 = km.asarray([3, 3])
>>> print(km.remainder(x1, x2))
[1 2]
""",
    'subtract': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    Elementwise result of the broadcast inputs, lazy until read.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1.0, 2.0, 3.0]); x2 = km.asarray([4.0, 5.0, 6.0])
>>> print(km.subtract(x1, x2))
[-3. -3. -3.]
""",
    'clip': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
min : scalar or Array, optional
    Lower bound; None: none.
max : scalar or Array, optional
    Upper bound; None: none.

Returns
-------
Array
    Array of ``x``'s dtype.

Examples
--------
>>> import kompute_ml as km
>>> print(km.clip(km.asarray([-2.0, 0.5, 3.0]), 0.0, 1.0))
[0.  0.5 1. ]
""",
    'where': """Parameters
----------
condition : Array of bool
    Where to take ``x``.
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
y : array_like
    Values where ``condition`` is false.

Returns
-------
Array
    The result.
""",
    'matmul': """Matrix product with numpy's broadcasting of stacks.

Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.matmul(x, x))
[[ 7. 10.]
 [15. 22.]]
""",
    'matrix_transpose': """Transpose of the last two axes.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.matrix_transpose(x))
[[1. 3.]
 [2. 4.]]
""",
    'tensordot': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.
axes : int or pair of sequences of int
    The axes summed over (an int n: the last n of ``x1`` and the first n of ``x2``).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.tensordot(x, x, axes=1))
[[ 7. 10.]
 [15. 22.]]
""",
    'vecdot': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x1 = km.asarray([1.0, 2.0, 3.0]); x2 = km.asarray([4.0, 5.0, 6.0])
>>> print(km.vecdot(x1, x2))
32.0
""",
    'dot': """Parameters
----------
a : array_like
    Input array.
b : array_like
    Second input array.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.dot(x, x))
[[ 7. 10.]
 [15. 22.]]
""",
    'transpose': """Parameters
----------
a : array_like
    Input array.
axes : int or pair of sequences of int
    The axes summed over (an int n: the last n of ``x1`` and the first n of ``x2``).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.transpose(x))
[[1. 3.]
 [2. 4.]]
""",
    'broadcast_arrays': """The inputs broadcast to one shape.

Parameters
----------
*arrays : Array
    The input arrays.

Returns
-------
list
    A list of Arrays.

Examples
--------
>>> import kompute_ml as km
>>> a, b = km.broadcast_arrays(km.ones((2, 1)), km.zeros(3))
>>> print(a.shape, b.shape)
(2, 3) (2, 3)
""",
    'broadcast_to': """``x`` broadcast to ``shape``.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
shape : int or tuple of int
    The shape of the result.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.broadcast_to(km.asarray([1, 2]), (2, 2)))
[[1 2]
 [1 2]]
""",
    'concat': """Parameters
----------
arrays : sequence of Array
    The input arrays.
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.concat([km.asarray([1, 2]), km.asarray([3])]))
[1 2 3]
""",
    'expand_dims': """Insert an axis of length one at ``axis``.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.expand_dims(km.asarray([1, 2]), axis=0).shape)
(1, 2)
""",
    'flip': """Reverse the order of the elements along ``axis`` (all axes by default).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.flip(km.asarray([1, 2, 3])))
[3 2 1]
""",
    'moveaxis': """Move axes to new positions.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
source : int or tuple of int
    Axes to move.
destination : int or tuple of int
    Their new positions.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.moveaxis(km.zeros((2, 3, 4)), 0, -1).shape)
(3, 4, 2)
""",
    'permute_dims': """Permute the axes of ``x``.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axes : int or pair of sequences of int
    The axes summed over (an int n: the last n of ``x1`` and the first n of ``x2``).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.permute_dims(km.zeros((2, 3, 4)), (2, 0, 1)).shape)
(4, 2, 3)
""",
    'repeat': """Repeat each element ``repeats`` times along ``axis`` (flattened when None).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
repeats : int or Array of int
    Repetitions of each element.
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.repeat(km.asarray([1, 2]), 2))
[1 1 2 2]
""",
    'reshape': """``x``'s elements in a new shape (C order).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
shape : int or tuple of int
    The shape of the result.
copy : bool, optional
    True: always copy; False: never (raise where a copy is needed); None: copy only if needed.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.reshape(km.arange(6), (2, 3)))
[[0 1 2]
 [3 4 5]]
""",
    'roll': """Shift the elements along ``axis`` cyclically.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
shift : int or tuple of int
    Number of places to shift.
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.roll(km.asarray([1, 2, 3]), 1))
[3 1 2]
""",
    'squeeze': """Remove axes of length one.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.squeeze(km.zeros((1, 3, 1)), axis=(0, 2)).shape)
(3,)
""",
    'stack': """Join arrays along a new axis.

Parameters
----------
arrays : sequence of Array
    The input arrays.
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.stack([km.asarray([1, 2]), km.asarray([3, 4])]))
[[1 2]
 [3 4]]
""",
    'tile': """Repeat the whole of ``x`` ``repetitions`` times per axis.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
repetitions : tuple of int
    Repetitions of ``x`` per axis.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.tile(km.asarray([1, 2]), (2,)))
[1 2 1 2]
""",
    'unstack': """Split ``x`` into arrays along ``axis``.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).

Returns
-------
tuple
    A tuple of Arrays.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print([a.tolist() for a in km.unstack(x)])
[[1.0, 2.0], [3.0, 4.0]]
""",
    'argmax': """Index of the largest element (of the flattened array, or along ``axis``).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
keepdims : bool, default=False
    Keep the reduced axes, with length one.

Returns
-------
Array
    Array of indices of the default integer dtype (int64 where the device has shaderInt64).

Examples
--------
>>> import kompute_ml as km
>>> print(km.argmax(km.asarray([3.0, 7.0, 5.0])))
1
""",
    'argmin': """Index of the smallest element (of the flattened array, or along ``axis``).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
keepdims : bool, default=False
    Keep the reduced axes, with length one.

Returns
-------
Array
    Array of indices of the default integer dtype (int64 where the device has shaderInt64).

Examples
--------
>>> import kompute_ml as km
>>> print(km.argmin(km.asarray([3.0, 7.0, 5.0])))
0
""",
    'count_nonzero': """The number of non-zero elements (in all, or along ``axis``).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
keepdims : bool, default=False
    Keep the reduced axes, with length one.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.count_nonzero(km.asarray([0, 1, 2, 0])))
2
""",
    'nonzero': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
tuple
    A tuple of Arrays.

Examples
--------
>>> import kompute_ml as km
>>> print(km.nonzero(km.asarray([0, 1, 2, 0]))[0])
[1 2]
""",
    'searchsorted': """Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.
side : {'left', 'right'}, default='left'
    Which of equal positions to give.
sorter : Array of int, optional
    Indices that sort ``x1``, if it is not sorted.

Returns
-------
Array
    Array of indices.

Examples
--------
>>> import kompute_ml as km
>>> print(km.searchsorted(km.asarray([1.0, 2.0, 3.0]), km.asarray([2.5, 0.0])))
[2 0]
""",
    'unique_all': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
tuple
    A named tuple ``(values, indices, inverse_indices, counts)``.

Examples
--------
>>> import kompute_ml as km
>>> u = km.unique_all(km.asarray([3, 1, 3]))
>>> print(u.values, u.indices, u.inverse_indices, u.counts)
[1 3] [1 0] [1 0 1] [1 2]
""",
    'unique_counts': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
tuple
    A named tuple ``(values, counts)``.

Examples
--------
>>> import kompute_ml as km
>>> u = km.unique_counts(km.asarray([3, 1, 3]))
>>> print(u.values, u.counts)
[1 3] [1 2]
""",
    'unique_inverse': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
tuple
    A named tuple ``(values, inverse_indices)``.

Examples
--------
>>> import kompute_ml as km
>>> u = km.unique_inverse(km.asarray([3, 1, 3]))
>>> print(u.values, u.inverse_indices)
[1 3] [1 0 1]
""",
    'unique_values': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.unique_values(km.asarray([3, 1, 3])))
[1 3]
""",
    'argsort': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
descending : bool, default=False
    Sort from largest to smallest.
stable : bool, default=True
    Keep equal elements in their order.

Returns
-------
Array
    Array of indices.

Examples
--------
>>> import kompute_ml as km
>>> print(km.argsort(km.asarray([3.0, 1.0, 2.0])))
[1 2 0]
""",
    'sort': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
descending : bool, default=False
    Sort from largest to smallest.
stable : bool, default=True
    Keep equal elements in their order.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.sort(km.asarray([3.0, 1.0, 2.0])))
[1. 2. 3.]
""",
    'cumulative_prod': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
include_initial : bool, default=False
    Start with the operation's identity (0 or 1), one element more along ``axis``.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.cumulative_prod(km.asarray([1, 2, 3, 4])))
[ 1  2  6 24]
""",
    'cumulative_sum': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
include_initial : bool, default=False
    Start with the operation's identity (0 or 1), one element more along ``axis``.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.cumulative_sum(km.asarray([1, 2, 3, 4])))
[ 1  3  6 10]
""",
    'max': """The largest element (in all, or along ``axis``).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
keepdims : bool, default=False
    Keep the reduced axes, with length one.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.max(x), km.max(x, axis=0))
4.0 [3. 4.]
""",
    'min': """The smallest element (in all, or along ``axis``).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
keepdims : bool, default=False
    Keep the reduced axes, with length one.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.min(x), km.min(x, axis=1))
1.0 [1. 3.]
""",
    'mean': """The arithmetic mean (of all elements, or along ``axis``).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
keepdims : bool, default=False
    Keep the reduced axes, with length one.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.mean(x), km.mean(x, axis=0))
2.5 [2. 3.]
""",
    'prod': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
keepdims : bool, default=False
    Keep the reduced axes, with length one.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.prod(x))
24.0
""",
    'std': """The standard deviation (``correction``: the degrees of freedom subtracted).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
correction : float, default=0.0
    Degrees of freedom subtracted from the element count (1 for the sample estimate).
keepdims : bool, default=False
    Keep the reduced axes, with length one.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, 2.0, 3.0, 4.0])
>>> print(km.std(x), km.std(x, correction=1) > km.std(x))
1.118034 True
""",
    'sum': """The sum of the elements (in all, or along ``axis``).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.
keepdims : bool, default=False
    Keep the reduced axes, with length one.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.sum(x), km.sum(x, axis=1))
10.0 [3. 7.]
""",
    'var': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
correction : float, default=0.0
    Degrees of freedom subtracted from the element count (1 for the sample estimate).
keepdims : bool, default=False
    Keep the reduced axes, with length one.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([1.0, 2.0, 3.0, 4.0])
>>> print(km.var(x))
1.25
""",
    'all': """Whether every element is true (in all, or along ``axis``).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
keepdims : bool, default=False
    Keep the reduced axes, with length one.

Returns
-------
Array
    Array of bool.

Examples
--------
>>> import kompute_ml as km
>>> print(km.all(km.asarray([True, False])), km.all(km.ones(3)))
False True
""",
    'any': """Whether any element is true (in all, or along ``axis``).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
keepdims : bool, default=False
    Keep the reduced axes, with length one.

Returns
-------
Array
    Array of bool.

Examples
--------
>>> import kompute_ml as km
>>> print(km.any(km.asarray([True, False])), km.any(km.zeros(3)))
True False
""",
    'diff': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
n : int
    The order (number of times applied) or the size, by the function.
prepend : Array, optional
    Values put before ``x`` along ``axis`` first.
append : Array, optional
    Values put after ``x`` along ``axis`` first.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.diff(km.asarray([1, 4, 9, 16])))
[3 5 7]
""",
    'take': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
indices : Array of int
    The indices (negative ones count from the end).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.take(km.asarray([10, 20, 30]), km.asarray([2, 0])))
[30 10]
""",
    'take_along_axis': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
indices : Array of int
    The indices (negative ones count from the end).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> x = km.asarray([[1.0, 2.0], [3.0, 4.0]])
>>> print(km.take_along_axis(x, km.asarray([[1], [0]]), axis=1))
[[2.]
 [3.]]
""",
}

LINALG = {
    'cholesky': """The lower Cholesky factor of a symmetric positive-definite matrix (``upper``: the upper one).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
upper : bool, default=False
    Return the upper factor instead.

Returns
-------
Array
    The result.

Raises
------
LinAlgError
    A matrix is not positive definite (numpy's message), or the last two dimensions
    are not square.

Examples
--------
>>> import kompute_ml as km
>>> a = km.asarray([[4.0, 2.0], [2.0, 5.0]])
>>> print(km.linalg.cholesky(a))
[[2. 0.]
 [1. 2.]]
""",
    'cross': """The cross product of 3-element vectors along ``axis``.

Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.linalg.cross(km.asarray([1.0, 0.0, 0.0]), km.asarray([0.0, 1.0, 0.0])))
[0. 0. 1.]
""",
    'det': """The determinant of each square matrix.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> a = km.asarray([[4.0, 2.0], [2.0, 3.0]])
>>> print(km.round(km.linalg.det(a)))
8.0
""",
    'diagonal': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
offset : int, default=0
    The diagonal: 0 the main one, positive above, negative below.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> a = km.asarray([[4.0, 2.0], [2.0, 3.0]])
>>> print(km.linalg.diagonal(a))
[4. 3.]
""",
    'eigh': """Eigenvalues (ascending) and eigenvectors of a symmetric matrix.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
tuple
    A named tuple ``(eigenvalues, eigenvectors)``.

Examples
--------
>>> import kompute_ml as km
>>> w, v = km.linalg.eigh(km.asarray([[2.0, 0.0], [0.0, 1.0]]))
>>> print(w)
[1. 2.]
""",
    'eigvalsh': """Eigenvalues (ascending) of a symmetric matrix.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.linalg.eigvalsh(km.asarray([[2.0, 0.0], [0.0, 1.0]])))
[1. 2.]
""",
    'inv': """The inverse of each square matrix.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    The result.

Raises
------
LinAlgError
    A matrix is exactly singular (numpy's "Singular matrix"), or not square.

Examples
--------
>>> import kompute_ml as km
>>> print(km.linalg.inv(km.asarray([[2.0, 0.0], [0.0, 4.0]])))
[[0.5  0.  ]
 [0.   0.25]]
""",
    'lstsq': """The least-squares solution of ``x1 @ x = x2`` (numpy's ``lstsq``; not in the Array API).

Parameters
----------
x1 : array_like
    The coefficient matrix, M x N.
x2 : array_like
    The right-hand sides: a vector of M, or an M x K matrix.
rcond : float, optional
    Singular values at most ``rcond`` times the largest count as zero; default ``max(M, N)``
    times the dtype's eps (numpy's ``rcond=None``).

Returns
-------
tuple
    A named tuple ``(x, residuals, rank, s)``: the solution (N or N x K), the squared residual
    norm of each column where the rank is N and M > N (else empty), the rank (an int) and the
    singular values of ``x1``.

Examples
--------
>>> import kompute_ml as km
>>> a = km.asarray([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
>>> x, res, rank, s = km.linalg.lstsq(a, km.asarray([1.0, 4.0, 3.0]))
>>> print(x, res, rank)
[1. 2.] [9.] 2
""",
    'matrix_norm': """A matrix norm of each matrix (``ord``: ``'fro'``, ``'nuc'``, 1, 2, inf, ...).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
keepdims : bool, default=False
    Keep the reduced axes, with length one.
ord : int, float, str or None
    The norm (numpy's ``ord`` values).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.linalg.matrix_norm(km.asarray([[3.0, 0.0], [0.0, 4.0]])))
5.0
""",
    'matrix_power': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
n : int
    The order (number of times applied) or the size, by the function.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> a = km.asarray([[4.0, 2.0], [2.0, 3.0]])
>>> print(km.linalg.matrix_power(a, 2))
[[20. 14.]
 [14. 13.]]
""",
    'matrix_rank': """The rank of each matrix (singular values above ``rtol`` times the largest).

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
rtol : float or Array, optional
    Tolerance relative to the largest singular value; default ``max(M, N)`` times the dtype's
    eps.

Returns
-------
Array
    The result (int32).

Examples
--------
>>> import kompute_ml as km
>>> print(km.linalg.matrix_rank(km.asarray([[1.0, 2.0], [2.0, 4.0]])))
1
""",
    'outer': """The outer product of two vectors.

Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.linalg.outer(km.asarray([1.0, 2.0]), km.asarray([3.0, 4.0])))
[[3. 4.]
 [6. 8.]]
""",
    'pinv': """The Moore-Penrose pseudo-inverse of each matrix.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
rtol : float or Array, optional
    Tolerance relative to the largest singular value; default ``max(M, N)`` times the dtype's
    eps (the Array API's; numpy's ``pinv`` defaults to 1e-15).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.linalg.pinv(km.asarray([[2.0, 0.0], [0.0, 4.0]])))
[[0.5  0.  ]
 [0.   0.25]]
""",
    'qr': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
mode : {'reduced', 'complete'}, default='reduced'
    The shapes of Q and R.

Returns
-------
tuple
    A named tuple ``(Q, R)``.

Examples
--------
>>> import kompute_ml as km
>>> a = km.asarray([[4.0, 2.0], [2.0, 3.0]])
>>> q, r = km.linalg.qr(a)
>>> print((q @ r).numpy().round(3))
[[4. 2.]
 [2. 3.]]
""",
    'slogdet': """The sign and natural logarithm of the absolute determinant.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
tuple
    A named tuple ``(sign, logabsdet)``.

Examples
--------
>>> import kompute_ml as km
>>> a = km.asarray([[4.0, 2.0], [2.0, 3.0]])
>>> print(km.linalg.slogdet(a).sign)
1.0
""",
    'solve': """The solution ``x`` of ``x1 @ x = x2``.

Parameters
----------
x1 : array_like
    First input; broadcasts with ``x2`` (Python scalars take the other's dtype, NEP 50).
x2 : array_like
    Second input; broadcasts with ``x1``.

Returns
-------
Array
    The result.

Raises
------
LinAlgError
    A matrix of ``x1`` is exactly singular, or not square.
ValueError
    ``x2``'s dimensions do not match ``x1``'s (numpy's message).

Examples
--------
>>> import kompute_ml as km
>>> print(km.linalg.solve(km.asarray([[2.0, 0.0], [0.0, 4.0]]), km.asarray([2.0, 8.0])))
[1. 2.]
""",
    'svd': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
full_matrices : bool, default=True
    Complete U and Vh rather than the reduced ones.

Returns
-------
tuple
    A named tuple ``(U, S, Vh)``.

Examples
--------
>>> import kompute_ml as km
>>> print(km.linalg.svd(km.asarray([[3.0, 0.0], [0.0, 4.0]])).S)
[4. 3.]
""",
    'svdvals': """The singular values, descending.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.linalg.svdvals(km.asarray([[3.0, 0.0], [0.0, 4.0]])))
[4. 3.]
""",
    'trace': """The sum of the ``offset``-th diagonal of each matrix.

Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
offset : int, default=0
    The diagonal: 0 the main one, positive above, negative below.
dtype : dtype, optional
    The result's dtype; default: numpy's rule, mapped onto the dtypes the device holds.

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> a = km.asarray([[4.0, 2.0], [2.0, 3.0]])
>>> print(km.linalg.trace(a))
7.0
""",
    'vector_norm': """Parameters
----------
x : array_like
    Input array (an Array, or anything ``asarray`` takes).
axis : int or tuple of int, optional
    Axis or axes to work along; None: all of them (the flattened array).
keepdims : bool, default=False
    Keep the reduced axes, with length one.
ord : int, float, str or None
    The norm (numpy's ``ord`` values).

Returns
-------
Array
    The result.

Examples
--------
>>> import kompute_ml as km
>>> print(km.linalg.vector_norm(km.asarray([3.0, 4.0])))
5.0
""",
}


def apply(namespace, array, linalg):
    """Add the sections above to the functions of ``namespace`` (array.py's numpy-style extras
    from ``array``) and of ``linalg`` (modules)."""
    for name, doc in NAMESPACE.items():
        fn = getattr(namespace, name, None) or getattr(array, name)
        fn.__doc__ = merge(fn.__doc__, doc)
    for name, doc in LINALG.items():
        fn = getattr(linalg, name)
        fn.__doc__ = merge(fn.__doc__, doc)
