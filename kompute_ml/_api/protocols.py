"""numpy's protocols for Arrays: NEP 13 (``__array_ufunc__``), NEP 18 (``__array_function__``)
(item assignment: indexing.py).

A numpy function on an Array either runs on the device (the table below) or raises TypeError
naming it: a silent download would hide a transfer per call (Dask calls these per chunk).
``np.asarray(a)`` / ``a.__array__()`` stay the explicit way to the host.
"""

import numpy as np

from .. import array as _a
from . import namespace as ns
from . import (assignment, construction, einsum, histograms, index_functions, introspection,
               numeric, padding, polynomial, quantiles, selection, sets, shaping, signal,
               statistics, ufuncs)
from .._array.dtypes import canonical_dtype

__all__ = ["array_ufunc", "array_function"]

Array = _a.Array

_PREDICATES = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
               "logical_and", "logical_or", "logical_xor", "logical_not", "isnan", "isinf",
               "isfinite", "signbit"}


def _ufuncs():
    """numpy ufunc name -> kompute_ml function (built on first use: the namespace is complete)."""
    table = {name: getattr(_a, name) for name in (
        "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power",
        "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
        "greater_equal", "negative", "absolute", "exp", "log", "sqrt", "sin", "cos", "tanh",
        "bitwise_and", "bitwise_or", "bitwise_xor", "invert")}
    table.update({name: getattr(ns, name) for name in (
        "floor", "ceil", "logical_and", "logical_or", "logical_xor", "logical_not", "isnan",
        "isinf", "isfinite", "sign", "square", "reciprocal", "trunc", "positive", "expm1",
        "log1p", "log2", "log10", "logaddexp", "hypot", "copysign", "signbit", "tan", "sinh",
        "cosh", "nextafter")})
    table.update({"divide": _a.true_divide, "matmul": _a.matmul, "conjugate": ns.conjugate,
                  "rint": ns.rint, "arcsin": ns.asin, "arccos": ns.acos, "arctan": ns.atan,
                  "arctan2": ns.atan2, "arcsinh": ns.asinh, "arccosh": ns.acosh,
                  "arctanh": ns.atanh, "left_shift": ns.bitwise_left_shift,
                  "right_shift": ns.bitwise_right_shift,
                  "deg2rad": ns.deg2rad, "rad2deg": ns.rad2deg, "radians": ns.radians,
                  "degrees": ns.degrees, "fmax": ns.fmax, "fmin": ns.fmin, "fmod": ns.fmod,
                  "fabs": ns.fabs, "heaviside": ns.heaviside, "logaddexp2": ns.logaddexp2,
                  "divmod": ns.divmod, "modf": ns.modf, "float_power": ns.float_power,
                  "matvec": ns.matvec, "vecmat": ns.vecmat, "ldexp": ns.ldexp,
                  "cbrt": ns.cbrt, "gcd": ns.gcd, "lcm": ns.lcm, "frexp": ns.frexp,
                  "spacing": ns.spacing, "bitwise_count": ns.bitwise_count})
    return table


_UFUNC_TABLE = []
_REDUCE = {"add": "sum", "maximum": "max", "minimum": "min", "logical_and": "all",
           "logical_or": "any"}


