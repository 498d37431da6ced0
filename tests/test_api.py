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
