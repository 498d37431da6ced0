"""kompute_ml: numeric arrays, custom kernels and estimators on any Vulkan device, through Kompute.

Importing never touches a Vulkan driver; the first call that needs a device does.
"""

from typing import TYPE_CHECKING

from . import config, errors
from ._version import __version__
from ._compile.glslang import compile_glsl
from ._runtime.stream import stats, synchronize
from .device import Device, DeviceInfo, devices, get_device, use_device
from .kernel import Kernel
from .pyshader import python2shader
from .errors import (DeviceError, DeviceLimitError, DeviceNotFoundError, KomputeMLError,
                     LinAlgError, OutOfMemoryError, ShaderCompileError, SpirvError,
                     TranslationError)
# The Array API 2024.12 namespace (kompute_ml/_api/, built on array.py: its versions win where
# the two differ) and array.py's numpy-style extras. Importing _api also installs the
# handlers of the Array's numpy protocols.
from ._api.namespace import (
    __array_api_version__, __array_namespace_info__, float32, int32, uint32, bool, e, pi, inf, nan,
    float64, int64, uint64, int8, uint8, int16, uint16, float16, bfloat16, complex64, complex128,
    isdtype, result_type, can_cast, finfo, iinfo, astype, asarray, from_dlpack, empty, zeros, ones,
    full, empty_like, zeros_like, ones_like, full_like, arange, linspace, eye, meshgrid, tril,
    triu, linalg, fft, matmul, matrix_transpose, tensordot, vecdot, abs, acos, acosh, add, asin,
    asinh, atan, atan2, atanh, bitwise_and, bitwise_left_shift, bitwise_invert, bitwise_or,
    bitwise_right_shift, bitwise_xor, ceil, clip, conj, copysign, cos, cosh, divide, equal, exp,
    expm1, floor, floor_divide, greater, greater_equal, hypot, imag, isfinite, isinf, isnan, less,
    less_equal, log, log1p, log2, log10, logaddexp, logical_and, logical_not, logical_or,
    logical_xor, maximum, minimum, multiply, negative, nextafter, not_equal, positive, pow, real,
    reciprocal, remainder, round, sign, signbit, sin, sinh, square, sqrt, subtract, tan, tanh,
    trunc, where, broadcast_arrays, broadcast_to, concat, expand_dims, flip, moveaxis,
    permute_dims, repeat, reshape, roll, squeeze, stack, tile, unstack, argmax, argmin,
    count_nonzero, nonzero, searchsorted, argsort, sort, unique_all, unique_counts, unique_inverse,
    unique_values, cumulative_sum, cumulative_prod, max, mean, min, prod, std, sum, var, all, any,
    diff, take, take_along_axis,
)
# numpy's functions beyond the Array API (kompute_ml/_api/shaping.py, numeric.py,
# statistics.py, ufuncs.py, index_functions.py, sets.py, selection.py, assignment.py,
# einsum.py, histograms.py, quantiles.py, padding.py, signal.py, polynomial.py,
# construction.py, introspection.py; round above is numpy's, with decimals=)
from ._api.namespace import (
    append, array_split, asanyarray, asarray_chkfinite, ascontiguousarray, asfortranarray,
    atleast_1d, atleast_2d, atleast_3d, block, broadcast_shapes, column_stack, concatenate, copy,
    diag, diagflat, diagonal, dsplit, dstack, ediff1d, fliplr, flipud, hsplit, hstack, issubdtype,
    iterable, ndim, promote_types, ravel, rot90, shape, size, split, swapaxes, vsplit, vstack,
    allclose, around, array_equal, array_equiv, cross, geomspace, identity, inner, isclose, kron,
    logspace, nan_to_num, outer, select, trace, trapezoid, vander, vdot, amax, amin, average,
    corrcoef, cov, cumprod, cumsum, nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean,
    nanmin, nanprod, nanstd, nansum, nanvar, ptp, bitwise_not, conjugate, deg2rad, degrees, divmod,
    fabs, fix, float_power, fmax, fmin, fmod, heaviside, iscomplex, iscomplexobj, isneginf,
    isposinf, isreal, isrealobj, isscalar, ldexp, left_shift, logaddexp2, matvec, mod, modf,
    rad2deg, radians, right_shift, rint, sinc, vecmat, argwhere, diag_indices, diag_indices_from,
    flatnonzero, indices, ix_, ravel_multi_index, tri, tril_indices, tril_indices_from,
    triu_indices, triu_indices_from, unravel_index, intersect1d, isin, setdiff1d, setxor1d,
    union1d, argpartition, choose, compress, delete, extract, lexsort, partition, resize,
    trim_zeros, copyto, fill_diagonal, place, put, put_along_axis, putmask,
    einsum, einsum_path, bincount, digitize, histogram, histogram2d, histogram_bin_edges,
    histogramdd, median, nanmedian, nanpercentile, nanquantile, percentile, quantile, unique,
    pad, angle, bitwise_count, cbrt, frexp, gcd, i0, lcm, spacing,
    apply_along_axis, bartlett, blackman, convolve, correlate, frombuffer, fromfunction,
    fromiter, gradient, hamming, hanning, insert, interp, kaiser, may_share_memory, packbits,
    piecewise, poly, polyadd, polyder, polydiv, polyfit, polyint, polymul,
    polysub, polyval, require, rollaxis, roots, row_stack, shares_memory, unpackbits,
    unwrap, apply_over_axes, array2string, array_repr, array_str, common_type, isfortran,
    mask_indices, min_scalar_type, mintypecode, real_if_close, typename,
)
from ._api.namespace import newaxis  # None, as numpy's: an attribute, not in __all__
from .array import (
    Array, absolute, sigmoid, true_divide, power, invert, dot, transpose,
    exp2, arcsin, arccos, arctan, arctan2, arcsinh, arccosh, arctanh,
    set_float32_matmul_precision, get_float32_matmul_precision,
)
from . import random
from ._benchmark import benchmark

