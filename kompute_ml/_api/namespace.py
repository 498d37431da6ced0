"""The Array API 2024.12 namespace of kompute_ml: dtypes, info, creation and elementwise functions.

``import kompute_ml as xp`` is a conforming namespace. This module holds what array.py does not:
the standard's names and signatures (``asarray(copy=)``, ``clip(min=, max=)``, ``sum(dtype=)``),
the elementwise functions the fused kernels lack, composed from the ops they have (so they stay
lazy and fuse), and the numpy protocols (NEP 13 ufuncs, NEP 18 functions). Manipulation,
searching, sorting, set and statistical functions live in ``_namespace_ops``; ``linalg`` in
``_linalg_namespace``.

dtypes: float32, int32, uint32 and bool on every device, float64 on a device with shaderFloat64,
int64 and uint64 on a device with shaderInt64, int8 and uint8 on one with 8-bit storage buffers,
int16, uint16, float16 and bfloat16 (``ml_dtypes.bfloat16``) on one with 16-bit storage buffers
(``__array_namespace_info__().dtypes(device=...)`` lists what a device has; an explicit request
for one a device lacks raises TypeError). ``asarray`` of host float64 / int64 data maps to
float32 / int32 on a device without them, and 8/16-bit data to its 32-bit dtype on one without
8/16-bit storage, as documented in array.py. The default real
floating dtype is float32 everywhere; the default integer is ``default_int`` (array.py).
"""

import builtins
import math
import sys

import ml_dtypes
import numpy as np

from .. import array as _a
from .._array.dtypes import (BFLOAT16, BOOL, COMPLEX128, COMPLEX64, DTYPES, FLOAT16, FLOAT32,
                             FLOAT64, INT8, INT16, INT32, INT64, INTEGERS, UINT8, UINT16, UINT32,
                             UINT64, canonical_dtype, default_int, device_dtype, device_dtypes,
                             has_float64, has_int64)
from .._runtime import device as _device

__array_api_version__ = "2024.12"

float32, int32, uint32 = FLOAT32, INT32, UINT32
bool = BOOL                      # the standard's name; shadows the builtin in this module only
# float64 is a real dtype where the device has shaderFloat64, int64 and uint64 where it has
# shaderInt64 (dtypes(device=...) lists them there). On a device without them they are named but
# not supported, as torch names float64 on its MPS device: consumers spell them in dtype lists
# and casts (scikit-learn: ``dtype=[xp.float64, xp.float32]``, ``xp.astype(y, xp.int64)``) and
# need the names to exist; dtypes() omits them, which is what tells scikit-learn and
# array-api-compat to compute in float32. ``astype`` to them gives float32 / int32 / uint32 there
# (ints that do not fit raise OverflowError); other explicit requests raise TypeError.
float64, int64, uint64 = FLOAT64, INT64, UINT64
# complex64 everywhere; complex128 where the device has shaderFloat64 (named elsewhere, as float64)
complex64, complex128 = COMPLEX64, COMPLEX128
# 8/16-bit storage (dtypes() lists them where the device has it); bfloat16 is ml_dtypes'
int8, uint8, int16, uint16, float16, bfloat16 = INT8, UINT8, INT16, UINT16, FLOAT16, BFLOAT16
_bool = type(True)

e, pi, inf, nan, newaxis = math.e, math.pi, math.inf, math.nan, None

Array = _a.Array


# ---------------------------------------------------------------------------------------------
# inspection (__array_namespace_info__)

class _Info:
    """What this namespace supports, per device (``__array_namespace_info__()``)."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self):
        return _a._get_device(None)

    def devices(self):
        return [_device.get_device(d.index) for d in _device.devices()]

    def default_dtypes(self, *, device=None):
        dflt = default_int(_a._get_device(device))
        return {"real floating": FLOAT32, "complex floating": COMPLEX64, "integral": dflt,
                "indexing": dflt}

    def dtypes(self, *, device=None, kind=None):
        # float64 / int64 / uint64 only where the device computes in them (Vulkan's
        # shaderFloat64 and shaderInt64), the 8/16-bit integers where it has 8/16-bit storage;
        # the standard's dtypes only (float16 and bfloat16 are held too, but not the
        # standard's: device_dtypes lists them)
        table = {n: d for n, d in device_dtypes(_a._get_device(device)).items()
                 if n not in ("float16", "bfloat16")}
        if kind is None:
            return table
        return {n: d for n, d in table.items() if isdtype(d, kind)}


def __array_namespace_info__():
    """The Array API inspection object (capabilities, default device and dtypes, devices)."""
    return _Info()


def namespace(api_version=None):
    """The namespace ``Array.__array_namespace__`` returns (the ``kompute_ml`` module)."""
    if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
        raise ValueError(f"api_version {api_version!r} is not supported; kompute_ml implements "
                         f"the Array API {__array_api_version__}")
    # the package this namespace is the top level of (looked up, not imported: it is above us)
    return sys.modules[__name__.split(".")[0]]


# ---------------------------------------------------------------------------------------------
# data type functions

def _dt(x):
    return x.dtype if isinstance(x, Array) else canonical_dtype(x)


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind`` (a dtype, a kind name, or a tuple of them)."""
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    dtype = np.dtype(dtype)
    if isinstance(kind, str) and dtype == BFLOAT16:          # (ml_dtypes' kind is "V")
        return kind in ("real floating", "numeric")
    if isinstance(kind, str):
        table = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
                 "real floating": "f", "complex floating": "c", "numeric": "iufc"}
        if kind not in table:
            raise ValueError(f"unknown dtype kind {kind!r}; expected one of {sorted(table)}")
        return dtype.kind in table[kind]
    return dtype == np.dtype(kind)


