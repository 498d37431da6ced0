"""Hostile inputs: each case runs in its own process, so a segfault fails the test instead of
killing the suite. Every case must end in a clear KomputeMLError (or the right answer), never a
signal, a hang or a silent wrong result. The cases come from a probe of lavapipe that crashed or
misled the library before its checks existed."""

import subprocess
import sys
import textwrap

import pytest

import kompute_ml as km

# helpers every case's process has: compile GLSL, edit SPIR-V words, report the outcome
PRELUDE = '''
import struct, sys
import numpy as np
import kompute_ml as km
from kompute_ml._compile import spirv as _spirv

def words(spv):
    return list(struct.unpack(f"<{len(spv) // 4}I", spv))

def to_bytes(w):
    return struct.pack(f"<{len(w)}I", *w)

def instructions(w):
    i = 5
    while i < len(w):
        yield i, w[i] & 0xFFFF, w[i] >> 16
        i += w[i] >> 16

def expect(exc_type, fn, match=""):
    try:
        fn()
    except exc_type as exc:
        assert isinstance(exc, km.KomputeMLError) or exc_type is not km.KomputeMLError, exc
        assert match in str(exc), (match, str(exc))
        print("REFUSED", type(exc).__name__, exc)
        return exc
    raise AssertionError(f"no {exc_type.__name__} raised")

LIMITS = km.get_device().limits

def build_and_run(make):
    """Make a Kernel and dispatch it with zeroed arguments: the refusal may come at either step
    (a check moved from one to the other still holds), but must come before the driver runs."""
    def run():
        k = make()
        arrays = [km.zeros(64) for _ in k.bindings]
        k(*arrays, grid=64, push=bytes(k.push_constant_size))
        arrays[0].numpy()
    return run
'''


def run_case(code, timeout=120, env=None):
    """Run ``code`` (after PRELUDE) in a fresh interpreter; fail on a signal or an error."""
    import os
    full_env = dict(os.environ, **(env or {}))
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
                       capture_output=True, text=True, timeout=timeout, env=full_env)
    assert r.returncode >= 0, f"killed by signal {-r.returncode}:\n{r.stdout}\n{r.stderr}"
    assert r.returncode == 0, f"exit {r.returncode}:\n{r.stdout}\n{r.stderr}"
    assert "Exception ignored" not in r.stderr, r.stderr
    return r


def test_buffer_in_descriptor_set_1():
    run_case('''
    src = """#version 450
    layout(local_size_x = 1) in;
    layout(set = 0, binding = 0) buffer A { float a[]; };
    layout(set = 1, binding = 0) buffer B { float b[]; };
    void main() { a[0] = b[0]; }
    """
    expect(km.SpirvError, build_and_run(lambda: km.Kernel.from_glsl(src)), "descriptor set 0 only")
    ''')


# a real kernel past the limit is built where the limit is small (lavapipe: 32); GPUs allow up to
# millions of buffers per stage, and test_storage_buffer_check_against_a_smaller_limit covers them
_SMALL_BUFFER_LIMIT = km.get_device().limits.get("max_storage_buffers_per_stage", 0) <= 256


@pytest.mark.skipif(not _SMALL_BUFFER_LIMIT, reason="this device allows more storage buffers per "
                    "stage than a test shader can declare; the check is tested against a lowered "
                    "limit below")
@pytest.mark.parametrize("extra", [1, 2])
def test_more_storage_buffers_than_the_device_allows(extra):
    run_case(f'''
    n = LIMITS["max_storage_buffers_per_stage"] + {extra}
    decls = "".join(f"layout(binding = {{i}}) buffer B{{i}} {{{{ float b{{i}}[]; }}}};\\n"
                    for i in range(n))
    body = "".join(f"b{{i}}[0] = {{i}}.0;" for i in range(n))
    k = km.Kernel.from_glsl("#version 450\\nlayout(local_size_x = 1) in;\\n" + decls +
                            "void main() {{" + body + "}}\\n")
    arrays = [km.zeros(1) for _ in range(n)]
    expect(km.DeviceLimitError, lambda: k(*arrays, grid=1), "maxPerStageDescriptorStorageBuffers")
    ''')


