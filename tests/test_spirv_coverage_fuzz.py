"""The coverage-guided SPIR-V fuzzer's finds, kept as regression tests.

tests/fuzz_corpus/spirv/ holds the inputs tests/fuzz_spirv.py (``make fuzz``) found breaking its
property, and a few it keeps for their coverage; each is replayed through that property
(:func:`fuzz_spirv.check_one`: a result or a KomputeMLError/TypeError/ValueError, a valid module
valid through each rewrite) in a child process, so that a crash or a hang fails the test naming
the input.
"""

import os
import struct
import subprocess
import sys

import pytest

import kompute_ml as km

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "fuzz_corpus", "spirv")
# before their fixes the rewrite's inputs took 3-8 s and 600 MB each (3e9-bit integers) and
# Program's minutes (a 2^31-entry list); each now takes a few milliseconds
PER_INPUT_S = 1.0

REPLAY = r'''
import os, sys, time
sys.path.insert(0, sys.argv[1])
import fuzz_spirv
with open(sys.argv[2], "rb") as f:
    fuzz_spirv.check_one(f.read())         # (untimed: loads SPIRV-Tools and the modules)
for path in sys.argv[2:]:
    name = os.path.basename(path)
    print("input", name, flush=True)       # the last line before a crash names the input
    with open(path, "rb") as f:
        data = f.read()
    t0 = time.perf_counter()
    fuzz_spirv.check_one(data)
    print("took", name, time.perf_counter() - t0, flush=True)
'''


def test_corpus_inputs_give_a_result_or_a_clear_error():
    files = sorted(os.path.join(CORPUS, f) for f in os.listdir(CORPUS))
    assert len(files) >= 4, files
    r = subprocess.run([sys.executable, "-c", REPLAY, HERE, *files], capture_output=True,
                       text=True, timeout=60 + PER_INPUT_S * len(files))
    lines = r.stdout.splitlines()
    last = [line for line in lines if line.startswith("input")][-1:]
    assert r.returncode >= 0, f"signal {-r.returncode} at {last}:\n{r.stderr[-2000:]}"
    assert r.returncode == 0, f"at {last}:\n{r.stderr[-3000:]}"
    took = {line.split()[1]: float(line.split()[2]) for line in lines if line.startswith("took")}
    assert len(took) == len(files), r.stdout[-2000:]
    slow = {name: t for name, t in took.items() if t > PER_INPUT_S}
    assert not slow, f"inputs slower than {PER_INPUT_S} s each: {slow}"


def _words(spirv):
    return list(struct.unpack(f"<{len(spirv) // 4}I", spirv))


def _pack(words):
    return struct.pack(f"<{len(words)}I", *words)


# the vector index of pc.v.y is the module's only use of `uint 1` (the workgroup size is 2s)
_PUSH_VEC = """#version 450
layout(local_size_x = 2, local_size_y = 2, local_size_z = 2) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(push_constant) uniform P { vec2 v; } pc;
void main() { a[0] = pc.v.y; }
"""


def test_constant_index_past_a_vector_is_refused():
    """``pc.v[29]`` of a vec2 passes SPIRV-Tools and reads past the push-constant block (the
    validation layer refuses the pipeline; drivers read what lies there): a SpirvError."""
    words = _words(km.compile_glsl(_PUSH_VEC))
    i, uint_ids = 5, set()
    while i < len(words):                      # OpTypeInt 32 0: the uint type
        n, op = words[i] >> 16, words[i] & 0xFFFF
        if op == 21 and words[i + 2:i + 4] == [32, 0]:
            uint_ids.add(words[i + 1])
        if op == 43 and words[i + 1] in uint_ids and words[i + 3] == 1:
            words[i + 3] = 29
            break
        i += n
    else:
        pytest.fail("no `uint 1` constant in the module")
    a = km.zeros(4)
    with pytest.raises(km.SpirvError, match="constant index past the end"):
        km.Kernel.from_spirv(_pack(words))(a, grid=1, push=(1.0, 2.0))
    km.Kernel.from_glsl(_PUSH_VEC)(a, grid=1, push=(1.0, 2.0))    # as compiled: it runs
    assert a.numpy()[0] == 2.0


_ONE_BUFFER = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
void main() { a[0] = 3.0; }
"""


def test_entry_point_not_named_main_is_refused():
    """kp makes the pipeline with the entry point "main": a module naming its compute entry
    point otherwise crashed lavapipe at the pipeline (a mutation of the name's bytes; the
    random-mutation fuzzer's seed 3287). A child process, so that a crash fails the test."""
    code = f"""
import struct, kompute_ml as km
spirv = km.compile_glsl({_ONE_BUFFER!r})
words = list(struct.unpack(f"<{{len(spirv) // 4}}I", spirv))
name = struct.unpack("<I", b"main")[0]
at = words.index(name, 5)                    # the OpEntryPoint's name comes before OpName's
words[at] = struct.unpack("<I", b"mAin")[0]
a = km.zeros(4)
try:
    km.Kernel.from_spirv(struct.pack(f"<{{len(words)}}I", *words))(a, grid=1)
except km.SpirvError as exc:
    assert "entry point" in str(exc), exc
    print("refused")
km.Kernel.from_glsl({_ONE_BUFFER!r})(a, grid=1)
assert a.numpy()[0] == 3.0
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"rc {r.returncode}:\n{r.stderr[-3000:]}"
    assert r.stdout.split() == ["refused"], r.stdout
