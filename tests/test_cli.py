"""The command line: ``python -m kompute_ml info | selftest | compile``.

Every mistake ends with one ``error: ...`` line on stderr and a non-zero status, never a traceback.
"""

import shutil
import subprocess
import sys

import numpy as np
import pytest

from kompute_ml.__main__ import main
from kompute_ml.kernel import Kernel
from test_kernel import _run_double, user_shaders  # noqa: F401 (a fixture, used by name)


def _compile(args):
    return main(["compile", *args])


def test_cli_compile(user_shaders, tmp_path, capsys):
    out = tmp_path / "double.spv"
    assert _compile([str(user_shaders / "double.comp"), "-o", str(out), "-D", "OFFSET=1.0",
                         "--info"]) == 0
    text = capsys.readouterr().out
    assert "local_size: (1, 1, 1)" in text and "bindings: [0]" in text
    k = Kernel.from_spirv(out.read_bytes())
    np.testing.assert_array_equal(_run_double(k), [3.0, 5.0])


def test_cli_compile_default_output_and_errors(user_shaders, capsys):
    assert _compile([str(user_shaders / "double.comp"), "-D", "OFFSET"]) == 1   # empty macro
    assert "error:" in capsys.readouterr().err
    assert _compile([str(user_shaders / "double.comp"), "-DOFFSET=2"]) == 0
    assert (user_shaders / "double.spv").is_file()
    assert _compile(["missing.comp"]) == 1
    assert "no shader file" in capsys.readouterr().err


def test_cli_compile_python_function(tmp_path, capsys):
    py = tmp_path / "mykernels.py"
    py.write_text("from kompute_ml.pyshader import python2shader, Array, f32, ivec3\n"
                  "@python2shader\n"
                  "def add_one(index=('input', 'GlobalInvocationId', ivec3),\n"
                  "            data=('buffer', 0, Array(f32))):\n"
                  "    data[index.x] += 1.0\n")
    out = tmp_path / "add_one.spv"
    assert _compile([f"{py}:add_one", "-o", str(out), "--glsl", "-"]) == 0
    text = capsys.readouterr().out
    assert "void main()" in text and "data[index.x] += 1.0;" in text
    assert out.read_bytes()[:4] == b"\x03\x02\x23\x07"


@pytest.mark.skipif(shutil.which("spirv-dis") is None, reason="spirv-dis not installed")
def test_cli_disassembly(user_shaders, tmp_path, capsys):
    assert _compile([str(user_shaders / "double.comp"), "-o", str(tmp_path / "d.spv"),
                         "-D", "OFFSET=0.0", "--dis"]) == 0
    assert "OpEntryPoint GLCompute" in capsys.readouterr().out


def test_cli_through_main(user_shaders, tmp_path):
    out = tmp_path / "m.spv"
    assert main(["compile", str(user_shaders / "double.comp"), "-o", str(out),
                 "-D", "OFFSET=0.0"]) == 0
    assert out.is_file()


def test_cli_options_before_the_file_and_help(user_shaders, tmp_path, capsys):
    out = tmp_path / "first.spv"
    assert main(["compile", "-o", str(out), "-D", "OFFSET=0.0", "--info",
                 str(user_shaders / "double.comp")]) == 0
    assert out.is_file() and "local_size" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["compile", "-h"])
    assert exc.value.code == 0
    assert "usage: python -m kompute_ml compile" in capsys.readouterr().out


def _cli(*args, cwd):
    """``python -m kompute_ml ARGS`` in a fresh interpreter: (status, stdout, stderr)."""
    r = subprocess.run([sys.executable, "-m", "kompute_ml", *args], capture_output=True, text=True,
                       cwd=cwd, timeout=120)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("args, status, words", [
    (["compile", "{shaders}/double.comp", "-D", "OFFSET=1.0", "-o", "/nonexistent/x.spv"], 1,
     "error: cannot write /nonexistent/x.spv"),
    (["compile", "{shaders}/double.comp", "-D", "OFFSET=1.0", "-o", "{shaders}/x.spv",
      "--glsl", "/nonexistent/x.comp"], 1, "error: cannot write /nonexistent/x.comp"),
    (["compile", "{shaders}/missing.comp"], 1, "error: no shader file"),
    (["compile", "{shaders}/nothing.py:f"], 1, "error: no Python file"),
    (["compile", "{shaders}/double.comp"], 1, "'OFFSET' : undeclared identifier"),
    (["selftest", "--device", "garbage"], 1, "garbage"),
    (["bogus"], 2, "invalid choice: 'bogus'"),
    (["compile"], 2, "the following arguments are required: file"),
])
def test_errors_end_with_one_line_and_a_status(user_shaders, tmp_path, args, status, words):
    args = [a.format(shaders=user_shaders) for a in args]
    code, out, err = _cli(*args, cwd=tmp_path)
    assert code == status, (out, err)
    assert "Traceback" not in err, err
    # the whole of stderr is the message (a compiler's may span lines): no log or warning before it
    assert words in err and err.startswith("error: " if status == 1 else "usage: "), err
    assert not list(user_shaders.glob("*.tmp*")), "a temporary file was left behind"


def test_selftest_and_info_through_python_m(tmp_path):
    code, out, err = _cli("selftest", cwd=tmp_path)
    assert code == 0 and "-> ok" in out, (out, err)
    code, out, err = _cli("info", cwd=tmp_path)
    assert code == 0 and "default device: [" in out, (out, err)
    from kompute_ml import _stamp
    assert f"native build: {_stamp.BUILD_STAMP}" in out, out