def test_builtin_decoration_that_does_not_match_the_variable():
    # the GlobalInvocationId (uvec3) variable decorated LocalInvocationIndex (a scalar)
    run_case('''
    spv = km.compile_glsl("""#version 450
    layout(local_size_x = 1) in;
    layout(binding = 0) buffer A { uint a[]; };
    void main() { a[gl_GlobalInvocationID.x] = 1u; }
    """)
    w = words(spv)
    for i, op, n in instructions(w):
        if op == 71 and n == 4 and w[i + 2] == 11 and w[i + 3] == 28:
            w[i + 3] = 29
    expect(km.SpirvError, build_and_run(lambda: km.Kernel.from_spirv(to_bytes(w))), "BuiltIn 29")
    ''')


@pytest.mark.parametrize("times", [1, 2])
def test_push_constant_block_over_the_device_limit(times):
    # one word past the device's limit, and twice the limit (lavapipe: 128 bytes, H100: 256)
    run_case(f'''
    n = LIMITS["max_push_constants_size"] // 4 * {times} + (1 if {times} == 1 else 0)
    assert 4 * n > LIMITS["max_push_constants_size"]
    k = km.Kernel.from_glsl(f"""#version 450
    layout(local_size_x = 1) in;
    layout(binding = 0) buffer A {{{{ float a[]; }}}};
    layout(push_constant) uniform P {{{{ float v[{{n}}]; }}}} pc;
    void main() {{{{ a[0] = pc.v[{{n - 1}}]; }}}}
    """)
    x = km.zeros(1)
    expect(km.DeviceLimitError, lambda: k(x, grid=1, push=(1.0,) * n), "maxPushConstantsSize")
    ''')


def test_push_constant_member_offset_mutated_to_gigabytes():
    run_case('''
    spv = km.compile_glsl("""#version 450
    layout(local_size_x = 1) in;
    layout(binding = 0) buffer A { float a[]; };
    layout(push_constant) uniform P { float s; float t; } pc;
    void main() { a[0] = pc.s + pc.t; }
    """)
    w = words(spv)
    for i, op, n in instructions(w):
        if op == 72 and n == 5 and w[i + 2] == 1 and w[i + 3] == 35:   # member 1 Offset
            w[i + 4] = 1_300_000_000
    expect(km.SpirvError, build_and_run(lambda: km.Kernel.from_spirv(to_bytes(w))),
           "Offset 1300000000")
    ''')


def test_shared_memory_over_the_device_limit():
    run_case('''
    n = LIMITS["max_shared_memory"] * 12 // 4      # ~400 KB on lavapipe's 32 KiB
    k = km.Kernel.from_glsl(f"""#version 450
    layout(local_size_x = 64) in;
    layout(binding = 0) buffer A {{ float a[]; }};
    shared float tile[{n}];
    void main() {{
        tile[gl_LocalInvocationIndex * 100] = 1.0;
        barrier();
        a[gl_GlobalInvocationID.x] = tile[{n - 1}];
    }}
    """)
    assert k.info.shared_memory_size == 4 * n
    x = km.zeros(64)
    expect(km.DeviceLimitError, lambda: k(x, grid=64), "maxComputeSharedMemorySize")
    ''')