def array_ufunc(ufunc, method, inputs, kwargs):
    """``Array.__array_ufunc__``: ``dtype=``, ``out=`` and ``casting=`` are honoured."""
    if not _UFUNC_TABLE:
        _UFUNC_TABLE.append(_ufuncs())
    name = ufunc.__name__
    if method == "reduce" and name in _REDUCE and len(inputs) == 1:
        kw = dict(kwargs)
        axis = kw.pop("axis", 0)
        keepdims = kw.pop("keepdims", False)
        dtype = kw.pop("dtype", None)
        out = kw.pop("out", None)
        if kw:
            raise TypeError(f"numpy.{name}.reduce on kompute_ml arrays: unsupported keyword(s) "
                            f"{sorted(kw)}")
        x = _a.asarray(inputs[0])
        res = getattr(ns, _REDUCE[name])(x, axis=axis, keepdims=keepdims)
        if dtype is not None:
            res = res.astype(dtype)
        return _store(res, out, "same_kind", name) if out is not None else res
    fn = _UFUNC_TABLE[0].get(name)
    if method != "__call__" or fn is None:
        what = f"numpy.{name}" + ("" if method == "__call__" else f".{method}")
        raise TypeError(f"{what} is not implemented for kompute_ml arrays; convert explicitly "
                        f"with np.asarray(a) (a download) to run it on the host")
    kw = dict(kwargs)
    out = kw.pop("out", None)
    dtype = kw.pop("dtype", None)
    casting = kw.pop("casting", "same_kind")
    where = kw.pop("where", True)
    kw.pop("subok", None)
    order = kw.pop("order", "K")
    if where is not True or order not in ("K", "C", "A") or kw:
        bad = sorted(kw) + (["where"] if where is not True else []) + \
            (["order"] if order not in ("K", "C", "A") else [])
        raise TypeError(f"numpy.{name} on kompute_ml arrays: unsupported keyword(s) {bad}")
    args = list(inputs)
    if dtype is not None:
        dt = canonical_dtype(dtype)
        for k, x in enumerate(args):
            src = x.dtype if isinstance(x, (Array, np.ndarray)) else None
            if src is not None and not np.can_cast(src, dt, casting=casting):
                raise TypeError(f"Cannot cast ufunc {name!r} input {k} from {src!r} to {dt!r} "
                                f"with casting rule {casting!r}")
            if isinstance(x, Array):
                args[k] = x.astype(dt, copy=False)
            elif isinstance(x, np.ndarray):
                args[k] = x.astype(dt)
    res = fn(*args)
    if dtype is not None and name not in _PREDICATES and isinstance(res, Array):
        res = res.astype(canonical_dtype(dtype), copy=False)
    if out is None:
        return res
    return _store(res, out, casting, name)


def _store(res, out, casting, name):
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != 1:
        raise ValueError(f"numpy.{name} has 1 output; out= gives {len(outs)}")
    target = outs[0]
    if target is None:
        return res
    if not np.can_cast(res.dtype, target.dtype, casting=casting):
        raise TypeError(f"Cannot cast ufunc {name!r} output from {res.dtype!r} to "
                        f"{target.dtype!r} with casting rule {casting!r}")
    if isinstance(target, Array):
        if np.broadcast_shapes(res.shape, target.shape) != target.shape:
            raise ValueError(f"non-broadcastable output operand with shape {target.shape} "
                             f"doesn't match the broadcast shape {res.shape}")
        target._assign_from(_a.broadcast_to(res.astype(target.dtype, copy=False), target.shape))
        return target
    if isinstance(target, np.ndarray):
        target[...] = res.numpy()          # a numpy out= asks for the values on the host
        return target
    raise TypeError(f"out= must be a kompute_ml Array or a numpy array, got "
                    f"{type(target).__name__}")


# ---- NEP 18 --------------------------------------------------------------------------------------

def _on(arrays):
    """Arrays on one device (numpy inputs uploaded to the device of the first Array)."""
    dev = next((x.device for x in arrays if isinstance(x, Array)), None)
    return [x if isinstance(x, Array) else _a.asarray(x, device=dev) for x in arrays]


def _no_out(fn_name, out):
    if out is not None:
        raise TypeError(f"numpy.{fn_name} on kompute_ml arrays: out= is not supported")


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    _no_out("stack", out)
    res = ns.stack(_on(list(arrays)), axis=axis)
    return res if dtype is None else res.astype(dtype)


def _reduction(op):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        _no_out(op, out)
        if kw.get("where", True) is not True or kw.get("initial", None) is not None:
            raise TypeError(f"numpy.{op} on kompute_ml arrays: where=/initial= not supported")
        a = _a.asarray(a)
        if op in ("sum", "prod"):
            return getattr(ns, op)(a, axis=axis, dtype=dtype, keepdims=keepdims)
        res = getattr(ns, op)(a, axis=axis, keepdims=keepdims)
        return res if dtype is None else res.astype(dtype)
    return fn


def _minmax(op):
    def fn(a, axis=None, out=None, keepdims=False, **kw):
        _no_out(op, out)
        if kw.get("where", True) is not True or kw.get("initial", None) is not None:
            raise TypeError(f"numpy.{op} on kompute_ml arrays: where=/initial= not supported")
        return getattr(ns, op)(_a.asarray(a), axis=axis, keepdims=keepdims)
    return fn


def _arg(op):
    def fn(a, axis=None, out=None, *, keepdims=False):
        _no_out(op, out)
        return getattr(ns, op)(_a.asarray(a), axis=axis, keepdims=keepdims)
    return fn


