"""SPIR-V rewrites applied before a module reaches the driver.

:func:`clamp_workgroup_indices`: Vulkan leaves an out-of-bounds access to ``shared`` (Workgroup)
memory undefined, and ``robustBufferAccess`` covers storage buffers only. On lavapipe shared memory
lives in the process's heap, so a user kernel indexing a shared array past its end corrupts the
heap and can kill the process much later. Every access chain into Workgroup memory therefore gets
each dynamic index into an array, vector or matrix of known length N clamped to [0, N-1]
(``UMin`` for unsigned indices, ``SClamp`` for signed ones, both GLSL.std.450): an out-of-bounds
index then reads or writes the last element, which is defined. SPIRV-Tools' optimizer has a pass
in this spirit (``--graphics-robust-access``, for buffers too); this one touches Workgroup memory
only, and is a single walk over the words, cheap enough for every user kernel.

:func:`with_denorm_preserve`: ``OpExecutionMode DenormPreserve 32`` (SPV_KHR_float_controls, core
in SPIR-V 1.4) on every compute entry point, for devices that offer it (see
``kompute_ml._runtime.device.DeviceInfo.denormals``).
"""

import struct
import threading

from ..errors import SpirvError
from . import spirv as _spirv

__all__ = ["clamp_workgroup_indices", "with_denorm_preserve", "stats"]

# opcodes (SPIR-V specification 3.52) and enumerants
_OP_UNDEF, _OP_EXTENSION, _OP_EXT_INST_IMPORT, _OP_EXT_INST = 1, 10, 11, 12
_OP_MEMORY_MODEL, _OP_ENTRY_POINT, _OP_EXECUTION_MODE, _OP_CAPABILITY = 14, 15, 16, 17
_OP_TYPE_INT, _OP_TYPE_VECTOR, _OP_TYPE_MATRIX = 21, 23, 24
_OP_TYPE_ARRAY, _OP_TYPE_RUNTIME_ARRAY, _OP_TYPE_STRUCT, _OP_TYPE_POINTER = 28, 29, 30, 32
_TYPE_OPS = frozenset(range(19, 40)) | {322, 327, 4472, 5341, 5358}   # OpType* declarations
_OP_CONSTANT, _OP_SPEC_CONSTANT, _OP_SPEC_CONSTANT_OP = 43, 50, 52
_CONSTANT_OPS = frozenset((41, 42, 43, 44, 45, 46, 48, 49, 50, 51, 52))
_OP_FUNCTION, _OP_FUNCTION_END, _OP_VARIABLE = 54, 56, 59
_CHAIN_OPS = {65: 0, 66: 0, 67: 1, 70: 1}   # access-chain opcode -> operands before the walk
#   (OpPtrAccessChain's Element index is relative to the base pointer: no type bounds it)
_OP_ISUB, _OP_SCONVERT = 130, 114
_SC_WORKGROUP = 4
_GLSL_UMIN, _GLSL_SCLAMP = 38, 45
_GL_COMPUTE = 5
_CAP_DENORM_PRESERVE, _MODE_DENORM_PRESERVE, _MODE_DENORM_FLUSH = 4464, 4459, 4460
_CAP_SIGNED_ZERO, _MODE_SIGNED_ZERO = 4466, 4461          # SignedZeroInfNanPreserve

_CACHE_MAX = 256
_cache = {}                     # (function, spirv bytes) -> rewritten bytes
_cache_lock = threading.Lock()
_stats = {"modules": 0, "rewritten": 0, "indices_clamped": 0}


def stats():
    """Counts of :func:`clamp_workgroup_indices`: modules seen (cache misses), modules changed,
    indices clamped."""
    return dict(_stats)


def _cached(kind, spirv, fn):
    key = (kind, spirv)
    hit = _cache.get(key)
    if hit is None:
        hit = fn(spirv)
        with _cache_lock:
            if len(_cache) >= _CACHE_MAX:
                _cache.pop(next(iter(_cache)), None)
            _cache[key] = hit
    return hit


def _split(words):
    """[(opcode, first word, word count)] of every instruction; SpirvError when truncated."""
    out, i, n = [], 5, len(words)
    while i < n:
        count = words[i] >> 16
        if count == 0 or i + count > n:
            raise SpirvError(f"SPIR-V truncated or corrupt: instruction at word {i} claims "
                             f"{count} words, {n - i} remain")
        out.append((words[i] & 0xFFFF, i, count))
        i += count
    return out


def _string_words(text):
    """A literal string as SPIR-V words (nul-terminated, zero-padded)."""
    raw = text.encode() + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


def _pack(words):
    return struct.pack(f"<{len(words)}I", *words)