def test_local_size_zero_and_malformed_types():
    run_case('''
    spv = km.compile_glsl("""#version 450
    layout(local_size_x = 4) in;
    layout(binding = 0) buffer A { float a[]; };
    layout(push_constant) uniform P { vec4 v; } pc;
    void main() { a[gl_GlobalInvocationID.x] = pc.v.x; }
    """)
    w = words(spv)
    zero, wide = list(w), list(w)
    for i, op, n in instructions(w):
        if op == 16 and w[i + 2] == 17:             # OpExecutionMode LocalSize
            zero[i + 3] = 0
        if op == 43 and n == 4 and w[i + 3] == 4:   # the WorkgroupSize constant's x
            zero[i + 3] = 0
        if op == 23 and w[i + 3] == 4:              # OpTypeVector ... 4 -> 1000000 components
            wide[i + 3] = 1_000_000
    expect(km.SpirvError, build_and_run(lambda: km.Kernel.from_spirv(to_bytes(zero))), "LocalSize")
    expect(km.SpirvError, build_and_run(lambda: km.Kernel.from_spirv(to_bytes(wide))), "components")
    # a type id that refers to nothing (the pointer's pointee renumbered past the bound)
    dangling = list(w)
    for i, op, n in instructions(w):
        if op == 32 and w[i + 2] == 9:              # OpTypePointer PushConstant
            dangling[i + 3] = w[3] + 7
    expect(km.SpirvError, build_and_run(lambda: km.Kernel.from_spirv(to_bytes(dangling))))
    ''')


def test_sample_weight_beyond_float32():
    run_case('''
    from kompute_ml import LogisticRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    for solver, w in (("lbfgs", 1e37), ("adam", 1e39), ("sgd", 1e-40)):
        m = LogisticRegression(solver=solver)
        expect(ValueError, lambda: m.fit(X, y, sample_weight=np.full(200, w)), "float32")
    # the way out the message gives: scale the weights, and C by the same factor
    a = LogisticRegression(solver="lbfgs", C=1.0).fit(X, y, sample_weight=np.full(200, 1e-3))
    b = LogisticRegression(solver="lbfgs", C=1e-3).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-3, atol=1e-4)
    ''', timeout=300)


def test_tiny_c_is_named_not_the_learning_rate():
    run_case('''
    from kompute_ml import LogisticRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    expect(ValueError, lambda: LogisticRegression(C=1e-30, solver="sgd").fit(X, y),
           "C=1e-30 is too small")
    ''', timeout=300)


def test_tiny_c_with_adam_is_refused_or_fits_zero_coefficients():
    # C=1e-30: Adam's float32 second moment overflowed, the coefficients froze at +-lr with a
    # loss of 1e25 and no error. Past the bound: ValueError naming C; below it: coefficients ~0
    # as scikit-learn gives, and the intercept (unpenalized) at the log-odds of the classes
    run_case('''
    import warnings
    from kompute_ml import LogisticRegression
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    y = (X[:, 0] > 0.3).astype(int)
    for C in (1e-30, 1e-300):
        expect(ValueError, lambda: LogisticRegression(C=C, solver="adam").fit(X, y),
               f"C={C:g} is too small for solver='adam'")
    for C in (1e-6, 1e-12):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")    # a ConvergenceWarning is fine; the answer counts
            m = LogisticRegression(C=C, solver="adam", random_state=0).fit(X, y)
        ref = SkLogisticRegression(C=C).fit(X.astype(np.float64), y)
        scale = np.abs(ref.coef_).max()
        np.testing.assert_allclose(m.coef_, ref.coef_, atol=0.05 * scale + 1e-8)
        p = y.mean()
        np.testing.assert_allclose(m.intercept_, [np.log(p / (1 - p))], atol=0.05)
    ''', timeout=300)


def test_too_wide_for_the_loop_budget_leaves_no_ignored_exception():
    # LogLossProgram.__init__ raises DeviceLimitError before its buffers exist; its __del__
    # must not then print "Exception ignored" (run_case fails on that text in stderr)
    run_case('''
    from kompute_ml import LogisticRegression
    from kompute_ml._runtime import stream as _stream
    if _stream.loop_limit(km.get_device()) is None:
        print("no loop budget on this device: nothing to refuse")
        sys.exit(0)
    X = np.ones((8, 600001), dtype=np.float32)    # past lavapipe's budget at one row a workgroup
    y = np.arange(8) % 2
    expect(km.DeviceLimitError, lambda: LogisticRegression(solver="sgd").fit(X, y), "features")
    import gc; gc.collect()
    ''', timeout=300)


