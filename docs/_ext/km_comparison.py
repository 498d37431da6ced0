"""Writes docs/_generated/comparison.md when the site builds: numpy's and the Array API's
functions against kompute_ml's, found by introspection (so the table cannot go stale).

Three columns per numpy name: whether ``kompute_ml`` has a function of that name, and whether
numpy's own function, called on a kompute_ml Array, runs on the device (``__array_function__`` /
``__array_ufunc__``) rather than raising ``TypeError`` (kompute_ml never downloads silently).
"""

import os

import numpy as np

# The Array API standard, version 2024.12: the main namespace by the standard's own groups, and
# the linalg extension (the specification's tables, data-apis.org/array-api/2024.12/API_specification).
ARRAY_API = {
    "Constants": ["e", "inf", "nan", "newaxis", "pi"],
    "Creation functions": [
        "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
        "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like"],
    "Data type functions": ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"],
    "Data types": ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                   "uint64", "float32", "float64", "complex64", "complex128"],
    "Element-wise functions": [
        "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
        "bitwise_left_shift", "bitwise_invert", "bitwise_or", "bitwise_right_shift",
        "bitwise_xor", "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal", "exp",
        "expm1", "floor", "floor_divide", "greater", "greater_equal", "hypot", "imag", "isfinite",
        "isinf", "isnan", "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp",
        "logical_and", "logical_not", "logical_or", "logical_xor", "maximum", "minimum",
        "multiply", "negative", "nextafter", "not_equal", "positive", "pow", "real", "reciprocal",
        "remainder", "round", "sign", "signbit", "sin", "sinh", "square", "sqrt", "subtract",
        "tan", "tanh", "trunc"],
    "Indexing functions": ["take", "take_along_axis"],
    "Inspection": ["__array_namespace_info__"],
    "Linear algebra functions": ["matmul", "matrix_transpose", "tensordot", "vecdot"],
    "Manipulation functions": [
        "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
        "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack"],
    "Searching functions": ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted",
                            "where"],
    "Set functions": ["unique_all", "unique_counts", "unique_inverse", "unique_values"],
    "Sorting functions": ["argsort", "sort"],
    "Statistical functions": ["cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod",
                              "std", "sum", "var"],
    "Utility functions": ["all", "any", "diff"],
}
ARRAY_API_LINALG = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]

YES, NO = "yes", "—"


def _numpy_functions():
    """numpy's public functions and ufuncs (not classes, modules, dtypes or constants)."""
    out = []
    for name in sorted(getattr(np, "__all__", dir(np))):
        if name.startswith("_"):
            continue
        obj = getattr(np, name, None)
        if isinstance(obj, np.ufunc) or (callable(obj) and not isinstance(obj, type)):
            out.append(name)
    return out


def _device_dispatch():
    """numpy callables that run on the device when given a kompute_ml Array."""
    from kompute_ml._api import protocols
    funcs = {f for f in protocols._functions()}
    ufuncs = set(protocols._ufuncs())
    return funcs, ufuncs


def _ref(module, name):
    return f"{{py:obj}}`{module}.{name} <{module}.{name}>`"


def render():
    import kompute_ml as km
    km_all = set(km.__all__) | {"newaxis"}
    lin_all = set(km.linalg.__all__)
    funcs, ufuncs = _device_dispatch()

    lines = ["# numpy and the Array API: what kompute_ml has", "",
             "Generated when this site is built, by looking at the installed numpy and kompute_ml "
             "(`docs/_ext/km_comparison.py`).", "",
             "## The Array API standard (2024.12)", "",
             "kompute_ml is an Array API namespace (`a.__array_namespace__()` is `kompute_ml`). "
             "A name marked — is not provided; complex dtypes and the `fft` extension are "
             "not implemented.", ""]
    for group, names in ARRAY_API.items():
        lines += [f"### {group}", "", "| Array API | kompute_ml |", "|---|---|"]
        for name in names:
            ok = name in km_all
            cell = (_ref("kompute_ml", name) if ok and name not in ("newaxis",) else
                    ("`kompute_ml.newaxis`" if ok else NO))
            lines.append(f"| `{name}` | {cell} |")
        lines.append("")
    lines += ["### linalg extension", "", "| Array API | kompute_ml.linalg |", "|---|---|"]
    for name in ARRAY_API_LINALG:
        ok = name in lin_all
        lines.append(f"| `linalg.{name}` | {_ref('kompute_ml.linalg', name) if ok else NO} |")
    lines.append("")

    np_names = _numpy_functions()
    n_km = sum(1 for n in np_names if n in km_all)
    n_dev = 0
    rows = []
    for name in np_names:
        obj = getattr(np, name)
        dev = (isinstance(obj, np.ufunc) and obj.__name__ in ufuncs) or obj in funcs
        n_dev += bool(dev)
        rows.append(f"| `numpy.{name}` | {_ref('kompute_ml', name) if name in km_all else NO} "
                    f"| {YES if dev else NO} |")
    lines += ["## numpy's functions", "",
              f"numpy {np.__version__} has {len(np_names)} public functions and ufuncs; "
              f"kompute_ml has a function of the same name for {n_km} of them, and {n_dev} run on "
              f"the device when called on a kompute_ml Array (third column: numpy's "
              f"`__array_function__` and `__array_ufunc__` protocols). Any other numpy function "
              f"given a kompute_ml Array raises `TypeError` naming it, rather than downloading "
              f"the data silently: `np.asarray(a)` is the explicit way to the host.", "",
              "| numpy | kompute_ml | `numpy.f(Array)` on the device |", "|---|---|---|"]
    lines += rows
    lines.append("")
    return "\n".join(lines)


def _write(app):
    out_dir = os.path.join(app.srcdir, "_generated")
    os.makedirs(out_dir, exist_ok=True)
    text = render()
    path = os.path.join(out_dir, "comparison.md")
    old = open(path).read() if os.path.exists(path) else None
    if old != text:                    # unchanged text keeps Sphinx's incremental build
        with open(path, "w") as f:
            f.write(text)


def setup(app):
    app.connect("builder-inited", _write)
    return {"parallel_read_safe": True, "version": "1"}
