"""The documentation holds to the code: the README's quickstart and docs/quickstart.md run as
written, every public name is in the API reference, every environment variable the package reads
is on the configuration page, and the public docstrings' examples pass as doctests."""

import doctest
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import kompute_ml as km

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, re.S)


def _run(code, tmp_path):
    script = tmp_path / "snippet.py"
    script.write_text(code)
    # a fresh process in an empty folder: the snippet needs nothing but the installed package
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)


def test_readme_quickstart_runs_as_written(tmp_path):
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1]
    code = _python_blocks(section)[0]
    assert len(code.strip().splitlines()) <= 12
    r = _run(code, tmp_path)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()[:2]
    assert float(first.split()[0]) == pytest.approx(
        np.exp(np.linspace(0, 1, 1_000_000) * 2 + 1).sum(), rel=1e-4)
    assert float(second) > 0.95          # the training accuracy of a separable problem


def test_the_quickstart_page_runs_as_written(tmp_path):
    code = "\n".join(_python_blocks((DOCS / "quickstart.md").read_text()))
    r = _run(code, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "[0. 2. 4. 6.]" in r.stdout


def test_the_logistic_guide_runs_as_written(tmp_path):
    code = "\n".join(_python_blocks((DOCS / "logistic.md").read_text()))
    r = _run(code, tmp_path)
    assert r.returncode == 0, r.stderr
    # the precision table's rows come from this code: L-BFGS matches scikit-learn closely
    lbfgs = next(line for line in r.stdout.splitlines() if line.startswith("lbfgs"))
    assert float(lbfgs.split()[1]) < 1e-5 and float(lbfgs.split()[2]) == 1.0


def _documented_names():
    """{module: names} that docs/reference/*.rst documents with a directive."""
    found = {}
    directive = re.compile(r"^\.\. (?:auto\w+|py:\w+):: ([\w.]+)", re.M)
    current = re.compile(r"^\.\. currentmodule:: ([\w.]+)", re.M)
    for page in sorted((DOCS / "reference").glob("*.rst")):
        text = page.read_text()
        # each directive's module: the last currentmodule above it (kompute_ml by default)
        marks = [(m.start(), m.group(1)) for m in current.finditer(text)]
        for m in directive.finditer(text):
            name = m.group(1)
            module = "kompute_ml"
            for pos, mod in marks:
                if pos < m.start():
                    module = mod
            if name.startswith("kompute_ml."):
                module, _, name = name.rpartition(".")
            found.setdefault(module, set()).add(name)
    return found


@pytest.mark.parametrize("module", ["kompute_ml", "kompute_ml.linalg", "kompute_ml.fft",
                                    "kompute_ml.random", "kompute_ml.dask"])
def test_every_public_name_is_in_the_api_reference(module):
    import kompute_ml.dask
    mod = {"kompute_ml": km, "kompute_ml.linalg": km.linalg, "kompute_ml.fft": km.fft,
           "kompute_ml.random": km.random, "kompute_ml.dask": kompute_ml.dask}[module]
    documented = _documented_names()
    # submodules in __all__ (errors, linalg, random) count through their automodule
    missing = set(mod.__all__) - documented.get(module, set())
    assert not missing, f"not in docs/reference/: {sorted(missing)}"


def test_every_environment_variable_is_on_the_configuration_page():
    read = set()
    for path in (ROOT / "kompute_ml").rglob("*.py"):
        read |= set(re.findall(r"KOMPUTE_ML_[A-Z0-9_]+", path.read_text()))
    for path in (ROOT / "tests").rglob("*.py"):
        read |= set(re.findall(r"KOMPUTE_ML_[A-Z0-9_]+", path.read_text()))
    assert "KOMPUTE_ML_GLSLANG" in read
    page = (DOCS / "config.md").read_text()
    missing = {v for v in read if f"`{v}`" not in page}
    assert not missing, f"not in docs/config.md: {sorted(missing)}"


def _public_objects():
    import kompute_ml.dask as kd
    for mod, m in (("kompute_ml", km), ("kompute_ml.linalg", km.linalg),
                   ("kompute_ml.random", km.random), ("kompute_ml.dask", kd)):
        for n in m.__all__:
            o = getattr(m, n)
            if callable(o) and not isinstance(o, np.dtype):
                yield f"{mod}.{n}", o


def _examples(obj):
    # the defining module's globals, as pytest's --doctest-modules gives them, plus np and km
    tests = doctest.DocTestFinder(recurse=False).find(obj, extraglobs={"np": np, "km": km})
    return [t for t in tests if t.examples]


_DOCTESTS = [(name, o) for name, o in _public_objects() if _examples(o)]


@pytest.mark.parametrize("name, obj", _DOCTESTS, ids=[n for n, _ in _DOCTESTS])
def test_public_docstring_examples(name, obj):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in _examples(obj):
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0, name
    # an example shows output that is checked, not only statements
    assert any(ex.want for t in _examples(obj) for ex in t.examples), f"{name}: no output"


def _missing_sections(obj):
    import inspect
    doc = inspect.getdoc(obj) or ""
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return [] if doc else ["a docstring"]
    try:
        takes = any(p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                    for p in inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        takes = True
    want = (["Parameters"] if takes else []) + ([] if isinstance(obj, type) else ["Returns"])
    return [s for s in want + ["Examples"] if f"{s}\n{'-' * len(s)}" not in doc]


def test_every_public_name_has_a_numpydoc_docstring():
    missing = {name: m for name, o in _public_objects() if (m := _missing_sections(o))}
    assert not missing, missing


def _array_members():
    for name, member in vars(km.Array).items():
        obj = member.fget if isinstance(member, property) else member
        if not name.startswith("_") and callable(obj) and _examples(obj):
            yield name, obj


@pytest.mark.parametrize("name, obj", list(_array_members()),
                         ids=[n for n, _ in _array_members()])
def test_array_method_examples(name, obj):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in _examples(obj):
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0, name


def test_table_docstrings_add_sections_without_overriding_the_functions_own():
    from kompute_ml._api.docstrings import merge
    own = """Own summary.

    Examples
    --------
    >>> 1
    1
    """
    entry = "Table summary.\n\nParameters\n----------\nx : int\n    X.\n\nExamples\n--------\n>>> 2\n2\n"
    got = merge(own, entry)
    assert got.startswith("Own summary.\n\nParameters\n----------\nx : int")
    assert ">>> 1" in got and ">>> 2" not in got and "Table summary" not in got
    assert merge(None, entry).startswith("Table summary.")
