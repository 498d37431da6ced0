"""dtypes of kompute_ml arrays: the thirteen we hold, how numpy's map onto them, and result types.

An Array holds float32, int32, uint32 or bool, each element one 32-bit word (bool as 0/1 uint32),
float64 (two words) on a device with ``shaderFloat64``, int64 and uint64 (two words) on a
device with ``shaderInt64``, int8 and uint8 (a byte) on one with 8-bit storage buffers, and
int16, uint16, float16 and bfloat16 (two bytes; ``ml_dtypes.bfloat16``) on one with 16-bit
storage buffers; those compute in 32 bits (``COMPUTE_DTYPE``) and narrow each result. Result types are numpy's own, computed on zero-size stand-ins and
mapped onto ours, so every numpy rule (NEP 50 weak Python scalars, bool arithmetic errors,
float32 + float64 -> float64, int / int -> float64, int32 + uint32 -> int64, int64 + uint64 ->
float64) holds by construction. On a device without float64 every float64 result is float32
instead, and on one without int64 every int64 / uint64 result is int32 / uint32
(``resolve(..., float64=False, int64=False)``); such data maps the same way (``device_dtype``:
integers that do not fit raise OverflowError where they are converted; 8/16-bit data on a device
without 8/16-bit storage becomes its 32-bit dtype), and only an explicit request raises. bfloat16
promotes by ml_dtypes' table as numpy applies it (bfloat16 with int8/uint8/bool: bfloat16; with
int16/uint16/float16/float32: float32; with wider integers or float64: float64).
"""

import struct

import ml_dtypes
import numpy as np

__all__ = ["FLOAT32", "FLOAT64", "INT32", "UINT32", "INT64", "UINT64", "BOOL", "INT8", "UINT8",
           "INT16", "UINT16", "FLOAT16", "BFLOAT16", "SMALL", "SMALL_FLOATS", "COMPUTE_DTYPE",
           "STORAGE8_EXTENSION", "STORAGE16_EXTENSION", "DTYPES",
           "GLSL_TYPE", "STORAGE_TYPE", "STORAGE_DTYPE", "VEC4_TYPE", "ARITHMETIC", "COMPARISONS",
           "FLOAT_UNARY", "FLOAT_BINARY", "PREDICATES", "SAME_UNARY", "FLOATS", "INTEGERS",
           "SIGNED", "UNSIGNED", "WIDE", "INT64_EXTENSION", "canonical_dtype", "device_dtype",
           "has_float64", "has_int64", "features", "shader_features", "default_int", "accumulator_dtype",
           "device_dtypes", "result_dtype", "resolve", "scalar_value", "COMPLEX64", "COMPLEX128",
           "COMPLEX", "COMPLEX_PART", "COMPLEX_OF", "COMPLEX_UNARY"]

FLOAT32, INT32, UINT32, BOOL = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint32),
                                np.dtype(np.bool_))
FLOAT64, INT64, UINT64 = np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.uint64)
# complex: interleaved (re, im) pairs of float32 / float64 (complex128 needs shaderFloat64)
COMPLEX64, COMPLEX128 = np.dtype(np.complex64), np.dtype(np.complex128)
COMPLEX = (COMPLEX64, COMPLEX128)
COMPLEX_PART = {COMPLEX64: FLOAT32, COMPLEX128: FLOAT64}       # the dtype of re and im
COMPLEX_OF = {FLOAT32: COMPLEX64, FLOAT64: COMPLEX128}
# 8/16-bit dtypes: 1 or 2 bytes an element on the device (8/16-bit storage buffers), computed in
# 32 bits and narrowed at each operation's result (integers wrap, float16 and bfloat16 round to
# nearest even); float16 and bfloat16 are stored as their 16-bit patterns (elementwise16.glsl)
INT8, UINT8, INT16, UINT16 = (np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int16),
                              np.dtype(np.uint16))
