"""The public names of DESIGN.md, importable from the top level."""

import subprocess
import sys

import kompute_ml as km


def test_every_public_name_resolves():
    for name in km.__all__:
        assert getattr(km, name) is not None, name


def test_top_level_names_are_the_modules_objects():
    from kompute_ml import LogisticRegression, Kernel, python2shader
    from kompute_ml.kernel import Kernel as K
    from kompute_ml.linear_model import LogisticRegression as L
    from kompute_ml.pyshader import python2shader as p
    assert (LogisticRegression, Kernel, python2shader) == (L, K, p)
    assert "LogisticRegression" in dir(km)


def test_import_does_not_load_sklearn_or_touch_a_device():
    code = ("import sys, kompute_ml; "
            "print('sklearn' in sys.modules, kompute_ml._runtime.device._infos is None, "
            "len(kompute_ml._runtime.device._devices))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "0"], out.stdout


def _init_bound_names():
    """Names kompute_ml/__init__.py binds with a statement a type checker reads (imports, also
    under `if TYPE_CHECKING:`), and whether it writes its namespace by hand (globals().update)."""
    import ast
    import pathlib
    tree = ast.parse(pathlib.Path(km.__file__).read_text(encoding="utf-8"))
    names, dynamic = set(), False
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            dynamic |= (isinstance(node.func.value, ast.Call)
                        and getattr(node.func.value.func, "id", None) in ("globals", "vars"))
    return names, dynamic


def test_every_public_name_is_imported_explicitly():
    """IDEs and type checkers see only names bound by statements: every name of __all__ is."""
    names, dynamic = _init_bound_names()
    assert not dynamic, "kompute_ml/__init__.py fills its namespace through globals()"
    assert set(km.__all__) - names == set()
    assert len(km.__all__) == len(set(km.__all__))


def test_all_holds_the_array_api_of_kompute_ml_array():
    from kompute_ml import array
    from kompute_ml._api import namespace
    assert set(array.__all__) - {"array"} <= set(km.__all__)
    assert set(namespace.__all__) - {"newaxis"} <= set(km.__all__)
    assert km.array is array          # the submodule keeps its name
    for name in set(array.__all__) - {"array"}:
        # the Array API's version where the two differ (clip(min=, max=), sum(dtype=)...)
        want = getattr(namespace, name) if name in namespace.__all__ else getattr(array, name)
        assert getattr(km, name) is want, name


def test_version_has_one_source():
    """__version__ comes from kompute_ml/_version.py, which pyproject.toml reads (no copy there)."""
    import importlib.metadata
    import pathlib
    import tomllib
    from kompute_ml import _version
    assert km.__version__ == _version.__version__
    root = pathlib.Path(km.__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():           # a source checkout (an installed wheel has no pyproject)
        meta = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        assert "version" not in meta["project"] and "version" in meta["project"]["dynamic"]
        (entry,) = [e for e in meta["tool"]["dynamic-metadata"] if e["field"] == "version"]
        assert entry["input"] == "kompute_ml/_version.py"
    assert importlib.metadata.version("kompute_ml") == km.__version__


def test_requirements_dev_declares_what_pyproject_declares():
    """requirements-dev.txt installs the run-time dependencies with pyproject.toml's bounds."""
    import pathlib
    import re
    import tomllib
    root = pathlib.Path(__file__).resolve().parent.parent
    deps = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dev = {re.split(r"[<>=!~ ]", line)[0].lower(): line.strip()
           for line in (root / "requirements-dev.txt").read_text(encoding="utf-8").splitlines()
           if line.strip() and not line.startswith("#")}
    for spec in deps["dependencies"]:
        name = re.split(r"[<>=!~ ]", spec)[0].lower()
        assert dev.get(name) == spec, f"requirements-dev.txt has {dev.get(name)!r}, pyproject {spec!r}"