def test_empty_matmul_with_huge_k_returns_at_once():
    run_case('''
    r = km.zeros((0, 2**33)) @ km.zeros((2**33, 0))
    assert r.shape == (0, 0)
    assert (km.zeros((3, 2**22)) @ km.zeros((2**22, 0))).shape == (3, 0)
    ''', timeout=60)


def test_memory_limit_inf_names_the_variable():
    run_case('''
    expect(ValueError, lambda: km.ones(3).numpy(), "KOMPUTE_ML_MEMORY_LIMIT='inf'")
    ''', env={"KOMPUTE_ML_MEMORY_LIMIT": "inf"})


def test_vulkan_library_that_is_not_a_loader():
    code = '''
    import kompute_ml as km
    assert km.devices() == []
    try:
        km.get_device()
    except km.DeviceNotFoundError as exc:
        assert "KOMPUTE_ML_VULKAN_LIBRARY='libc.so.6'" in str(exc), exc
        print("REFUSED", exc)
    else:
        raise AssertionError("no DeviceNotFoundError")
    '''
    import os
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=60,
                       env=dict(os.environ, KOMPUTE_ML_VULKAN_LIBRARY="libc.so.6"))
    assert r.returncode == 0, r.stderr


def test_use_device_with_a_device_object_uses_that_object():
    run_case('''
    d = km.Device(km.devices()[0])
    with km.use_device(d):
        a = km.ones(3)
        assert km.get_device() is d
    assert a.device is d
    b = km.ones(3)
    exc = expect(ValueError, lambda: a + b, "two Device objects for the same physical device")
    d.close()
    ''')


# Host memory under an address-space limit (`prlimit --as`, `ulimit -v`): lavapipe's device memory
# is host memory, and a failed allocation inside kp used to segfault (rc 139) in tensor creation.
# The address-space tests run without the NVIDIA clock hold: its CUDA context reserves a large
# virtual range that the driver's later host mappings are placed in, so a limit measured after it
# no longer bounds them (they then all fit); without a context every mapping counts.
_LIMIT_AS_ENV = {"KOMPUTE_ML_HOLD_CLOCKS": "0"}
_LIMIT_AS = '''
    import gc, resource
    from kompute_ml._runtime import memory as _memory
    km.zeros(4).numpy()        # the driver's threads and JIT exist before the limit is measured
    used = _memory._proc_status_bytes("VmSize")["VmSize"]
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(resource.RLIMIT_AS, (used + (1200 << 20), hard))
'''


def test_host_address_space_limit_gives_out_of_memory_error():
    run_case(_LIMIT_AS + '''
    # host memory per array: on a CPU device (lavapipe) a 128 MiB array is ~256 MiB of it (its
    # "device" memory is host memory); on a GPU a large array has none (a storage tensor behind
    # the bounded staging ring), so there arrays below the ring's bound, each with host staging
    # of its own, fill the limit
    cpu = km.get_device().info.type == "cpu"
    n_el, count = (2**25, 100) if cpu else ((_memory.RING_MIN_BYTES // 2) // 4, 20000)
    xs = []
    for i in range(count):
        try:
            xs.append(km.zeros(n_el))
        except km.OutOfMemoryError as exc:
            assert isinstance(exc, MemoryError) and "RLIMIT_AS" in str(exc), exc
            print("REFUSED after", i, exc)
            break
    else:
        raise AssertionError(f"{count} arrays of {n_el} floats fitted a 1.2 GB address-space limit")
    assert len(xs) >= 1
    # the pool then recovers: released arrays go to its cache, and an allocation of another size
    # frees that cache and retries (the guard's refusal goes through the same free-and-retry)
    n = len(xs)
    del xs[:]
    gc.collect()
    m_el = 3 * n_el // 4                                  # 3/4 of the size: another pool bucket
    ys = [km.full(m_el, 2.0) for _ in range(n)]
    assert float(ys[-1].sum().numpy()) == 2.0 * m_el
    ''', env=_LIMIT_AS_ENV, timeout=300)