FLOAT16, BFLOAT16 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)
SMALL = (INT8, UINT8, INT16, UINT16, FLOAT16, BFLOAT16)
SMALL_FLOATS = (FLOAT16, BFLOAT16)
# the 32-bit dtype an 8/16-bit one computes in (others compute in themselves)
COMPUTE_DTYPE = {INT8: INT32, INT16: INT32, UINT8: UINT32, UINT16: UINT32, FLOAT16: FLOAT32,
                 BFLOAT16: FLOAT32}
DTYPES = (FLOAT32, INT32, UINT32, BOOL, FLOAT64, INT64, UINT64, COMPLEX64, COMPLEX128) + SMALL
FLOATS = (FLOAT32, FLOAT64) + SMALL_FLOATS
SIGNED = (INT32, INT64, INT8, INT16)
UNSIGNED = (UINT32, UINT64, UINT8, UINT16)
INTEGERS = (INT32, UINT32, INT64, UINT64, INT8, UINT8, INT16, UINT16)
WIDE = (FLOAT64, INT64, UINT64, COMPLEX64, COMPLEX128)   # elements of two words or more
GLSL_TYPE = {FLOAT32: "float", INT32: "int", UINT32: "uint", BOOL: "bool", FLOAT64: "double",
             INT64: "int64_t", UINT64: "uint64_t", COMPLEX64: "vec2", COMPLEX128: "dvec2",
             INT8: "int", INT16: "int", UINT8: "uint", UINT16: "uint", FLOAT16: "float",
             BFLOAT16: "float"}
STORAGE_TYPE = {FLOAT32: "float", INT32: "int", UINT32: "uint", BOOL: "uint",   # bool: 0/1 words
                FLOAT64: "double", INT64: "int64_t", UINT64: "uint64_t", COMPLEX64: "vec2",
                COMPLEX128: "dvec2", INT8: "int8_t", UINT8: "uint8_t", INT16: "int16_t",
                UINT16: "uint16_t", FLOAT16: "uint16_t", BFLOAT16: "uint16_t"}
STORAGE_DTYPE = {FLOAT32: FLOAT32, INT32: INT32, UINT32: UINT32, BOOL: UINT32, FLOAT64: FLOAT64,
                 INT64: INT64, UINT64: UINT64, COMPLEX64: COMPLEX64, COMPLEX128: COMPLEX128,
                 INT8: INT8, UINT8: UINT8, INT16: INT16, UINT16: UINT16, FLOAT16: FLOAT16,
                 BFLOAT16: BFLOAT16}
VEC4_TYPE = {FLOAT32: "vec4", INT32: "ivec4", UINT32: "uvec4", BOOL: "uvec4", FLOAT64: "dvec4",
             INT64: "i64vec4", UINT64: "u64vec4", INT8: "i8vec4", UINT8: "u8vec4",
             INT16: "i16vec4", UINT16: "u16vec4", FLOAT16: "u16vec4", BFLOAT16: "u16vec4"}
# what a generated shader declares before it names 8-bit / 16-bit storage types (kp enables
# storageBuffer8/16BitAccess where the device has them, patch 0031)
STORAGE8_EXTENSION = "#extension GL_EXT_shader_8bit_storage : require"
STORAGE16_EXTENSION = "#extension GL_EXT_shader_16bit_storage : require"
# what a generated shader declares before it names int64_t / uint64_t (the device's Int64
# capability, which kp enables where the device has shaderInt64)
INT64_EXTENSION = "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require"


