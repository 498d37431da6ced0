"""Kernel: a user's compute shader (GLSL file or source, SPIR-V, python2shader function) called
on kompute_ml arrays.

A call checks everything kp would crash on or silently get wrong (the number of arrays against
the shader's bindings, the push-constant bytes against its block, the grid against the device's
limits) and then records one dispatch in the device's pending sequence through the stream layer;
results are read through the arrays (``out.numpy()``), which submits the pending work.
"""

import os

import numpy as np

from . import config as _config
from ._compile import glslang as _glslang
from ._compile import rewrite as _rewrite
from ._compile import spirv as _spirv
from ._runtime import stream as _stream
from ._runtime import program as _program
from ._runtime import device as _device
from .errors import SpirvError

__all__ = ["Kernel", "find_shader", "register_array_type"]

# the array dtypes a binding of each scalar type takes (a bool array's words are 0/1 uints); a
# binding of a type no array holds (8/16-bit ints, float16, a block of mixed types) reads the
# array's bytes as they are
_BINDING_DTYPES = {"float32": ("float32",), "float64": ("float64",), "int32": ("int32",),
                   "uint32": ("uint32", "bool"), "int64": ("int64",), "uint64": ("uint64",)}

# The Array type lives a layer above kernels: array.py registers it here (type -> the function that
# returns its realized, writable Buffer), so this module never imports array.py.
_ARRAY_TYPES = {}


def register_array_type(cls, writable_buffer):
    """Let Kernels bind instances of ``cls`` (kompute_ml.array registers its Array at import)."""
    _ARRAY_TYPES[cls] = writable_buffer


SHADER_PATH_ENV = "KOMPUTE_ML_SHADER_PATH"


def _shader_path_dirs():
    return list(_config.get("shader_path"))


def find_shader(name):
    """Path of the shader file ``name``.

    Looked up as given (an absolute path, or relative to the working directory), then in each
    folder of ``$KOMPUTE_ML_SHADER_PATH``, then in the built-in ``shaders/``; a name without an
    extension also matches ``name.comp``. Raises FileNotFoundError listing the places searched.
    """
    name = os.fspath(name)
    names = [name] if os.path.splitext(name)[1] else [name, name + ".comp"]
    searched = []
    for d in [None] + _shader_path_dirs() + _program.shader_dirs():
        for n in names:
            p = n if d is None else os.path.join(d, n)
            if os.path.isfile(p):
                return os.path.abspath(p)
        searched.append(os.getcwd() if d is None else d)
        if os.path.isabs(name):
            break
    raise FileNotFoundError(f"no shader file {name!r}; searched: {', '.join(searched)} "
                            f"(set {SHADER_PATH_ENV} to add folders)")


def _is_source(text):
    return "\n" in text or "void main" in text


def _check_grid(grid):
    if isinstance(grid, (int, np.integer)) and not isinstance(grid, (bool, np.bool_)):
        grid = (grid,)
    try:
        g = tuple(grid)
    except TypeError:
        raise TypeError(f"`grid` must be an int or 1 to 3 positive ints, got {grid!r}") from None
    if not 1 <= len(g) <= 3 or any(isinstance(x, (bool, np.bool_)) or
                                   not isinstance(x, (int, np.integer)) or x < 1 for x in g):
        raise ValueError(f"`grid` must have 1 to 3 positive ints, got {grid!r}")
    return tuple(int(x) for x in g) + (1,) * (3 - len(g))


# packing by the shader's declared types is shared with the built-in Programs
_pack_push = _program.pack_values


