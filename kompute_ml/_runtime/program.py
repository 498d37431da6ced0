"""Programs: a compute shader's SPIR-V, its reflection and host facts, push packing, dispatch.

:func:`get` returns the :class:`Program` of a built-in shader (one cache per name and defines);
``Program(spirv)`` wraps any module (generated kernels, user Kernels). Push and specialization
constants are packed from the reflected types of the shader, never by a format string at the call
site, so a value of the wrong type is a TypeError here rather than a wrong answer on the device.

The built-in shaders: packaged SPIR-V, recompiled from shaders/ when stale or missing.

A wheel carries ``kompute_ml/spv/<name>.spv`` compiled by CMake at build time, and the GLSL sources
in ``kompute_ml/glsl/``. In a source checkout (or an editable install) the sources live in the
repository's ``shaders/``; a ``.spv`` that is missing or older than its ``.comp`` is compiled at
run time (and cached on disk by the compiler layer). Kernels with ``defines`` always go through
the compiler (cached by content).
"""

import os
import re
import struct
import threading

import numpy as np

from .._compile import glslang as _glslang
from .._compile import spirv as _spirv
from . import stream as _stream

__all__ = ["Program", "get", "spirv", "source_path", "shader_dirs", "names", "pack_values",
           "read_facts", "facts", "fact"]

# the package folder (kompute_ml/), two levels above this file
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_cache = {}
_lock = threading.Lock()


def shader_dirs():
    """Directories holding the built-in GLSL sources, the checkout's first."""
    dirs = [os.path.join(os.path.dirname(_PKG), "shaders"), os.path.join(_PKG, "glsl")]
    return [d for d in dirs if os.path.isdir(d)]


def source_path(name):
    """Path of the built-in shader ``name`` (.comp), or None."""
    for d in shader_dirs():
        p = os.path.join(d, name + ".comp")
        if os.path.isfile(p):
            return p
    return None


def names():
    """Names of the built-in compute shaders."""
    out = set()
    for d in shader_dirs():
        out.update(f[:-5] for f in os.listdir(d) if f.endswith(".comp"))
    return sorted(out)


def _packaged(name):
    p = os.path.join(_PKG, "spv", name + ".spv")
    return p if os.path.isfile(p) else None


def _include_mtime(src_dir):
    return max((os.path.getmtime(os.path.join(src_dir, f)) for f in os.listdir(src_dir)
                if f.endswith(".glsl")), default=0.0)


def _compile(name, defines):
    """SPIR-V bytes and source path of the built-in shader ``name`` (packaged or compiled)."""
    src = source_path(name)
    spv = None if defines else _packaged(name)
    if spv is not None and src is not None:
        src_time = max(os.path.getmtime(src), _include_mtime(os.path.dirname(src)))
        if os.path.getmtime(spv) < src_time:
            spv = None          # stale: the source changed after the build
    if spv is not None:
        with open(spv, "rb") as f:
            return f.read(), src
    if src is not None:
        with open(src, encoding="utf-8") as f:
            return _glslang.compile_glsl(f.read(), defines=defines, filename=src), src
    raise KeyError(f"no built-in shader named {name!r}; built-in shaders: {', '.join(names())}")


def get(name, defines=None):
    """The Program of the built-in shader ``name`` (``shaders/<name>.comp``), cached per defines."""
    key = (name, tuple(sorted((defines or {}).items())))
    hit = _cache.get(key)
    if hit is not None:
        return hit
    with _lock:
        hit = _cache.get(key)
        if hit is None:
            data, _ = _compile(name, defines)
            hit = _cache[key] = Program(data, name=name, facts=facts(name))
        return hit


_facts = {}


def facts(name):
    """The facts the built-in shader ``name`` declares (``// @kompute_ml key = value`` lines)."""
    hit = _facts.get(name)
    if hit is None:
        src = source_path(name)
        hit = _facts[name] = read_facts(src) if src is not None else {}
    return hit


def spirv(name, defines=None):
    """SPIR-V bytes of the built-in shader ``name`` (``shaders/<name>.comp``)."""
    return get(name, defines).spirv


# ``// @kompute_ml name = value`` in a shader's source: a fact the host needs about the shader
# (loop iterations per element, ...), declared beside the code it describes
_FACT = re.compile(r"^\s*//\s*@kompute_ml\s+(\w+)\s*=\s*(\S+)\s*$", re.MULTILINE)