# -- clamping Workgroup indices -------------------------------------------------------------------

def clamp_workgroup_indices(spirv):
    """``spirv`` with every index into Workgroup memory clamped to its array's bounds.

    Returns the same bytes object when the module has no Workgroup access to clamp, or when it
    is malformed (reflection and validation then say why). Results are cached by content.
    """
    if not isinstance(spirv, bytes):
        spirv = bytes(spirv)
    return _cached("clamp", spirv, _clamp_or_same)


def _clamp_or_same(spirv):
    _stats["modules"] += 1
    try:
        out = _Clamp(_spirv._words(spirv)).run()
    except (SpirvError, IndexError, KeyError, ValueError, TypeError, struct.error):
        # a malformed module: left as it is, for reflection and the validator to reject with
        # their own (clearer) messages
        return spirv
    if out is None:
        return spirv
    _stats["rewritten"] += 1
    return out


class _Clamp:
    """One rewrite: collect the types, constants and access chains, then emit the new words."""

    def __init__(self, words):
        self.words = words
        self.insts = _split(words)
        self.bound = words[3]
        self.types = {}          # type id -> (opcode, operand words)
        self.id_type = {}        # result id -> its type id (constants, variables, function values)
        self.consts = {}         # OpConstant id -> int value (unsigned reading of its words)
        self.spec = set()        # ids of specialization constants (their value is unknown here)
        self.new_consts = {}     # (type id, value) -> id, existing or added
        self.new_globals = []    # instructions (word lists) added before the first function
        self.spec_hi = {}        # (index type, length id) -> id of the length minus one
        self.glsl = None         # id of the GLSL.std.450 import

    def _new_id(self):
        self.bound += 1
        return self.bound - 1

    def run(self):
        """The rewritten module's bytes, or None when nothing needs clamping."""
        w, types, id_type = self.words, self.types, self.id_type
        chains, has_workgroup, in_function = [], False, False
        memory_model = first_function = None
        for k, (op, i, n) in enumerate(self.insts):
            if in_function:
                if op == _OP_FUNCTION_END:
                    in_function = False
                elif n >= 3 and w[i + 1] in types:
                    # an instruction with a result type has it as its first operand; those
                    # without one never start with a type id, so this finds every typed value
                    id_type[w[i + 2]] = w[i + 1]
                    if op in _CHAIN_OPS:
                        chains.append(k)
                continue
            if op == _OP_FUNCTION:
                if not has_workgroup:
                    return None              # globals come first: no shared memory, no work
                in_function = True
                if first_function is None:
                    first_function = k
            elif op in _TYPE_OPS and n >= 2:
                types[w[i + 1]] = (op, tuple(w[i + 2:i + n]))
            elif op in _CONSTANT_OPS or op in (_OP_VARIABLE, _OP_UNDEF):
                if n >= 3:
                    id_type[w[i + 2]] = w[i + 1]
                if op == _OP_CONSTANT and n >= 4:
                    value = w[i + 3] | (w[i + 4] << 32 if n >= 5 else 0)
                    self.consts[w[i + 2]] = value
                    self.new_consts.setdefault((w[i + 1], value), w[i + 2])
                elif op in (_OP_SPEC_CONSTANT, _OP_SPEC_CONSTANT_OP):
                    self.spec.add(w[i + 2])
                if op == _OP_VARIABLE and n >= 4 and w[i + 3] == _SC_WORKGROUP:
                    has_workgroup = True
            elif op == _OP_EXT_INST_IMPORT and n >= 3:
                name, _ = _spirv._string(w[i + 2:i + n])
                if name == "GLSL.std.450":
                    self.glsl = w[i + 1]
            elif op == _OP_MEMORY_MODEL:
                memory_model = k
        if not has_workgroup or not chains or memory_model is None or first_function is None:
            return None
        import_inst = None
        if self.glsl is None:
            self.glsl = self._new_id()
            import_inst = [0, self.glsl] + _string_words("GLSL.std.450")
        edits = {}                   # instruction index -> (new instructions, chain's new words)
        for k in chains:
            edit = self._clamp_chain(k)
            if edit is not None:
                edits[k] = edit
        if not edits:
            return None
        out = list(w[:5])
        out[3] = self.bound
        for k, (op, i, n) in enumerate(self.insts):
            if k == memory_model and import_inst is not None:
                out += _with_header(_OP_EXT_INST_IMPORT, import_inst)
            if k == first_function:
                for inst in self.new_globals:
                    out += inst
            edit = edits.get(k)
            if edit is None:
                out += w[i:i + n]
            else:
                for inst in edit[0]:
                    out += inst
                out += edit[1]
        return _pack(out)

    def _clamp_chain(self, k):
        """(instructions to insert, the chain's new words) for chain ``k``, or None."""
        w, types = self.words, self.types
        op, i, n = self.insts[k]
        ptr = types.get(w[i + 1])            # the result type: a pointer into Workgroup memory
        if ptr is None or ptr[0] != _OP_TYPE_POINTER or ptr[1][0] != _SC_WORKGROUP:
            return None
        base = types.get(self.id_type.get(w[i + 3]))
        if base is None or base[0] != _OP_TYPE_POINTER:
            return None
        current = base[1][1]                 # the type the base pointer points to
        chain = list(w[i:i + n])
        inserted = []
        for pos in range(4 + _CHAIN_OPS[op], n):
            t = types.get(current)
            if t is None:
                break
            top, tops = t
            index = chain[pos]
            length = hi_id = None
            if top == _OP_TYPE_ARRAY:
                length, current = tops[1], tops[0]
            elif top in (_OP_TYPE_VECTOR, _OP_TYPE_MATRIX):
                length, current = ("n", tops[1]), tops[0]
            elif top == _OP_TYPE_STRUCT:
                member = self.consts.get(index)    # struct indices are constants (SPIR-V rule)
                if member is None or member >= len(tops):
                    break
                current = tops[member]
                continue
            elif top == _OP_TYPE_RUNTIME_ARRAY:    # no length to clamp to
                current = tops[0]
                continue
            else:
                break
            itype = types.get(self.id_type.get(index))
            if itype is None or itype[0] != _OP_TYPE_INT:
                continue
            width, signed = itype[1][0], itype[1][1]
            if width not in (8, 16, 32, 64):
                # a corrupt width (an operand of 3e9 made a 3e9-bit int below: seconds and
                # hundreds of MB per index); malformed: left to the validator
                raise SpirvError(f"SPIR-V OpTypeInt %{self.id_type[index]} is {width} bits wide")
            index_type = self.id_type[index]
            top_value = (1 << (width - 1)) - 1 if signed else (1 << width) - 1
            if isinstance(length, tuple) or length in self.consts:
                count = length[1] if isinstance(length, tuple) else self.consts[length]
                if count == 0:
                    continue
                hi = min(count - 1, top_value)
                value = self.consts.get(index)
                if value is not None and (value >> (width - 1) == 0 or not signed) and value <= hi:
                    continue                     # a constant index already in bounds
                if not signed and hi == top_value:
                    continue                     # the type cannot reach past the end
                hi_id = self._constant(index_type, hi, width)
            elif length in self.spec:
                hi_id = self._spec_minus_one(index_type, length, width)
            else:
                continue
            clamped = self._new_id()
            if signed:
                zero = self._constant(index_type, 0, width)
                inserted.append(_with_header(_OP_EXT_INST, [index_type, clamped, self.glsl,
                                                            _GLSL_SCLAMP, index, zero, hi_id]))
            else:
                inserted.append(_with_header(_OP_EXT_INST, [index_type, clamped, self.glsl,
                                                            _GLSL_UMIN, index, hi_id]))
            chain[pos] = clamped
            _stats["indices_clamped"] += 1
        return (inserted, chain) if inserted else None

    def _constant(self, type_id, value, width):
        """The id of an OpConstant of ``type_id`` equal to ``value`` (added if none exists)."""
        cid = self.new_consts.get((type_id, value))
        if cid is None:
            cid = self.new_consts[(type_id, value)] = self._new_id()
            words = [value & 0xFFFFFFFF, value >> 32] if width > 32 else [value]
            self.new_globals.append(_with_header(_OP_CONSTANT, [type_id, cid] + words))
            self.id_type[cid] = type_id
        return cid

    def _spec_minus_one(self, type_id, length, width):
        """A spec-constant expression: the specialization-constant ``length`` minus one, as
        ``type_id`` (the length is only known when the pipeline is made)."""
        key = (type_id, length)
        hit = self.spec_hi.get(key)
        if hit is not None:
            return hit
        ltype = self.types.get(self.id_type.get(length))
        if ltype is None or ltype[0] != _OP_TYPE_INT:
            raise SpirvError(f"SPIR-V array length %{length} is not an integer constant")
        if ltype[1][0] != width:             # another width: converted first (lengths are > 0)
            converted = self._new_id()
            self.new_globals.append(_with_header(_OP_SPEC_CONSTANT_OP,
                                                 [type_id, converted, _OP_SCONVERT, length]))
            length = converted
        one = self._constant(type_id, 1, width)
        hit = self.spec_hi[key] = self._new_id()
        self.new_globals.append(_with_header(_OP_SPEC_CONSTANT_OP,
                                             [type_id, hit, _OP_ISUB, length, one]))
        return hit