def _var(op):
    def fn(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        _no_out(op, out)
        res = getattr(ns, op)(_a.asarray(a), axis=axis, correction=ddof, keepdims=keepdims)
        return res if dtype is None else res.astype(dtype)
    return fn


def _like(kind):
    def fn(a, *args, dtype=None, order="K", subok=True, shape=None, device=None, **kw):
        a = _a.asarray(a)
        if kind == "full":
            # np.full_like(a, fill_value, ...): positional or keyword, as numpy takes it
            if len(args) + ("fill_value" in kw) != 1:
                raise TypeError("full_like() needs exactly one fill_value")
            fill = args[0] if args else kw.pop("fill_value")
            return ns.full_like(a, fill, dtype=dtype, device=device, shape=shape)
        return getattr(ns, f"{kind}_like")(a, dtype=dtype, device=device, shape=shape)
    return fn


def _where(condition, *xy):
    if not xy:
        return ns.nonzero(_a.asarray(condition))
    return _a.where(*_on([condition, *xy]))


def _clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue,
          max=np._NoValue, **kw):
    _no_out("clip", out)
    lo = None if a_min is np._NoValue or a_min is None else a_min
    hi = None if a_max is np._NoValue or a_max is None else a_max
    lo = lo if min is np._NoValue or min is None else min
    hi = hi if max is np._NoValue or max is None else max
    return ns.clip(_a.asarray(a), min=lo, max=hi)


def _asarray(a, dtype=None, order=None, *, device=None, copy=None, **kw):
    if isinstance(a, Array):
        return ns.asarray(a, dtype=dtype, copy=copy)
    return _a.asarray(a, dtype=dtype)


def _creation(fn_name):
    def fn(shape, *args, dtype=None, order="C", device=None, **kw):
        if fn_name == "full":
            fill, = args[:1]
            dtype = args[1] if len(args) > 1 else dtype
            return ns.full(shape, fill, dtype=dtype)
        return getattr(ns, fn_name)(shape, dtype=np.float64 if dtype is None else dtype)
    return fn


def _transpose(a, axes=None):
    return _a.asarray(a).transpose(axes)


def _reshape(a, *args, **kw):
    shape = args[0] if args else kw.get("shape", kw.get("newshape"))
    if kw.get("order", "C") != "C":
        raise TypeError("numpy.reshape on kompute_ml arrays: only order='C'")
    return _a.asarray(a).reshape(shape)


def _squeeze(a, axis=None):
    return _a.asarray(a).squeeze(axis)


def _tensordot(a, b, axes=2):
    return ns.tensordot(*_on([a, b]), axes=axes)


def _dot(a, b, out=None):
    _no_out("dot", out)
    return _a.dot(*_on([a, b]))


def _diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    pre = None if prepend is np._NoValue else prepend
    app = None if append is np._NoValue else append
    a = _a.asarray(a)
    pre, app = (None if v is None else _a.broadcast_to(_on([a, v])[1], _side(a, axis))
                for v in (pre, app))
    return ns.diff(a, axis=axis, n=n, prepend=pre, append=app)


def _side(a, axis):
    shape = list(a.shape)
    shape[axis] = 1
    return tuple(shape)