def test_small_arrays_under_an_address_space_limit_give_out_of_memory_error():
    # small buffers are ranges of segments, and the host-room check runs once per
    # memory.CHECK_CARVED_BYTES of them: filling the limit with 64 KiB arrays is still refused by
    # the check (its slack covers the segments made between two checks), and a refused check
    # stays due for the pool's retry (which once made the array past the refusal)
    run_case(_LIMIT_AS + '''
    n_el = 16 << 10                          # 64 KiB: four arrays per check
    assert 4 * n_el < _memory.CHECK_CARVED_BYTES
    xs = []
    for i in range(60000):
        try:
            xs.append(km.full(n_el, float(i % 7)))
        except km.OutOfMemoryError as exc:
            assert isinstance(exc, MemoryError) and "RLIMIT_AS" in str(exc), exc
            print("REFUSED after", i, exc)
            break
    else:
        raise AssertionError("60000 arrays of 64 KiB fitted a 1.2 GB address-space limit")
    assert len(xs) > 100
    assert [float(x[5].numpy()) for x in xs[-3:]] == [float(i % 7) for i in range(len(xs) - 3, len(xs))]
    del xs[:]
    gc.collect()
    assert float(km.ones(1000).sum().numpy()) == 1000.0      # the device still works
    ''', env=_LIMIT_AS_ENV, timeout=300)


def test_kp_allocation_failure_is_an_exception_not_a_crash():
    # kompute_ml._kp is built from patches/kp (its stamp is checked on import: test_native.py)
    # patches/kp/0011: kp itself checks vkAllocateMemory's result; called past the guard, the
    # failed allocation is an OutOfMemoryError instead of a segfault in the driver
    run_case(_LIMIT_AS + '''
    from kompute_ml._runtime import kp as _kp
    dev = km.get_device()
    tensors = []
    for i in range(20):                    # 128 MiB each, ~256 MiB of host memory on lavapipe
        try:
            tensors.append(_kp.tensor_create(dev.manager, 1 << 27, dev.name))
        except MemoryError as exc:         # kp's allocation (OutOfMemoryError) or numpy's zeros
            print("REFUSED after", i, type(exc).__name__, exc)
            break
    else:
        raise AssertionError("20 tensors of 128 MiB fitted 1.2 GB of address space")
    del tensors
    assert float(km.ones(1000).sum().numpy()) == 1000.0      # the device still works
    ''', env=_LIMIT_AS_ENV, timeout=300)


# A kernel that runs too long: lavapipe cuts each invocation's loops at 65535 iterations, so the
# kernel is long through many invocations (32768 x 60000 iterations: seconds on lavapipe); a GPU
# runs those in parallel in about 0.2 ms, so there an outer loop repeats them (OUTER: ~1 s on an H100)
_SLOW_KERNEL = '''
    import time
    SLOW = km.Kernel.from_glsl("""#version 450
    layout(local_size_x = 64) in;
    layout(std430, binding = 0) buffer Out { float y[]; };
    layout(push_constant) uniform Push { uint iters; uint outer; } pc;
    void main() {
        float x = float(gl_GlobalInvocationID.x);
        for (uint j = 0u; j < pc.outer; j++)
            for (uint i = 0u; i < pc.iters; i++) x = x * 0.999 + 1.0;
        y[gl_GlobalInvocationID.x] = x;
    }
    """)
    OUTER = 1 if km.get_device().info.type == "cpu" else 5000

    def wait_until_usable():
        """The device counts as lost ("is lost") until the work that timed out has finished."""
        for _ in range(600):
            try:
                km.synchronize()
                return
            except km.DeviceError as exc:
                assert "is lost" in str(exc), exc
                time.sleep(0.1)
        raise AssertionError("the device was still lost after 60 s")
'''


