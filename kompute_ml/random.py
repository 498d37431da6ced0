"""Random numbers generated on the device with Philox4x32-10, a counter-based generator.

A counter-based generator turns (key, counter) into random bits with a keyed bijection (Salmon et
al., SC 2011): every output is a pure function of the seed and its position, so a device fills an
array in one dispatch with no state per invocation, and the same seed gives the same bits on every
device. The key (64 bits) comes from numpy's ``SeedSequence``; each call takes the next unused
range of the 64-bit block counter, so consecutive calls give independent streams, and ``spawn``
gives children with keys of their own (``SeedSequence.spawn``), as numpy's generators do.

``Generator`` follows ``numpy.random.Generator``; ``RandomState`` follows
``numpy.random.RandomState`` with the methods dask.array.random calls per chunk (a chunk's
``RandomState(state_data)`` seeds from the 624 words dask passes). Results are float32 / int32 /
uint32 / int64 / uint64 Arrays (64-bit integers where the device has int64), or float64 where
asked for (``dtype=np.float64``) on a device with float64 (53-bit uniforms, Box-Muller in double;
float32 elsewhere, as km.asarray maps float64 data); the bits differ from numpy's (another
generator).
"""

import math
import numbers
import threading
import warnings

import numpy as np

from . import array as _array
from ._array import indexing as _indexing
from ._array import scan as _scan
from ._array import search as _search
from ._array import sort as _sort
from ._array.dtypes import default_int, device_dtype
from ._runtime import device as _device
from ._runtime import memory as _memory
from ._runtime import program as _program
from .errors import DeviceError, DeviceLimitError

__all__ = ["Philox", "Generator", "default_rng", "RandomState", "seed", "random", "random_sample",
           "rand", "randn", "uniform", "normal", "standard_normal", "randint"]

# kinds of random.comp (its header says what each one writes)
_RAW, _UNIFORM, _NORMAL, _INTEGERS, _GAMMA, _POISSON = 0, 1, 2, 3, 4, 5
_ONE_PER_BLOCK = (_GAMMA, _POISSON)     # one output per invocation and per counter block
_LOCAL_SIZE = 256            # random.comp's workgroup size (a define: tests shrink it to split grids)
_OUTPUTS_PER_BLOCK = 4       # one Philox block = four 32-bit words = four outputs
_MASK32 = 0xFFFFFFFF
_INT32 = np.dtype(np.int32)
_UINT32 = np.dtype(np.uint32)
_FLOAT32 = np.dtype(np.float32)
_FLOAT64 = np.dtype(np.float64)


# ---------------------------------------------------------------------------------------------
def _wrap(buffer, shape, dtype):
    """The Array over ``buffer`` (``shape`` elements of ``dtype``, C order)."""
    return _array.from_buffer(buffer, shape, dtype)


