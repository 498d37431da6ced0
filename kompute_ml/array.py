"""Array: numpy-like arrays on a Vulkan device; elementwise work is lazy and fused.

An Array is either *realized* (it owns a pooled ``_memory.Buffer`` holding its elements contiguously
in C order, 4 bytes each, 8 for float64, int64 and uint64) or *lazy* (a ``_array.fusion.Node``: an elementwise operation over
realized buffers, other lazy nodes and scalars). Anything that is not elementwise (a reduction, a
matmul, a readback, a reshape of a lazy array, indexing, a kernel call) realizes its inputs: the
whole expression becomes one generated kernel (see ``_array.fusion``).

This module is the only one that constructs Arrays or reads their private state; the device work
lives in ``_array/`` (Buffers, shapes and dtypes in, (Buffer, shape, dtype) out). Other modules of
the package reach an Array's buffer through the internal accessors at the end of this module
(:func:`buffer_of`, :func:`writable_buffer_of`, :func:`from_buffer`, :func:`node_of`).

dtypes are float32, int32, uint32 and bool (bool is stored as 0/1 uint32 words; ``nbytes`` counts
numpy's 1 byte), float64 on a device with shaderFloat64 (computed in double: arithmetic,
fusion, reductions, matmul, indexing; exp/log/sin/... from shaders/kmath64.glsl), and int64 and
uint64 on a device with shaderInt64 (exact 64-bit arithmetic with numpy's wrapping, in every
layer). Other inputs map onto them: float16 -> float32, int16/int8 -> int32, uint16/uint8 ->
uint32; float64 data on a device without float64 becomes float32, int64/uint64 data on a device
without int64 int32/uint32 (integers that do not fit raise OverflowError), and an explicit
``dtype=float64`` / ``int64`` there raises TypeError. Python floats (scalars, lists) take the
default float dtype, float32, as in PyTorch and JAX: float64 comes from numpy float64 data, numpy
float64 scalars or an explicit dtype. Python ints take the default integer dtype, numpy's int64
where the device has int64 (int32 elsewhere); so do integer aranges and index results (argmax,
argsort, nonzero, searchsorted, unique's indices). Results follow numpy's type rules (NEP 50 for
Python scalars: float32 array + Python float stays float32, float32 + float64 arrays give float64,
int / int gives float64, int32 + uint32 gives int64, int64 + uint64 gives float64; sums of
int32/uint32/bool accumulate in int64/uint64) with the same mapping (float64 -> float32, int64 ->
int32 on a device without them). Where kompute_ml differs from numpy:

- on a device without int64: ``int32 op uint32`` arithmetic gives int32 (numpy: int64;
  comparisons of the two stay exact), sums of int32/uint32/bool accumulate in 32 bits and wrap,
  and index results are int32.
- integer ``**`` with a negative exponent: a scalar exponent raises ValueError as in numpy; an
  array exponent gives 0 there (1 or -1 for bases 1 and -1) instead of raising.
- no views: indexing, slicing and transposes return copies; ``reshape`` of a realized array shares
  its buffer. Item assignment rebinds the array to new values. Advanced (integer and boolean
  array) indexing runs on the device; a repeated index in an assignment writes one of its values
  (numpy: the last).
- division by zero and invalid values give numpy's values (inf, nan, 0 for integers) but no
  RuntimeWarning. The float32 math functions (exp, exp2, expm1, log, log2, log10, log1p, sqrt,
  sin, cos, tan, arcsin, arccos, arctan, arctan2, sinh, cosh, tanh, arcsinh, arccosh, arctanh,
  sigmoid, ``**`` of floats) are our own (shaders/kmath.glsl), within 4 ulp of the correctly
  rounded float32 over the whole range on any device, with C99's special values (docs/arrays.md
  has the measured table); float ``//`` and ``%`` are exact (numpy's float32 results, bit for
  bit), through an exact fmod.
- ``dot`` takes at most 2-D arrays; ``matmul`` follows numpy fully (stacks broadcast).
"""

import math
import numbers
import operator
import threading
import weakref

import numpy as np

from ._array import buffers as _buffers
from ._array import dtypes as _dtypes
from ._array import fusion as _fusion
from ._array import indexing as _indexing
from ._array import linalg as _linalg
from ._array import reduction as _reduction
from ._array.dtypes import (BOOL, COMPLEX, COMPLEX128, COMPLEX64, COMPLEX_PART, FLOAT32, FLOAT64,
                            INT32, INT64, INTEGERS, UINT32, UINT64, WIDE, canonical_dtype,
                            default_int, device_dtype)
from ._array.fusion import Leaf, Scalar
from . import config as _config
from . import kernel as _kernel
from ._runtime import device as _device
from .errors import DeviceError

__all__ = ["Array", "asarray", "array", "zeros", "ones", "full", "empty", "arange",
           "zeros_like", "ones_like", "full_like", "empty_like",
           "exp", "log", "sqrt", "abs", "absolute", "sin", "cos", "tanh", "sigmoid", "floor", "ceil",
           "exp2", "expm1", "log2", "log10", "log1p", "tan", "sinh", "cosh", "arcsin", "arccos",
           "arctan", "arctan2", "arcsinh", "arccosh", "arctanh",
           "negative", "maximum", "minimum", "where", "clip",
           "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
           "power", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
           "bitwise_and", "bitwise_or", "bitwise_xor", "invert",
           "sum", "mean", "max", "min", "argmax", "argmin", "matmul", "dot",
           "set_float32_matmul_precision", "get_float32_matmul_precision",
           "reshape", "transpose", "broadcast_to"]

_SCALARS = (bool, int, float, complex, np.bool_, np.integer, np.floating, np.complexfloating)

# Lazy arrays that read a buffer are listed on the buffer (``Buffer.readers``: {id(Array):
# weakref to Array}): a kernel about to write the buffer realizes them first, so they keep the
# values they had when they were written down (numpy's eager semantics).
_readers_lock = threading.Lock()             # threads share arrays, hence these reader lists


def _note_reader(buf, arr, ref=None):
    with _readers_lock:
        _note_reader_locked(buf, id(arr), ref or weakref.ref(arr))


def _note_reader_locked(buf, key, ref):
    readers = buf.readers
    if readers is None:
        readers = buf.readers = {}
    elif len(readers) > 64:
        for k, r in list(readers.items()):
            alive = r()                      # one call: the referent may die in between
            if alive is None or not alive.is_lazy:
                del readers[k]
    readers[key] = ref


def _get_device(spec):
    if isinstance(spec, _device.Device):
        # a closed Device object is an error, not a request for a fresh one: results made "like"
        # an array of that device (a[1:], a.T, zeros_like(a)) must not land on another device
        if spec.closed:
            raise DeviceError(f"device {spec.name!r} was closed; its arrays are gone")
        return spec
    return _device.get_device(spec)


def _normalize_shape(shape, name="shape"):
    """``shape`` (an int or a sequence of ints) as a tuple of ints; ``name`` is the argument's
    name in the errors (kompute_ml.random's ``size``)."""
    if isinstance(shape, (numbers.Integral, np.integer)):
        shape = (shape,)
    try:
        out = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{name} must be an int or a tuple of ints, got {shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"negative dimensions are not allowed, got {name} {out}")
    return out


def _forward(op, name):
    """The operator method ``name`` of ``op`` with an Array on its left: the per-op fast path
    first (:func:`_fast_binop`), the general one where it declines."""
    def method(self, o):
        out = _fast_binop(op, self, o)
        return out if out is not None else _full_binop(op, self, o)
    method.__name__ = name
    method.__qualname__ = "Array." + name
    return method