def _with_header(op, operands):
    return [((len(operands) + 1) << 16) | op] + list(operands)


# -- float controls -------------------------------------------------------------------------------

def with_denorm_preserve(spirv, widths=(32,)):
    """``spirv`` asking the driver to keep the subnormals of the float ``widths`` (bits).

    Adds ``OpCapability DenormPreserve``, ``OpExtension "SPV_KHR_float_controls"`` (for SPIR-V
    before 1.4, where it is core) and ``OpExecutionMode <entry> DenormPreserve <width>`` on each
    GLCompute entry point. ``widths`` empty, or a module that already chooses a denormal mode
    for one of them: the module as it is. Only for a device that offers the mode for each width
    (``shaderDenormPreserveFloat32``...): elsewhere the module is invalid for the device. Cached
    by content.
    """
    return with_float_controls(spirv, widths, ())


def with_float_controls(spirv, denorm_widths=(), signed_zero_widths=()):
    """``spirv`` with SPV_KHR_float_controls execution modes on each GLCompute entry point:
    ``DenormPreserve`` for ``denorm_widths`` (keep subnormals) and ``SignedZeroInfNanPreserve``
    for ``signed_zero_widths`` (the sign of zero, infinities and NaNs as IEEE 754 says: without
    it a driver may fold ``-0.0`` to ``+0.0`` or assume no NaN, as NVIDIA's does). Each with its
    capability, and the extension before SPIR-V 1.4. A mode the module already sets for a width
    is left as the module has it. Only for modes the device offers (see
    ``_runtime.vulkan.float_control_widths``). Cached by content."""
    if not denorm_widths and not signed_zero_widths:
        return spirv
    if not isinstance(spirv, bytes):
        spirv = bytes(spirv)
    modes = tuple((_CAP_DENORM_PRESERVE, _MODE_DENORM_PRESERVE, int(w)) for w in denorm_widths) + \
        tuple((_CAP_SIGNED_ZERO, _MODE_SIGNED_ZERO, int(w)) for w in signed_zero_widths)
    return _cached(("float-controls", modes), spirv, lambda data: _float_modes(data, modes))