def _dispatch(device, buf, n, key, block, kind, p0=0, p1=0, float64=False):
    """Record random.comp filling ``n`` outputs of ``buf`` from counter ``block`` under ``key``
    (``float64``: outputs of two words, two per block, from its KM_FLOAT64 variant)."""
    defines = {"KM_LOCAL_SIZE": _LOCAL_SIZE}
    if float64:
        defines["KM_FLOAT64"] = 1
    prog = _program.get("random", defines)
    # random.comp — binding 0: out (uint words); one invocation per block of 4 words (of one
    # output for the rejection samplers)
    per_block = 1 if kind in _ONE_PER_BLOCK else \
        _OUTPUTS_PER_BLOCK // 2 if float64 else _OUTPUTS_PER_BLOCK
    prog.dispatch_1d(device, [buf], -(-n // per_block),
                     push=(key[0], key[1], block & _MASK32, block >> 32, n, kind,
                           p0 & _MASK32, p1 & _MASK32))


# ---------------------------------------------------------------------------------------------
# argument checks

def _resolve_device(spec):
    if isinstance(spec, _device.Device) and spec.closed:
        raise DeviceError(f"device {spec.name!r} was closed")
    return _device.get_device(spec)


def _shape(size):
    """``size`` (None, int or tuple of ints) as a shape; None is a 0-d result."""
    if size is None:
        return ()
    if isinstance(size, (bool, np.bool_)):
        raise TypeError(f"size must be None, an int or a tuple of ints, got {size!r}")
    return _array._normalize_shape(size, name="size")


def _float_dtype(dtype):
    """float32, or float64 (the device decides: see ``_generate``); others raise TypeError."""
    want = np.dtype(np.float32 if dtype is None else dtype)
    if want not in (_FLOAT32, _FLOAT64):
        raise TypeError(f"kompute_ml.random generates float32 or float64 numbers; dtype={want} "
                        f"is not supported")
    return want


def _int_dtype(dtype, device):
    """The Array dtype of integers of ``dtype`` on ``device``: 64-bit ones where it has int64
    (elsewhere 32-bit, as Arrays of int64 data), narrower ones 32-bit; ``int`` (numpy's
    ``randint`` default) the default integer."""
    if dtype is int:
        return default_int(device)
    try:
        want = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be an integer dtype, got {dtype!r}") from None
    if want.kind not in "iu":
        raise TypeError(f"integers needs an integer dtype, got dtype={want}")
    return device_dtype(want, device)


def _int_bound(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        if isinstance(value, (np.ndarray, list, tuple)) or hasattr(value, "shape"):
            raise TypeError(f"{name} must be an int; array-valued bounds are not supported")
        raise TypeError(f"{name} must be an int, got {value!r}")
    return int(value)


def _affine_param(value, name):
    """A float scalar parameter, or a float32 numpy array of an array-valued one."""
    if isinstance(value, (numbers.Real, np.floating, np.integer)) and not isinstance(value, bool):
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{name} must be finite, got {v}")
        return v
    arr = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real number or an array of them, got {value!r}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr.astype(np.float32)


def _broadcast_size(size, *params):
    shapes = [p.shape for p in params if isinstance(p, np.ndarray)]
    if size is None:
        return np.broadcast_shapes(*shapes) if shapes else None
    shape = _shape(size)
    for s in shapes:
        if np.broadcast_shapes(s, shape) != shape:
            raise ValueError(f"parameters of shape {s} do not broadcast to size {shape}")
    return shape


# ---------------------------------------------------------------------------------------------

class Philox:
    """The Philox4x32-10 bit generator: a 64-bit key and a 64-bit block counter.

    Counter-based (Salmon et al. 2011): output block ``c`` is a bijection of ``c`` keyed by the
    seed, so the generator's whole state is (key, counter). Unlike ``numpy.random.Philox``
    (Philox4x64), words are 32 bits, which every Vulkan device computes natively.

    Parameters
    ----------
    seed : None, int, array_like of ints or numpy.random.SeedSequence, default=None
        Entropy for ``numpy.random.SeedSequence``; None draws fresh entropy from the OS.

    Examples
    --------
    >>> import kompute_ml as km
    >>> bg = km.random.Philox(42)
    >>> bg.state["counter"]
    0
    """

    def __init__(self, seed=None):
        if isinstance(seed, np.random.SeedSequence):
            seq = seed
        else:
            if isinstance(seed, np.ndarray):
                seed = [int(x) for x in seed.ravel()]    # dask's 624 words; SeedSequence wants ints
            try:
                seq = np.random.SeedSequence(seed)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"seed must be None, a non-negative int, a sequence of them or a "
                                f"numpy.random.SeedSequence, got {seed!r} ({exc})") from None
        self._seed_seq = seq          # the attribute name dask's Generator spawns from
        words = seq.generate_state(2, np.uint32)
        self._key = (int(words[0]), int(words[1]))
        self._counter = 0
        self._lock = threading.Lock()

    @property
    def seed_seq(self):
        """The ``numpy.random.SeedSequence`` this generator was keyed from."""
        return self._seed_seq

    @property
    def state(self):
        """``{"bit_generator": "Philox4x32", "key": (k0, k1), "counter": next block}``."""
        return {"bit_generator": "Philox4x32", "key": self._key, "counter": self._counter}

    def spawn(self, n_children):
        """``n_children`` new, independent bit generators (``SeedSequence.spawn``)."""
        return [type(self)(s) for s in self._seed_seq.spawn(n_children)]

    def _take(self, n_outputs):
        """The first block of a range for ``n_outputs`` outputs; advances past it."""
        blocks = -(-n_outputs // _OUTPUTS_PER_BLOCK)
        with self._lock:
            start = self._counter
            if start + blocks > 1 << 64:
                raise OverflowError("this Philox generator used all 2^64 blocks of its counter; "
                                    "spawn a new one")
            self._counter = start + blocks
        return start

    def __getstate__(self):
        return {"seed_seq": self._seed_seq, "key": self._key, "counter": self._counter}

    def __setstate__(self, state):
        self._seed_seq, self._key, self._counter = state["seed_seq"], state["key"], state["counter"]
        self._lock = threading.Lock()

    def __repr__(self):
        return f"Philox(key=0x{self._key[1]:08x}{self._key[0]:08x}, counter={self._counter})"


def _generate(bitgen, device, size, kind, dtype, p0=0, p1=0):
    """A new Array of ``size`` outputs of ``kind`` from the next counters of ``bitgen``."""
    dev = _resolve_device(device)
    if dtype == _FLOAT64 and not dev.limits.get("float64"):
        # as km.asarray does with float64 data (dask's Generator asks for float64 by default,
        # so this keeps da.random working on such a device)
        dtype = _FLOAT32
    shape = _shape(size)
    n = math.prod(shape)
    size_of = dtype.itemsize if dtype == _FLOAT64 else 4
    if n * size_of > dev.max_buffer_bytes:
        raise DeviceLimitError(f"{n} random numbers need {n * size_of} bytes, more than the "
                               f"device's maxStorageBufferRange ({dev.max_buffer_bytes} bytes) on "
                               f"{dev.name!r}")
    buf = _memory.alloc(dev, max(n, 1) * size_of)
    if n:
        f64 = dtype == _FLOAT64
        outputs = _OUTPUTS_PER_BLOCK * n if kind in _ONE_PER_BLOCK else 2 * n if f64 else n
        _dispatch(dev, buf, n, bitgen._key, bitgen._take(outputs), kind, p0, p1, f64)
    return _wrap(buf, shape, dtype)


def _affine(z, loc, scale):
    """``loc + scale * z`` (lazy, fused by the Array layer), skipping the identity."""
    if not (isinstance(scale, float) and scale == 1.0):
        z = z * (scale if isinstance(scale, float) else _wrap_host(scale, z.device))
    if not (isinstance(loc, float) and loc == 0.0):
        z = z + (loc if isinstance(loc, float) else _wrap_host(loc, z.device))
    return z


def _wrap_host(values, device):
    from . import array as _array
    return _array.asarray(values, device=device)


class Generator:
    """Random numbers on a Vulkan device, like ``numpy.random.Generator``.

    Build one with :func:`default_rng`. Each call takes fresh counters, so consecutive calls give
    independent numbers; the same seed gives the same numbers on every device (bit for bit for
    ``random``, ``uniform`` and ``integers``; ``normal`` goes through the device's ``log``, ``sin``
    and ``cos``, which may differ in the last bits).

    Parameters
    ----------
    bit_generator : Philox
    device : None, int, str or Device, default=None
        Where results live; None: the default device at each call.

    Examples
    --------
    >>> import kompute_ml as km
    >>> rng = km.random.default_rng(0)
    >>> x = rng.random(1000)
    >>> x.dtype, x.shape
    (dtype('float32'), (1000,))
    >>> bool(((x.numpy() >= 0) & (x.numpy() < 1)).all())
    True
    """

    def __init__(self, bit_generator, *, device=None):
        if not isinstance(bit_generator, Philox):
            raise TypeError(f"bit_generator must be a kompute_ml.random.Philox, got "
                            f"{type(bit_generator).__name__}")
        self._bit_generator = bit_generator
        self._device = None if device is None else _resolve_device(device)

    @property
    def bit_generator(self):
        """The :class:`Philox` bit generator."""
        return self._bit_generator

    def spawn(self, n_children):
        """``n_children`` independent Generators on the same device."""
        return [Generator(b, device=self._device) for b in self._bit_generator.spawn(n_children)]

    def __repr__(self):
        return f"Generator({self._bit_generator!r})"

    def random(self, size=None, dtype=np.float32, out=None):
        """Uniform numbers in [0, 1): float32 of 24 random bits each, equally spaced by 2^-24, or
        float64 of 53 bits (spaced by 2^-53).

        Parameters
        ----------
        size : None, int or tuple of ints, default=None
            Shape of the result (None: a 0-d array).
        dtype : float32 or float64
            float64 gives float64 on a device with it, float32 elsewhere (as km.asarray maps
            float64 data); others raise TypeError.
        out : None
            Not supported (results are new arrays).

        Returns
        -------
        Array
        """
        if out is not None:
            raise TypeError("out= is not supported; random returns a new Array")
        return _generate(self._bit_generator, self._device, size, _UNIFORM, _float_dtype(dtype))

    def uniform(self, low=0.0, high=1.0, size=None):
        """Uniform float32 numbers in [low, high) (``high`` itself may occur by rounding, as in
        numpy). ``low``/``high`` may be arrays broadcasting to ``size``.
        """
        low, high = _affine_param(low, "low"), _affine_param(high, "high")
        size = _broadcast_size(size, low, high)
        u = _generate(self._bit_generator, self._device, size, _UNIFORM, _FLOAT32)
        return _affine(u, low, high - low)

    def standard_normal(self, size=None, dtype=np.float32, out=None):
        """Standard normal numbers (Box-Muller on pairs of 24-bit uniforms; ``dtype=np.float64``:
        of 53-bit uniforms, in double, on a device with float64)."""
        if out is not None:
            raise TypeError("out= is not supported; standard_normal returns a new Array")
        return _generate(self._bit_generator, self._device, size, _NORMAL, _float_dtype(dtype))

    def normal(self, loc=0.0, scale=1.0, size=None):
        """Normal float32 numbers of mean ``loc`` and standard deviation ``scale`` (>= 0)."""
        loc, scale = _affine_param(loc, "loc"), _affine_param(scale, "scale")
        if np.any(np.asarray(scale) < 0):
            raise ValueError(f"scale must be non-negative, got {scale}")
        size = _broadcast_size(size, loc, scale)
        z = _generate(self._bit_generator, self._device, size, _NORMAL, _FLOAT32)
        return _affine(z, loc, scale)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """Integers in [low, high) (or [low, high] with ``endpoint=True``), every value equally
        likely (Lemire's multiply-shift with rejection: no modulo bias).

        Parameters
        ----------
        low, high : int
            With ``high=None`` the range is [0, low).
        size : None, int or tuple of ints, default=None
        dtype : integer dtype, default=np.int64
            64-bit dtypes give int64 / uint64 where the device has int64 (int32 / uint32
            elsewhere), narrower ones int32 / uint32 (the integers Arrays hold); the range must
            fit that dtype, and span at most 2**32 values for 64-bit ones.
        endpoint : bool, default=False

        Returns
        -------
        Array
        """
        low = _int_bound(low, "low")
        if high is None:
            low, high = 0, low
        high = _int_bound(high, "high") + (1 if endpoint else 0)
        if low >= high:
            raise ValueError(f"low >= high: the range [{low}, {high}) is empty"
                             if not endpoint else f"low > high: the range [{low}, {high - 1}] is empty")
        dev = _resolve_device(self._device)
        want = _int_dtype(dtype, dev)
        info = np.iinfo(want)
        if low < info.min or high - 1 > info.max:
            raise ValueError(f"the range [{low}, {high}) does not fit {want} "
                             f"(dtype={np.dtype(dtype)} is {want} on {dev.name!r})")
        if want.itemsize == 4:
            return _generate(self._bit_generator, dev, size, _INTEGERS, want,
                             p0=low, p1=high - low - 1)
        # 64-bit: the offsets are drawn in 32 bits (the kernel's), then shifted by low (lazy)
        if high - low > 1 << 32:
            raise ValueError(f"integers: the range [{low}, {high}) spans more than 2**32 values, "
                             f"which kompute_ml.random does not draw")
        offsets = _generate(self._bit_generator, dev, size, _INTEGERS, _UINT32, p0=0,
                            p1=high - low - 1)
        return offsets.astype(want) + low

    def bits(self, size=None):
        """Raw uint32 words of the generator (the Philox output itself)."""
        return _generate(self._bit_generator, self._device, size, _RAW, _UINT32)

    # ---- permutations and sampling ------------------------------------------------------------

    def _order(self, n, device):
        """A uniformly random permutation of range(n) (int32 Array): the order that sorts n
        random 64-bit keys (two Philox words each). The device sorts where it sorts
        (``_array/sort.py``'s rule), else the host (the keys downloaded): the same
        permutation either way, as both sorts are stable on the same keys."""
        keys = _generate(self._bit_generator, device, (2, n), _RAW, _UINT32)
        dev = keys.device
        if n == 0:
            return _array.zeros((0,), _INT32, dev)
        if not _sort.on_device(dev, n):
            k = keys.numpy()
            return _array.asarray(np.lexsort((k[1], k[0])).astype(np.int32), device=dev)
        lo, hi = keys[1], keys[0]
        # a stable sort by the low words, then by the high words: the 64-bit order
        first, _ = _sort.sort_rows(_array.buffer_of(lo), 1, n, _UINT32, dev)
        hi_first = _gather(hi, first, n)
        second, _ = _sort.sort_rows(hi_first, 1, n, _UINT32, dev)
        return _wrap(_gather(_wrap(first, (n,), _INT32), second, n), (n,), _INT32)

    def permutation(self, x, axis=0):
        """A random permutation of ``range(x)`` (an int), or a shuffled copy of the array
        ``x`` along ``axis``: the order of random 64-bit keys sorted (see ``shuffle``).

        Parameters
        ----------
        x : int or array_like
            The length of the permutation, or the array to permute.
        axis : int, default=0
            The axis of ``x`` to permute.

        Returns
        -------
        Array
            int32 (a permuted range) or ``x``'s dtype.

        Examples
        --------
        >>> import kompute_ml as km
        >>> p = km.random.default_rng(0).permutation(5).numpy()
        >>> sorted(p.tolist())
        [0, 1, 2, 3, 4]
        """
        if isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_)):
            n = int(x)
            if n < 0:
                raise ValueError(f"negative dimensions are not allowed, got {n}")
            return self._order(n, self._device)
        arr = x if isinstance(x, _array.Array) else _array.asarray(x, device=self._device)
        if arr.ndim == 0:
            raise np.exceptions.AxisError("x must be an integer or at least 1-dimensional")
        axis = _axis(axis, arr.ndim)
        return _take_along(arr, self._order(arr.shape[axis], arr.device), axis)

    def shuffle(self, x, axis=0):
        """Shuffle the Array ``x`` in place along ``axis`` (every order equally likely).

        Parameters
        ----------
        x : Array
            The array, changed in place.
        axis : int, default=0
            The axis to shuffle along.

        Returns
        -------
        None

        Examples
        --------
        >>> import kompute_ml as km
        >>> x = km.arange(5)
        >>> km.random.default_rng(1).shuffle(x)
        >>> sorted(x.numpy().tolist())
        [0, 1, 2, 3, 4]
        """
        if not isinstance(x, _array.Array):
            raise TypeError(f"shuffle changes an Array in place; got {type(x).__name__} (use "
                            f"permutation for a shuffled copy)")
        if x.ndim == 0:
            raise TypeError("shuffle needs an array of at least one dimension")
        x[...] = self.permutation(x, axis=axis)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """A random sample of ``a`` (an array, along ``axis``, or ``range(a)`` for an int):
        with replacement (uniform integers, or the inverse of ``p``'s running sum by a binary
        search), or without (a permutation's head, or with ``p`` the largest of the keys
        ``log(u) / p``: Efraimidis and Spirakis' weighted sampling).

        Parameters
        ----------
        a : int or array_like
            The population, or its size.
        size : None, int or tuple of ints, default=None
            The sample's shape (None: one element).
        replace : bool, default=True
            Whether an element may be drawn more than once.
        p : array_like, optional
            The elements' probabilities (1-D, non-negative, summing to 1; checked on the host
            where given there, else by one readback).
        axis : int, default=0
            The axis of ``a`` to sample along.
        shuffle : bool, default=True
            Accepted for numpy's signature (a sample without replacement is in random order).

        Returns
        -------
        Array
            The sample: int32 for an int ``a``, else ``a``'s dtype.

        Examples
        --------
        >>> import kompute_ml as km
        >>> s = km.random.default_rng(2).choice(10, size=4, replace=False).numpy()
        >>> len(set(s.tolist()))
        4
        """
        if isinstance(a, (numbers.Integral, np.integer)) and not isinstance(a, (bool, np.bool_)):
            pop, n = None, int(a)
            if n <= 0 and (size is None or math.prod(_shape(size))):
                raise ValueError("a must be a positive integer unless no samples are taken")
        else:
            pop = a if isinstance(a, _array.Array) else _array.asarray(a, device=self._device)
            if pop.ndim == 0:
                raise ValueError("a must be a sequence or an integer, not 0-d")
            axis = _axis(axis, pop.ndim)
            n = pop.shape[axis]
        shape = _shape(size)
        k = math.prod(shape)
        if n == 0 and k:
            raise ValueError("a cannot be empty unless no samples are taken")
        dev = pop.device if pop is not None else _resolve_device(self._device)
        weights = None if p is None else _probabilities(p, n, dev)
        if not replace and k > n:
            raise ValueError("Cannot take a larger sample than population when replace is "
                             "False")
        if weights is None:
            if replace:
                idx = self.integers(0, max(n, 1), size=k, dtype=np.int32) if k else \
                    _array.zeros((0,), _INT32, dev)
            else:
                idx = self._order(n, dev)[:k]
        elif replace:
            # the first place whose running sum exceeds a uniform (the cdf normalized to 1)
            cdf = _wrap(_scan.scan_rows(_array.buffer_of(weights), 1, n, weights.dtype, dev),
                        (n,), weights.dtype)
            cdf = (cdf / cdf[n - 1]).astype(weights.dtype, copy=False)
            u = self.random(k, dtype=weights.dtype).astype(weights.dtype, copy=False)
            pos, _, _ = _search.searchsorted(_array.buffer_of(cdf), n, _array.buffer_of(u), k,
                                             cdf.dtype, dev, right=True)
            idx = _array.minimum(_wrap(pos, (k,), _INT32), n - 1)
        else:
            if k > int((weights > 0).astype(_INT32).sum()):
                raise ValueError("Fewer non-zero entries in p than size")
            u = self.random(n, dtype=weights.dtype)
            keys = _array.where(weights > 0, _array.log(1.0 - u) / weights, -math.inf)
            keys = keys.astype(weights.dtype, copy=False)
            if _sort.on_device(dev, n):
                order, _ = _sort.sort_rows(_array.buffer_of(keys), 1, n, weights.dtype, dev,
                                           descending=True)
                idx = _wrap(order, (n,), _INT32)[:k]
            else:
                # the host sorts on a CPU device (the same stable order of the same keys)
                order = np.argsort(-keys.numpy(), kind="stable")[:k].astype(np.int32)
                idx = _array.asarray(order, device=dev)
        idx = idx.reshape(shape)
        if pop is None:
            return idx
        return _take_along(pop, idx, axis)

    # ---- continuous and discrete distributions ------------------------------------------------

    def standard_exponential(self, size=None, dtype=np.float32, method="inv", out=None):
        """Exponential numbers of mean 1: ``-log(1 - u)`` of uniforms ``u`` in [0, 1) (lazy).

        Parameters
        ----------
        size : None, int or tuple of ints, default=None
            The shape of the result.
        dtype : float32 or float64
            float64 on a device with it.
        method : {'inv', 'zig'}, default='inv'
            Accepted for numpy's signature (the inverse transform is used).
        out : None
            Not supported.

        Returns
        -------
        Array
            The numbers.

        Examples
        --------
        >>> import kompute_ml as km
        >>> bool((km.random.default_rng(0).standard_exponential(100).numpy() >= 0).all())
        True
        """
        if out is not None:
            raise TypeError("out= is not supported; standard_exponential returns a new Array")
        if method not in ("inv", "zig"):
            raise ValueError(f"method must be 'inv' or 'zig', got {method!r}")
        u = self.random(size, dtype=dtype)
        return (-_array.log(1.0 - u)).astype(u.dtype, copy=False)

    def exponential(self, scale=1.0, size=None):
        """Exponential float32 numbers of mean ``scale`` (>= 0; an array broadcasting to
        ``size`` too).

        Parameters
        ----------
        scale : float or array_like, default=1.0
            The mean, 1 / rate.
        size : None, int or tuple of ints, default=None
            The shape of the result.

        Returns
        -------
        Array
            The numbers.

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.random.default_rng(0).exponential(2.0, size=3).shape
        (3,)
        """
        scale = _affine_param(scale, "scale")
        if np.any(np.asarray(scale) < 0):
            raise ValueError("scale < 0")
        size = _broadcast_size(size, scale)
        return _affine(self.standard_exponential(size), 0.0, scale)

    def standard_gamma(self, shape, size=None, dtype=np.float32, out=None):
        """Standard gamma float32 numbers of ``shape`` (> 0): Marsaglia and Tsang's rejection
        on the device, one counter block per number.

        Parameters
        ----------
        shape : float
            The shape (k); a scalar.
        size : None, int or tuple of ints, default=None
            The shape of the result.
        dtype : float32
            Only float32.
        out : None
            Not supported.

        Returns
        -------
        Array
            The numbers.

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.random.default_rng(0).standard_gamma(2.5, size=4).dtype
        dtype('float32')
        """
        if out is not None:
            raise TypeError("out= is not supported; standard_gamma returns a new Array")
        if np.dtype(dtype) != _FLOAT32:
            raise TypeError(f"standard_gamma generates float32 numbers; dtype={np.dtype(dtype)} "
                            f"is not supported")
        k = _scalar_param(shape, "shape")
        if k < 0:
            raise ValueError("shape < 0")
        if k == 0:
            return _array.zeros(_shape(size), _FLOAT32, _resolve_device(self._device))
        return _generate(self._bit_generator, self._device, size, _GAMMA, _FLOAT32,
                         p0=int(np.float32(k).view(np.uint32)))

    def gamma(self, shape, scale=1.0, size=None):
        """Gamma float32 numbers of ``shape`` (> 0) and ``scale`` (>= 0): ``scale`` times
        :meth:`standard_gamma`.

        Parameters
        ----------
        shape : float
            The shape (k).
        scale : float, default=1.0
            The scale (theta).
        size : None, int or tuple of ints, default=None
            The shape of the result.

        Returns
        -------
        Array
            The numbers.

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.random.default_rng(0).gamma(2.0, 3.0, size=2).shape
        (2,)
        """
        theta = _scalar_param(scale, "scale")
        if theta < 0:
            raise ValueError("scale < 0")
        return _affine(self.standard_gamma(shape, size), 0.0, theta)

    def beta(self, a, b, size=None):
        """Beta float32 numbers of parameters ``a``, ``b`` (> 0): ``X / (X + Y)`` of gamma
        numbers of shapes ``a`` and ``b``.

        Parameters
        ----------
        a : float
            Alpha, > 0.
        b : float
            Beta, > 0.
        size : None, int or tuple of ints, default=None
            The shape of the result.

        Returns
        -------
        Array
            The numbers in [0, 1].

        Examples
        --------
        >>> import kompute_ml as km
        >>> x = km.random.default_rng(0).beta(2.0, 5.0, size=100).numpy()
        >>> bool(((x >= 0) & (x <= 1)).all())
        True
        """
        a, b = _scalar_param(a, "a"), _scalar_param(b, "b")
        if a <= 0:
            raise ValueError("a <= 0")
        if b <= 0:
            raise ValueError("b <= 0")
        x = self.standard_gamma(a, size)
        y = self.standard_gamma(b, size)
        return x / (x + y)

    def poisson(self, lam=1.0, size=None):
        """Poisson int32 numbers of mean ``lam`` (0 to 1e6): Knuth's products of
        uniforms below 10, Hormann's transformed rejection (PTRS) from 10, on the device.

        Parameters
        ----------
        lam : float, default=1.0
            The mean.
        size : None, int or tuple of ints, default=None
            The shape of the result.

        Returns
        -------
        Array
            int32 numbers (numpy's int64).

        Examples
        --------
        >>> import kompute_ml as km
        >>> km.random.default_rng(0).poisson(3.0, size=5).dtype
        dtype('int32')
        """
        lam = _scalar_param(lam, "lam")
        if lam < 0:
            raise ValueError("lam < 0")
        if lam > 1e6:
            # past it float32's spacing near lam (1/16 at 1e6) biases PTRS's rounding to k
            raise ValueError(f"lam value too large for kompute_ml's float32 Poisson sampler "
                             f"(at most 1e6), got {lam}")
        return _generate(self._bit_generator, self._device, size, _POISSON, _INT32,
                         p0=int(np.float32(lam).view(np.uint32)))

    def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8, *,
                            method="svd"):
        """Multivariate normal float32 numbers: standard normals (device) times a factor of
        ``cov`` (numpy's SVD, eigh or Cholesky of the small ``d x d`` matrix, on the host)
        plus ``mean``, one matmul on the device.

        Parameters
        ----------
        mean : array_like
            1-D, of length d.
        cov : array_like
            d x d, symmetric positive semi-definite.
        size : None, int or tuple of ints, default=None
            The leading shape of the result (``size + (d,)``).
        check_valid : {'warn', 'raise', 'ignore'}, default='warn'
            What a ``cov`` that is not positive semi-definite does.
        tol : float, default=1e-8
            The tolerance of that check.
        method : {'svd', 'eigh', 'cholesky'}, default='svd'
            The factorization.

        Returns
        -------
        Array
            float32 samples of shape ``size + (d,)``.

        Examples
        --------
        >>> import kompute_ml as km
        >>> rng = km.random.default_rng(0)
        >>> rng.multivariate_normal([0.0, 1.0], [[1.0, 0.5], [0.5, 2.0]], size=3).shape
        (3, 2)
        """
        mean = np.array(mean.numpy() if isinstance(mean, _array.Array) else mean)
        cov = np.array(cov.numpy() if isinstance(cov, _array.Array) else cov)
        if method not in ("svd", "eigh", "cholesky"):
            raise ValueError("method must be one of {'eigh', 'svd', 'cholesky'}")
        shape = list(_shape(size))
        if mean.ndim != 1:
            raise ValueError("mean must be 1 dimensional")
        if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
            raise ValueError("cov must be 2 dimensional and square")
        if mean.shape[0] != cov.shape[0]:
            raise ValueError("mean and cov must have same length")
        d = mean.shape[0]
        cov = cov.astype(np.float64)
        if method == "svd":
            u, s, vh = np.linalg.svd(cov)
        elif method == "eigh":
            s, u = np.linalg.eigh(cov)
        else:
            factor = np.linalg.cholesky(cov)
        if check_valid != "ignore" and method != "cholesky":
            if check_valid not in ("warn", "raise"):
                raise ValueError("check_valid must equal 'warn', 'raise', or 'ignore'")
            psd = np.allclose(np.dot(vh.T * s, vh), cov, rtol=tol, atol=tol) if \
                method == "svd" else not np.any(s < -tol)
            if not psd:
                if check_valid == "warn":
                    warnings.warn("covariance is not symmetric positive-semidefinite.",
                                  RuntimeWarning, stacklevel=2)
                else:
                    raise ValueError("covariance is not symmetric positive-semidefinite.")
        if method == "eigh":
            factor = u * np.sqrt(np.abs(s))
        elif method == "svd":
            factor = u * np.sqrt(s)
        z = self.standard_normal(tuple(shape) + (d,)).reshape(-1, d)
        dev = z.device
        x = z @ _array.asarray(factor.T.astype(np.float32), device=dev) + \
            _array.asarray(mean.astype(np.float32), device=dev)
        return x.reshape(tuple(shape) + (d,))


