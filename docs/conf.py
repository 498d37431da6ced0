"""Sphinx configuration of the kompute_ml site (``make docs``: warnings are errors)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))

import kompute_ml  # noqa: E402  (the reference documents the installed package)

project = "kompute_ml"
author = "kompute_ml developers"
release = kompute_ml.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "myst_parser",
    "km_comparison",          # docs/_ext: the numpy / Array API comparison table, built here
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated"]   # _generated/*.md are included by pages
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
# relative links to files outside the site (benchmarks/x.py, shaders/) are not pages
suppress_warnings = ["myst.xref_missing"]

# numpydoc-style docstrings through napoleon
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
autodoc_default_options = {"members": False}
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autosummary_generate = False
add_module_names = False

html_theme = "pydata_sphinx_theme"     # numpy's, scikit-learn's and CuPy's
html_title = f"kompute_ml {release}"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2,
                      "footer_start": ["copyright"], "footer_end": []}
html_static_path = []
