"""dtypes of kompute_ml arrays: the five we hold, how numpy's map onto them, and result types.

An Array holds float32, int32, uint32 or bool, each element one 32-bit word (bool as 0/1 uint32),
or float64 (two words) on a device with ``shaderFloat64``. Result types are numpy's own, computed
on zero-size stand-ins and mapped onto ours, so every numpy rule (NEP 50 weak Python scalars, bool
arithmetic errors, float32 + float64 -> float64, int / int -> float64) holds by construction. On a
device without float64 every float64 result is float32 instead (``resolve(..., float64=False)``),
float64 data maps to float32 (``device_dtype``), and only an explicit request raises.
"""

import struct

import numpy as np

__all__ = ["FLOAT32", "FLOAT64", "INT32", "UINT32", "BOOL", "DTYPES", "GLSL_TYPE", "STORAGE_TYPE",
           "STORAGE_DTYPE", "VEC4_TYPE", "ARITHMETIC", "COMPARISONS", "FLOAT_UNARY", "FLOAT_BINARY",
           "PREDICATES", "SAME_UNARY", "FLOATS", "canonical_dtype", "device_dtype", "has_float64", "result_dtype",
           "resolve", "scalar_value"]

FLOAT32, INT32, UINT32, BOOL = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint32),
                                np.dtype(np.bool_))
FLOAT64 = np.dtype(np.float64)
DTYPES = (FLOAT32, INT32, UINT32, BOOL, FLOAT64)
FLOATS = (FLOAT32, FLOAT64)
GLSL_TYPE = {FLOAT32: "float", INT32: "int", UINT32: "uint", BOOL: "bool", FLOAT64: "double"}
STORAGE_TYPE = {FLOAT32: "float", INT32: "int", UINT32: "uint", BOOL: "uint",   # bool: 0/1 words
                FLOAT64: "double"}
STORAGE_DTYPE = {FLOAT32: FLOAT32, INT32: INT32, UINT32: UINT32, BOOL: UINT32, FLOAT64: FLOAT64}
VEC4_TYPE = {FLOAT32: "vec4", INT32: "ivec4", UINT32: "uvec4", BOOL: "uvec4", FLOAT64: "dvec4"}


def canonical_dtype(dtype):
    """Map a numpy dtype onto ours: float64 (and wider) -> float64, other floats -> float32,
    signed -> int32, unsigned -> uint32, bool. (``device_dtype`` then applies the device.)"""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return FLOAT64 if dt.itemsize >= 8 else FLOAT32
    if dt.kind == "i":
        return INT32
    if dt.kind == "u":
        return UINT32
    if dt.kind == "b":
        return BOOL
    raise TypeError(f"kompute_ml arrays hold float32, float64 (where the device has it), int32, "
                    f"uint32 or bool; dtype {dt} is not supported")


def has_float64(device):
    """Whether ``device`` computes in float64 (Vulkan's shaderFloat64 feature)."""
    return bool(device.limits.get("float64"))


def device_dtype(dtype, device, explicit=False):
    """``canonical_dtype(dtype)`` as ``device`` holds it.

    float64 on a device without shaderFloat64 becomes float32 when it comes from the data (as
    every dtype wider than ours narrows); an ``explicit`` request for float64 raises TypeError.
    """
    dt = canonical_dtype(dtype)
    if dt == FLOAT64 and not has_float64(device):
        if explicit:
            raise TypeError(f"dtype float64 is not available on {device.name!r}: the device lacks "
                            f"shaderFloat64 (its dtypes: float32, int32, uint32, bool); ask for "
                            f"float32, or pass float64 data without dtype= to have it converted")
        return FLOAT32
    return dt


def result_dtype(device, *dtypes):
    """numpy's result type of arrays of ``dtypes`` on ``device`` (int32 with float32 gives float64
    as numpy's, float32 where the device has no float64)."""
    return device_dtype(np.result_type(*dtypes), device)


_UFUNCS = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "true_divide": np.true_divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "power": np.power,
    "maximum": np.maximum, "minimum": np.minimum,
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
    "negative": np.negative, "absolute": np.absolute, "floor": np.floor, "ceil": np.ceil,
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "exp2": np.exp2, "expm1": np.expm1, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "arcsin": np.arcsin, "arccos": np.arccos,
    "arctan": np.arctan, "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh,
    "arctan2": np.arctan2,
    "sigmoid": np.exp, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "invert": np.invert, "signbit": np.signbit,
}
ARITHMETIC = {"add", "subtract", "multiply", "floor_divide", "remainder", "power", "maximum", "minimum",
              "bitwise_and", "bitwise_or", "bitwise_xor"}
