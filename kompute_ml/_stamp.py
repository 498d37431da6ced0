"""The build stamp this Python package expects of its native modules (kompute_ml._kp,
kompute_ml._native): the digests of patches/kp/ and of kompute_ml/_native/'s sources, as
CMakeLists.txt compiles them in. `python scripts/stamp.py --write` updates it after a change of
either (tests/test_native.py checks it matches the tree)."""

BUILD_STAMP = "kp-0.9.0+patches.d233547e506288f6 native.058bbbe90d586a50"


def check(module):
    """Raise ImportError where ``module`` (an imported native module) was built from other
    sources than this package expects."""
    if getattr(module, "__file__", None) is None:     # the source folder kompute_ml/_native/
        raise ImportError(
            f"{module.__name__} is not built: kompute_ml is imported from a source checkout; "
            "install the wheel (make setup, or pip install .) and import it from elsewhere")
    got = getattr(module, "BUILD_STAMP", None)
    if got != BUILD_STAMP:
        raise ImportError(
            f"{module.__name__} was built from {got!r} but this kompute_ml expects "
            f"{BUILD_STAMP!r}: the native modules and the Python package come from different "
            "builds; reinstall kompute_ml (pip install --force-reinstall <wheel>, or make setup "
            "in a checkout)")