class Array:
    """An n-dimensional array on a Vulkan device, with numpy's semantics.

    Create arrays with :func:`asarray`, :func:`zeros`, :func:`arange`, ...; read them with
    :meth:`numpy` or ``np.asarray(arr)``. Elementwise operations are lazy: they are recorded and
    fused into one kernel when a result is needed. Arrays are not made by calling the class.

    Attributes
    ----------
    shape : tuple of int
        The dimensions.
    dtype : numpy.dtype
        float32, float64, int32, uint32 or bool (see :doc:`/arrays`).
    device : Device
        The device that holds the elements.

    Examples
    --------
    >>> import kompute_ml as km
    >>> a = km.asarray([1.0, 2.0, 3.0])
    >>> (a * 2 + 1).numpy()
    array([3., 5., 7.], dtype=float32)
    >>> a.shape, a.dtype, a.ndim, a.size
    ((3,), dtype('float32'), 1, 3)
    """

    # _leaf: this array as a fusion operand, made once per buffer (an op's operands are Leaves);
    # _tsrc: (Buffer, shape) of the matrix this one is the transpose of, while that transpose
    # is not yet made (Array.transpose of a matrix: a product reads the matrix in place)
    __slots__ = ("_buf", "_node", "_leaf", "_tsrc", "shape", "dtype", "device", "__weakref__")
    __array_priority__ = 100

    def __init__(self, *args, **kwargs):
        raise TypeError("create arrays with kompute_ml.asarray, zeros, ones, full, empty or arange")

    @classmethod
    def _new(cls, device, shape, dtype, buf=None, node=None):
        self = object.__new__(cls)
        self._buf = buf
        self._node = node
        self._leaf = self._tsrc = None
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device
        return self

    # ---- realization and buffers ------------------------------------------------------------
    def _realize(self):
        """The Buffer holding this array's elements (runs the fused kernel of a lazy array)."""
        node = self._node                     # read once: another thread may realize it
        if node is not None:
            buf = _fusion.realize(node, self.device)
            # buf before node: a thread that sees no node finds the buffer
            self._buf = buf
            self._node = None
        buf = self._buf
        return buf if buf is not None else self._transposed()

    def _transposed(self):
        """Make the pending transpose of :meth:`transpose` (the only array with neither a
        buffer nor a node); its Buffer."""
        src = self._tsrc
        if src is None:                       # another thread made it (buf is set first)
            return self._buf
        buf, _, _ = _indexing.transpose(src[0], src[1], self.dtype, self.device)
        self._buf = buf
        self._tsrc = None
        return buf

    def _kernel_buffer(self):
        """The realized Buffer, for kernels that read or write it in place.

        Lazy arrays that read this buffer are realized first, so a kernel writing it does not change
        values that were already computed in numpy's eager semantics.
        """
        buf = self._realize()
        with _readers_lock:
            readers, buf.readers = buf.readers, None
        for ref in (readers or {}).values():
            arr = ref()
            if arr is not None and arr.is_lazy:
                arr._realize()
        return buf

    def _operand(self):
        """This array as an argument of a fusion Node: its Node while lazy, else a Leaf."""
        node = self._node                     # read once: another thread may realize it
        if node is not None:
            return node
        buf = self._buf
        if buf is None:
            buf = self._transposed()
        leaf = self._leaf
        if leaf is None or leaf.buf is not buf:   # (an in-place assignment rebinds the buffer)
            leaf = self._leaf = Leaf(buf, self.shape, self.dtype)
        return leaf

    @property
    def is_lazy(self):
        """True while the array is an unevaluated elementwise expression (or a matrix's
        transpose not yet made)."""
        node = self._node
        if node is None:
            return self._buf is None
        # a subtree of another expression may have been realized with it (fusion's splits)
        return node.buf is None

    # ---- attributes -----------------------------------------------------------------------------
    @property
    def ndim(self):
        """Number of dimensions.

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.zeros((2, 3)).ndim
        2
        """
        return len(self.shape)

    @property
    def size(self):
        """Number of elements.

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.zeros((2, 3)).size
        6
        """
        return math.prod(self.shape)

    @property
    def nbytes(self):
        """Bytes of the elements as numpy counts them (``size * itemsize``; bool: 1 byte).

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.zeros((2, 3)).nbytes
        24
        """
        return self.size * self.dtype.itemsize

    @property
    def itemsize(self):
        """Bytes of one element (numpy's count).

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.zeros(3, dtype=km.int32).itemsize
        4
        """
        return self.dtype.itemsize

    @property
    def T(self):
        """The transpose (reversed axes); the array itself below two dimensions.

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.zeros((2, 3)).T.shape
        (3, 2)
        """
        return self if self.ndim < 2 else self.transpose()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # ---- host transfers ---------------------------------------------------------------------
    def numpy(self):
        """Copy the array to a new numpy array (submits pending work and waits)."""
        return _buffers.download(self._realize(), self.shape, self.dtype)

    get = numpy     # CuPy's name

    def __array__(self, dtype=None, copy=None):
        out = self.numpy()
        return out if dtype is None else out.astype(dtype, copy=False)

    def item(self):
        """The one element as a Python scalar (a download).

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.asarray([[2.5]]).item()
        2.5
        """
        shape = self.shape
        if shape and math.prod(shape) != 1:        # (a 0-d array, a reduction's result: no prod)
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return _fusion.read_scalar(self._realize(), self.dtype)

    def tolist(self):
        """The elements as nested Python lists (a download).

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.asarray([[1, 2], [3, 4]]).tolist()
        [[1, 2], [3, 4]]
        """
        return self.numpy().tolist()

    def __float__(self):
        shape = self.shape
        if shape and math.prod(shape) != 1:
            raise TypeError("only length-1 arrays can be converted to Python scalars")
        if self.dtype in COMPLEX:
            raise TypeError("float() of a complex array: take its real part first")
        return float(_fusion.read_scalar(self._realize(), self.dtype))

    def __int__(self):
        if self.size != 1:
            raise TypeError("only length-1 arrays can be converted to Python scalars")
        return int(self.item())

    def __complex__(self):
        # the standard's conversion of a one-element array
        if self.size != 1:
            raise TypeError("only length-1 arrays can be converted to Python scalars")
        return complex(self.item())

    def __index__(self):
        if (self.dtype not in INTEGERS and self.dtype != BOOL) or self.ndim:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def __bool__(self):
        shape = self.shape
        if shape and math.prod(shape) != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous. "
                             "Use a.any() or a.all()")
        return bool(_fusion.read_scalar(self._realize(), self.dtype))

    def __repr__(self):
        body = repr(self.numpy())                  # "array(...)"
        return "Array" + body[5:-1] + f", device={self.device.name!r})"

    def __str__(self):
        return str(self.numpy())

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    # ---- shape and dtype ----------------------------------------------------------------------
    def reshape(self, *shape, order="C"):
        """The same elements in a new shape (one dimension may be -1). Realizes a lazy array."""
        if order != "C":
            raise ValueError("only order='C' is supported")
        if len(shape) == 1 and not isinstance(shape[0], (numbers.Integral, np.integer)):
            shape = shape[0]
        shape = tuple(operator.index(s) for s in shape)
        if shape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape array of size {self.size} into shape {shape}")
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        shape = _normalize_shape(shape)
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {shape}")
        return Array._new(self.device, shape, self.dtype, buf=self._realize())

    def ravel(self):
        """The elements as a 1-D array (``flatten`` is the same).

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.zeros((2, 3)).ravel().shape
        (6,)
        """
        return self.reshape(-1)

    flatten = ravel

    def squeeze(self, axis=None):
        """Remove axes of length one (all of them, or those in ``axis``).

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.zeros((1, 3, 1)).squeeze().shape
        (3,)
        """
        if axis is None:
            return self.reshape(tuple(s for s in self.shape if s != 1))
        axes = {_indexing.norm_axis(a, self.ndim) for a in ((axis,) if np.ndim(axis) == 0 else axis)}
        if any(self.shape[a] != 1 for a in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        return self.reshape(tuple(s for k, s in enumerate(self.shape) if k not in axes))

    def astype(self, dtype, copy=True):
        """Convert to ``dtype`` (lazy; fused with the expression it belongs to). complex to a
        real dtype keeps the real part and warns (numpy's ComplexWarning; to bool: nonzero)."""
        dtype = device_dtype(dtype, self.device, explicit=True)
        if dtype == self.dtype and not copy:
            return self
        if self.dtype in COMPLEX and dtype not in COMPLEX and dtype != BOOL:
            import warnings
            warnings.warn("Casting complex values to real discards the imaginary part",
                          np.exceptions.ComplexWarning, stacklevel=2)
        return _lazy("cast", (self,), dtype, self.shape, (self.dtype,))

    def copy(self):
        """A new array with the same elements (lazy)."""
        return _lazy("cast", (self,), self.dtype, self.shape, (self.dtype,))

    def transpose(self, *axes):
        """Permute the dimensions (reversed when no axes are given); a new array.

        A matrix's transpose is made when first read, and a matrix product reads the matrix
        itself instead (``X.T @ X``, ``X.T @ y``: no transposed copy); its values are those of
        the matrix at the call (a later in-place write makes the transpose first)."""
        if len(axes) == 1 and not isinstance(axes[0], (numbers.Integral, np.integer)):
            axes = axes[0]
        axes = None if not axes or axes == (None,) else axes
        if len(self.shape) == 2 and (axes is None or _is_swap(axes)):
            src = self._realize()
            src.tensor                       # (raises now, as a copy would: a closed device)
            out = Array._new(self.device, self.shape[::-1], self.dtype)
            out._tsrc = (src, self.shape)
            _note_reader(src, out)           # an in-place write to src makes it first
            return out
        return self._wrap(_indexing.transpose(self._realize(), self.shape, self.dtype, self.device,
                                              axes))

    def __getitem__(self, index):
        """``a[index]``: basic indexing (ints, slices, None, ...) is one strided gather; integer
        and boolean array indices (kompute_ml._api.indexing) a gather through offsets computed on
        the device."""
        items = index if isinstance(index, tuple) else (index,)
        if any(isinstance(i, (Array, np.ndarray, list, bool, np.bool_)) for i in items):
            return _protocol("getitem")(self, index)
        return self._wrap(_indexing.getitem(self._realize(), self.shape, self.dtype, self.device,
                                            index))

    def _wrap(self, result):
        """A realized Array on this array's device from an internal's (Buffer, shape, dtype)."""
        buf, shape, dtype = result
        return Array._new(self.device, shape, dtype, buf=buf)

    # ---- reductions ---------------------------------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        """Sum of the elements, as :func:`kompute_ml.sum` (numpy's keywords).

        Examples
        --------
        >>> import kompute_ml as km
        >>> print(km.asarray([[1, 2], [3, 4]]).sum(axis=0))
        [4 6]
        """
        return _reduce(self, "sum", axis, keepdims, dtype, out)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        """Mean of the elements, as :func:`kompute_ml.mean` (numpy's keywords).

        Examples
        --------
        >>> import kompute_ml as km
        >>> print(km.asarray([1.0, 2.0, 6.0]).mean())
        3.0
        """
        return _reduce(self, "mean", axis, keepdims, dtype, out)

    def max(self, axis=None, out=None, keepdims=False):
        """Largest element, as :func:`kompute_ml.max`.

        Examples
        --------
        >>> import kompute_ml as km
        >>> print(km.asarray([1.0, 5.0, 2.0]).max())
        5.0
        """
        return _reduce(self, "max", axis, keepdims, None, out)

    def min(self, axis=None, out=None, keepdims=False):
        """Smallest element, as :func:`kompute_ml.min`.

        Examples
        --------
        >>> import kompute_ml as km
        >>> print(km.asarray([1.0, 5.0, 2.0]).min())
        1.0
        """
        return _reduce(self, "min", axis, keepdims, None, out)

    def argmax(self, axis=None, out=None, keepdims=False):
        """Index of the largest element, as :func:`kompute_ml.argmax`.

        Examples
        --------
        >>> import kompute_ml as km
        >>> print(km.asarray([1.0, 5.0, 2.0]).argmax())
        1
        """
        return _reduce(self, "argmax", axis, keepdims, None, out)

    def argmin(self, axis=None, out=None, keepdims=False):
        """Index of the smallest element, as :func:`kompute_ml.argmin`.

        Examples
        --------
        >>> import kompute_ml as km
        >>> print(km.asarray([1.0, 5.0, 2.0]).argmin())
        0
        """
        return _reduce(self, "argmin", axis, keepdims, None, out)

    def dot(self, other):
        """``kompute_ml.dot(self, other)``.

        Examples
        --------
        >>> import kompute_ml as km
        >>> print(km.asarray([1.0, 2.0]).dot(km.asarray([3.0, 4.0])))
        11.0
        """
        return dot(self, other)

    # ---- operators ----------------------------------------------------------------------------
    __add__ = _forward("add", "__add__")
    def __radd__(self, o): return _binop("add", o, self)
    __sub__ = _forward("subtract", "__sub__")
    def __rsub__(self, o): return _binop("subtract", o, self)
    __mul__ = _forward("multiply", "__mul__")
    def __rmul__(self, o): return _binop("multiply", o, self)
    __truediv__ = _forward("true_divide", "__truediv__")
    def __rtruediv__(self, o): return _binop("true_divide", o, self)
    __floordiv__ = _forward("floor_divide", "__floordiv__")
    def __rfloordiv__(self, o): return _binop("floor_divide", o, self)
    __mod__ = _forward("remainder", "__mod__")
    def __rmod__(self, o): return _binop("remainder", o, self)
    __pow__ = _forward("power", "__pow__")
    def __rpow__(self, o): return _binop("power", o, self)
    __eq__ = _forward("equal", "__eq__")
    __ne__ = _forward("not_equal", "__ne__")
    __lt__ = _forward("less", "__lt__")
    __le__ = _forward("less_equal", "__le__")
    __gt__ = _forward("greater", "__gt__")
    __ge__ = _forward("greater_equal", "__ge__")
    __and__ = _forward("bitwise_and", "__and__")
    def __rand__(self, o): return _binop("bitwise_and", o, self)
    __or__ = _forward("bitwise_or", "__or__")
    def __ror__(self, o): return _binop("bitwise_or", o, self)
    __xor__ = _forward("bitwise_xor", "__xor__")
    def __rxor__(self, o): return _binop("bitwise_xor", o, self)
    def __invert__(self): return _unary("invert", self)
    def __neg__(self): return _unary("negative", self)
    def __pos__(self): return self
    def __abs__(self): return _unary("absolute", self)
    __matmul__ = _forward("matmul", "__matmul__")
    def __rmatmul__(self, o): return _binop("matmul", o, self)

    def __lshift__(self, o): return _shift("left", self, o)
    def __rlshift__(self, o): return _shift("left", o, self)
    def __rshift__(self, o): return _shift("right", self, o)
    def __rrshift__(self, o): return _shift("right", o, self)

    # in-place operators compute a new value and rebind this array to it (arrays have no views)
    def __iadd__(self, o): return self._assign_from(_binop("add", self, o))
    def __isub__(self, o): return self._assign_from(_binop("subtract", self, o))
    def __imul__(self, o): return self._assign_from(_binop("multiply", self, o))
    def __itruediv__(self, o): return self._assign_from(_binop("true_divide", self, o))
    def __ifloordiv__(self, o): return self._assign_from(_binop("floor_divide", self, o))
    def __imod__(self, o): return self._assign_from(_binop("remainder", self, o))
    def __ipow__(self, o): return self._assign_from(_binop("power", self, o))
    def __iand__(self, o): return self._assign_from(_binop("bitwise_and", self, o))
    def __ior__(self, o): return self._assign_from(_binop("bitwise_or", self, o))
    def __ixor__(self, o): return self._assign_from(_binop("bitwise_xor", self, o))
    def __ilshift__(self, o): return self._assign_from(_shift("left", self, o))
    def __irshift__(self, o): return self._assign_from(_shift("right", self, o))
    def __imatmul__(self, o): return self._assign_from(_binop("matmul", self, o))

    __hash__ = None

    # ---- numpy protocols (NEP 13, NEP 18), Array API, pickling: see _api/ ----------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy ufuncs on Arrays (``np.exp(a)``, ``np.add(a, b, out=c, dtype=...)``) run on the
        device; ``dtype=``, ``out=`` (Arrays, or numpy arrays filled from the host) and
        ``casting=`` are honoured. Other ufunc methods (``reduce``, ``at``...) are refused."""
        return _protocol("array_ufunc")(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        """numpy functions on Arrays (``np.concatenate``, ``np.sum``...) run on the device; one
        kompute_ml does not implement raises TypeError naming it (never a silent download)."""
        return _protocol("array_function")(func, types, args, kwargs)

    def __array_namespace__(self, *, api_version=None):
        """The Array API namespace of this array: the ``kompute_ml`` module."""
        return _protocol("namespace")(api_version)

    def to_device(self, device, /, *, stream=None):
        """A copy of this array on ``device`` (through the host in bounded chunks), or this
        array if it is there."""
        if stream is not None:
            raise ValueError("stream= is not supported: kompute_ml orders work per device itself")
        return asarray(self, device=device)

    @property
    def mT(self):
        """The matrix transpose: the last two axes swapped (at least 2 dimensions)."""
        if self.ndim < 2:
            raise ValueError(f"mT needs an array of at least 2 dimensions, got {self.ndim}")
        axes = list(range(self.ndim))
        axes[-2], axes[-1] = axes[-1], axes[-2]
        return self.transpose(axes)

    def __setitem__(self, index, value):
        """``a[index] = value`` (on the device for basic, integer-array and boolean-mask
        indices; kompute_ml._api.indexing). The array is rebound to the new values: arrays have
        no views, so arrays made from it before keep their values."""
        self._assign_from(_protocol("setitem")(self, index, value))

    def _assign_from(self, value):
        """Rebind this array to ``value`` (same shape; converted to this dtype), in place."""
        if value is NotImplemented:
            return NotImplemented
        if not isinstance(value, Array) or value.shape != self.shape:
            shape = getattr(value, "shape", ())
            raise ValueError(f"non-broadcastable output operand with shape {self.shape} doesn't "
                             f"match the broadcast shape {shape}")
        if value.device is not self.device:
            value = asarray(value, device=self.device)
        buf = value.astype(self.dtype, copy=False)._realize()
        self._kernel_buffer()      # lazy arrays reading the old values compute them first
        self._buf, self._node = buf, None
        return self

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of a host copy (Vulkan buffers have no DLPack device type)."""
        if copy is False:
            raise BufferError("kompute_ml arrays are exported through a host copy; copy=False "
                              "cannot be honoured")
        kwargs = {} if max_version is None else {"max_version": max_version}
        return self.numpy().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (1, 0)      # kDLCPU: what __dlpack__ exports is a host copy

    def __reduce__(self):
        # host data + dtype + the device's description: Buffers and Devices hold Vulkan handles
        dev = self.device
        return (_from_pickle, (self.numpy(), dev.index, dev.name))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()


# ---------------------------------------------------------------------------------------------
# elementwise operations

def _lazy(op, args, dtype, shape, compute):
    """Wrap a new Node in a lazy Array (realizing oversized subtrees, noting buffer readers)."""
    device = next(a.device for a in args if isinstance(a, Array))
    _buffers.check_size(device, shape, dtype)
    operands = [a._operand() if isinstance(a, Array) else a for a in args]
    node = _fusion.node(device, op, operands, dtype, shape, compute)
    arr = Array._new(device, shape, dtype, node=node)
    for x in operands:
        buf = None if isinstance(x, Scalar) else x.buf       # realized operands: read buffers
        if buf is not None:
            _note_reader(buf, arr)
    return arr


def _coerce(operands, allow_foreign):
    """Operands -> Arrays and scalars, all arrays on one device. None when one is foreign."""
    device = None
    for x in operands:
        if isinstance(x, Array):
            if device is None:
                device = x.device
            elif x.device is not device:
                raise ValueError(f"arrays on different devices in one operation: "
                                 f"{_device.describe_pair(device, x.device)}; move one with "
                                 f"km.asarray(x, device=...)")
    out = []
    for x in operands:
        if isinstance(x, Array) or (isinstance(x, _SCALARS) and not isinstance(x, np.ndarray)):
            out.append(x)
        elif isinstance(x, (np.ndarray, list, tuple)):
            out.append(asarray(x, device=device))
            device = device or out[-1].device
        elif allow_foreign:
            return None
        else:
            raise TypeError(f"unsupported operand type {type(x).__name__!r}")
    if device is None:                      # scalars only: a 0-d array of the first one
        out[0] = asarray(out[0])
    return out


def elementwise(op, *operands, _foreign=False):
    """Record the elementwise operation ``op`` (a numpy ufunc name) as a lazy Array."""
    ops = _coerce(operands, _foreign)
    if ops is None:
        return NotImplemented
    arrays = [x for x in ops if isinstance(x, Array)]
    out_dtype, compute = _dtypes.resolve(op, ops, *_dtypes.features(arrays[0].device))
    shape = arrays[0].shape
    for a in arrays:
        if a.shape != shape:              # equal shapes (the common case) skip numpy's broadcast
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
            break
    if op in _dtypes.COMPARISONS:
        const = _out_of_range_comparison(op, ops, compute)
        if const is not None:
            return broadcast_to(asarray(const, device=arrays[0].device), shape)
    args = []
    for k, (x, ct) in enumerate(zip(ops, compute)):
        if isinstance(x, Array):
            args.append(x)
        else:
            if op == "power" and k == 1 and ct in INTEGERS and x < 0:
                raise ValueError("Integers to negative integer powers are not allowed.")
            args.append(Scalar(_dtypes.scalar_value(x, ct), ct))
    return _lazy(op, args, out_dtype, shape, compute)


_FLIP = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
         "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}


def _out_of_range_comparison(op, ops, compute):
    """The constant result of comparing integers with a Python int outside their range, or None.

    numpy compares such a scalar exactly (``uint32_array < -1`` is all False) instead of
    converting it; so do we.
    """
    a, b = ops
    if isinstance(a, Array) == isinstance(b, Array):
        return None
    if not isinstance(a, Array):
        a, b, op = b, a, _FLIP[op]
    ct = compute[1] if isinstance(ops[0], Array) else compute[0]
    if ct not in INTEGERS or not isinstance(b, (int, np.integer)) or isinstance(b, bool):
        return None
    info = np.iinfo(ct)
    if info.min <= int(b) <= info.max:
        return None
    above = int(b) > info.max            # every element is below the scalar
    return {"less": above, "less_equal": above, "greater": not above,
            "greater_equal": not above, "equal": False, "not_equal": True}[op]


# The per-op fast path of elementwise(): (op, dtype or scalar type, ...) -> (result dtype,
# compute dtypes), for the cases that need none of elementwise's checks beyond the types: two
# arrays of one shape on one device, or an array and a Python float/int (not for comparisons,
# whose out-of-range ints are constant, nor ``**``, whose negative int exponents raise).
_fast_types = {}
_NO_FAST = frozenset(_dtypes.COMPARISONS) | {"power", "matmul"}


def _fast_entry(op, operands):
    """(result dtype, compute dtypes, whether an 8-byte dtype is among them: a device without
    float64 or int64 then resolves again, narrowed) for _fast_types."""
    out_dtype, compute = _dtypes.resolve(op, operands)
    return out_dtype, compute, any(dt in WIDE for dt in (out_dtype, *compute))


def _fast_types_of(op, key, operands, device):
    """(result dtype, compute dtypes) of ``op`` for the signature ``key``, resolved once per
    signature; None for the ops that always take the full path."""
    hit = _fast_types.get(key)
    if hit is None:
        if op in _NO_FAST:
            return None
        hit = _fast_types[key] = _fast_entry(op, operands)
    out_dtype, compute, wide = hit
    if wide:
        float64, int64 = _dtypes.features(device)
        if not (float64 and int64):
            out_dtype, compute = _dtypes.resolve(op, operands, float64, int64)
    return out_dtype, compute


# Scalar operands by (Python type, value, compute dtype): a loop's ``x * 2.0`` converts its
# scalar once. Zero and nan are left out (0.0 and -0.0 are equal keys; nan is not equal to itself).
_scalars = {}


def _scalar(value, dtype):
    key = (type(value), value, dtype)
    hit = _scalars.get(key)
    if hit is None:
        hit = Scalar(_dtypes.scalar_value(value, dtype), dtype)
        if value and value == value:
            if len(_scalars) >= 1024:
                _scalars.clear()
            _scalars[key] = hit
    return hit


def _fast_binop(op, a, b):
    """``op`` of an Array ``a`` and ``b`` as a lazy Array, or None when it needs the full path.

    The per-op path (a loop's ``a * b + 1``): the signature's dtypes, the operands and the
    result are found and made here in place of _fast_types_of, Array._operand and Array._new
    (each a call per op otherwise); those remain the checked, general forms."""
    tb = type(b)
    if tb is Array:
        if b.device is not a.device or b.shape != a.shape:
            return None
        key = (op, a.dtype, b.dtype)
    elif tb is float or tb is int:
        key = (op, a.dtype, tb)
    else:
        return None
    hit = _fast_types.get(key)
    if hit is None or hit[2]:            # new, or 8-byte dtypes involved (device-dependent)
        types = _fast_types_of(op, key, (a, b), a.device)
        if types is None:
            return None
        out_dtype, compute = types
    else:
        out_dtype, compute = hit[0], hit[1]
    # (Array._operand: the node read once, as another thread may realize it)
    x = a._node
    if x is None:
        x = a._leaf
        if x is None or x.buf is not a._buf:
            x = a._operand()
    if tb is Array:
        y = b._node
        if y is None:
            y = b._leaf
            if y is None or y.buf is not b._buf:
                y = b._operand()
    else:
        y = _scalars.get((tb, b, compute[1])) or _scalar(b, compute[1])
    return _fast_lazy(a.device, op, x, y, out_dtype, a.shape, compute)


def _fast_unary(op, a):
    """``op`` of the Array ``a`` as a lazy Array, or None when it needs the full path: the per-op
    path of a unary function or operator (``km.exp(x)``, ``-x``, ``abs(x)``), as
    :func:`_fast_binop` is of a binary one (elementwise's coercion, type resolution, operand
    and Node steps, each a call per op otherwise, made once per signature)."""
    key = (op, a.dtype)
    hit = _fast_types.get(key)
    if hit is None or hit[2]:            # new, or 8-byte dtypes involved (device-dependent)
        types = _fast_types_of(op, key, (a,), a.device)
        if types is None:
            return None
        out_dtype, compute = types
    else:
        out_dtype, compute = hit[0], hit[1]
    x = a._node                          # (read once, as _fast_binop does)
    if x is None:
        x = a._leaf
        if x is None or x.buf is not a._buf:
            x = a._operand()
    return _fast_lazy(a.device, op, x, None, out_dtype, a.shape, compute)


def _unary(op, a):
    """``op`` of ``a`` (an Array or host data) as elementwise makes it, by the per-op path where
    it applies."""
    if type(a) is Array:
        out = _fast_unary(op, a)
        if out is not None:
            return out
    return elementwise(op, a)


def _fast_rbinop(op, a, b):
    """``op`` of a Python float/int ``a`` and an Array ``b`` (reflected operators)."""
    ta = type(a)
    if ta is not float and ta is not int:
        return None
    key = (op, ta, b.dtype)
    types = _fast_types_of(op, key, (a, b), b.device)
    if types is None:
        return None
    out_dtype, compute = types
    x = _scalar(a, compute[0])
    return _fast_lazy(b.device, op, x, b._operand(), out_dtype, b.shape, compute)


_object_new = object.__new__


def _fast_lazy(device, op, x, y, dtype, shape, compute):
    """The lazy Array of ``op`` over the operands ``x`` and ``y`` (None: a unary op)."""
    node = _fusion.fast_node(device, op, (x,) if y is None else (x, y), dtype, shape, compute)
    # (Array._new, inlined: shape is already a tuple here)
    arr = _object_new(Array)
    arr._buf = arr._leaf = arr._tsrc = None
    arr._node = node
    arr.shape = shape
    arr.dtype = dtype
    arr.device = device
    # realized operands: the new array reads their buffers (one weakref, one lock for both)
    bx = None if type(x) is Scalar else x.buf
    by = None if y is None or type(y) is Scalar else y.buf
    if bx is not None or by is not None:
        ref = weakref.ref(arr)
        key = id(arr)
        with _readers_lock:
            for buf in (bx, by):
                if buf is not None:
                    # (_note_reader_locked, inlined where the buffer's list is short)
                    readers = buf.readers
                    if readers is not None and len(readers) <= 64:
                        readers[key] = ref
                    else:
                        _note_reader_locked(buf, key, ref)
    return arr


def _fast_pair(op, a, b):
    """``op`` of ``a`` and ``b`` by an operator's per-op path, or None (the general path's)."""
    if type(a) is Array:
        return _fast_binop(op, a, b)
    if type(b) is Array:
        return _fast_rbinop(op, a, b)
    return None


def _binop(op, a, b):
    out = _fast_pair(op, a, b)
    return out if out is not None else _full_binop(op, a, b)


def _is_swap(axes):
    """True where ``axes`` (of a 2-D transpose) are (1, 0) in any valid spelling (anything else,
    an error included, is left to indexing.transpose, which raises it)."""
    try:
        return len(axes) == 2 and tuple(_indexing.norm_axis(x, 2) for x in axes) == (1, 0)
    except (TypeError, ValueError):
        return False


def _full_binop(op, a, b):
    """``op`` of ``a`` and ``b`` by the checked, general path (what the fast ones leave)."""
    if op == "matmul":
        ops = _coerce((a, b), True)
        return NotImplemented if ops is None else matmul(*ops)
    out = elementwise(op, a, b, _foreign=True)
    if out is NotImplemented and op in ("equal", "not_equal"):
        return _foreign_comparison(op, a, b)
    return out


def _foreign_comparison(op, a, b):
    """``array == obj`` for an obj that is no array or number (None, str, dict, ...): as numpy,
    elementwise all False (``!=``: all True). Other array libraries get their turn (NotImplemented)."""
    arr, other = (a, b) if isinstance(a, Array) else (b, a)
    if any(hasattr(other, name) for name in ("__array_ufunc__", "__array_namespace__",
                                             "__array_priority__", "__array__")):
        return NotImplemented
    return broadcast_to(asarray(op == "not_equal", device=arr.device), arr.shape)


def _shift(direction, a, b):
    fn = _protocol("shift_left" if direction == "left" else "shift_right")
    ops = _coerce((a, b), True)
    return NotImplemented if ops is None else fn(*ops)


def _from_pickle(data, index, name):
    """Unpickle an Array: onto this process's default device where the process names one
    (``use_device``, ``KOMPUTE_ML_DEVICE``: a Dask worker's device, so chunks sent between workers
    land where the receiver computes); otherwise onto the device it came from if this process has
    it, else the default device."""
    dev = None if _device.default_is_pinned() else _device.find_device(index, name)
    dev = dev if dev is not None else _get_device(None)
    return _upload(_to_numpy(data, None, dev), dev)


def _ufunc(op, doc, nargs=1):
    # the Array API's signatures: ``f(x, /)`` and ``f(x1, x2, /)`` (positional-only, so
    # inspect.signature and a wrong argument count both say what the standard says)
    if nargs == 1:
        def fn(x, /):
            return _unary(op, x)
    else:
        def fn(x1, x2, /):
            # (the operators' per-op paths: km.maximum(x, 0.0) is an operator's cost)
            out = _fast_pair(op, x1, x2)
            return out if out is not None else elementwise(op, x1, x2)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = doc
    return fn


exp = _ufunc("exp", "Elementwise e**x (lazy). Integer inputs give float64 (float32 on a device "
                    "without float64).")
log = _ufunc("log", "Elementwise natural logarithm (lazy): -inf at 0, nan below.")
sqrt = _ufunc("sqrt", "Elementwise square root (lazy): nan below 0.")
sin = _ufunc("sin", "Elementwise sine (lazy).")
cos = _ufunc("cos", "Elementwise cosine (lazy).")
tanh = _ufunc("tanh", "Elementwise hyperbolic tangent (lazy).")
exp2 = _ufunc("exp2", "Elementwise 2**x (lazy).")
expm1 = _ufunc("expm1", "Elementwise exp(x) - 1, accurate near 0 (lazy).")
log2 = _ufunc("log2", "Elementwise base-2 logarithm (lazy): -inf at 0, nan below.")
log10 = _ufunc("log10", "Elementwise base-10 logarithm (lazy): -inf at 0, nan below.")
log1p = _ufunc("log1p", "Elementwise log(1 + x), accurate near 0 (lazy): -inf at -1, nan below.")
tan = _ufunc("tan", "Elementwise tangent (lazy).")
sinh = _ufunc("sinh", "Elementwise hyperbolic sine (lazy).")
cosh = _ufunc("cosh", "Elementwise hyperbolic cosine (lazy).")
arcsin = _ufunc("arcsin", "Elementwise inverse sine (lazy): nan outside [-1, 1].")
arccos = _ufunc("arccos", "Elementwise inverse cosine (lazy): nan outside [-1, 1].")
arctan = _ufunc("arctan", "Elementwise inverse tangent (lazy).")
arctan2 = _ufunc("arctan2", "Elementwise angle of the point (x2, x1), in [-pi, pi] (lazy).", 2)
arcsinh = _ufunc("arcsinh", "Elementwise inverse hyperbolic sine (lazy).")
arccosh = _ufunc("arccosh", "Elementwise inverse hyperbolic cosine (lazy): nan below 1.")
arctanh = _ufunc("arctanh", "Elementwise inverse hyperbolic tangent (lazy): +-inf at +-1.")
sigmoid = _ufunc("sigmoid", "Elementwise logistic function 1 / (1 + exp(-x)) (lazy), overflow-free.")
floor = _ufunc("floor", "Elementwise floor (lazy); integers are returned unchanged.")
ceil = _ufunc("ceil", "Elementwise ceiling (lazy); integers are returned unchanged.")
absolute = _ufunc("absolute", "Elementwise absolute value (lazy).")
abs = absolute
negative = _ufunc("negative", "Elementwise -x (lazy).")
add = _ufunc("add", "Elementwise a + b with broadcasting (lazy).", 2)
subtract = _ufunc("subtract", "Elementwise a - b with broadcasting (lazy).", 2)
multiply = _ufunc("multiply", "Elementwise a * b with broadcasting (lazy).", 2)
true_divide = _ufunc("true_divide", "Elementwise a / b (lazy); integers give float32.", 2)
divide = true_divide
floor_divide = _ufunc(
    "floor_divide", "Elementwise a // b (lazy): floor semantics; int // 0 is 0.", 2)
remainder = _ufunc("remainder", "Elementwise a % b (lazy): the sign of b; int % 0 is 0.", 2)
power = _ufunc("power", "Elementwise a ** b (lazy).", 2)
maximum = _ufunc("maximum", "Elementwise maximum (lazy); nan wins, as in numpy.", 2)
minimum = _ufunc("minimum", "Elementwise minimum (lazy); nan wins, as in numpy.", 2)
equal = _ufunc("equal", "Elementwise a == b (lazy), a bool array.", 2)
not_equal = _ufunc("not_equal", "Elementwise a != b (lazy), a bool array.", 2)
less = _ufunc("less", "Elementwise a < b (lazy), a bool array.", 2)
less_equal = _ufunc("less_equal", "Elementwise a <= b (lazy), a bool array.", 2)
greater = _ufunc("greater", "Elementwise a > b (lazy), a bool array.", 2)
greater_equal = _ufunc("greater_equal", "Elementwise a >= b (lazy), a bool array.", 2)
bitwise_and = _ufunc(
    "bitwise_and", "Elementwise a & b (lazy): logical and of bools, bits of ints.", 2)
bitwise_or = _ufunc("bitwise_or", "Elementwise a | b (lazy): logical or of bools, bits of ints.", 2)
bitwise_xor = _ufunc(
    "bitwise_xor", "Elementwise a ^ b (lazy): logical xor of bools, bits of ints.", 2)
invert = _ufunc("invert", "Elementwise ~a (lazy): logical not of bools, bitwise not of ints.")


def where(condition, x, y):
    """``x`` where ``condition`` is true, else ``y`` (lazy; broadcasting; numpy's result dtype).

    Examples
    --------
    >>> import kompute_ml as km
    >>> a = km.asarray([1, -2, 3])
    >>> km.where(a > 0, a, 0).numpy()
    array([1, 0, 3])
    """
    return elementwise("where", condition, x, y)


def clip(a, a_min=None, a_max=None):
    """Limit the values to [a_min, a_max] (either may be None); nan stays nan (lazy)."""
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    out = a if a_min is None else maximum(a, a_min)
    return out if a_max is None else minimum(out, a_max)


def broadcast_to(a, shape):
    """``a`` repeated to ``shape`` under numpy's broadcasting rules (lazy)."""
    a = asarray(a)
    shape = _normalize_shape(shape)
    if np.broadcast_shapes(a.shape, shape) != shape:
        raise ValueError(f"cannot broadcast an array of shape {a.shape} to shape {shape}")
    return _lazy("cast", (a,), a.dtype, shape, (a.dtype,))


_NUMPY_UFUNCS = {
    "add": add, "subtract": subtract, "multiply": multiply, "divide": true_divide,
    "true_divide": true_divide, "floor_divide": floor_divide, "remainder": remainder,
    "power": power, "maximum": maximum, "minimum": minimum, "equal": equal,
    "not_equal": not_equal, "less": less, "less_equal": less_equal, "greater": greater,
    "greater_equal": greater_equal, "negative": negative, "absolute": absolute, "exp": exp,
    "log": log, "sqrt": sqrt, "sin": sin, "cos": cos, "tanh": tanh, "floor": floor, "ceil": ceil,
    "exp2": exp2, "expm1": expm1, "log2": log2, "log10": log10, "log1p": log1p, "tan": tan,
    "sinh": sinh, "cosh": cosh, "arcsin": arcsin, "arccos": arccos, "arctan": arctan,
    "arctan2": arctan2, "arcsinh": arcsinh, "arccosh": arccosh, "arctanh": arctanh,
    "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
    "invert": invert, "matmul": lambda a, b: matmul(a, b),
}


# ---------------------------------------------------------------------------------------------
# creation

def _upload(data, device):
    """A realized Array holding the numpy array ``data`` (already of one of our dtypes)."""
    _buffers.check_size(device, data.shape, data.dtype)
    return Array._new(device, data.shape, data.dtype, buf=_buffers.upload(device, data))


# host arrays that go to the device as they are: each of these dtypes is its own storage dtype
# (float64, int64, uint64 on a device with them; elsewhere they narrow), so a C-contiguous ndarray of one needs
# no conversion, no copy and no check but the device's buffer limit. km.asarray(h) of one skips
# the general path's steps (_to_numpy's conversions, check_size, the contiguous copy), which cost
# a 4 KB upload about as much as the copy into the device's memory itself (decision 0021)
_AS_IS = frozenset(map(np.dtype, (np.float32, np.int32, np.uint32, np.float64, np.int64,
                                  np.uint64, np.complex64, np.complex128, np.int8, np.uint8,
                                  np.int16, np.uint16, np.float16))) | {_dtypes.BFLOAT16}


def _upload_as_is(obj, device):
    """``asarray(obj, device=device)`` for a C-contiguous, non-empty numpy ndarray of float32,
    int32, uint32 or (on a device with them) float64, int64, uint64 within the device's buffer
    limit; None for anything else (the general path converts, checks and raises as it should)."""
    dtype = obj.dtype
    if dtype not in _AS_IS or not obj.flags.c_contiguous or not obj.size:
        return None
    device = _get_device(device)
    if obj.nbytes > device.max_buffer_bytes or (
            dtype in WIDE and not device.limits.get(
                "float64" if dtype in (FLOAT64, COMPLEX128) else "int64")) \
            or (dtype in _dtypes.SMALL and not device.limits.get(
                "storage8" if dtype.itemsize == 1 else "storage16")):
        return None
    return Array._new(device, obj.shape, dtype, buf=_buffers.upload_as_is(device, obj))


def _transfer(obj, device):
    """A realized copy of the Array ``obj`` on another ``device`` (in bounded host chunks)."""
    _buffers.check_size(device, obj.shape, obj.dtype)
    buf = _buffers.transfer(obj._realize(), device, obj.shape, obj.dtype)
    return Array._new(device, obj.shape, obj.dtype, buf=buf)


def _to_numpy(obj, dtype, device):
    """Host data as a numpy array of one of our dtypes on ``device`` (numpy's conversion rules,
    checked; float64 data narrows to float32 on a device without float64, ``dtype`` raises)."""
    if dtype is not None:
        want = device_dtype(dtype, device, explicit=True)
        src = np.asarray(obj)
        if src.dtype.kind in "iu" and want in INTEGERS:
            _check_int_range(src, want)
        return np.asarray(src, dtype=want)
    data = np.asarray(obj)
    if data.dtype.kind == "O":
        what = "an array of dtype object" if isinstance(obj, np.ndarray) else \
            f"a {type(obj).__name__} that numpy converts to dtype object"
        raise TypeError(f"cannot make a kompute_ml array of {what} (non-numeric elements, or "
                        f"integers beyond 64 bits); arrays hold float32, float64, int32, uint32, "
                        f"int64, uint64 or bool")
    want = device_dtype(data.dtype, device)
    if not isinstance(obj, (np.ndarray, np.generic)):
        # Python floats and ints (lists, scalars) take the default float and integer dtypes
        if want == FLOAT64:
            want = FLOAT32
        elif want == COMPLEX128:
            want = COMPLEX64                 # Python complex: the default complex dtype
        elif want == INT64:
            want = default_int(device)
    if data.dtype != want and data.dtype.kind in "iu":
        _check_int_range(data, want)
    return data.astype(want, copy=False)


def _check_int_range(data, want):
    if data.size == 0 or data.dtype == want:
        return
    info = np.iinfo(want)
    lo, hi = data.min(), data.max()
    if lo < info.min or hi > info.max:
        raise OverflowError(f"integer values in [{lo}, {hi}] do not fit {want} (the dtype they "
                            f"take here; {_int_note(want)})")


def _int_note(dtype):
    """What to ask for instead of ``dtype`` (an OverflowError's advice)."""
    if dtype.itemsize == 8:
        return "ask for float64 to hold them rounded"
    return ("ask for int64 or uint64 (a device with shaderInt64: 64-bit data on a device "
            "without it becomes 32-bit) or float64")


def asarray(obj, dtype=None, device=None):
    """Convert ``obj`` (numpy array, list, scalar or Array) to an Array on ``device``.

    Parameters
    ----------
    obj : array_like or Array
    dtype : dtype-like, optional
        float32, float64 (a device with shaderFloat64 only: elsewhere TypeError), int32, uint32,
        int64, uint64 (a device with shaderInt64 only: elsewhere TypeError) or bool; float16
        maps to float32, int8/int16 to int32, uint8/uint16 to uint32. Default: numpy's dtype of
        ``obj``, mapped the same way (float64 data on a device without float64: float32; int64
        / uint64 data on one without int64: int32 / uint32 where the values fit, else
        OverflowError), except that Python floats take float32 and Python ints the default
        integer dtype (int64 where the device has it, else int32).
    device : None, int, str or Device, default=None
        Where the array lives (default: the current default device). An Array on another device
        is copied through the host.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.asarray([[1, 2], [3, 4]]).dtype      # Python ints: the default integer dtype
    dtype('int64')
    >>> import numpy as np
    >>> km.asarray(np.arange(3.0, dtype=np.float32)).dtype
    dtype('float32')
    """
    if type(obj) is np.ndarray and dtype is None:
        out = _upload_as_is(obj, device)
        if out is not None:
            return out
    if isinstance(obj, Array):
        dev = obj.device if device is None else _get_device(device)
        out = obj if dev is obj.device else _transfer(obj, dev)
        if dtype is not None and device_dtype(dtype, dev, explicit=True) != out.dtype:
            out = out.astype(dtype)
        return out
    dev = _get_device(device)
    return _upload(_to_numpy(obj, dtype, dev), dev)


def array(obj, dtype=None, device=None, copy=True):
    """Like :func:`asarray`, but an Array input is copied (numpy's ``np.array``)."""
    out = asarray(obj, dtype=dtype, device=device)
    return out.copy() if copy and out is obj else out


def empty(shape, dtype=FLOAT32, device=None):
    """A new array of ``shape`` with undefined contents (a buffer from the pool)."""
    device = _get_device(device)
    shape, dtype = _normalize_shape(shape), device_dtype(dtype, device, explicit=True)
    _buffers.check_size(device, shape, dtype)
    return Array._new(device, shape, dtype, buf=_buffers.alloc(device, shape, dtype))


def full(shape, fill_value, dtype=None, device=None):
    """A new array of ``shape`` filled with ``fill_value`` (one fill kernel, nothing uploaded).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.full((2, 2), 7).numpy()
    array([[7, 7],
           [7, 7]])
    """
    if isinstance(fill_value, Array):
        fill_value = fill_value.item()
    device = _get_device(device)
    if dtype is None:
        # a Python float fills the default float dtype, float32, a Python int the default
        # integer; a numpy scalar its own dtype
        if isinstance(fill_value, float) and not isinstance(fill_value, np.generic):
            dtype = FLOAT32
        elif isinstance(fill_value, int) and not isinstance(fill_value, (bool, np.generic)):
            dtype = default_int(device)
        elif isinstance(fill_value, complex) and not isinstance(fill_value, np.generic):
            dtype = COMPLEX64
        else:
            dtype = device_dtype(np.asarray(fill_value).dtype, device)
    dtype = device_dtype(dtype, device, explicit=True)
    _check_fill(fill_value, dtype)
    shape = _normalize_shape(shape)
    _buffers.check_size(device, shape, dtype)
    return Array._new(device, shape, dtype, buf=_buffers.fill(device, shape, dtype, fill_value))


def _check_fill(value, dtype):
    """Refuse a fill value an integer ``dtype`` cannot hold (numpy would wrap or give INT_MIN)."""
    if dtype not in INTEGERS or isinstance(value, (bool, np.bool_)):
        return
    if isinstance(value, numbers.Integral):
        iv = int(value)
    elif isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v):
            raise ValueError("cannot convert float NaN to integer")
        if math.isinf(v):
            raise OverflowError("cannot convert float infinity to integer")
        # finite floats convert as astype does (truncation; negative floats to uint32 wrap as in C
        # on x86, numpy's result there); only values no conversion can give are refused
        iv = math.trunc(v)
        if dtype in (UINT32, UINT64) and -2 ** (8 * dtype.itemsize - 1) <= iv < 0:
            return
    else:
        return
    info = np.iinfo(dtype)
    if not info.min <= iv <= info.max:
        raise OverflowError(f"fill value {value!r} is out of bounds for {dtype} "
                            f"({_int_note(dtype)})")


def zeros(shape, dtype=FLOAT32, device=None):
    """A new array of zeros (float32 by default, also for ``dtype=None``)."""
    return full(shape, 0, FLOAT32 if dtype is None else dtype, device)


def ones(shape, dtype=FLOAT32, device=None):
    """A new array of ones (float32 by default, also for ``dtype=None``)."""
    return full(shape, 1, FLOAT32 if dtype is None else dtype, device)


def _like(a, dtype, device):
    a = a if isinstance(a, Array) else asarray(a)
    return a.shape, (a.dtype if dtype is None else dtype), (a.device if device is None else device)


def empty_like(a, dtype=None, device=None):
    return empty(*_like(a, dtype, device))


def zeros_like(a, dtype=None, device=None):
    shape, dtype, device = _like(a, dtype, device)
    return full(shape, 0, dtype, device)


def ones_like(a, dtype=None, device=None):
    shape, dtype, device = _like(a, dtype, device)
    return full(shape, 1, dtype, device)


def full_like(a, fill_value, dtype=None, device=None):
    shape, dtype, device = _like(a, dtype, device)
    return full(shape, fill_value, dtype, device)


def _iota(n, start, step, dtype, device=None):
    """The 1-D integer Array ``start + i * step`` (i < n, modulo 2^32 or 2^64), made on the
    device by one kernel: nothing uploaded (integer aranges)."""
    device = _get_device(device)
    if dtype in _dtypes.SMALL:
        # made in 32 bits and wrapped to 8/16 (numpy's arange wraps the same way)
        return _iota(n, start, step, _dtypes.COMPUTE_DTYPE[dtype], device).astype(dtype)
    _buffers.check_size(device, (n,), dtype)
    buf = _buffers.iota(device, n, start, step, _buffers.words_per_element(dtype))
    return Array._new(device, (n,), dtype, buf=buf)


def check_range(values, dtype):
    """OverflowError unless every int of the range (or sequence) ``values`` fits the integer
    ``dtype``: an arange never wraps."""
    if not len(values):
        return
    info = np.iinfo(dtype)
    lo, hi = sorted((int(values[0]), int(values[-1])))
    if lo < info.min or hi > info.max:
        raise OverflowError(f"arange: integer values in [{lo}, {hi}] do not fit {np.dtype(dtype)} "
                            f"({_int_note(np.dtype(dtype))})")


def arange(start, stop=None, step=None, dtype=None, device=None):
    """Evenly spaced values in [start, stop) (numpy's ``arange``; integers made on the device,
    floats on the host and uploaded).

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.arange(4).numpy()
    array([0, 1, 2, 3])
    """
    args = (start,) if stop is None else (start, stop)
    if step is not None:
        args = (start, stop, step) if stop is not None else (0, start, step)
    if (dtype is None or np.dtype(dtype) in INTEGERS) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
            for v in args):
        r = range(*(int(v) for v in args))
        device = _get_device(device)
        want = default_int(device) if dtype is None else device_dtype(dtype, device, explicit=True)
        check_range(r, want)
        return _iota(len(r), r.start, r.step, want, device)
    data = np.arange(*args)
    if dtype is not None and np.dtype(dtype).kind in "iu" and data.dtype.kind == "f":
        check_range(data, np.dtype(dtype))
    if dtype is None and data.dtype.kind == "f" and not any(
            isinstance(x, np.floating) and x.dtype.itemsize == 8 for x in args):
        dtype = FLOAT32           # Python float bounds: the default float dtype
    return asarray(data, dtype=dtype, device=device)


def reshape(a, shape):
    """``a`` with a new shape (see :meth:`Array.reshape`)."""
    return asarray(a).reshape(shape)


def transpose(a, axes=None):
    """``a`` with permuted dimensions (see :meth:`Array.transpose`)."""
    return asarray(a).transpose(axes)


# ---------------------------------------------------------------------------------------------
# reductions and linear algebra (the device work lives in _array/reduction.py and linalg.py)

_FUSED_SUM_REALIZED_MAX = 1 << 20


def _reduce(a, op, axis, keepdims, dtype, out):
    if out is not None:
        raise TypeError("out= is not supported; kompute_ml arrays are returned, never filled")
    if type(a) is not Array:
        a = asarray(a)
    if a.dtype in COMPLEX:
        return _complex_reduce(a, op, axis, keepdims, dtype)
    if op == "sum" and axis is None and dtype is None:
        node = a._node
        # the sum of a lazy expression: one kernel reads its operands and never stores it
        buf = _fusion.fused_sum(node, a.device) if node is not None else None
        if buf is None and node is not None:
            # not fusable (a shared subexpression, broadcasting): realized, it sums as below,
            # so its sum is the one the realized array gives (the same tree)
            a._realize()
        if buf is None and (a.dtype == FLOAT32 or a.dtype == FLOAT64) \
                and a.size <= _FUSED_SUM_REALIZED_MAX:
            # a realized float array sums as the (identity) expression over it: one dispatch
            # (past _FUSED_SUM_REALIZED_MAX elements the reduction's vec4 passes are faster:
            # decision 0021)
            node = _fusion.node(a.device, "cast", (a._operand(),), a.dtype, a.shape, (a.dtype,))
            buf = _fusion.fused_sum(node, a.device)
        if buf is not None:
            return Array._new(a.device, (1,) * a.ndim if keepdims else (), a.dtype, buf=buf)
    if dtype is not None and op in ("sum", "mean"):
        # numpy accumulates in ``dtype`` (sum(dtype=float64) of float32 adds in double,
        # sum(dtype=int64) of int32 in 64 bits): the elements convert first, the conversion
        # fusing into the pass that reads them
        want = device_dtype(dtype, a.device, explicit=True)
        if want.itemsize > a.dtype.itemsize and (
                want.kind == "f" or (want.kind in "iu" and a.dtype.kind in "iub")):
            a = a.astype(want, copy=False)
    small = None
    if a.dtype in _dtypes.SMALL:
        # 8/16-bit elements reduce as their 32-bit values (exact), the widening fused into the
        # pass that reads them
        small = a.dtype
        a = a.astype(_dtypes.COMPUTE_DTYPE[small], copy=False)
    res = a._wrap(_reduction.reduce(a._realize(), a.shape, a.dtype, a.device, op, axis,
                                    keepdims))
    if op in ("argmax", "argmin"):
        # the kernels track 32-bit indices (buffers hold fewer elements); the result is the
        # default integer (a cast that fuses into what reads it)
        res = res.astype(default_int(a.device), copy=False)
    elif small is not None and (op in ("max", "min") or (
            small in _dtypes.SMALL_FLOATS and op in ("sum", "prod", "mean"))):
        # numpy's dtype: the elements' own (a float16 sum or mean adds in float32, as numpy's
        # float16 loops do, and rounds once)
        res = res.astype(small, copy=False)
    if dtype is not None:
        res = res.astype(dtype, copy=False)
    return res


def _pairs(a):
    """The complex Array ``a`` as the real Array of its (re, im) pairs: shape + (2,), the same
    buffer."""
    return Array._new(a.device, a.shape + (2,), COMPLEX_PART[a.dtype], buf=a._realize())


def _complex_reduce(a, op, axis, keepdims, dtype):
    """sum, mean or prod of a complex array: sums and means reduce the pairs' parts, products
    multiply halves of the reduced axes pairwise (log2 n rounds of fused complex products)."""
    if op not in ("sum", "mean", "prod"):
        raise TypeError(f"{op} of complex values is not defined (complex numbers are not "
                        f"ordered)")
    if dtype is not None:
        a = a.astype(dtype, copy=False)
    nd = a.ndim
    axes = range(nd) if axis is None else (axis,) if np.ndim(axis) == 0 else axis
    axes = sorted({_indexing.norm_axis(x, nd) for x in axes})
    keep = [k for k in range(nd) if k not in axes]
    out_shape = tuple(1 if k in axes else s for k, s in enumerate(a.shape)) if keepdims \
        else tuple(a.shape[k] for k in keep)
    if op != "prod":
        res = _reduce(_pairs(a), op, tuple(axes), keepdims, None, None)
        return Array._new(a.device, out_shape, a.dtype, buf=res._realize())
    m = math.prod(a.shape[k] for k in axes)
    rows = math.prod(a.shape[k] for k in keep)
    if m == 0 or rows == 0:
        return full(out_shape, 1, dtype=a.dtype, device=a.device)
    x = a.transpose(keep + axes) if keep + axes != list(range(nd)) else a
    x = x.reshape((rows, m))
    while m > 1:
        h = m // 2
        y = x[:, :h] * x[:, h:2 * h]
        if m % 2:                     # the odd one out joins the first column
            first = _iota(h, 0, 1, INT32, a.device) == 0
            y = y * where(first, x[:, 2 * h:], 1)
        x, m = y, h
    return x.reshape(out_shape)


def sum(a, axis=None, keepdims=False):
    """Sum of the elements over ``axis`` (None: all), pairwise, on the device."""
    return _reduce(a, "sum", axis, keepdims, None, None)


def mean(a, axis=None, keepdims=False):
    """Arithmetic mean over ``axis`` (pairwise sums; numpy's dtype: float32 for float32 input,
    float64 for float64 and integers where the device has float64)."""
    return _reduce(a, "mean", axis, keepdims, None, None)


def max(a, axis=None, keepdims=False):
    """Maximum over ``axis`` (nan propagates)."""
    return _reduce(a, "max", axis, keepdims, None, None)


def min(a, axis=None, keepdims=False):
    """Minimum over ``axis`` (nan propagates)."""
    return _reduce(a, "min", axis, keepdims, None, None)


def argmax(a, axis=None, keepdims=False):
    """Index of the first maximum over ``axis`` (flat index when None), of the default integer
    dtype."""
    return _reduce(a, "argmax", axis, keepdims, None, None)


def argmin(a, axis=None, keepdims=False):
    """Index of the first minimum over ``axis`` (flat index when None), of the default integer
    dtype."""
    return _reduce(a, "argmin", axis, keepdims, None, None)


def _check_precision(precision, what):
    """``precision`` if it is one of ``config.MATMUL_PRECISIONS``; ValueError naming ``what``."""
    if isinstance(precision, str) and precision in _config.MATMUL_PRECISIONS:
        return precision
    raise ValueError(f"{what} must be 'highest', 'high' or 'medium', got {precision!r}")


def set_float32_matmul_precision(precision):
    """Set how float32 matrix products are computed, for the whole process (as torch's).

    Parameters
    ----------
    precision : {"highest", "high", "medium"}
        ``"highest"`` (the default): exact float32 arithmetic. ``"high"``: each operand split into
        two float16 parts (after an exact power-of-two scaling per row of A and column of B),
        three products on the device's cooperative matrices (tensor cores) accumulated in
        float32: about float32's accuracy. ``"medium"``: one float16 product, about 3 decimal
        digits. On a device without cooperative matrices every mode computes as ``"highest"``.
        The setting is the ``matmul_precision`` option of ``km.config``
        (``KOMPUTE_ML_MATMUL_PRECISION``); ``matmul(..., precision=...)`` overrides it per call.
        docs/matmul_precision.md measures each mode.

    Returns
    -------
    None

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.set_float32_matmul_precision("high")
    >>> km.get_float32_matmul_precision()
    'high'
    >>> km.set_float32_matmul_precision("highest")
    """
    _config.set(matmul_precision=_check_precision(precision, "set_float32_matmul_precision: "
                                                             "precision"))


def get_float32_matmul_precision():
    """The precision float32 matrix products use (see :func:`set_float32_matmul_precision`).

    Returns
    -------
    str
        "highest", "high" or "medium".

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.get_float32_matmul_precision()
    'highest'
    """
    return _config.get("matmul_precision")


def matmul(a, b, /, *, precision=None):
    """Matrix product with numpy's rules (1-D operands are vectors; stacks broadcast).

    Parameters
    ----------
    a, b : array_like
    precision : {None, "highest", "high", "medium"}, default=None
        For float32 products (as JAX's ``precision=``): None follows
        :func:`get_float32_matmul_precision`; the modes are those of
        :func:`set_float32_matmul_precision`. Other dtypes are always exact.

    Examples
    --------
    >>> import kompute_ml as km
    >>> a = km.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> (a @ a).numpy()
    array([[ 7., 10.],
           [15., 22.]], dtype=float32)
    >>> km.matmul(a, a, precision="high").numpy()
    array([[ 7., 10.],
           [15., 22.]], dtype=float32)
    """
    precision = get_float32_matmul_precision() if precision is None else \
        _check_precision(precision, "matmul: precision")
    if type(a) is not Array or type(b) is not Array or a.device is not b.device:
        ops = _coerce((a, b), False)
        dev = next(x.device for x in ops if isinstance(x, Array))
        a, b = (x if isinstance(x, Array) else asarray(x, device=dev) for x in ops)
    return _product(_linalg.matmul, a, b, precision)


def _product(fn, a, b, precision="highest"):
    """``fn`` (``_linalg.matmul`` or ``dot``) on Arrays: the conversions to the compute dtype
    stay lazy until the product reads them, so they fuse with the operands' expressions."""
    out_dtype, ct = _linalg.result_dtypes(a.dtype, b.dtype, a.device)
    if out_dtype in COMPLEX:
        # from real products: (Ar + Ai i)(Br + Bi i) = (Ar Br - Ai Bi) + (Ar Bi + Ai Br) i
        (ar, ai), (br, bi) = (_parts_of(x, COMPLEX_PART[out_dtype]) for x in (a, b))
        re = _product(fn, ar, br)
        if ai is not None and bi is not None:
            re = re - _product(fn, ai, bi)
        terms = ([_product(fn, ar, bi)] if bi is not None else []) + \
            ([_product(fn, ai, br)] if ai is not None else [])
        im = terms[0] if len(terms) == 1 else terms[0] + terms[1]
        return elementwise("complex", re, im)
    if out_dtype in _dtypes.SMALL:
        # 8/16-bit products: in 32 bits (integers wrap to the same low bits; float16 and
        # bfloat16 add in float32), narrowed once
        wide = _dtypes.COMPUTE_DTYPE[out_dtype]
        return _product(fn, a.astype(wide, copy=False), b.astype(wide, copy=False)) \
            .astype(out_dtype, copy=False)
    if a.dtype != ct:
        a = a.astype(ct, copy=False)
    if b.dtype != ct:
        b = b.astype(ct, copy=False)
    src = a._tsrc
    if src is not None and out_dtype == ct and 1 <= len(b.shape) <= 2:
        # A^T @ B of a transpose not yet made: the product reads A itself (no transposed copy)
        return a._wrap(_linalg.matmul_at(a.device, src, (b._realize(), b.shape), out_dtype,
                                         precision=precision))
    return a._wrap(fn(a.device, (a._realize(), a.shape), (b._realize(), b.shape), out_dtype,
                      precision=precision))


def _parts_of(x, part):
    """(real part, imaginary part or None for a real array) of ``x`` in the float dtype
    ``part``."""
    if x.dtype in COMPLEX:
        return elementwise("real", x).astype(part, copy=False), \
            elementwise("imag", x).astype(part, copy=False)
    return x.astype(part, copy=False), None


def dot(a, b):
    """numpy's ``dot`` for arrays of at most 2 dimensions (scalars multiply)."""
    ops = _coerce((a, b), False)
    if any(not isinstance(x, Array) or x.ndim == 0 for x in ops):
        return elementwise("multiply", *ops)
    return _product(_linalg.dot, *ops, get_float32_matmul_precision())


# ---------------------------------------------------------------------------------------------
# internal accessors: how the rest of the package (kernel.py, linear_model/, tests) reaches an
# Array's buffer without touching its private state

def buffer_of(a):
    """The realized Buffer holding ``a``'s elements (runs its fused kernel when lazy).

    For kernels that only read the buffer. Internal: not part of the public API.
    """
    return a._realize()


def writable_buffer_of(a):
    """The realized Buffer of ``a``, for a kernel that writes it in place.

    Lazy arrays that read this buffer are realized first, so they keep the values numpy's eager
    semantics gave them. Internal: not part of the public API.
    """
    return a._kernel_buffer()


def node_of(a):
    """The unrealized fusion Node of ``a``, or None when ``a`` is realized (tests, debugging)."""
    node = a._node
    return node if node is not None and node.buf is None else None


def from_buffer(buffer, shape, dtype):
    """Wrap an existing Buffer (holding ``shape`` elements of ``dtype``, C order) as an Array.

    The Array shares the buffer (no copy). Internal: not part of the public API.
    """
    shape = _normalize_shape(shape)
    dtype = canonical_dtype(dtype)
    if math.prod(shape) * _buffers.element_bytes(dtype) > buffer.nbytes:
        raise ValueError(f"a {buffer.nbytes}-byte buffer cannot hold shape {shape} of {dtype}")
    return Array._new(buffer.device, shape, dtype, buf=buffer)


# Kernels (a layer below) bind Arrays through this registration, not by importing this module.
_kernel.register_array_type(Array, writable_buffer_of)


# The Array API namespace and numpy's protocols live a layer above (kompute_ml/_api/), built on
# this module's functions; importing that package registers the handlers these methods call.
_PROTOCOLS = {}


def register_protocols(**handlers):
    """Install the handlers of the Array's protocol methods (kompute_ml._api does, at import)."""
    _PROTOCOLS.update(handlers)


def _protocol(name):
    try:
        return _PROTOCOLS[name]
    except KeyError:
        raise RuntimeError(f"the Array's {name} handler is not installed: import kompute_ml "
                           "(the package), not kompute_ml.array alone") from None
