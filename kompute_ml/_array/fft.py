"""Complex FFTs of contiguous rows on the device: mixed-radix Stockham passes.

``transform(buf, rows, n, dtype, device, inverse)`` transforms each of ``rows`` contiguous rows of
``n`` complex64 or complex128 elements (unnormalized: the forward sign -1, the inverse +1) and
returns a new Buffer. ``n`` is factored into the radices 8, 4, 2, 3, 5, 7, 11, 13 (8s first);
each factor is one pass of a generated kernel over all rows (Stockham's autosort: each pass reads
one buffer and writes the other, and the last leaves the result in natural order; no bit
reversal). An invocation of a radix-R pass loads R elements n / R apart, multiplies them by its
twiddles, takes their R-point DFT (constants written into the source) and stores them Ns apart
(Ns: the product of the radices before). Twiddles come from a table of exp(-2 pi i t / n),
t < n, computed on the host in float64 and kept per (device, n, dtype). Lengths with a prime
factor above 13 return None: the caller takes them through Bluestein's algorithm (a power-of-two
transform of twice the length, see kompute_ml/_api/fft.py).
"""

import math
import threading

import numpy as np

from .._compile import glslang as _glslang
from .._runtime import device as _device
from .._runtime import program as _program
from . import buffers as _buffers
from .codegen import _literal
from .dtypes import COMPLEX_PART, FLOAT64

__all__ = ["factor", "transform", "MAX_RADIX"]

RADICES = (8, 4, 2, 3, 5, 7, 11, 13)
MAX_RADIX = 13
LOCAL_SIZE = 256
# a row of LOCAL_MIN to LOCAL_MAX_BYTES is transformed whole in one workgroup's shared memory
# (one dispatch, one read and one write of the data) by LOCAL_THREADS invocations at most
LOCAL_MIN = 64
LOCAL_MAX_BYTES = 32768
LOCAL_THREADS = 256

_lock = threading.Lock()
_kernels = {}                      # (radix, dtype, inverse) -> Program
_tables = {}                       # device -> {(n, dtype): Buffer}
_MAX_TABLES = 16                   # twiddle tables kept per device


def factor(n):
    """The radices of the passes of an ``n``-point transform, or None (a prime factor > 13)."""
    out = []
    for r in RADICES:
        while n % r == 0 and n > 1:
            out.append(r)
            n //= r
    return out if n == 1 else None


def _source(radix, dtype, inverse):
    """GLSL of one radix-``radix`` Stockham pass over rows of complex ``dtype``."""
    part = COMPLEX_PART[dtype]
    v = "dvec2" if part == FLOAT64 else "vec2"
    t = "double" if part == FLOAT64 else "float"
    sign = 1.0 if inverse else -1.0
    lines = ["#version 450", '#include "common.glsl"',
             f"layout(local_size_x = {LOCAL_SIZE}) in;",
             f"layout(set = 0, binding = 0) readonly buffer Src {{ {v} src[]; }};",
             f"layout(set = 0, binding = 1) writeonly buffer Dst {{ {v} dst[]; }};",
             f"layout(set = 0, binding = 2) readonly buffer Tw {{ {v} tw[]; }};",
             # total: invocations (rows * n / R); ns: the sub-transforms' length so far;
             # tstride: n / (ns * R), the table step of this pass's twiddle unit
             "layout(push_constant) uniform Push { uint total; uint n; uint ns; uint tstride; }"
             " pc;",
             f"{v} cmul({v} a, {v} b) {{",
             f"    precise {t} re = a.x * b.x - a.y * b.y;",
             f"    precise {t} im = a.x * b.y + a.y * b.x;",
             f"    return {v}(re, im);",
             "}",
             "void main() {",
             "    uint g = km_global_index();",
             "    if (g >= pc.total) return;",
             f"    uint m = pc.n / {radix}u;",
             "    uint row = g / m;",
             "    uint j = g - row * m;",
             "    uint base = row * pc.n;",
             "    uint k = j % pc.ns;"]
    for r in range(radix):
        lines.append(f"    {v} x{r} = src[base + j + {r}u * m];")
    for r in range(1, radix):
        w = f"tw[k * {r}u * pc.tstride]"
        if inverse:
            w = f"{v}({w}.x, -{w}.y)"
        lines.append(f"    x{r} = cmul(x{r}, {w});")
    # y_q = sum_r x_r w^(r q), w = exp(sign 2 pi i / R): constants by their bits
    for q in range(radix):
        terms = []
        for r in range(radix):
            e = (r * q) % radix
            terms.append(_times_root(f"x{r}", e, radix, sign, part, v))
        lines.append(f"    {v} y{q} = " + " + ".join(terms) + ";")
    lines.append("    uint o = base + (j / pc.ns) * pc.ns * " + f"{radix}u + k;")
    for q in range(radix):
        lines.append(f"    dst[o + {q}u * pc.ns] = y{q};")
    lines += ["}", ""]
    return "\n".join(lines)