def canonical_dtype(dtype):
    """Map a numpy dtype onto ours: float64 (and wider) -> float64, float32, float16 and
    bfloat16 as they are, 8/16/32/64-bit integers as they are, bool. (``device_dtype`` then
    applies the device.)"""
    if isinstance(dtype, type) and issubclass(dtype, np.dtype):
        dtype = dtype()     # a DType class (np.dtypes.Float64DType), as numpy's ufuncs pass it
    dt = np.dtype(dtype)
    if dt == BFLOAT16:
        return BFLOAT16
    if dt.kind == "f":
        return FLOAT64 if dt.itemsize >= 8 else (FLOAT16 if dt.itemsize == 2 else FLOAT32)
    if dt.kind in "iu":
        return {(k, n): d for d in INTEGERS for k, n in [(d.kind, d.itemsize)]}[dt.kind,
                                                                                 dt.itemsize]
    if dt.kind == "b":
        return BOOL
    if dt.kind == "c":
        return COMPLEX128 if dt.itemsize >= 16 else COMPLEX64
    raise TypeError(f"kompute_ml arrays hold bool, int8/16/32/64, uint8/16/32/64, float16, "
                    f"bfloat16, float32, float64, complex64 and complex128 (each where the device "
                    f"has it); dtype {dt} is not supported")


def has_float64(device):
    """Whether ``device`` computes in float64 (Vulkan's shaderFloat64 feature)."""
    return bool(device.limits.get("float64"))


def has_int64(device):
    """Whether ``device`` computes in int64 and uint64 (Vulkan's shaderInt64 feature)."""
    return bool(device.limits.get("int64"))


def features(device):
    """(float64, int64): the keyword arguments of :func:`resolve` for ``device``."""
    limits = device.limits
    return bool(limits.get("float64")), bool(limits.get("int64"))


_SHADER_FEATURES = ("int8", "int16", "float16", "storage8", "storage16", "bfloat16",
                    "cooperative_matrix", "cooperative_matrix2", "cooperative_matrix_properties")


def shader_features(device):
    """The 8/16-bit and matrix features of ``device`` that kp's Manager enables, by name:
    ``int8``, ``int16``, ``float16`` (shaderInt8/Int16/Float16 arithmetic), ``storage8``,
    ``storage16`` (8/16-bit storage-buffer elements), ``bfloat16`` (VK_KHR_shader_bfloat16's
    type), ``cooperative_matrix`` (VK_KHR_cooperative_matrix), ``cooperative_matrix2`` (the
    names of VK_NV_cooperative_matrix2's features the device has) and
    ``cooperative_matrix_properties`` (the (m, n, k, component types, scope) configurations
    VK_KHR_cooperative_matrix lists, as dicts)."""
    limits = device.limits
    return {k: limits.get(k, () if k.startswith("cooperative_matrix") and k != "cooperative_matrix"
                          else False) for k in _SHADER_FEATURES}


def default_int(device):
    """The default integer dtype on ``device``: what Python ints, integer aranges and index
    results (argmax, argsort, nonzero, ...) take. numpy's, int64, where the device has
    shaderInt64; int32 elsewhere."""
    return INT64 if device.limits.get("int64") else INT32


def accumulator_dtype(dtype, device):
    """numpy's dtype of a sum, product or running sum of ``dtype`` elements on ``device``: bool
    and integers narrower than the default integer widen to it (unsigned ones to the unsigned
    integer of its width), others keep theirs."""
    wide = default_int(device) == INT64
    if dtype in (BOOL, INT32, INT8, INT16):
        return INT64 if wide else INT32
    if dtype in (UINT32, UINT8, UINT16):
        return UINT64 if wide else UINT32
    return dtype


def device_dtypes(device):
    """The dtypes ``device`` holds, by name (the Array API's ``dtypes()`` order)."""
    limits = device.limits
    names = ["bool"]
    if limits.get("storage8"):
        names.append("int8")
    if limits.get("storage16"):
        names.append("int16")
    names.append("int32")
    if has_int64(device):
        names.append("int64")
    if limits.get("storage8"):
        names.append("uint8")
    if limits.get("storage16"):
        names.append("uint16")
    names.append("uint32")
    if has_int64(device):
        names.append("uint64")
    if limits.get("storage16"):
        names.append("float16")
    names.append("float32")
    if has_float64(device):
        names.append("float64")
    names.append("complex64")
    if has_float64(device):
        names.append("complex128")
    out = {n: np.dtype(n) for n in names}
    if limits.get("storage16"):
        out["bfloat16"] = BFLOAT16
    return out