def _float_modes(spirv, modes):
    w = _spirv._words(spirv)
    insts = _split(w)
    entries, last_mode, last_cap, caps, extensions = [], None, None, set(), set()
    last_entry = last_ext = None
    chosen = set()                           # (mode group, width) the module sets itself
    for k, (op, i, n) in enumerate(insts):
        if op == _OP_CAPABILITY and n >= 2:
            caps.add(w[i + 1])
            last_cap = k
        elif op == _OP_EXTENSION and n >= 2:
            extensions.add(_spirv._string(w[i + 1:i + n])[0])
            last_ext = k
        elif op == _OP_ENTRY_POINT and n >= 3:
            if w[i + 1] == _GL_COMPUTE:
                entries.append(w[i + 2])
            last_entry = k
        elif op == _OP_EXECUTION_MODE and n >= 3:
            if n >= 4 and w[i + 2] in (_MODE_DENORM_PRESERVE, _MODE_DENORM_FLUSH):
                chosen.add((_MODE_DENORM_PRESERVE, w[i + 3]))
            elif n >= 4 and w[i + 2] == _MODE_SIGNED_ZERO:
                chosen.add((_MODE_SIGNED_ZERO, w[i + 3]))
            last_mode = k
        elif op == _OP_FUNCTION:
            break
    modes = [m for m in modes if (m[1], m[2]) not in chosen]
    if not entries or last_cap is None or last_entry is None or not modes:
        return spirv
    version = (w[1] >> 16) & 0xFF, (w[1] >> 8) & 0xFF
    after = {}                               # instruction index -> instructions added after it
    for cap in dict.fromkeys(m[0] for m in modes):
        if cap not in caps:
            after.setdefault(last_cap, []).append(_with_header(_OP_CAPABILITY, [cap]))
    if version < (1, 4) and "SPV_KHR_float_controls" not in extensions:
        at = last_ext if last_ext is not None else last_cap
        after.setdefault(at, []).append(_with_header(_OP_EXTENSION,
                                                     _string_words("SPV_KHR_float_controls")))
    at = last_mode if last_mode is not None else last_entry
    for entry in entries:
        for _, mode, width in modes:
            after.setdefault(at, []).append(_with_header(_OP_EXECUTION_MODE, [entry, mode, width]))
    out = list(w[:5])
    for k, (op, i, n) in enumerate(insts):
        out += w[i:i + n]
        for inst in after.get(k, ()):
            out += inst
    return _pack(out)