def test_kernel_timeout_names_the_kernel():
    run_case(_SLOW_KERNEL + '''
    # a short kernel with a timeout is unaffected
    z = km.zeros(64)
    SLOW(z, grid=64, push=(10, 1), timeout=30)
    ref = np.arange(64, dtype=np.float64)
    for _ in range(10):
        ref = ref * 0.999 + 1.0
    np.testing.assert_allclose(z.numpy(), ref, rtol=1e-5)
    # a long one raises DeviceError naming it ("<glsl>": a kernel from GLSL source)
    y = km.zeros(32768)
    t = time.perf_counter()
    exc = expect(km.DeviceError, lambda: SLOW(y, grid=32768, push=(60000, OUTER), timeout=0.05),
                 "<glsl>")
    assert "timeout of 0.05 s" in str(exc) or "within 0.05 s" in str(exc), exc
    # then the device works again as soon as that work has finished
    wait_until_usable()
    np.testing.assert_allclose(y.numpy()[:100], 1000.0, atol=0.1)   # 1000 + (x0-1000)*0.999^n
    assert float(km.ones(10).sum().numpy()) == 10.0
    expect(ValueError, lambda: km.synchronize(timeout=-1), "timeout")
    expect(ValueError, lambda: km.synchronize(timeout="soon"), "timeout")
    ''', timeout=300)


def test_kernel_timeout_from_the_environment():
    run_case(_SLOW_KERNEL + '''
    y = km.zeros(32768)
    SLOW(y, grid=32768, push=(60000, OUTER))           # recorded: the submit below is timed
    expect(km.DeviceError, lambda: km.synchronize(), "<glsl>")
    wait_until_usable()
    import os
    os.environ["KOMPUTE_ML_KERNEL_TIMEOUT"] = "soon"
    expect(ValueError, lambda: km.ones(3).numpy(), "KOMPUTE_ML_KERNEL_TIMEOUT")
    os.environ["KOMPUTE_ML_KERNEL_TIMEOUT"] = "0"  # 0: no timeout
    assert float(km.ones(3).sum().numpy()) == 3.0
    ''', env={"KOMPUTE_ML_KERNEL_TIMEOUT": "0.05"}, timeout=300)


def test_storage_buffer_check_against_a_smaller_limit():
    """The same check on any device: a 33-buffer kernel against a limit of 32."""
    from kompute_ml._compile import spirv as _spirv
    decls = "".join(f"layout(binding = {i}) buffer B{i} {{ float b{i}[]; }};\n" for i in range(33))
    body = "".join(f"b{i}[0] = {i}.0;" for i in range(33))
    spv = km.compile_glsl("#version 450\nlayout(local_size_x = 1) in;\n" + decls +
                          "void main() {" + body + "}\n")
    limits = dict(km.get_device().limits, max_storage_buffers_per_stage=32)
    with pytest.raises(km.DeviceLimitError, match="maxPerStageDescriptorStorageBuffers"):
        _spirv.check_device_limits(_spirv.reflect(spv), limits, "kernel")


# a two-buffer kernel and a way to give one of its decorations a second, conflicting copy
TWO_BUFFERS = '''
src = """#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint N = 64;
layout(push_constant) uniform P { uint n; float s; } p;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < p.n && i < N) a[i] = b[i] * p.s; }
"""
spv = km.compile_glsl(src)

def conflicting(w, decoration, value, member=False):
    """``w`` with a copy of its first decoration ``decoration`` (OpMemberDecorate if
    ``member``) inserted before it, its value replaced by ``value``."""
    op = 72 if member else 71
    at = 3 if member else 2
    for i, opcode, count in instructions(w):
        if opcode == op and w[i + at] == decoration:
            copy = w[i:i + count]
            copy[at + 1:] = [value]
            copy[0] = (len(copy) << 16) | op
            return w[:i] + copy + w[i:]
    raise AssertionError(f"no decoration {decoration}")

def run_kernel(data):
    k = km.Kernel.from_spirv(data)
    a, b = km.zeros(100), km.ones(100)
    k(a, b, grid=100, push=(100, 2.0))
    return a.numpy()
'''