def _times_root(x, e, radix, sign, part, v):
    """GLSL of ``x`` times exp(sign 2 pi i e / radix), exact where the root is +-1 or +-i."""
    if e == 0:
        return x
    if 4 * e % radix == 0:
        quarter = (4 * e // radix) % 4            # the root is i^quarter (sign -1: (-i)^quarter)
        if sign < 0:
            quarter = (4 - quarter) % 4
        return {1: f"{v}(-{x}.y, {x}.x)", 2: f"(-{x})", 3: f"{v}({x}.y, -{x}.x)"}[quarter]
    ang = sign * 2.0 * math.pi * e / radix
    c, s = math.cos(ang), math.sin(ang)
    if part != FLOAT64:
        c, s = float(np.float32(c)), float(np.float32(s))
    return f"cmul({x}, {v}({_literal(part, c)}, {_literal(part, s)}))"


def _butterflies(lines, radices, v, sign, part, load, store, items, threads, n):
    """Append the passes of ``radices`` (each: load R values, twiddle, R-point DFT, store) for
    the ``items`` work items of each of ``threads`` invocations; ``load(idx)`` and
    ``store(idx, value)`` give the GLSL of an element's access."""
    ns = 1
    for p, radix in enumerate(radices):
        m = n // radix
        per = -(-m // threads)
        lines.append(f"    {{  // pass {p}: radix {radix}, sub-transforms of {ns} so far")
        for it in range(min(per, items)):
            lines.append(f"    uint j{it} = lid + {it * threads}u;")
            guard = f"j{it} < {m}u"
            for r in range(radix):
                lines.append(f"    {v} x{it}_{r} = {guard} ? {load(f'j{it} + {r * m}u')} : {v}(0);")
        lines.append("    barrier();")
        for it in range(min(per, items)):
            lines.append(f"    if (j{it} < {m}u) {{")
            lines.append(f"        uint k = j{it} % {ns}u;")
            for r in range(1, radix):
                w = f"tw[k * {r * (n // (ns * radix))}u]"
                if sign > 0:
                    w = f"{v}({w}.x, -{w}.y)"
                lines.append(f"        x{it}_{r} = cmul(x{it}_{r}, {w});")
            for q in range(radix):
                terms = [_times_root(f"x{it}_{r}", (r * q) % radix, radix, sign, part, v)
                         for r in range(radix)]
                lines.append(f"        {v} y{q} = " + " + ".join(terms) + ";")
            lines.append(f"        uint o = (j{it} / {ns}u) * {ns * radix}u + k;")
            for q in range(radix):
                lines.append("        " + store(f"o + {q * ns}u", f"y{q}"))
            lines.append("    }")
        lines.append("    barrier();")
        lines.append("    }")
        ns *= radix


def _local_source(n, dtype, inverse, threads):
    """GLSL of a whole ``n``-point transform of one row per workgroup in shared memory (every
    pass between two barriers: each invocation loads its items' values, all wait, each stores
    its results)."""
    part = COMPLEX_PART[dtype]
    v = "dvec2" if part == FLOAT64 else "vec2"
    t = "double" if part == FLOAT64 else "float"
    sign = 1.0 if inverse else -1.0
    radices = factor(n)
    items = max(-(-(n // r) // threads) for r in radices)
    lines = ["#version 450",
             f"layout(local_size_x = {threads}) in;",
             f"layout(set = 0, binding = 0) readonly buffer Src {{ {v} src[]; }};",
             f"layout(set = 0, binding = 1) writeonly buffer Dst {{ {v} dst[]; }};",
             f"layout(set = 0, binding = 2) readonly buffer Tw {{ {v} tw[]; }};",
             "layout(push_constant) uniform Push { uint rows; } pc;",
             f"shared {v} sh[{n}];",
             f"{v} cmul({v} a, {v} b) {{",
             f"    precise {t} re = a.x * b.x - a.y * b.y;",
             f"    precise {t} im = a.x * b.y + a.y * b.x;",
             f"    return {v}(re, im);",
             "}",
             "void main() {",
             "    uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;",
             "    if (row >= pc.rows) return;        // (uniform: the whole workgroup)",
             "    uint lid = gl_LocalInvocationID.x;",
             f"    uint base = row * {n}u;",
             f"    for (uint i = lid; i < {n}u; i += {threads}u) sh[i] = src[base + i];",
             "    barrier();"]
    _butterflies(lines, radices, v, sign, part, lambda i: f"sh[{i}]",
                 lambda i, val: f"sh[{i}] = {val};", items, threads, n)
    lines += [f"    for (uint i = lid; i < {n}u; i += {threads}u) dst[base + i] = sh[i];",
              "}", ""]
    return "\n".join(lines)


def _local_kernel(n, dtype, inverse, threads):
    key = ("local", n, dtype, inverse, threads)
    prog = _kernels.get(key)
    if prog is None:
        name = f"<fft {n} points in shared memory {dtype}{' inverse' if inverse else ''}>"
        spirv = _glslang.compile_glsl(_local_source(n, dtype, inverse, threads), filename=name)
        prog = _kernels[key] = _program.Program(spirv, name=name)
    return prog


def _local_threads(n, dtype, device):
    """Invocations of the shared-memory kernel of an ``n``-point transform, or None where it
    does not apply (a row larger than LOCAL_MAX_BYTES or the device's shared memory, or
    shorter than LOCAL_MIN: the global passes serve those)."""
    nbytes = n * dtype.itemsize
    if n < LOCAL_MIN or nbytes > min(LOCAL_MAX_BYTES, int(device.limits.get("max_shared_memory",
                                                                            16384))):
        return None
    return max(1, min(LOCAL_THREADS, n // 8, int(device.limits.get("max_workgroup_invocations",
                                                                   128))))


def _kernel(radix, dtype, inverse):
    key = (radix, dtype, inverse)
    prog = _kernels.get(key)
    if prog is None:
        name = f"<fft radix {radix} {dtype}{' inverse' if inverse else ''}>"
        spirv = _glslang.compile_glsl(_source(radix, dtype, inverse), filename=name)
        prog = _kernels[key] = _program.Program(spirv, name=name)
    return prog


def _table(device, n, dtype):
    """The Buffer of exp(-2 pi i t / n), t < n, in ``dtype`` (made once per device and n)."""
    with _lock:
        per = _tables.setdefault(device, {})
        buf = per.get((n, dtype))
        if buf is not None:
            return buf
    t = np.arange(n, dtype=np.float64)
    # the angle reduced to the nearest quarter turn's side: cos/sin of |angle| <= pi / 4 only
    tw = np.exp(-2j * np.pi * t / n).astype(dtype)
    q = (8 * np.arange(n)) // n                 # exact values at the octants' multiples
    exact = (8 * np.arange(n)) % n == 0
    tw[exact] = np.array([1, np.exp(-1j * np.pi / 4), -1j, np.exp(-3j * np.pi / 4), -1,
                          np.exp(3j * np.pi / 4), 1j, np.exp(1j * np.pi / 4)])[q[exact]]
    buf = _buffers.upload(device, tw)
    with _lock:
        per = _tables.setdefault(device, {})
        if len(per) >= _MAX_TABLES:
            per.clear()
        per[(n, dtype)] = buf
    return buf


def _drop_tables(device):
    with _lock:
        _tables.pop(device, None)


_device.on_close(_drop_tables, order=(_device.CLOSE_STREAM + _device.CLOSE_MEMORY) // 2)


def transform(buf, rows, n, dtype, device, inverse):
    """The unnormalized DFT of ``rows`` contiguous rows of ``n`` ``dtype`` elements in ``buf``
    (forward: exp(-2 pi i jk / n); ``inverse``: exp(+2 pi i jk / n)) as a new Buffer; None when
    ``n`` has a prime factor above MAX_RADIX."""
    radices = factor(n)
    if radices is None:
        return None
    shape = (rows, n)
    if n == 1 or rows == 0:               # the identity: a copy
        out = _buffers.alloc(device, shape, dtype)
        words = rows * n * _buffers.words_per_element(dtype)
        if words:
            # copy.comp — binding 0: src, 1: dst; push: n words, src offset, dst offset
            _program.get("copy").dispatch_1d(device, [buf, out], words, push=(words, 0, 0))
        return out
    table = _table(device, n, dtype)
    threads = _local_threads(n, dtype, device)
    if threads is not None:
        out = _buffers.alloc(device, shape, dtype)
        gx = min(rows, int(device.max_groups[0]))
        # generated whole transform — binding 0: src, 1: dst, 2: twiddle table; push: rows
        _local_kernel(n, dtype, inverse, threads).dispatch(
            device, [buf, out, table], (gx, -(-rows // gx), 1), push=(rows,))
        return out
    src, ns, owned = buf, 1, None
    for radix in radices:
        dst = _buffers.alloc(device, shape, dtype)
        total = rows * (n // radix)
        # generated pass — binding 0: src, 1: dst, 2: twiddle table; push: total, n, ns, tstride
        _kernel(radix, dtype, inverse).dispatch_1d(
            device, [src, dst, table], total, push=(total, n, ns, n // (ns * radix)))
        if owned is not None:
            owned.release()
        src = owned = dst
        ns *= radix
    return src