def result_type(*arrays_and_dtypes):
    """numpy's result type (Python scalars weak, as in the standard), mapped onto our dtypes."""
    if not arrays_and_dtypes:
        raise ValueError("at least one array or dtype is required")
    items = [x.dtype if isinstance(x, Array) else x for x in arrays_and_dtypes]
    if builtins.all(isinstance(x, (int, float, complex)) for x in items):
        raise ValueError("result_type needs at least one array or dtype")
    return canonical_dtype(np.result_type(*items))


def can_cast(from_, to, /):
    """Whether ``from_`` casts to ``to`` under the standard's (numpy's "safe") rules."""
    return np.can_cast(_dt(from_), canonical_dtype(to), casting="safe")


class finfo_object:
    """What ``finfo`` returns: the standard's fields, as Python floats (numpy's are float32)."""

    __slots__ = ("bits", "eps", "max", "min", "smallest_normal", "dtype")

    def __init__(self, info):
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.dtype = info.dtype

    def __repr__(self):
        return (f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, "
                f"smallest_normal={self.smallest_normal}, dtype={self.dtype})")


def finfo(type, /):
    """Machine limits of float32 or float64."""
    dt = _check_dtype(_dt(type) if isinstance(type, Array) else np.dtype(type))
    return finfo_object(ml_dtypes.finfo(dt) if dt == BFLOAT16 else np.finfo(dt))


def iinfo(type, /):
    """Machine limits of int32, uint32, int64 or uint64."""
    return np.iinfo(_check_dtype(_dt(type) if isinstance(type, Array) else np.dtype(type)))


_NARROW = {FLOAT64: FLOAT32, INT64: INT32, UINT64: UINT32, COMPLEX128: COMPLEX64}