if TYPE_CHECKING:
    # type checkers and IDEs see the estimator; at run time it is imported on first use (below)
    from .linear_model import LogisticRegression

__all__ = [
    "__version__", "errors", "config",
    # devices and the stream
    "devices", "get_device", "use_device", "Device", "DeviceInfo", "stats", "synchronize",
    "benchmark",
    # shaders and kernels
    "compile_glsl", "Kernel", "python2shader",
    # random numbers generated on the device
    "random",
    # estimators
    "LogisticRegression",
    # errors
    "KomputeMLError", "DeviceNotFoundError", "DeviceError", "DeviceLimitError", "OutOfMemoryError",
    "ShaderCompileError", "SpirvError", "TranslationError", "LinAlgError",
    # arrays: the Array API namespace, then array.py's numpy-style extras
    '__array_api_version__', '__array_namespace_info__', 'float32', 'int32', 'uint32', 'bool', 'e',
    'float64', 'int64', 'uint64', 'int8', 'uint8', 'int16', 'uint16', 'float16', 'bfloat16',
    'complex64', 'complex128',
    'pi', 'inf', 'nan', 'isdtype', 'result_type', 'can_cast', 'finfo', 'iinfo', 'astype',
    'asarray', 'from_dlpack', 'empty', 'zeros', 'ones', 'full', 'empty_like', 'zeros_like',
    'ones_like', 'full_like', 'arange', 'linspace', 'eye', 'meshgrid', 'tril', 'triu', 'linalg',
    'fft', 'matmul', 'matrix_transpose', 'tensordot', 'vecdot', 'abs', 'acos', 'acosh', 'add',
    'asin', 'asinh', 'atan', 'atan2', 'atanh', 'bitwise_and', 'bitwise_left_shift', 'bitwise_invert',
    'bitwise_or', 'bitwise_right_shift', 'bitwise_xor', 'ceil', 'clip', 'conj', 'copysign', 'cos',
    'cosh', 'divide', 'equal', 'exp', 'expm1', 'floor', 'floor_divide', 'greater', 'greater_equal',
    'hypot', 'imag', 'isfinite', 'isinf', 'isnan', 'less', 'less_equal', 'log', 'log1p', 'log2',
    'log10', 'logaddexp', 'logical_and', 'logical_not', 'logical_or', 'logical_xor', 'maximum',
    'minimum', 'multiply', 'negative', 'nextafter', 'not_equal', 'positive', 'pow', 'real',
    'reciprocal', 'remainder', 'round', 'sign', 'signbit', 'sin', 'sinh', 'square', 'sqrt',
    'subtract', 'tan', 'tanh', 'trunc', 'where', 'broadcast_arrays', 'broadcast_to', 'concat',
    'expand_dims', 'flip', 'moveaxis', 'permute_dims', 'repeat', 'reshape', 'roll', 'squeeze',
    'stack', 'tile', 'unstack', 'argmax', 'argmin', 'count_nonzero', 'nonzero', 'searchsorted',
    'argsort', 'sort', 'unique_all', 'unique_counts', 'unique_inverse', 'unique_values',
    'cumulative_sum', 'cumulative_prod', 'max', 'mean', 'min', 'prod', 'std', 'sum', 'var', 'all',
    'any', 'diff', 'take', 'take_along_axis', 'Array', 'absolute', 'sigmoid', 'true_divide',
    'set_float32_matmul_precision', 'get_float32_matmul_precision',
    'power', 'invert', 'dot', 'transpose',
    'exp2', 'arcsin', 'arccos', 'arctan', 'arctan2', 'arcsinh', 'arccosh', 'arctanh',
    # numpy's functions beyond the Array API
    'append', 'array_split', 'asanyarray', 'asarray_chkfinite', 'ascontiguousarray',
    'asfortranarray', 'atleast_1d', 'atleast_2d', 'atleast_3d', 'block', 'broadcast_shapes',
    'column_stack', 'concatenate', 'copy', 'diag', 'diagflat', 'diagonal', 'dsplit', 'dstack',
    'ediff1d', 'fliplr', 'flipud', 'hsplit', 'hstack', 'issubdtype', 'iterable', 'ndim',
    'promote_types', 'ravel', 'rot90', 'shape', 'size', 'split', 'swapaxes', 'vsplit', 'vstack',
    'allclose', 'around', 'array_equal', 'array_equiv', 'cross', 'geomspace', 'identity', 'inner',
    'isclose', 'kron', 'logspace', 'nan_to_num', 'outer', 'select', 'trace', 'trapezoid', 'vander',
    'vdot', 'amax', 'amin', 'average', 'corrcoef', 'cov', 'cumprod', 'cumsum', 'nanargmax',
    'nanargmin', 'nancumprod', 'nancumsum', 'nanmax', 'nanmean', 'nanmin', 'nanprod', 'nanstd',
    'nansum', 'nanvar', 'ptp', 'bitwise_not', 'conjugate', 'deg2rad', 'degrees', 'divmod', 'fabs',
    'fix', 'float_power', 'fmax', 'fmin', 'fmod', 'heaviside', 'iscomplex', 'iscomplexobj',
    'isneginf', 'isposinf', 'isreal', 'isrealobj', 'isscalar', 'ldexp', 'left_shift', 'logaddexp2',
    'matvec', 'mod', 'modf', 'rad2deg', 'radians', 'right_shift', 'rint', 'sinc', 'vecmat',
    'argwhere', 'diag_indices', 'diag_indices_from', 'flatnonzero', 'indices', 'ix_',
    'ravel_multi_index', 'tri', 'tril_indices', 'tril_indices_from', 'triu_indices',
    'triu_indices_from', 'unravel_index', 'intersect1d', 'isin', 'setdiff1d', 'setxor1d',
    'union1d', 'argpartition', 'choose', 'compress', 'delete', 'extract', 'lexsort', 'partition',
    'resize', 'trim_zeros', 'copyto', 'fill_diagonal', 'place', 'put', 'put_along_axis', 'putmask',
    'einsum', 'einsum_path', 'bincount', 'digitize', 'histogram', 'histogram2d',
    'histogram_bin_edges', 'histogramdd', 'median', 'nanmedian', 'nanpercentile', 'nanquantile',
    'percentile', 'quantile', 'unique', 'pad', 'angle', 'bitwise_count', 'cbrt', 'frexp', 'gcd',
    'i0', 'lcm', 'spacing',
    'apply_along_axis', 'bartlett', 'blackman', 'convolve', 'correlate', 'frombuffer',
    'fromfunction', 'fromiter', 'gradient', 'hamming', 'hanning', 'insert', 'interp', 'kaiser',
    'may_share_memory', 'packbits', 'piecewise', 'poly', 'polyadd', 'polyder', 'polydiv',
    'polyfit', 'polyint', 'polymul', 'polysub', 'polyval', 'require', 'rollaxis',
    'roots', 'row_stack', 'shares_memory', 'unpackbits', 'unwrap',
    'apply_over_axes', 'array2string', 'array_repr', 'array_str', 'common_type', 'isfortran',
    'mask_indices', 'min_scalar_type', 'mintypecode', 'real_if_close', 'typename',
]


def __getattr__(name):
    # scikit-learn is imported on first use of the estimator, not by `import kompute_ml`
    if name == "LogisticRegression":
        from .linear_model import LogisticRegression
        return LogisticRegression
    raise AttributeError(f"module 'kompute_ml' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"LogisticRegression"})