# dtype -> (the limits key of the feature it needs, its name, the dtype data of it becomes
# without); 8/16-bit ones widen to the 32-bit dtype they compute in
_MISSING = {FLOAT64: ("float64", "shaderFloat64", FLOAT32), INT64: ("int64", "shaderInt64", INT32),
            UINT64: ("int64", "shaderInt64", UINT32),
            COMPLEX128: ("float64", "shaderFloat64", COMPLEX64),
            INT8: ("storage8", "storageBuffer8BitAccess", INT32),
            UINT8: ("storage8", "storageBuffer8BitAccess", UINT32),
            INT16: ("storage16", "storageBuffer16BitAccess", INT32),
            UINT16: ("storage16", "storageBuffer16BitAccess", UINT32),
            FLOAT16: ("storage16", "storageBuffer16BitAccess", FLOAT32),
            BFLOAT16: ("storage16", "storageBuffer16BitAccess", FLOAT32)}


def device_dtype(dtype, device, explicit=False):
    """``canonical_dtype(dtype)`` as ``device`` holds it.

    float64 on a device without shaderFloat64 becomes float32, int64 / uint64 on a device
    without shaderInt64 int32 / uint32, and 8/16-bit dtypes on one without 8/16-bit storage
    their 32-bit dtype (int8 -> int32, float16 and bfloat16 -> float32), when they come from the
    data (the caller checks that integers fit); an ``explicit`` request for one raises TypeError.
    """
    dt = canonical_dtype(dtype)
    if dt in _MISSING and not device.limits.get(_MISSING[dt][0]):
        _, feature, narrow = _MISSING[dt]
        if explicit:
            have = ", ".join(device_dtypes(device))
            raise TypeError(f"dtype {dt} is not available on {device.name!r}: the device lacks "
                            f"{feature} (its dtypes: {have}); ask for {narrow}, or pass {dt} "
                            f"data without dtype= to have it converted")
        return narrow
    return dt


def result_dtype(device, *dtypes):
    """numpy's result type of arrays of ``dtypes`` on ``device`` (int32 with float32 gives float64
    as numpy's, float32 where the device has no float64; int32 with uint32 int64, int32 where
    the device has no int64)."""
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
    "arctan2": np.arctan2, "sign": np.sign,
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
SAME_UNARY = {"negative", "absolute", "floor", "ceil", "invert", "sign"}   # (sign: complex)
# bool of the operand's own bits (no conversion: signbit must see a nan's sign bit)
PREDICATES = {"signbit"}
# complex-only operations: the parts, the conjugate (their dtypes: resolve's)
COMPLEX_UNARY = {"real", "imag", "conj"}

_resolve_cache = {}


def _proxy(x):
    """A zero-size stand-in numpy resolves types on (Python scalars stay weak, as in NEP 50)."""
    if isinstance(x, (bool, int, float, complex)):
        return type(x)(0)
    if isinstance(x, np.generic):
        return x.dtype.type(0)
    return np.empty(0, dtype=x.dtype)


def _signature(x):
    if isinstance(x, (bool, int, float, complex)):
        return type(x)
    if isinstance(x, np.generic):
        return ("np", x.dtype)
    return x.dtype


def _narrow(result, float64, int64):
    """``result`` of resolve with float64 replaced by float32 (a device without float64) and
    int64 / uint64 by int32 / uint32 (a device without int64)."""
    table = {}
    if not float64:
        table[FLOAT64], table[COMPLEX128] = FLOAT32, COMPLEX64
    if not int64:
        table[INT64], table[UINT64] = INT32, UINT32

    def n(dt):
        return table.get(dt, dt)
    return n(result[0]), tuple(n(dt) for dt in result[1])


