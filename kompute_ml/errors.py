"""The exception tree of kompute_ml.

Every error the library raises on purpose derives from :class:`KomputeMLError`; each subclass also
inherits the built-in exception a numpy or scikit-learn user would catch for the same mistake.
"""

__all__ = [
    "KomputeMLError",
    "DeviceNotFoundError",
    "DeviceError",
    "DeviceLimitError",
    "OutOfMemoryError",
    "ShaderCompileError",
    "SpirvError",
    "TranslationError",
]


class KomputeMLError(Exception):
    """Base class of every error raised by kompute_ml."""


class DeviceNotFoundError(KomputeMLError, LookupError):
    """No Vulkan device matches the request (or no Vulkan driver is usable at all)."""


class DeviceError(KomputeMLError, RuntimeError):
    """A Vulkan/kp operation failed on a device (lost device, closed device, driver error)."""


class DeviceLimitError(KomputeMLError, ValueError):
    """A size or count exceeds a limit of the device; the message names the limit."""


class OutOfMemoryError(KomputeMLError, MemoryError):
    """The device could not allocate memory, even after the pool freed its cached blocks."""

    def __init__(self, size, device_name="", detail=""):
        self.size = size
        msg = f"out of device memory allocating {size} bytes"
        if device_name:
            msg += f" on {device_name!r}"
        if detail:
            msg += f": {detail}"
        super().__init__(msg)


class ShaderCompileError(KomputeMLError, ValueError):
    """GLSL could not be compiled to SPIR-V; the message holds the compiler's text and the line."""


class SpirvError(KomputeMLError, ValueError):
    """Bytes given as SPIR-V are not a valid SPIR-V module (bad magic, version or length)."""


class TranslationError(KomputeMLError, ValueError):
    """A Python function could not be translated to GLSL by python2shader."""
