"""kompute_ml: numeric arrays, custom kernels and estimators on any Vulkan device, through Kompute.

Importing never touches a Vulkan driver; the first call that needs a device does.
"""

from . import errors
from . import array as _array_module
from .array import __all__ as _array_all

# the numpy-like API at top level; not `array` (the submodule kompute_ml.array keeps that name)
_array_all = [n for n in _array_all if n != "array"]
globals().update({n: getattr(_array_module, n) for n in _array_all})
# the Array API 2024.12 namespace (its signatures win where array.py's differ)
from . import _namespace
globals().update({n: getattr(_namespace, n) for n in _namespace.__all__})
from ._compile.glslang import compile_glsl
from ._runtime.stream import stats, synchronize
from .device import Device, DeviceInfo, devices, get_device, use_device
from .kernel import Kernel
from .pyshader import python2shader
from .errors import (DeviceError, DeviceLimitError, DeviceNotFoundError, KomputeMLError,
                     OutOfMemoryError, ShaderCompileError, SpirvError, TranslationError)

__version__ = "0.1.0"

__all__ = [
    "__version__", "errors",
    "devices", "get_device", "use_device", "Device", "DeviceInfo", "stats", "synchronize",
    "compile_glsl", "Kernel", "python2shader", "LogisticRegression",
    "KomputeMLError", "DeviceNotFoundError", "DeviceError", "DeviceLimitError", "OutOfMemoryError",
    "ShaderCompileError", "SpirvError", "TranslationError",
] + sorted(set(_array_all) | set(_namespace.__all__) - {"newaxis"})  # newaxis is None: an attribute only


def __getattr__(name):
    # scikit-learn is imported on first use of the estimator, not by `import kompute_ml`
    if name == "LogisticRegression":
        from .linear_model import LogisticRegression
        return LogisticRegression
    raise AttributeError(f"module 'kompute_ml' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"LogisticRegression"})