def _widen_small(result):
    def w(dt):
        return FLOAT32 if dt in SMALL_FLOATS else dt
    return w(result[0]), tuple(w(dt) for dt in result[1])


def resolve(op, operands, float64=True, int64=True):
    """Result dtype and per-operand compute dtypes of ``op`` (numpy's rules, our dtypes).

    Operands are objects with a ``dtype`` (arrays) or Python/numpy scalars. Raises numpy's own
    TypeError where numpy refuses the combination (``bool - bool``, ``-bool``, ...). ``float64``,
    ``int64``: whether the device has them (without, a float64 result is float32, an int64 /
    uint64 one int32 / uint32: ``int32 + uint32`` is int32 there).
    """
    key = (op, tuple(_signature(x) for x in operands), float64, int64)
    hit = _resolve_cache.get(key)
    if hit is not None:
        return hit
    proxies = [_proxy(x) for x in operands]
    if op in COMPLEX_UNARY:
        c = canonical_dtype(proxies[0].dtype)
        if c not in COMPLEX:
            raise TypeError(f"{op} of a {c} array: the operation takes complex arrays")
        result = (c if op == "conj" else COMPLEX_PART[c], (c,))
    elif op == "complex":                # complex(re, im) of two real arrays
        part = canonical_dtype(np.result_type(*proxies))
        if part not in FLOATS:
            part = FLOAT64 if part in WIDE else FLOAT32
        result = (COMPLEX_OF[part], (part, part))
    elif op == "where":
        out = canonical_dtype(np.result_type(proxies[1], proxies[2]))
        result = (out, (BOOL, out, out))
    elif op in COMPARISONS:
        kinds = [canonical_dtype(p.dtype) if not isinstance(p, (bool, int, float, complex))
                 else None
                 for p in proxies]
        common = canonical_dtype(np.result_type(*proxies))
        signs = {dt in SIGNED for dt in kinds if dt in INTEGERS}
        if len(signs) == 2 and (common not in INTEGERS or not int64):
            # a signed integer against an unsigned one that no common integer holds (int64 with
            # uint64; int32 with uint32 on a device without int64): compared exactly, as numpy
            # does, the signed one as int64 against the unsigned one (int32 against uint32)
            wide = int64 and (INT64 in kinds or UINT64 in kinds)
            result = (BOOL, tuple((INT64 if wide else INT32) if dt in SIGNED
                                  else (UINT64 if wide else UINT32) for dt in kinds))
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
        if any(np.dtype(getattr(p, "dtype", type(p))).kind == "c" for p in proxies):
            # complex operands compute in their common complex dtype (abs: a real result)
            result = (out, (canonical_dtype(np.result_type(*proxies)),) * len(operands))
    if not any(getattr(p, "dtype", None) in SMALL for p in proxies):
        # numpy computes float functions of bools in float16 (exp(bool)); without an 8/16-bit
        # operand they stay float32, as before these dtypes existed (integer results such as
        # bitwise_count's uint8 are numpy's)
        result = _widen_small(result)
    if not (float64 and int64):
        result = _narrow(result, float64, int64)
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
                          or (dtype == UINT32 and 0 <= value < 2**32)
                          or (dtype == INT64 and -2**63 <= value < 2**63)
                          or (dtype == UINT64 and 0 <= value < 2**64)):
        return value
    if dtype == BOOL:
        return bool(value)
    if dtype in COMPLEX:
        return complex(np.asarray(value).astype(dtype))
    if dtype == FLOAT64 and kind in (float, int) and not (kind is int and abs(value) > 2**1023):
        return float(value)       # a double already (an int rounds once, as numpy's cast)
    with np.errstate(over="ignore"):
        v = np.asarray(value, dtype=dtype if not isinstance(value, np.generic) else None)
        v = v.astype(dtype)
    return float(v) if dtype in FLOATS else int(v)
