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
uint32 Arrays, or float64 where asked for (``dtype=np.float64``) on a device with float64 (53-bit
uniforms, Box-Muller in double; float32 elsewhere, as km.asarray maps float64 data); the bits
differ from numpy's (another generator).
"""

import math
import numbers
import threading

import numpy as np

from . import array as _array
from ._runtime import device as _device
from ._runtime import memory as _memory
from ._runtime import program as _program
from .errors import DeviceError, DeviceLimitError

__all__ = ["Philox", "Generator", "default_rng", "RandomState", "seed", "random", "random_sample",
           "rand", "randn", "uniform", "normal", "standard_normal", "randint"]

# kinds of random.comp (its header says what each one writes)
_RAW, _UNIFORM, _NORMAL, _INTEGERS = 0, 1, 2, 3
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
    # random.comp — binding 0: out (uint words); one invocation per block of 4 words
    per_block = _OUTPUTS_PER_BLOCK // 2 if float64 else _OUTPUTS_PER_BLOCK
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


def _int_dtype(dtype):
    """int32 or uint32 for an integer dtype (64-bit requests map onto 32 bits, as in Arrays)."""
    try:
        want = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be an integer dtype, got {dtype!r}") from None
    if want.kind not in "iu":
        raise TypeError(f"integers needs an integer dtype, got dtype={want}")
    return _UINT32 if want.kind == "u" else _INT32


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
        _dispatch(dev, buf, n, bitgen._key, bitgen._take(2 * n if f64 else n), kind, p0, p1, f64)
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
            Signed dtypes give int32, unsigned ones uint32 (the integers Arrays hold); the range
            must fit that dtype.
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
        want = _int_dtype(dtype)
        info = np.iinfo(want)
        if low < info.min or high - 1 > info.max:
            raise ValueError(f"the range [{low}, {high}) does not fit {want} (kompute_ml Arrays "
                             f"hold 32-bit integers; dtype={np.dtype(dtype)} maps to {want})")
        return _generate(self._bit_generator, self._device, size, _INTEGERS, want,
                         p0=low, p1=high - low - 1)

    def bits(self, size=None):
        """Raw uint32 words of the generator (the Philox output itself)."""
        return _generate(self._bit_generator, self._device, size, _RAW, _UINT32)


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
        """Integers in [low, high) (int32 for signed dtypes, uint32 for unsigned ones)."""
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
        int32 for signed dtypes, uint32 for unsigned ones.

    Returns
    -------
    Array
        Integers in [low, high), on the default device.

    Examples
    --------
    >>> import kompute_ml as km
    >>> x = km.random.randint(0, 10, size=1000)
    >>> x.dtype, bool(km.all((x >= 0) & (x < 10)))
    (dtype('int32'), True)
    """
    return _state().randint(low, high, size, dtype)
