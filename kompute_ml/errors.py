"""The exception tree of kompute_ml.

Every error the library raises on purpose derives from :class:`KomputeMLError`; each subclass also
inherits the built-in exception a numpy or scikit-learn user would catch for the same mistake.

Every error pickles with its message and attributes intact: errors cross processes (joblib, Dask
workers), and Python's default rebuilds an exception by calling ``cls(*self.args)``, which breaks
for a subclass whose ``__init__`` takes other parameters than its message (OutOfMemoryError's
``size`` got the message, and the message was built again around it).
"""

import numpy as _np

__all__ = [
    "KomputeMLError",
    "DeviceNotFoundError",
    "DeviceError",
    "DeviceLimitError",
    "OutOfMemoryError",
    "ShaderCompileError",
    "SpirvError",
    "TranslationError",
    "LinAlgError",
]


def _rebuild(cls, args, state):
    """An exception of ``cls`` with ``args`` and attributes ``state``, without calling its
    ``__init__`` (whose parameters may differ from ``args``): the inverse of ``__reduce__``."""
    # BaseException.__new__, not cls.__new__: the latter resolves to MemoryError.__new__ for
    # OutOfMemoryError, which CPython refuses for a subclass ("not safe"). Every base used here
    # (ValueError, LookupError, RuntimeError, MemoryError) keeps its state in args and __dict__;
    # an OSError base would need its own __new__ (errno and strerror are C fields).
    exc = BaseException.__new__(cls, *args)
    exc.args = args
    exc.__dict__.update(state)
    return exc


class KomputeMLError(Exception):
    """Base class of every error raised by kompute_ml."""

    def __reduce__(self):
        # every subclass, including ones with their own __init__, round-trips as it is
        return _rebuild, (type(self), self.args, dict(self.__dict__))


class DeviceNotFoundError(KomputeMLError, LookupError):
    """No Vulkan device matches the request (or no Vulkan driver is usable at all)."""


class DeviceError(KomputeMLError, RuntimeError):
    """A Vulkan/kp operation failed on a device (lost device, closed device, driver error)."""


class DeviceLimitError(KomputeMLError, ValueError):
    """A size or count exceeds a limit of the device; the message names the limit."""


class OutOfMemoryError(KomputeMLError, MemoryError):
    """The device could not allocate memory, even after the pool freed its cached blocks.

    Attributes: ``size`` (bytes requested), ``device_name``, ``detail`` (the driver's or the pool's
    words), ``total`` (bytes the pool held, None when unknown) and ``limit`` (the pool's byte limit,
    None when it has none), as CuPy's OutOfMemoryError has them.
    """

    def __init__(self, size, device_name="", detail="", total=None, limit=None):
        self.size = size
        self.device_name = device_name
        self.detail = detail
        self.total = total
        self.limit = limit
        msg = f"out of device memory allocating {size} bytes"
        if device_name:
            msg += f" on {device_name!r}"
        if total is not None:
            msg += f" ({total} bytes held" + (f", limit {limit})" if limit else ")")
        if detail:
            msg += f": {detail}"
        super().__init__(msg)


class ShaderCompileError(KomputeMLError, ValueError):
    """GLSL could not be compiled to SPIR-V; the message holds the compiler's text and the line."""


class SpirvError(KomputeMLError, ValueError):
    """Bytes given as SPIR-V are not a valid SPIR-V module (bad magic, version or length)."""


class TranslationError(KomputeMLError, ValueError):
    """A Python function could not be translated to GLSL by python2shader."""


class LinAlgError(KomputeMLError, _np.linalg.LinAlgError):
    """A linear algebra function cannot give a result (a singular matrix for ``solve`` and
    ``inv``, one not positive definite for ``cholesky``, a shape that is not a stack of square
    matrices); numpy's ``numpy.linalg.LinAlgError`` (a ValueError) with numpy's message."""
