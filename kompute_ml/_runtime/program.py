"""The built-in shader registry: packaged SPIR-V, recompiled from shaders/ when stale or missing.

A wheel carries ``kompute_ml/spv/<name>.spv`` compiled by CMake at build time, and the GLSL sources
in ``kompute_ml/glsl/``. In a source checkout (or an editable install) the sources live in the
repository's ``shaders/``; a ``.spv`` that is missing or older than its ``.comp`` is compiled at
run time (and cached on disk by the compiler layer). Kernels with ``defines`` always go through
the compiler (cached by content).
"""

import os
import threading

from .._compile import glslang as _glslang

__all__ = ["spirv", "source_path", "shader_dirs", "names"]

# the package folder (kompute_ml/), two levels above this file
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_cache = {}
_lock = threading.Lock()


def shader_dirs():
    """Directories holding the built-in GLSL sources, the checkout's first."""
    dirs = [os.path.join(os.path.dirname(_PKG), "shaders"), os.path.join(_PKG, "glsl")]
    return [d for d in dirs if os.path.isdir(d)]


def source_path(name):
    """Path of the built-in shader ``name`` (.comp), or None."""
    for d in shader_dirs():
        p = os.path.join(d, name + ".comp")
        if os.path.isfile(p):
            return p
    return None


def names():
    """Names of the built-in compute shaders."""
    out = set()
    for d in shader_dirs():
        out.update(f[:-5] for f in os.listdir(d) if f.endswith(".comp"))
    return sorted(out)


def _packaged(name):
    p = os.path.join(_PKG, "spv", name + ".spv")
    return p if os.path.isfile(p) else None


def _include_mtime(src_dir):
    return max((os.path.getmtime(os.path.join(src_dir, f)) for f in os.listdir(src_dir)
                if f.endswith(".glsl")), default=0.0)


def spirv(name, defines=None):
    """SPIR-V bytes of the built-in shader ``name`` (``shaders/<name>.comp``)."""
    key = (name, tuple(sorted((defines or {}).items())))
    hit = _cache.get(key)
    if hit is not None:
        return hit
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            return hit
        src = source_path(name)
        spv = None if defines else _packaged(name)
        if spv is not None and src is not None:
            src_time = max(os.path.getmtime(src), _include_mtime(os.path.dirname(src)))
            if os.path.getmtime(spv) < src_time:
                spv = None          # stale: the source changed after the build
        if spv is not None:
            with open(spv, "rb") as f:
                data = f.read()
        elif src is not None:
            with open(src, encoding="utf-8") as f:
                data = _glslang.compile_glsl(f.read(), defines=defines, filename=src)
        else:
            raise KeyError(f"no built-in shader named {name!r}; built-in shaders: {', '.join(names())}")
        _cache[key] = data
        return data
