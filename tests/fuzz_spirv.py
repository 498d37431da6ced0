"""A coverage-guided fuzzer (atheris, libFuzzer's engine) over the SPIR-V reader, reflection,
validation and the rewrites applied before a module reaches a driver.

The property (:func:`check_one`): any bytes give a result or raise KomputeMLError, TypeError or
ValueError; never another exception, a hang or a crash. A valid module stays valid through each
rewrite, and reflects as it did. A module that reflects makes a Program (the kernel layer's
packing is sized from the reflection). No device is used.

    python tests/fuzz_spirv.py [libFuzzer flags] CORPUS_DIR [SEED_DIR...]

``make fuzz`` runs it for a bounded time, seeded with every built-in shader (compiled here) and
tests/fuzz_corpus/spirv/, the inputs kept as regression tests (tests/test_spirv_coverage_fuzz.py
replays them). An input that breaks the property is written to ``-artifact_prefix``: keep it in
that folder once fixed.
"""

import os
import random
import struct
import sys

ALLOWED = None          # (KomputeMLError, TypeError, ValueError), set by _load
_spirv = _rewrite = _program = None


def _load():
    global ALLOWED, _spirv, _rewrite, _program
    from kompute_ml._compile import rewrite, spirv
    from kompute_ml._runtime import program
    from kompute_ml.errors import KomputeMLError
    ALLOWED = (KomputeMLError, TypeError, ValueError)
    _spirv, _rewrite, _program = spirv, rewrite, program


def _attempt(fn, *args):
    """fn(*args), or None when it raises one of the allowed errors."""
    try:
        return fn(*args)
    except ALLOWED:
        return None


def check_one(data):
    """Run every reader and rewrite over ``data``; AssertionError (or the stray exception
    itself) when the property fails."""
    if _spirv is None:
        _load()
    _attempt(_spirv.validate, data)
    info = _attempt(_spirv.reflect, data)
    if info is not None:
        _attempt(_program.Program, data)     # sizes its packing from the reflection
    valid = _valid_now(data)
    for name, rewrite in (("clamp_workgroup_indices", _rewrite.clamp_workgroup_indices),
                          ("with_float_controls",
                           lambda d: _rewrite.with_float_controls(d, (32,), (32,)))):
        out = _attempt(rewrite, data)
        if out is None or out is data or not valid or info is None:
            continue
        if not isinstance(out, bytes):
            raise AssertionError(f"{name} returned {type(out).__name__}, not bytes")
        try:
            _spirv.check_valid(out)
        except ALLOWED as exc:
            raise AssertionError(f"{name} made a valid module invalid: {exc}") from None
        after = _spirv.reflect(out)
        if (after.bindings, after.push_constant_size, after.local_size) != \
                (info.bindings, info.push_constant_size, info.local_size):
            raise AssertionError(f"{name} changed the module's reflection: {info} -> {after}")


def _valid_now(data):
    """Whether check_valid (SPIRV-Tools, then our own checks) accepts ``data``."""
    try:
        _spirv.check_valid(data)
        return True
    except ALLOWED:
        return False


# -- seeds ---------------------------------------------------------------------------------------

def seed_modules():
    """{name: SPIR-V bytes} of every built-in shader and example (compiled in-process)."""
    import kompute_ml as km
    from kompute_ml._runtime import program
    out = {}
    for name in program.names():
        try:
            out[name] = program.spirv(name)
        except km.KomputeMLError:        # a shader that needs defines to compile
            pass
    examples = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "shaders", "examples")
    for f in sorted(os.listdir(examples)) if os.path.isdir(examples) else ():
        if f.endswith(".comp"):
            try:
                out["example_" + f[:-5]] = km.compile_glsl(open(os.path.join(examples, f)).read())
            except km.KomputeMLError:
                pass
    return out


def write_seeds(folder):
    os.makedirs(folder, exist_ok=True)
    for name, data in seed_modules().items():
        with open(os.path.join(folder, name + ".spv"), "wb") as f:
            f.write(data)


# -- a SPIR-V-aware mutator ------------------------------------------------------------------------
# libFuzzer's byte mutations rarely keep a module's word counts consistent, so most of its
# mutants die in the first check; these keep the instruction stream well-formed and change what
# reflection and the rewrites read (decorations, types, constants, execution modes), or move,
# drop and repeat whole instructions (a repeated decoration is how item 1 of issue 52 crashed).

SPECIAL = [0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 16, 24, 28, 29, 32, 33, 34, 35, 64, 255, 256,
           4096, 65535, 2**16, 2**31 - 1, 2**31, 2**32 - 1]


def _split(words):
    out, i = [], 5
    while i < len(words):
        n = words[i] >> 16
        if n == 0 or i + n > len(words):
            return None
        out.append(words[i:i + n])
        i += n
    return out


def mutate(data, max_size, seed):
    rng = random.Random(seed)
    if len(data) < 24 or len(data) % 4 or rng.random() < 0.25:
        return _byte_mutate(data, max_size)
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    insts = _split(words)
    if not insts:
        return _byte_mutate(data, max_size)
    for _ in range(rng.choice((1, 1, 2, 3))):
        k = rng.randrange(len(insts))
        inst = insts[k]
        kind = rng.randrange(7)
        if kind == 0 and len(inst) > 1:              # an operand to a special value
            inst[rng.randrange(1, len(inst))] = rng.choice(SPECIAL) if rng.random() < 0.8 \
                else rng.getrandbits(32)
        elif kind == 1 and len(inst) > 1:            # flip a bit of an operand
            inst[rng.randrange(1, len(inst))] ^= 1 << rng.randrange(32)
        elif kind == 2:                              # repeat an instruction
            insts.insert(rng.randrange(len(insts) + 1), list(inst))
        elif kind == 3 and len(insts) > 1:           # drop one
            del insts[k]
        elif kind == 4 and len(insts) > 1:           # move one
            insts.insert(rng.randrange(len(insts)), insts.pop(k))
        elif kind == 5:                              # add or drop an operand word
            if len(inst) > 1 and rng.random() < 0.5:
                inst.pop()
            else:
                inst.append(rng.choice(SPECIAL))
            inst[0] = (len(inst) << 16) | (inst[0] & 0xFFFF)
        else:                                        # the opcode of another instruction
            other = insts[rng.randrange(len(insts))]
            inst[0] = (inst[0] & 0xFFFF0000) | (other[0] & 0xFFFF)
    if rng.random() < 0.05:
        words[3] = rng.choice(SPECIAL)               # the id bound
    out = words[:5] + [w & 0xFFFFFFFF for inst in insts for w in inst]
    blob = struct.pack(f"<{len(out)}I", *out)
    return blob if len(blob) <= max_size else data[:max_size]


def _byte_mutate(data, max_size):
    import atheris
    return atheris.Mutate(data, max_size)


def _one_input(data):
    check_one(data)


def _instrument(atheris, module):
    """Instrument every function and method ``module`` defines, in place (atheris's import hook
    does not see through the editable install's loader)."""
    for obj in list(vars(module).values()):
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if isinstance(obj, type):
            for attr in vars(obj).values():
                fn = getattr(attr, "__func__", attr)
                if hasattr(fn, "__code__"):
                    atheris.instrument_func(fn)
        elif hasattr(obj, "__code__"):
            atheris.instrument_func(obj)


def main(argv):
    import atheris
    _load()
    for module in (_spirv, _rewrite):
        _instrument(atheris, module)
    atheris.Setup(argv, _one_input, custom_mutator=mutate)
    atheris.Fuzz()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write-seeds":
        write_seeds(sys.argv[2])
    else:
        main(sys.argv)