class Kernel:
    """A compute shader called on kompute_ml arrays.

    Make one with :meth:`from_glsl` (a ``.comp`` file or GLSL source), :meth:`from_spirv`, or
    ``Kernel(fn)`` / ``fn.to_kernel()`` for a :func:`kompute_ml.pyshader.python2shader`
    function. Array ``i`` of a call is bound to binding ``i``, so the shader's storage buffers
    must be bindings 0..n-1 of descriptor set 0.

    Parameters
    ----------
    shader : ShaderModule or bytes
        A python2shader function, or SPIR-V bytes.

    Attributes
    ----------
    spirv : bytes
        The module that runs: the one given, with each index into ``shared`` memory clamped to
        its array's bounds (an out-of-bounds index reads or writes the last element).
    local_size : tuple of 3 ints
        The workgroup size, read from the SPIR-V.
    bindings : tuple of int
    push_constant_size : int
        Bytes of the push-constant block (0: none).
    source : str or None
        The GLSL source (generated, for a python2shader function), when known.

    Examples
    --------
    >>> import numpy as np, kompute_ml as km
    >>> k = km.Kernel.from_glsl('''#version 450
    ... layout(local_size_x = 64) in;
    ... layout(set = 0, binding = 0) buffer X { float x[]; };
    ... layout(push_constant) uniform P { uint n; float scale; } pc;
    ... void main() {
    ...     uint i = gl_GlobalInvocationID.x;
    ...     if (i < pc.n) x[i] *= pc.scale;
    ... }''')
    >>> x = km.asarray(np.arange(4.0, dtype=np.float32))
    >>> k(x, grid=x.size, push=(x.size, 3.0))
    >>> x.numpy()
    array([0., 3., 6., 9.], dtype=float32)
    """

    def __init__(self, shader):
        if isinstance(shader, (bytes, bytearray, memoryview)):
            self._setup(bytes(shader), "<spirv>", None, None)
        elif hasattr(shader, "to_spirv") and callable(shader.to_spirv):
            source = shader.to_glsl() if hasattr(shader, "to_glsl") else None
            self._setup(shader.to_spirv(), getattr(shader, "name", type(shader).__name__),
                        source, None)
            self._lengths = tuple(getattr(shader, "length_constants", ()))
        else:
            raise TypeError(f"Kernel needs a python2shader function or SPIR-V bytes, got "
                            f"{type(shader).__name__} (for GLSL use Kernel.from_glsl)")

    @classmethod
    def from_glsl(cls, path_or_source, defines=None, *, include_dirs=()):
        """A kernel from a GLSL compute shader file or source.

        Parameters
        ----------
        path_or_source : str or path-like
            GLSL source (a str holding a newline or ``void main``), or a file name looked up as
            :func:`find_shader` does.
        defines : dict, optional
            Macros ``#define``-d after ``#version`` (see :func:`kompute_ml.compile_glsl`).
        include_dirs : sequence of path-like, default=()
            Folders searched first for ``#include "x.glsl"``; then the ``$KOMPUTE_ML_SHADER_PATH``
            folders, the shader file's own folder and the built-in ``shaders/``.

        Raises
        ------
        ShaderCompileError
            glslang rejected the source (its message, the file and the line).
        FileNotFoundError
            No such file.
        """
        if isinstance(path_or_source, os.PathLike) or (
                isinstance(path_or_source, str) and not _is_source(path_or_source)):
            path = find_shader(path_or_source)
            with open(path, encoding="utf-8") as f:
                source = f.read()
            filename, name = path, os.path.basename(path)
        elif isinstance(path_or_source, str):
            source, filename, path, name = path_or_source, "<string>", None, "<glsl>"
        else:
            raise TypeError(f"path_or_source must be a str or a path, got "
                            f"{type(path_or_source).__name__}")
        if isinstance(include_dirs, (str, os.PathLike)):
            include_dirs = (include_dirs,)
        dirs = [os.fspath(d) for d in include_dirs or ()] + _shader_path_dirs()
        spirv = _glslang.compile_glsl(source, defines, dirs, filename=filename)
        self = cls.__new__(cls)
        self._setup(spirv, name, source, path)
        return self

    @classmethod
    def from_spirv(cls, data):
        """A kernel from a SPIR-V module (bytes); raises SpirvError for anything else."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"from_spirv needs bytes, got {type(data).__name__}")
        self = cls.__new__(cls)
        self._setup(bytes(data), "<spirv>", None, None)
        return self

    def _setup(self, spirv, name, source, path):
        # an out-of-bounds index into `shared` memory is undefined in Vulkan (no robustness
        # feature covers it) and corrupts lavapipe's heap: user kernels get every Workgroup
        # index clamped to its array's bounds (built-in kernels are ours, and tested)
        spirv = _rewrite.clamp_workgroup_indices(spirv)
        program = _program.Program(spirv, name=name)
        info = program.reflection
        n = len(info.bindings)
        if n == 0:
            raise SpirvError(f"kernel {name}: the shader has no buffer binding; kp dispatches "
                             "need at least one buffer")
        if tuple(info.bindings) != tuple(range(n)):
            raise SpirvError(f"kernel {name}: its bindings are {list(info.bindings)}; array i is "
                             f"bound to binding i, so bindings must be 0..{n - 1}")
        if info.uniform_bindings:
            raise SpirvError(f"kernel {name}: binding(s) {list(info.uniform_bindings)} are "
                             "uniform blocks; kp binds storage buffers only (declare them "
                             "`readonly buffer`)")
        self.spirv, self.info, self.name, self.source, self.path = spirv, info, name, source, path
        self._program = program
        self._binding_types = dict(info.binding_types)
        _stream.name_spirv(spirv, name)     # a timed-out submit names its kernels
        self._lengths = ()      # python2shader: (spec id, binding, stride) of len() constants

    @property
    def local_size(self):
        return tuple(self.info.local_size)

    @property
    def bindings(self):
        return tuple(self.info.bindings)

    @property
    def push_constant_size(self):
        return self.info.push_constant_size

    def __repr__(self):
        n = len(self.bindings)
        return (f"<Kernel {self.name}: {n} buffer{'s' * (n != 1)}, local_size={self.local_size}, "
                f"push constants {self.push_constant_size} bytes>")

    def __call__(self, *arrays, grid, push=(), spec=(), device=None, timeout=None):
        """Record one dispatch of the kernel over ``arrays`` (array i at binding i).

        Parameters
        ----------
        *arrays : kompute_ml.Array
            One per binding. Lazy arrays are computed first. kp tensors and numpy arrays are
            not accepted (convert with ``km.asarray``); results are read from the arrays.
        grid : int or tuple of 1 to 3 ints
            Invocations per axis; the workgroup count is ``ceil(grid / local_size)`` per axis.
        push : tuple of numbers, bytes or numpy array, default=()
            Push constants, one 4-byte word per number, packed as the type the shader declares
            for that word (an int for a float is converted; a float for an int/uint, or a value
            that does not fit, raises). Padding words take ints as int32 (uint32 above
            2**31 - 1) and floats as float32. bytes and numpy arrays go as they are. Their size
            must equal the shader's push-constant block.
        spec : tuple of numbers, default=()
            Specialization constants, ``spec[i]`` for ``constant_id = i``, packed by the same
            rules as ``push``.
        device : None, int, str or Device
            Must be the arrays' device when given.
        timeout : float, optional
            Seconds: submit the dispatch (with the work pending before it) now and wait at most
            this long. A kernel that runs longer raises DeviceError naming it, and the device
            then counts as lost (every later use raises) until the work finishes after all.
            None: the dispatch waits in the pending batch as usual, and its wait is bounded by
            ``KOMPUTE_ML_KERNEL_TIMEOUT`` (seconds) when that is set.

        Raises
        ------
        ValueError
            Wrong number of arrays, push-constant size, grid or specialization constants.
        DeviceLimitError
            The workgroup count, workgroup size, storage-buffer count, push-constant block or
            shared memory exceeds the device's limit (the message names it).
        TypeError
            An argument is not a kompute_ml Array, an array's dtype is not its binding's
            declared element type (float32, float64, int32, uint32, int64 or uint64; a uint
            binding also takes bool arrays), or a push/spec value of the wrong type.
        OverflowError
            A push/spec value does not fit its declared type.
        """
        n = len(self.bindings)
        if len(arrays) != n:
            raise ValueError(f"kernel {self.name} binds {n} buffer{'s' * (n != 1)} (bindings "
                             f"0..{n - 1}); {len(arrays)} array{'s' * (len(arrays) != 1)} given")
        for i, a in enumerate(arrays):
            if type(a) not in _ARRAY_TYPES:
                hint = " (convert it with km.asarray)" if isinstance(a, np.ndarray) else \
                    " (kp tensors are not accepted; use km arrays)" \
                    if type(a).__module__.rpartition(".")[2] in ("kp", "_kp") else ""
                raise TypeError(f"kernel {self.name}: argument {i} (binding {i}) must be a "
                                f"kompute_ml Array, got {type(a).__name__}{hint}")
        for i, a in enumerate(arrays):
            allowed = _BINDING_DTYPES.get(self._binding_types.get(self.bindings[i]))
            if allowed is not None and a.dtype.name not in allowed:
                raise TypeError(f"kernel {self.name}: binding {self.bindings[i]} is declared "
                                f"{self._binding_types[self.bindings[i]]} in the shader, but "
                                f"argument {i} is a {a.dtype} array (convert it with "
                                f".astype(km.{allowed[0]}))")
        dev = arrays[0].device
        for i, a in enumerate(arrays[1:], 1):
            if a.device is not dev:
                raise ValueError(f"kernel {self.name}: arrays on different devices "
                                 f"({_device.describe_pair(dev, a.device)}; argument {i})")
        if device is not None and _device.get_device(device) is not dev:
            raise ValueError(f"kernel {self.name}: device={device!r}, but the arrays are on "
                             f"{dev.name!r}")
        grid = _check_grid(grid)
        groups = tuple(-(-g // ls) for g, ls in zip(grid, self.local_size))
        data = _pack_push(push, self.info.push_word_kinds)
        size = self.push_constant_size
        if len(data) != size:
            raise ValueError(f"kernel {self.name}: its push-constant block is {size} bytes "
                             f"({size // 4} words); push={push!r} packs {len(data)} bytes")
        spec = () if spec is None else tuple(spec)
        if self._lengths:
            if spec:
                raise ValueError(f"kernel {self.name}: a python2shader kernel takes no `spec`; "
                                 "its specialization constants carry the arrays' lengths")
            # len(x) in the shader: the array's length, not its pooled buffer's capacity
            # (kompute_ml arrays hold 4-byte words, bool included)
            spec = tuple(arrays[b].size * 4 // stride for _, b, stride in self._lengths)
        missing = [i for i in range(len(spec)) if i not in self.info.spec_constant_ids]
        if missing:
            raise ValueError(f"kernel {self.name}: spec has {len(spec)} values but the shader has "
                             f"no constant_id {missing[0]} (its ids: "
                             f"{list(self.info.spec_constant_ids)})")
        if spec:    # value i -> constant_id i, as a word of the type the shader declares
            kinds = dict(self.info.spec_constant_kinds)
            spec = _pack_push(spec, [kinds.get(i, "") for i in range(len(spec))],
                              what="specialization constant")
        _stream.check_groups(dev, groups)
        # every limit kp/the driver would crash on or ignore, before any kp call
        _spirv.check_device_limits(self.info, dev.limits, f"kernel {self.name} on {dev.name!r}")
        buffers = [_ARRAY_TYPES[type(a)](a) for a in arrays]   # realizes lazy arrays
        # binding i: arrays[i]; push and spec are packed above (the Kernel's own messages)
        self._program.dispatch(dev, buffers, groups, push=data, spec=spec or None)
        if timeout is not None:
            _stream.flush(dev, timeout)