@pytest.mark.parametrize("decoration, value, member", [
    (34, 2, False),       # DescriptorSet 2 before DescriptorSet 0 (the driver read set 2)
    (33, 7, False),       # Binding
    (1, 3, False),        # SpecId
    (11, 24, False),      # BuiltIn NumWorkgroups before GlobalInvocationId
    (2, None, False),     # Block twice
    (35, 64, True),       # a push-constant member's Offset
    (6, 8, False),        # ArrayStride of a runtime array
])
def test_a_decoration_given_twice_is_refused(decoration, value, member):
    run_case(TWO_BUFFERS + textwrap.dedent(f'''
    w = words(spv)
    value = {value!r}
    if value is None:       # a decoration without operands: the same one again
        for i, opcode, count in instructions(w):
            if opcode == 71 and w[i + 2] == {decoration}:
                w = w[:i] + w[i:i + count] + w[i:]
                break
        bad = to_bytes(w)
    else:
        bad = to_bytes(conflicting(w, {decoration}, value, member={member}))
    expect(km.SpirvError, lambda: run_kernel(bad), "twice")
    expect(km.SpirvError, lambda: _spirv.reflect(bad), "twice")
    assert (run_kernel(spv)[:3] == 2).all()          # the module as compiled still runs
    '''))


def test_a_decoration_group_that_conflicts_is_refused():
    """OpGroupDecorate applies a group's decorations as if given directly: a group's
    DescriptorSet 2 on a buffer that also has DescriptorSet 0 is a second decoration."""
    run_case(TWO_BUFFERS + textwrap.dedent('''
    w = words(spv)
    for i, opcode, count in instructions(w):
        if opcode == 71 and w[i + 2] == 34:
            target = w[i + 1]
            break
    group = w[3]
    w[3] += 1                                         # the id bound grows by the group's id
    extra = [(4 << 16) | 71, group, 34, 2, (2 << 16) | 73, group, (3 << 16) | 74, group, target]
    bad = to_bytes(w[:i] + extra + w[i:])
    expect(km.SpirvError, lambda: run_kernel(bad))
    print("group refused")
    '''))


def test_close_while_other_threads_use_the_device():
    """Device.close from one thread while four others loop on the device: close returns and
    each user ends with DeviceError, or carries on right on the default device opened anew
    (the close hook once took the realize lock while holding the device's, and a user held
    them the other way round: a deadlock)."""
    code = '''
    import threading, time
    dev = km.get_device()
    def step():
        return float((km.asarray(np.arange(1000, dtype=np.float32)) * 2).sum())
    assert step() == 999000.0
    outcomes, stop = [], threading.Event()
    def work():
        try:
            while not stop.is_set():
                assert step() == 999000.0
            outcomes.append("finished")      # its next step opened the default device anew
        except km.DeviceError as exc:
            outcomes.append("DeviceError")
        except BaseException as exc:
            outcomes.append(repr(exc))
    threads = [threading.Thread(target=work, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    t0 = time.perf_counter()
    dev.close()
    took = time.perf_counter() - t0
    time.sleep(0.1)
    stop.set()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a user thread hangs"
    assert len(outcomes) == 4 and set(outcomes) <= {"DeviceError", "finished"}, outcomes
    print("closed in", took)
    '''
    for env in ({}, {"KOMPUTE_ML_DEBUG_LOCKS": "1"}):
        run_case(code, timeout=60, env=env)


