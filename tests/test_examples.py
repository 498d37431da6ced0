"""The programs in examples/ run as a user runs them and print correct results."""

import os
import subprocess
import sys

import numpy as np
import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "examples")


def _run(name, *args):
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


@pytest.mark.parametrize("dataset", ["iris", "breast_cancer"])
def test_logistic_regression_example(dataset):
    text = _run("logistic_regression.py", "--dataset", dataset)
    line = next(s for s in text.splitlines() if s.startswith("kompute_ml LogisticRegression"))
    acc = float(line.split("test accuracy")[1].split(",")[0])
    sk = next(s for s in text.splitlines() if s.startswith("scikit-learn"))
    sk_acc = float(sk.split("test accuracy")[1].split(",")[0])
    assert acc >= sk_acc - 0.03, text
    assert "device:" in text


def test_seed_toy_example_separates_the_classes():
    text = _run("seed_toy.py")
    assert text.count("predict(X) = [0, 0, 0, 1, 1]") >= 1, text


def test_pyshader_example_kp_and_kernel_agree():
    lines = [s for s in _run("pyshader_logistic.py").splitlines() if "predictions" in s]
    assert len(lines) == 2
    for s in lines:
        assert "predictions [0 0 0 1 1]" in s, s
    w = [np.array(s.split("w = [")[1].split("]")[0].split(), float) for s in lines]
    np.testing.assert_allclose(w[0], w[1], rtol=1e-4)


def test_custom_kernel_example():
    text = _run("custom_kernel.py")
    assert "softplus (python2shader): ok" in text, text


def test_sklearn_array_api_example():
    text = _run("sklearn_array_api.py")
    err = float(text.split("max relative difference to numpy:")[1].split()[0])
    assert err < 1e-4, text
    moved, x_bytes = text.split("fit/transform/predict:")[1].replace("(X is", "").split(")")[0].split()
    assert int(moved) < int(x_bytes) // 20, text      # d x d matrices, never X