def _functions():
    f = {np.stack: _stack,
         np.sum: _reduction("sum"), np.mean: _reduction("mean"), np.prod: _reduction("prod"),
         np.max: _minmax("max"), np.min: _minmax("min"), np.argmax: _arg("argmax"),
         np.argmin: _arg("argmin"),
         np.std: _var("std"), np.var: _var("var"),
         np.all: lambda a, axis=None, out=None, keepdims=False, **kw: ns.all(
             _a.asarray(a), axis=axis, keepdims=keepdims),
         np.any: lambda a, axis=None, out=None, keepdims=False, **kw: ns.any(
             _a.asarray(a), axis=axis, keepdims=keepdims),
         np.tensordot: _tensordot, np.dot: _dot, np.transpose: _transpose,
         np.reshape: _reshape, np.squeeze: _squeeze, np.where: _where, np.clip: _clip,
         np.empty_like: _like("empty"), np.zeros_like: _like("zeros"),
         np.ones_like: _like("ones"), np.full_like: _like("full"),
         np.asarray: _asarray, np.array: _asarray, np.asanyarray: _asarray,
         np.ascontiguousarray: _asarray,
         np.zeros: _creation("zeros"), np.ones: _creation("ones"), np.empty: _creation("empty"),
         np.full: _creation("full"),
         np.expand_dims: lambda a, axis: ns.expand_dims(a, axis=axis),
         np.moveaxis: lambda a, s, d: ns.moveaxis(a, s, d),
         np.flip: lambda a, axis=None: ns.flip(a, axis=axis),
         np.roll: lambda a, shift, axis=None: ns.roll(a, shift, axis=axis),
         np.tile: lambda a, reps: ns.tile(a, (reps,) if np.ndim(reps) == 0 else reps),
         np.repeat: lambda a, repeats, axis=None: ns.repeat(a, repeats, axis=axis),
         np.broadcast_to: lambda a, shape, subok=False: ns.broadcast_to(a, shape),
         np.broadcast_arrays: lambda *a, subok=False: ns.broadcast_arrays(*_on(list(a))),
         np.result_type: lambda *a: ns.result_type(*a),
         np.sort: lambda a, axis=-1, kind=None, order=None, **kw: ns.sort(
             a.reshape(-1) if axis is None else a, axis=-1 if axis is None else axis),
         np.argsort: lambda a, axis=-1, kind=None, order=None, **kw: ns.argsort(
             a.reshape(-1) if axis is None else a, axis=-1 if axis is None else axis),
         np.nonzero: lambda a: ns.nonzero(a), np.diff: _diff,
         np.count_nonzero: lambda a, axis=None, *, keepdims=False: ns.count_nonzero(
             a, axis=axis, keepdims=keepdims),
         np.linalg.norm: _norm,
         np.linalg.inv: lambda a: ns.linalg.inv(a),
         np.linalg.solve: lambda a, b: ns.linalg.solve(*_on([a, b])),
         np.linalg.cholesky: lambda a, **kw: ns.linalg.cholesky(a, **kw),
         np.linalg.det: lambda a: ns.linalg.det(a),
         np.tril: lambda m, k=0: ns.tril(_a.asarray(m), k=k),
         np.triu: lambda m, k=0: ns.triu(_a.asarray(m), k=k)}
    # the numpy functions of these modules take numpy's signatures: mapped directly (ufuncs
    # reach their functions through NEP 13's table above)
    f.update({getattr(np, name): getattr(mod, name)
              for mod in (shaping, numeric, statistics, ufuncs, index_functions, sets, selection,
                          assignment, einsum, histograms, quantiles, padding, polynomial,
                          signal, construction, introspection)
              for name in mod.__all__ if name not in _NOT_DISPATCHED and hasattr(np, name)
              and not isinstance(getattr(np, name), np.ufunc)})
    if hasattr(np, "concat"):                  # numpy >= 2
        f[np.concat] = shaping.concatenate
        f[np.permute_dims] = lambda a, axes=None: _transpose(a, axes)
    return f


# functions with no array argument to dispatch on (numpy's creation functions, pure Python)
_NOT_DISPATCHED = {"identity", "logspace", "geomspace", "tri", "indices", "tril_indices",
                   "triu_indices", "diag_indices", "broadcast_shapes", "isscalar",
                   "promote_types", "issubdtype", "iterable", "bartlett", "blackman",
                   "hamming", "hanning", "kaiser", "mintypecode", "typename", "isfortran"}


def _norm(x, ord=None, axis=None, keepdims=False):
    if ord is None and (axis is None or np.ndim(axis) == 0):
        return ns.linalg.vector_norm(x, axis=axis, keepdims=keepdims)
    if axis is None and x.ndim == 2 or np.ndim(axis) == 1 and len(axis) == 2:
        return ns.linalg.matrix_norm(x, ord="fro" if ord is None else ord, keepdims=keepdims)
    return ns.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)


_FUNCTION_TABLE = []


def array_function(func, types, args, kwargs):
    """``Array.__array_function__``: the numpy functions in the table run on the device."""
    for t in types:
        if not issubclass(t, (Array, np.ndarray)):
            return NotImplemented
    if not _FUNCTION_TABLE:
        _FUNCTION_TABLE.append(_functions())
    impl = _FUNCTION_TABLE[0].get(func)
    if impl is None:
        mod = getattr(func, "__module__", "numpy") or "numpy"
        mod = "numpy" if mod.startswith("numpy") and mod.count(".") < 2 and \
            "linalg" not in mod else mod
        raise TypeError(f"{mod}.{func.__name__} is not implemented for kompute_ml arrays; "
                        f"convert explicitly with np.asarray(a) (a download) to run it on the "
                        f"host, or use the kompute_ml function of the Array API")
    return impl(*args, **kwargs)