def read_facts(path):
    """The ``// @kompute_ml name = number`` lines of a shader source file, as a dict."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    facts = {}
    for m in _FACT.finditer(text):
        try:
            facts[m.group(1)] = float(m.group(2))
        except ValueError:
            raise ValueError(f"{path}: fact {m.group(1)} = {m.group(2)!r} is not a number") from None
    return facts


def fact(name, key, known=None):
    """Fact ``key`` of shader ``name``; a KeyError naming the missing line when undeclared."""
    known = facts(name) if known is None else known
    try:
        return known[key]
    except KeyError:
        raise KeyError(f"shader {name!r} declares no `// @kompute_ml {key} = <number>` line, "
                       f"and the host needs it (facts it declares: {sorted(known) or 'none'})"
                       ) from None


# -- packing by declared type ----------------------------------------------------------------------

_KIND_NAMES = {"f": "float", "i": "int", "u": "uint", "b": "bool"}
_STRUCT_CODES = {"f": "f", "i": "i", "u": "I", "b": "I"}   # declared kind -> struct code


def _pack_word(v, kind, what):
    """One number as a little-endian 4-byte word of the shader's declared ``kind`` ("" unknown).

    An int for a float is converted (as numpy casts); a float for an int, a negative number for a
    uint, or a value out of 32 bits raises: a word of the wrong type is a wrong answer, not an error,
    once it reaches the device.
    """
    if not isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating)):
        raise TypeError(f"{what} must be a number, got {type(v).__name__}")
    declared = _KIND_NAMES.get(kind)
    if kind == "f":
        return np.asarray(float(v), dtype="<f4").tobytes()
    if isinstance(v, (float, np.floating)):
        if declared:
            raise TypeError(f"{what} is a float ({v!r}) but the shader declares it {declared} "
                            f"there; pass an int")
        return np.asarray(v, dtype="<f4").tobytes()
    v = int(v)
    if kind == "u" or kind == "b":
        if not 0 <= v < 2**32:
            raise OverflowError(f"{what} = {v} does not fit the shader's {declared} (0 to 2**32-1)")
        return struct.pack("<I", v)
    if kind == "i":
        if not -2**31 <= v < 2**31:
            raise OverflowError(f"{what} = {v} does not fit the shader's int (32 bits, signed)")
        return struct.pack("<i", v)
    if -2**31 <= v < 2**31:
        return struct.pack("<i", v)
    if 2**31 <= v < 2**32:
        return struct.pack("<I", v)
    raise OverflowError(f"{what} = {v} does not fit 32 bits")


def pack_values(values, kinds=(), what="push constant"):
    """Push constants (or specialization constants) as bytes.

    bytes / numpy arrays go as they are; each number of a tuple becomes one 4-byte word of the type
    the shader declares for that word (``kinds``, from reflection; see :func:`_pack_word`).
    """
    if values is None:
        return b""
    if isinstance(values, (bytes, bytearray, memoryview)):
        data = bytes(values)
    elif isinstance(values, np.ndarray):
        if values.dtype.itemsize != 4 or values.dtype.kind not in "iuf":
            raise TypeError(f"`push` as a numpy array needs 4-byte numbers, got dtype {values.dtype}")
        data = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("<")).tobytes()
    else:
        seq = (values,) if isinstance(values, (int, float, np.number, np.bool_)) else values
        try:
            seq = list(seq)
        except TypeError:
            raise TypeError(f"`push` must be a tuple of numbers, bytes or a numpy array, got "
                            f"{type(values).__name__}") from None
        data = b"".join(_pack_word(v, kinds[i] if i < len(kinds) else "", f"{what} {i}")
                        for i, v in enumerate(seq))
    if len(data) % 4:
        raise ValueError(f"`push` must be a whole number of 4-byte words, got {len(data)} bytes")
    return data


class Program:
    """A compute shader ready to dispatch: SPIR-V, reflection, host facts, typed packing.

    ``Program(spirv, name=..., facts=...)`` for any module; :func:`get` for a built-in shader.
    Buffer ``i`` of a dispatch is bound to binding ``i``.
    """

    __slots__ = ("spirv", "name", "reflection", "facts", "_spec_kinds", "_push_struct", "_ready")

    def __init__(self, spirv, *, name="<spirv>", facts=None):
        if not isinstance(spirv, bytes):
            raise TypeError(f"spirv must be bytes, got {type(spirv).__name__}")
        self.spirv = spirv
        self.name = name
        _stream.name_spirv(spirv, name)     # a timed-out submit names its kernels
        self.reflection = _spirv.reflect(spirv)
        self.facts = dict(facts or {})
        self._ready = {}            # (device, groups) -> stream.Ready (see dispatch)
        kinds = dict(self.reflection.spec_constant_kinds)
        # one kind per value a spec tuple may carry: a SpecId is any 32-bit number, so a list
        # up to the largest id could need 2^32 entries (SpecId 2^31 took minutes and gigabytes);
        # ids past a gap take no value (Kernel refuses them), so len(kinds) entries are enough
        self._spec_kinds = [kinds.get(i, "") for i in range(len(kinds))]
        # the per-dispatch fast path of pack_push: one struct call when every word's type is
        # declared; any value struct refuses (wrong type, out of range) takes the checked path
        push_kinds = tuple(self.reflection.push_word_kinds)
        self._push_struct = None
        if push_kinds and all(k in _STRUCT_CODES for k in push_kinds) and \
                len(push_kinds) * 4 == self.reflection.push_constant_size:
            self._push_struct = struct.Struct("<" + "".join(_STRUCT_CODES[k] for k in push_kinds))

    @property
    def local_size(self):
        return tuple(self.reflection.local_size)

    def fact(self, key):
        """The number the shader declares as ``// @kompute_ml key = value``; KeyError if none."""
        return fact(self.name, key, self.facts)

    def push_packer(self):
        """A function packing one number per word of the push block as :meth:`pack_push` does,
        for a caller that passes the right count (it raises struct.error, OverflowError or
        TypeError where pack_push would say what was wrong: call that then)."""
        fast = self._push_struct
        return fast.pack if fast is not None else self.pack_push

    def pack_push(self, *values):
        """The push-constant block from one number per 4-byte word, each as its declared type."""
        fast = self._push_struct
        if fast is not None and len(values) == len(fast.format) - 1:
            try:
                return fast.pack(*values)
            except (struct.error, OverflowError, TypeError):
                pass               # the checked path below names the offending value
        data = pack_values(values, self.reflection.push_word_kinds)
        size = self.reflection.push_constant_size
        if len(data) != size:
            raise ValueError(f"shader {self.name}: its push-constant block is {size} bytes "
                             f"({size // 4} words); {len(values)} values were given")
        return data

    def pack_spec(self, *values):
        """Specialization constants ``values[i]`` for ``constant_id = i``, by declared type."""
        return pack_values(values, self._spec_kinds, what="specialization constant")

    def _words(self, values, pack):
        if values is None or isinstance(values, (bytes, bytearray, memoryview, np.ndarray)):
            return values
        return pack(*values) if len(values) else None

    def dispatch(self, device, buffers, groups, *, push=(), spec=()):
        """Record one dispatch over ``buffers`` (binding i = buffers[i]) of ``groups`` workgroups.

        ``push`` and ``spec``: tuples of numbers (packed by declared type) or packed bytes.
        """
        push = self._words(push, self.pack_push) or b""
        spec = self._words(spec, self.pack_spec)
        if spec is None and type(push) is bytes and type(groups) is tuple:
            # the per-dispatch fast path: the module hashed and the workgroups checked once per
            # (device, groups); what stays per call is what dispatch_ready leaves to its caller
            ready = self._ready.get((device, groups))
            if ready is not None and len(push) == self.reflection.push_constant_size and \
                    len(buffers) == len(self.reflection.bindings) and \
                    all(b.device is device for b in buffers):
                _stream.dispatch_ready(device, ready, buffers, push)
                return
        _stream.dispatch(device, self.spirv, buffers, groups, push=push, spec=spec,
                         info=self.reflection)
        if spec is None and type(push) is bytes and type(groups) is tuple:
            # it went through every check: later calls with these groups take the fast path
            if len(self._ready) > 256:
                self._ready.clear()
            self._ready[(device, groups)] = _stream.prepare(device, self.spirv, groups,
                                                            info=self.reflection)

    def dispatch_1d(self, device, buffers, n, *, push=(), spec=()):
        """Dispatch over ``n`` invocations along x (2-D past the device's per-axis limit)."""
        self.dispatch(device, buffers, _stream.groups_1d(device, n, self.reflection.local_size[0]),
                      push=push, spec=spec)

    def __repr__(self):
        return f"<Program {self.name}: local_size={self.local_size}>"
