"""kompute_ml: numeric arrays, custom kernels and estimators on any Vulkan device, through Kompute.

Importing never touches a Vulkan driver; the first call that needs a device does.
"""

from typing import TYPE_CHECKING

from . import errors
from ._version import __version__
from ._compile.glslang import compile_glsl
from ._runtime.stream import stats, synchronize
from .device import Device, DeviceInfo, devices, get_device, use_device
from .kernel import Kernel
from .pyshader import python2shader
from .errors import (DeviceError, DeviceLimitError, DeviceNotFoundError, KomputeMLError,
                     OutOfMemoryError, ShaderCompileError, SpirvError, TranslationError)
# the numpy-like API, every name of kompute_ml.array's __all__ but `array` itself: that name stays
# the submodule kompute_ml.array (km.asarray is the constructor)
from .array import (
    Array, asarray, zeros, ones, full, empty, arange, zeros_like, ones_like, full_like, empty_like,
    exp, log, sqrt, abs, absolute, sin, cos, tanh, sigmoid, floor, ceil,
    negative, maximum, minimum, where, clip,
    add, subtract, multiply, divide, true_divide, floor_divide, remainder,
    power, equal, not_equal, less, less_equal, greater, greater_equal,
    bitwise_and, bitwise_or, bitwise_xor, invert,
    sum, mean, max, min, argmax, argmin, matmul, dot,
    reshape, transpose, broadcast_to,
)
from . import random

if TYPE_CHECKING:
    # type checkers and IDEs see the estimator; at run time it is imported on first use (below)
    from .linear_model import LogisticRegression

__all__ = [
    "__version__", "errors",
    # devices and the stream
    "devices", "get_device", "use_device", "Device", "DeviceInfo", "stats", "synchronize",
    # shaders and kernels
    "compile_glsl", "Kernel", "python2shader",
    # random numbers generated on the device
    "random",
    # estimators
    "LogisticRegression",
    # errors
    "KomputeMLError", "DeviceNotFoundError", "DeviceError", "DeviceLimitError", "OutOfMemoryError",
    "ShaderCompileError", "SpirvError", "TranslationError",
    # arrays
    "Array", "asarray", "zeros", "ones", "full", "empty", "arange",
    "zeros_like", "ones_like", "full_like", "empty_like",
    "exp", "log", "sqrt", "abs", "absolute", "sin", "cos", "tanh", "sigmoid", "floor", "ceil",
    "negative", "maximum", "minimum", "where", "clip",
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "power", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "bitwise_and", "bitwise_or", "bitwise_xor", "invert",
    "sum", "mean", "max", "min", "argmax", "argmin", "matmul", "dot",
    "reshape", "transpose", "broadcast_to",
]


def __getattr__(name):
    # scikit-learn is imported on first use of the estimator, not by `import kompute_ml`
    if name == "LogisticRegression":
        from .linear_model import LogisticRegression
        return LogisticRegression
    raise AttributeError(f"module 'kompute_ml' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"LogisticRegression"})