def _check_dtype(dt):
    if dt not in DTYPES:
        raise TypeError(f"dtype {dt} is not supported by kompute_ml arrays (float32, int32, "
                        f"uint32, bool, complex64; float64, int64, uint64, complex128, int8, "
                        f"uint8, int16, uint16, float16, bfloat16 where the device has them)")
    return dt


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` converted to ``dtype`` (and moved to ``device``); lazy on the device.

    float64 gives float32 on a device without float64, int64 and uint64 int32 and uint32 on one
    without int64 (named, not supported there: see the top of this module).
    """
    dtype = np.dtype(dtype)
    if (dtype in (FLOAT64, COMPLEX128) and not has_float64(x.device)) or \
            (dtype in (INT64, UINT64) and not has_int64(x.device)):
        dtype = _NARROW[dtype]
    out = x.astype(_check_dtype(dtype), copy=copy)
    return out if device is None else out.to_device(device)


# ---------------------------------------------------------------------------------------------
# creation

def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """Convert ``obj`` to an Array (see ``array.asarray``); ``copy=False`` refuses to copy.

    Parameters
    ----------
    obj : array_like, Array, or an object with ``__dlpack__``/buffer protocol
    dtype : dtype, optional
    device : Device, int or str, optional
    copy : bool or None, default=None
        True: always a new array. False: raise ValueError where a copy is needed (host data
        always needs one: it is uploaded). None: copy only when needed.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.asarray([1, 2], dtype=km.float32).dtype
    dtype('float32')
    """
    # dtype=float64 etc. map onto our dtypes as array.asarray documents (host data is narrowed)
    if isinstance(obj, Array):
        dev = obj.device if device is None else _a._get_device(device)
        same = dev is obj.device and (dtype is None or dtype == obj.dtype)
        if copy is False and not same:
            raise ValueError("asarray(copy=False): converting this Array needs a copy "
                             "(another device or dtype)")
        out = _a.asarray(obj, dtype=dtype, device=dev)
        return out.copy() if copy and out is obj else out
    if copy is False:
        raise ValueError("asarray(copy=False): host data is always copied to the device")
    if isinstance(obj, (list, tuple)) and builtins.any(isinstance(v, Array) for v in _flat(obj)):
        obj = [np.asarray(v) if isinstance(v, Array) else v for v in obj]   # explicit download
    return _a.asarray(obj, dtype=dtype, device=device)


def _flat(seq):
    for v in seq:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def from_dlpack(x, /, *, device=None, copy=None):
    """An Array holding the data of a DLPack producer (a host copy is uploaded)."""
    if isinstance(x, Array) and (device is None or _a._get_device(device) is x.device):
        # our own array on its own device: shared, never copied (copy=False is honoured)
        return x.copy() if copy else x.reshape(x.shape)      # a new Array, same buffer
    if copy is False:
        raise BufferError("from_dlpack(copy=False): a host producer's data is always copied to "
                          "the Vulkan device")
    return _a.asarray(np.from_dlpack(x), device=device)


def empty(shape, dtype=None, device=None):
    return _a.empty(shape, FLOAT32 if dtype is None else dtype, device)


def zeros(shape, dtype=None, device=None):
    return _a.zeros(shape, FLOAT32 if dtype is None else dtype, device)


def ones(shape, dtype=None, device=None):
    return _a.ones(shape, FLOAT32 if dtype is None else dtype, device)


def full(shape, fill_value, dtype=None, device=None):
    if dtype is None and isinstance(fill_value, float) and not isinstance(fill_value, np.generic):
        dtype = FLOAT32          # a Python float is the default floating dtype
    return _a.full(shape, fill_value, dtype, device)


def _like_shape(x, shape):
    return x.shape if shape is None else shape


def empty_like(x, /, *, dtype=None, device=None, shape=None):
    return _a.empty(_like_shape(x, shape), x.dtype if dtype is None else dtype,
                    x.device if device is None else device)


def zeros_like(x, /, *, dtype=None, device=None, shape=None):
    return full(_like_shape(x, shape), 0, dtype=x.dtype if dtype is None else dtype,
                device=x.device if device is None else device)


def ones_like(x, /, *, dtype=None, device=None, shape=None):
    return full(_like_shape(x, shape), 1, dtype=x.dtype if dtype is None else dtype,
                device=x.device if device is None else device)


def full_like(x, /, fill_value, *, dtype=None, device=None, shape=None):
    return full(_like_shape(x, shape), fill_value, dtype=x.dtype if dtype is None else dtype,
                device=x.device if device is None else device)


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """Evenly spaced values: integers made on the device (one kernel), floats on the host in
    float64 (numpy's values) and uploaded."""
    dev = _a._get_device(device)
    if dtype is None and builtins.all(isinstance(v, (int, np.integer)) and not isinstance(
            v, (builtins.bool, np.bool_)) for v in (start, stop, step) if v is not None):
        dtype = default_int(dev)
    elif dtype is None:
        dtype = FLOAT32
    if stop is None:
        start, stop = 0, start
    dtype = device_dtype(_check_dtype(np.dtype(dtype)), dev, explicit=True)
    n = builtins.max(0, math.ceil((stop - start) / step)) if step else 0
    if step == 0:
        raise ZeroDivisionError("arange: step must not be 0")
    if dtype in INTEGERS and builtins.all(
            isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        r = range(int(start), int(stop), int(step))
        _a.check_range(r, dtype)                 # values the dtype cannot hold are refused
        return _a._iota(len(r), r.start, r.step, dtype, dev)
    if dtype.kind == "f":
        data = (np.arange(n, dtype=np.float64) * step + start).astype(dtype)
    else:
        data = np.arange(start, stop, step, dtype=np.int64)     # numpy's values, then the check
        _a.check_range(data, dtype)
        data = data.astype(dtype)
    return _a.asarray(data, dtype=dtype, device=device)



def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``num`` evenly spaced values from ``start`` to ``stop`` (computed in float64, uploaded)."""
    data = np.linspace(start, stop, num, endpoint=endpoint)
    if dtype is None:          # the default float or complex dtype (float32, complex64)
        dtype = COMPLEX64 if data.dtype.kind == "c" else FLOAT32
    return _a.asarray(data, dtype=dtype, device=device)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """Ones on the ``k``-th diagonal (built on the device from two index ranges)."""
    n_cols = n_rows if n_cols is None else n_cols
    dev = _a._get_device(device)
    rows = _a.arange(n_rows, device=dev).reshape(n_rows, 1)
    cols = _a.arange(n_cols, device=dev).reshape(1, n_cols)
    return (cols - rows == k).astype(FLOAT32 if dtype is None else dtype)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate matrices (lazy broadcasts of the 1-D inputs)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    n = len(arrays)
    if n == 0:
        return []
    shape = [a.size for a in arrays]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for k, a in enumerate(arrays):
        axis = k
        if indexing == "xy" and n >= 2 and k < 2:
            axis = 1 - k
        view = [1] * n
        view[axis] = a.size
        out.append(_a.broadcast_to(a.reshape(tuple(view)), tuple(shape)).copy())
    return out


def _tri_mask(x, k, upper):
    n, m = x.shape[-2:]
    rows = _a.arange(n, device=x.device).reshape(n, 1)
    cols = _a.arange(m, device=x.device).reshape(1, m)
    return (cols - rows >= k) if upper else (cols - rows <= k)


def tril(x, /, *, k=0):
    """Lower triangle of the last two axes (a lazy ``where`` over an index mask)."""
    return _a.where(_tri_mask(x, k, False), x, _zero(x))


def triu(x, /, *, k=0):
    """Upper triangle of the last two axes (a lazy ``where`` over an index mask)."""
    return _a.where(_tri_mask(x, k, True), x, _zero(x))


def _zero(x):
    return _a.zeros((), x.dtype, x.device)


# elementwise functions: in _namespace_elementwise (composed from the fused ops)
from .elementwise import *               # noqa: E402,F401,F403
from .elementwise import __all__ as _ew_all  # noqa: E402
from .manipulation import *                       # noqa: E402,F401,F403
from .manipulation import __all__ as _ops_all     # noqa: E402
from .shaping import *                            # noqa: E402,F401,F403
from .shaping import __all__ as _shaping_all      # noqa: E402
from .numeric import *                            # noqa: E402,F401,F403
from .numeric import __all__ as _numeric_all      # noqa: E402
from .statistics import *                         # noqa: E402,F401,F403
from .statistics import __all__ as _statistics_all  # noqa: E402
from .ufuncs import *                             # noqa: E402,F401,F403
from .ufuncs import __all__ as _ufuncs_all        # noqa: E402
from .index_functions import *                    # noqa: E402,F401,F403
from .index_functions import __all__ as _index_all  # noqa: E402
from .sets import *                               # noqa: E402,F401,F403
from .sets import __all__ as _sets_all            # noqa: E402
from .selection import *                          # noqa: E402,F401,F403
from .selection import __all__ as _selection_all  # noqa: E402
from .assignment import *                         # noqa: E402,F401,F403
from .assignment import __all__ as _assignment_all  # noqa: E402
from .einsum import *                             # noqa: E402,F401,F403
from .einsum import __all__ as _einsum_all        # noqa: E402
from .histograms import *                         # noqa: E402,F401,F403
from .histograms import __all__ as _histograms_all  # noqa: E402
from .quantiles import *                          # noqa: E402,F401,F403
from .quantiles import __all__ as _quantiles_all  # noqa: E402
from .padding import *                            # noqa: E402,F401,F403
from .padding import __all__ as _padding_all      # noqa: E402
from .signal import *                             # noqa: E402,F401,F403
from .signal import __all__ as _signal_all        # noqa: E402
from .polynomial import *                         # noqa: E402,F401,F403
from .polynomial import __all__ as _polynomial_all  # noqa: E402
from .construction import *                       # noqa: E402,F401,F403
from .construction import __all__ as _construction_all  # noqa: E402
from .introspection import *                      # noqa: E402,F401,F403
from .introspection import __all__ as _introspection_all  # noqa: E402
from . import linalg           # noqa: E402
from . import fft              # noqa: E402
from .linalg import matmul, matrix_transpose, tensordot, vecdot  # noqa: E402,F401

__all__ = ["__array_api_version__", "__array_namespace_info__", "float32", "int32", "uint32",
           "float64", "int64", "uint64", "int8", "uint8", "int16", "uint16", "float16", "bfloat16",
           "complex64", "complex128",
           "bool", "e", "pi", "inf", "nan", "newaxis", "isdtype", "result_type", "can_cast",
           "finfo", "iinfo", "astype", "asarray", "from_dlpack", "empty", "zeros", "ones", "full",
           "empty_like", "zeros_like", "ones_like", "full_like", "arange", "linspace", "eye",
           "meshgrid", "tril", "triu", "linalg", "fft", "matmul", "matrix_transpose", "tensordot",
           "vecdot"] + list(_ew_all) + list(_ops_all) + [
    # numpy's functions beyond the standard (numeric's round, with decimals=, replaces the
    # standard's, which it extends)
    n for names in (_shaping_all, _numeric_all, _statistics_all, _ufuncs_all, _index_all,
                    _sets_all, _selection_all, _assignment_all, _einsum_all, _histograms_all,
                    _quantiles_all, _padding_all, _signal_all, _polynomial_all,
                    _construction_all, _introspection_all)
    for n in names if n != "round"]