COMPARISONS = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">",
               "greater_equal": ">="}
# float32 functions (integer and bool inputs are converted, as numpy's float loops do)
FLOAT_UNARY = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan",
               "tanh", "sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
               "arctanh", "sigmoid"}
FLOAT_BINARY = {"true_divide", "arctan2"}
SAME_UNARY = {"negative", "absolute", "floor", "ceil", "invert"}
# bool of the operand's own bits (no conversion: signbit must see a nan's sign bit)
PREDICATES = {"signbit"}

_resolve_cache = {}


def _proxy(x):
    """A zero-size stand-in numpy resolves types on (Python scalars stay weak, as in NEP 50)."""
    if isinstance(x, (bool, int, float)):
        return type(x)(0)
    if isinstance(x, np.generic):
        return x.dtype.type(0)
    return np.empty(0, dtype=x.dtype)


def _signature(x):
    if isinstance(x, (bool, int, float)):
        return type(x)
    if isinstance(x, np.generic):
        return ("np", x.dtype)
    return x.dtype


def _narrow(result):
    """``result`` of resolve with float64 replaced by float32 (a device without float64)."""
    def n(dt):
        return FLOAT32 if dt == FLOAT64 else dt
    return n(result[0]), tuple(n(dt) for dt in result[1])


def resolve(op, operands, float64=True):
    """Result dtype and per-operand compute dtypes of ``op`` (numpy's rules, our dtypes).

    Operands are objects with a ``dtype`` (arrays) or Python/numpy scalars. Raises numpy's own
    TypeError where numpy refuses the combination (``bool - bool``, ``-bool``, ...). ``float64``:
    whether the device has it (without, a numpy float64 scalar's float64 becomes float32).
    """
    key = (op, tuple(_signature(x) for x in operands), float64)
    hit = _resolve_cache.get(key)
    if hit is not None:
        return hit
    proxies = [_proxy(x) for x in operands]
    if op == "where":
        out = canonical_dtype(np.result_type(proxies[1], proxies[2]))
        result = (out, (BOOL, out, out))
    elif op in COMPARISONS:
        kinds = [canonical_dtype(p.dtype) if isinstance(p, np.ndarray) else None for p in proxies]
        common = canonical_dtype(np.result_type(*proxies))
        if set(kinds) == {INT32, UINT32}:      # compared exactly, as numpy does through int64
            result = (BOOL, tuple(kinds))
        else:
            result = (BOOL, (common, common))
    else:
        with np.errstate(all="ignore"):
            res = _UFUNCS[op](*proxies)
        out = canonical_dtype(res.dtype)
        if op in FLOAT_BINARY or op in FLOAT_UNARY:
            result = (out, (out,) * len(operands))     # numpy's float result (int / int: float64)
        elif op in SAME_UNARY or op in ARITHMETIC:
            result = (out, (out,) * len(operands))
        elif op in PREDICATES:
            result = (BOOL, tuple(canonical_dtype(p.dtype) for p in proxies))
        else:
            raise ValueError(f"unknown elementwise operation {op!r}")
    if not float64:
        result = _narrow(result)
    _resolve_cache[key] = result
    return result


_F32 = struct.Struct("<f")


def scalar_value(value, dtype):
    """Convert a Python scalar to ``dtype`` as numpy would (OverflowError when it does not fit)."""
    # per-op fast path for the common cases (numpy's errstate + asarray cost ~10 us): a Python
    # float rounds to float32 as C's cast does (struct refuses only what overflows: numpy's inf
    # then comes from the general path), an int in range is itself
    kind = type(value)
    if dtype == FLOAT32 and (kind is float or (kind is int and -2**53 <= value <= 2**53)):
        try:                 # (an int within 2**53 is an exact double: one rounding, as numpy's)
            return _F32.unpack(_F32.pack(value))[0]
        except OverflowError:
            pass
    elif kind is int and ((dtype == INT32 and -2**31 <= value < 2**31)
                          or (dtype == UINT32 and 0 <= value < 2**32)):
        return value
    if dtype == BOOL:
        return bool(value)
    if dtype == FLOAT64 and kind in (float, int) and not (kind is int and abs(value) > 2**1023):
        return float(value)       # a double already (an int rounds once, as numpy's cast)
    with np.errstate(over="ignore"):
        v = np.asarray(value, dtype=dtype if not isinstance(value, np.generic) else None)
        v = v.astype(dtype)
    return float(v) if dtype in FLOATS else int(v)
