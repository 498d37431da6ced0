"""The version of kompute_ml: its one source (pyproject.toml reads it through scikit-build-core)."""

__version__ = "0.1.0"