@pytest.mark.parametrize("decl, make", [
    ("float", "km.asarray(np.arange(4, dtype=np.int32))"),
    ("int", "km.ones(4)"),
    ("uint", "km.asarray(np.arange(4, dtype=np.int32))"),
    ("float", "km.asarray(np.arange(4.0))"),          # float64 where the device has it
])
def test_a_kernel_refuses_an_array_of_another_dtype(decl, make):
    run_case(f'''
    src = """#version 450
    layout(local_size_x = 4) in;
    layout(set = 0, binding = 0) buffer A {{ {decl} a[]; }};
    void main() {{ a[gl_GlobalInvocationID.x] += {decl}(1); }}
    """
    k = km.Kernel.from_glsl(src)
    x = {make}
    if x.dtype.name == "float32" and "{decl}" == "float":
        raise SystemExit(0)          # no float64 here: the data became float32
    before = x.numpy().copy()
    exc = expect(TypeError, lambda: k(x, grid=4), "binding 0 is declared")
    assert str(x.dtype) in str(exc), exc
    assert (x.numpy() == before).all()               # nothing ran
    ''')


def test_a_kernel_takes_its_declared_dtypes():
    """float32 for float, int32 for int, uint32 and bool for uint (bool's words are 0/1)."""
    run_case('''
    for decl, arr, want in [("float", km.ones(4), [2, 2, 2, 2]),
                            ("int", km.asarray(np.array([-3, 0, 1, 2], np.int32)), [-2, 1, 2, 3]),
                            ("uint", km.asarray(np.arange(4, dtype=np.uint32)), [1, 2, 3, 4]),
                            ("uint", km.asarray(np.array([True, False, True, False])),
                             [True, True, True, True])]:
        src = f"""#version 450
        layout(local_size_x = 4) in;
        layout(set = 0, binding = 0) buffer A {{ {decl} a[]; }};
        void main() {{ uint i = gl_GlobalInvocationID.x; a[i] = {decl}(1) + (a[i] == {decl}(1) && "{decl}" == "uint" ? {decl}(0) : a[i]); }}
        """
        if decl == "uint" and arr.dtype == np.bool_:
            src = src.replace("a[i] = uint(1) + (a[i] == uint(1) && \\"uint\\" == \\"uint\\" ? uint(0) : a[i]);", "a[i] = 1u;")
        elif decl == "uint":
            src = src.replace("a[i] = uint(1) + (a[i] == uint(1) && \\"uint\\" == \\"uint\\" ? uint(0) : a[i]);", "a[i] += 1u;")
        else:
            src = src.replace(f"a[i] = {decl}(1) + (a[i] == {decl}(1) && \\"{decl}\\" == \\"uint\\" ? {decl}(0) : a[i]);", f"a[i] += {decl}(1);")
        k = km.Kernel.from_glsl(src)
        k(arr, grid=4)
        assert arr.numpy().tolist() == want, (decl, arr.numpy())
    ''')


@pytest.mark.parametrize("args, dtype", [
    ((2**31 - 2, 2**31 + 2), "int32"),
    ((2**63 - 2, 2**63 + 2), None),            # the default integer: int64 or int32
    ((2**63 - 2, 2**63 + 2), "int64"),
    ((-1, 3), "uint64"),
    ((-1, 3), "uint32"),
    ((2**32 - 1, 2**32 + 1), "uint32"),
    ((0, -(2**31) - 2, -1), "int32"),
    ((2**31 - 2.0, 2**31 + 2.0), "int32"),
])
def test_arange_never_wraps(args, dtype):
    run_case(f'''
    dtype = {dtype!r}
    kw = {{}} if dtype is None else {{"dtype": np.dtype(dtype)}}
    for arange in (km.arange, __import__("kompute_ml.array", fromlist=["arange"]).arange):
        expect(OverflowError, lambda: arange(*{args!r}, **kw), "do not fit")
    ''')


def test_arange_at_the_edges_of_32_bits():
    run_case('''
    for args, dt in [((2**31 - 3, 2**31), np.int32), ((-(2**31), -(2**31) + 3), np.int32),
                     ((2**32 - 3, 2**32), np.uint32), ((2**31 - 2, 2**31 + 2), np.uint32),
                     ((10, -10, -7), np.int32)]:
        got = km.arange(*args, dtype=dt).numpy()
        want = np.arange(*args, dtype=np.int64).astype(dt)
        assert got.dtype == dt and (got == want).all(), (args, got, want)
    ''')