def _scalar_param(value, name):
    """A real scalar distribution parameter (arrays of them are not supported here)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (numbers.Real, np.floating, np.integer)):
        if hasattr(value, "shape") or isinstance(value, (list, tuple)):
            raise TypeError(f"{name} must be a real number; array-valued parameters are not "
                            f"supported by this method")
        raise TypeError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if math.isnan(v):
        raise ValueError(f"{name} must not be NaN")
    return v


def _axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _gather(x, index_buf, m):
    """``x`` (1-D Array) at the ``m`` int32 places of ``index_buf`` (in range): a Buffer."""
    buf, _, _ = _indexing.gather(_array.buffer_of(x), x.shape, x.dtype, x.device, 0, (m,), [1],
                                 idim=0, off_buf=index_buf, checked=False)
    return buf


def _take_along(arr, idx, axis):
    """``arr`` gathered along ``axis`` by the int32 Array ``idx`` (in range), whose dims
    replace the axis (numpy's ``take``)."""
    strides = _indexing.c_strides(arr.shape)
    flat = idx.reshape(-1)
    off = flat * strides[axis] if strides[axis] != 1 else flat
    out_shape = arr.shape[:axis] + (flat.shape[0],) + arr.shape[axis + 1:]
    buf, shape, dtype = _indexing.gather(_array.buffer_of(arr), arr.shape, arr.dtype,
                                         arr.device, 0, out_shape, strides, idim=axis,
                                         off_buf=_array.buffer_of(off.astype(_INT32)),
                                         checked=False)
    out = _wrap(buf, shape, dtype)
    return out.reshape(arr.shape[:axis] + idx.shape + arr.shape[axis + 1:])


def _probabilities(p, n, device):
    """``p`` checked as numpy checks choice's probabilities (1-D, length n, no NaN,
    non-negative, summing to 1 within sqrt(eps)): a float Array on ``device``. An Array's
    checks are reductions on the device, their three numbers read back at once."""
    dt = _FLOAT64 if device.limits.get("float64") else _FLOAT32
    if isinstance(p, _array.Array):
        w = p.astype(dt)
        if w.ndim != 1:
            raise ValueError("p must be 1-dimensional")
        if w.shape[0] != n:
            raise ValueError("a and p must have same size")
        nans = (w != w).astype(dt).sum().reshape(1)
        stats = _array.asarray(np.zeros(3, dt), device=device)
        stats[0:1] = nans
        stats[1:2] = w.min().reshape(1) if n else stats[1:2]
        stats[2:3] = w.sum().reshape(1)
        bad_nan, low, total = (float(v) for v in stats.numpy())
    else:
        h = np.asarray(p, dtype=np.float64)
        if h.ndim != 1:
            raise ValueError("p must be 1-dimensional")
        if h.size != n:
            raise ValueError("a and p must have same size")
        bad_nan, low, total = float(np.isnan(h).sum()), float(h.min()) if n else 0.0, \
            float(h.sum())
        w = _array.asarray(h.astype(dt), device=device)
    if bad_nan:
        raise ValueError("probabilities contain NaN")
    if low < 0:
        raise ValueError("probabilities are not non-negative")
    if abs(total - 1) > math.sqrt(np.finfo(np.float64).eps):
        raise ValueError("probabilities do not sum to 1")
    return w


def default_rng(seed=None, *, device=None):
    """A :class:`Generator` on ``device`` seeded from ``seed``.

    Parameters
    ----------
    seed : None, int, array_like of ints, numpy.random.SeedSequence, Philox or Generator
        As ``numpy.random.default_rng``: a Philox is wrapped, a Generator returned as is.
    device : None, int, str or Device, default=None
        Where the numbers are made (``get_device``'s argument); None: the default device.

    Returns
    -------
    Generator
        A generator whose methods (``random``, ``normal``, ``integers``, ...) return Arrays made on
        the device by Philox4x32-10.

    Examples
    --------
    >>> import kompute_ml as km
    >>> a = km.random.default_rng(7).integers(0, 10, size=5).numpy()
    >>> b = km.random.default_rng(7).integers(0, 10, size=5).numpy()
    >>> bool((a == b).all())
    True
    """
    if isinstance(seed, Generator) and device is None:
        return seed
    if isinstance(seed, Generator):
        return Generator(seed.bit_generator, device=device)
    bitgen = seed if isinstance(seed, Philox) else Philox(seed)
    return Generator(bitgen, device=device)


class RandomState:
    """The legacy interface (``numpy.random.RandomState``) over Philox4x32-10 on the device.

    dask.array.random builds one per chunk from an array of 624 uint32 words; its entropy keys
    the generator (the numbers are not numpy's Mersenne Twister).

    Parameters
    ----------
    seed : None, int, array_like of ints or numpy.random.SeedSequence, default=None
    device : None, int, str or Device, default=None

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.random.RandomState(3).randint(0, 5, size=(2, 2)).shape
    (2, 2)
    """

    def __init__(self, seed=None, *, device=None):
        self._gen = Generator(Philox(seed), device=device)

    def seed(self, seed=None):
        """Re-key the generator from ``seed`` and restart its counter."""
        self._gen._bit_generator = Philox(seed)

    def random_sample(self, size=None):
        """Uniform float32 numbers in [0, 1)."""
        return self._gen.random(size)

    random = random_sample

    def rand(self, *shape):
        """Uniform numbers in [0, 1) of the shape given by the arguments."""
        return self._gen.random(shape or None)

    def randn(self, *shape):
        """Standard normal numbers of the shape given by the arguments."""
        return self._gen.standard_normal(shape or None)

    def uniform(self, low=0.0, high=1.0, size=None):
        """Uniform numbers in [low, high)."""
        return self._gen.uniform(low, high, size)

    def normal(self, loc=0.0, scale=1.0, size=None):
        """Normal numbers of mean ``loc`` and standard deviation ``scale``."""
        return self._gen.normal(loc, scale, size)

    def standard_normal(self, size=None):
        """Standard normal numbers."""
        return self._gen.standard_normal(size)

    def randint(self, low, high=None, size=None, dtype=int):
        """Integers in [low, high) (``dtype``: as :meth:`Generator.integers`; ``int``, the
        default, gives the default integer dtype)."""
        return self._gen.integers(low, high, size, dtype=dtype)


# module-level functions over one shared RandomState, as numpy's
_global = None
_global_lock = threading.Lock()


def _state():
    global _global
    if _global is None:
        with _global_lock:
            if _global is None:
                _global = RandomState()
    return _global


def seed(seed=None):
    """Re-seed the generator behind the module-level functions (as ``numpy.random.seed``).

    Parameters
    ----------
    seed : int, optional
        The key; None: fresh entropy from the operating system.

    Returns
    -------
    None

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.random.seed(0); a = km.random.rand(3)
    >>> km.random.seed(0); b = km.random.rand(3)
    >>> bool(km.all(a == b))
    True
    """
    _state().seed(seed)


def random(size=None):
    """Uniform float32 numbers in [0, 1), from the module-level generator.

    Parameters
    ----------
    size : int or tuple of int, optional
        Shape of the result; None: one value (a 0-d Array).

    Returns
    -------
    Array
        float32 numbers in [0, 1), on the default device.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.random.random((2, 3))
    >>> x.shape, x.dtype
    ((2, 3), dtype('float32'))
    >>> bool(km.all((x >= 0) & (x < 1)))
    True
    """
    return _state().random_sample(size)


random_sample = random


def rand(*shape):
    """Uniform float32 numbers in [0, 1) of the shape given by the arguments (module-level generator).

    Parameters
    ----------
    *shape : int
        The dimensions; none: one value.

    Returns
    -------
    Array
        float32 numbers in [0, 1), on the default device.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.random.rand(2, 3).shape
    (2, 3)
    """
    return _state().rand(*shape)


def randn(*shape):
    """Standard normal float32 numbers of the shape given by the arguments (module-level generator).

    Parameters
    ----------
    *shape : int
        The dimensions; none: one value.

    Returns
    -------
    Array
        float32 numbers, mean 0 and standard deviation 1, on the default device.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.random.randn(100000)
    >>> abs(float(x.mean())) < 0.02, abs(float(km.std(x)) - 1) < 0.02
    (True, True)
    """
    return _state().randn(*shape)


def uniform(low=0.0, high=1.0, size=None):
    """Uniform numbers in [low, high), from the module-level generator.

    Parameters
    ----------
    low : float, default=0.0
        Lower bound (included).
    high : float, default=1.0
        Upper bound (excluded).
    size : int or tuple of int, optional
        Shape of the result; None: one value (a 0-d Array).

    Returns
    -------
    Array
        float32 numbers in [low, high), on the default device.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.random.uniform(-1.0, 1.0, size=1000)
    >>> bool(km.all((x >= -1) & (x < 1)))
    True
    """
    return _state().uniform(low, high, size)


def normal(loc=0.0, scale=1.0, size=None):
    """Normal numbers of mean ``loc`` and standard deviation ``scale``, from the module-level generator.

    Parameters
    ----------
    loc : float, default=0.0
        The mean.
    scale : float, default=1.0
        The standard deviation.
    size : int or tuple of int, optional
        Shape of the result; None: one value (a 0-d Array).

    Returns
    -------
    Array
        float32 numbers, on the default device.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.random.normal(10.0, 2.0, size=100000)
    >>> abs(float(x.mean()) - 10) < 0.05
    True
    """
    return _state().normal(loc, scale, size)


def standard_normal(size=None):
    """Standard normal numbers (mean 0, standard deviation 1), from the module-level generator.

    Parameters
    ----------
    size : int or tuple of int, optional
        Shape of the result; None: one value (a 0-d Array).

    Returns
    -------
    Array
        float32 numbers, on the default device.

    Examples
    --------
    >>> import kompute_ml as km
    >>> km.random.standard_normal((4, 4)).shape
    (4, 4)
    """
    return _state().standard_normal(size)


def randint(low, high=None, size=None, dtype=int):
    """Random integers in [low, high), from the module-level generator (numpy's ``randint``).

    Parameters
    ----------
    low : int
        Lower bound (included); with ``high`` None, the upper bound and 0 the lower.
    high : int, optional
        Upper bound (excluded).
    size : int or tuple of int, optional
        Shape of the result; None: one value (a 0-d Array).
    dtype : dtype, default=int
        As :meth:`Generator.integers`; ``int`` gives the default integer dtype.

    Returns
    -------
    Array
        Integers in [low, high), on the default device.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.random.randint(0, 10, size=1000)
    >>> x.dtype == km.__array_namespace_info__().default_dtypes()["integral"]
    True
    >>> bool(km.all((x >= 0) & (x < 10)))
    True
    """
    return _state().randint(low, high, size, dtype)
