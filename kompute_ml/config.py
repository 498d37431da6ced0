"""kompute_ml's settings, in one place: ``km.config``.

Each option has a default. An option with an environment variable takes the variable's value
where it is set; a value set from Python (``km.config.set``) wins over both, for the whole
process, until it is reset (or, used as a context manager, until the block ends). An explicit
argument (``device=``, ``timeout=``, ``km.use_device``, the pool's ``set_limit``, ...) still
wins over the option. Each option is read where its effect happens: docs/config.md lists every
option, its values, its default and when it is read.

>>> import kompute_ml as km
>>> with km.config.set(memory_limit="512M"):
...     km.config.get("memory_limit"), km.config.source("memory_limit")
(536870912, 'set')
>>> km.config.memory_limit == km.config.get("memory_limit")    # (an attribute reads the same)
True

This module imports nothing of kompute_ml: every layer may read it.
"""

import functools
import os
import sys
import threading
import types

__all__ = ["get", "set", "reset", "describe", "source", "OPTIONS", "Option"]

_UNSET = object()
_AUTO = "auto"


class Option:
    """One setting: its name, default, environment variable (or None), when it is read, a
    one-line summary, and the functions that read the variable's text and check a value set
    from Python (each raises ValueError naming the variable or the option)."""

    __slots__ = ("name", "default", "env", "when", "summary", "from_env", "check")

    def __init__(self, name, default, env, when, summary, from_env, check):
        self.name, self.default, self.env, self.when = name, default, env, when
        self.summary, self.from_env, self.check = summary, from_env, check


# -- readers of the variables' text (None: unset) and checks of values set from Python ---------

def _switch(env):
    """0 or 1 (unset: 1); anything else is a ValueError naming the variable."""
    def read(raw):
        value = "1" if raw is None else raw.strip()
        if value not in ("0", "1"):
            raise ValueError(f"{env} must be 0 or 1, got {value!r}")
        return value == "1"
    return read


def _bool(name):
    def check(value):
        if not isinstance(value, bool):
            raise ValueError(f"km.config: {name} must be True or False, got {value!r}")
        return value
    return check


def _choice(name, allowed):
    """A check accepting exactly the values of ``allowed`` ("auto", True, False, ...)."""
    def check(value):
        for a in allowed:
            if value is a or (isinstance(a, str) and isinstance(value, str) and
                              value.strip().lower() == a):
                return a
        raise ValueError(f"km.config: {name} must be one of "
                         f"{', '.join(repr(a) for a in allowed)}, got {value!r}")
    return check


def parse_bytes(raw, name, minimum, example):
    """A byte count (an int, or text with an optional suffix K, M or G); ValueError naming
    ``name`` and ``example`` for anything else, or below ``minimum``."""
    if isinstance(raw, bool):
        raw = ""
    if isinstance(raw, int):
        value = raw
    else:
        raw = str(raw).strip()
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(raw[-1:].upper(), 1)
        try:
            value = int(float(raw[:-1] if scale > 1 else raw) * scale)
        except (ValueError, OverflowError):    # OverflowError: inf (nan is a ValueError)
            value = minimum - 1
    if value < minimum:
        raise ValueError(f"{name}={raw!r}: expected a byte count {example}")
    return value


def _bytes(env, default, minimum, example, name):
    def read(raw):
        if raw is None or not raw.strip():
            return default
        return parse_bytes(raw, env, minimum, example)

    def check(value):
        if value is None:
            return default
        return parse_bytes(value, f"km.config: {name}", minimum, example)
    return read, check


def _read_device(raw):
    return raw or None


def _check_device(value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, str))):
        raise ValueError(f"km.config: device must be None, an index or a name, got {value!r}")
    return value


def _read_text(raw):
    return raw or None


def _check_text(name):
    def check(value):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise ValueError(f"km.config: {name} must be None or a path, got {value!r}")
        return None if value is None else os.fspath(value)
    return check


def _read_queue_family(raw):
    value = "auto" if raw is None else raw.strip().lower()
    if value in ("", "auto"):
        return _AUTO
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"KOMPUTE_ML_QUEUE_FAMILY must be 'auto' or a queue family's index, "
                         f"got {value!r}") from None


def _check_queue_family(value):
    if value == _AUTO or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return value
    raise ValueError(f"km.config: queue_family must be 'auto' or a queue family's index, "
                     f"got {value!r}")


def _read_validation(raw):
    return raw == "1"


def _read_debug_locks(raw):
    return (raw or "").strip().lower() in ("1", "true", "yes", "on")


def _check_at_import(value):
    raise ValueError("km.config: debug_locks is read when kompute_ml is imported; set "
                     "KOMPUTE_ML_DEBUG_LOCKS=1 in the environment of a new process instead")


def _read_glslang(raw):
    mode = (raw or "auto").strip().lower() or "auto"
    if mode not in ("auto", "library", "program"):
        raise ValueError(f"KOMPUTE_ML_GLSLANG must be 'auto', 'library' or 'program', "
                         f"got {mode!r}")
    return mode


MATMUL_PRECISIONS = ("highest", "high", "medium")


def _read_matmul_precision(raw):
    value = (raw or "highest").strip().lower() or "highest"
    if value not in MATMUL_PRECISIONS:
        raise ValueError(f"KOMPUTE_ML_MATMUL_PRECISION must be 'highest', 'high' or 'medium', "
                         f"got {raw!r}")
    return value


def _read_shader_path(raw):
    return tuple(d for d in (raw or "").split(os.pathsep) if d)


def _check_shader_path(value):
    if isinstance(value, (str, os.PathLike)):
        value = os.fspath(value).split(os.pathsep)
    try:
        dirs = tuple(os.fspath(d) for d in value if d)
    except TypeError:
        raise ValueError(f"km.config: shader_path must be folders (a list, or a string "
                         f"separated by {os.pathsep!r}), got {value!r}") from None
    return dirs


def check_timeout(value, what):
    """``value`` as a positive number of seconds (inf: no limit); ValueError naming ``what``."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not seconds > 0:        # also nan; inf waits forever, as no timeout does
        raise ValueError(f"{what} must be a positive number of seconds, got {value!r}")
    return seconds


def _read_timeout(raw):
    text = (raw or "").strip()
    return None if text in ("", "0") else check_timeout(text, "KOMPUTE_ML_KERNEL_TIMEOUT")


def _check_timeout(value):
    return None if value is None or value == 0 else \
        check_timeout(value, "km.config: kernel_timeout")


def _no_env(raw):      # (options without a variable are never read from the environment)
    raise AssertionError("no environment variable")


_BYTES_EXAMPLE = "such as 2000000000, 512M or 2G"
_SLOT_EXAMPLE = "of at least 4096, such as 33554432 or 32M"
_memory_limit = _bytes("KOMPUTE_ML_MEMORY_LIMIT", 0, 0, _BYTES_EXAMPLE, "memory_limit")
_staging_bytes = _bytes("KOMPUTE_ML_STAGING_BYTES", 16 << 20, 4096, _SLOT_EXAMPLE,
                        "staging_bytes")
_TRI = ("auto", True, False)

OPTIONS = {o.name: o for o in (
    # choosing the device
    Option("device", None, "KOMPUTE_ML_DEVICE", "each call that takes the default device",
           "the default device: an index, 'cpu', 'gpu' or part of a name (None: the best)",
           _read_device, _check_device),
    Option("vulkan_library", None, "KOMPUTE_ML_VULKAN_LIBRARY", "the first enumeration",
           "the Vulkan loader to load (None: the bundled one, then the system's)",
           _read_text, _check_text("vulkan_library")),
    Option("queue_family", _AUTO, "KOMPUTE_ML_QUEUE_FAMILY", "when a device opens",
           "the queue family work is submitted to ('auto': compute without graphics first)",
           _read_queue_family, _check_queue_family),
    Option("validation", False, "KOMPUTE_ML_VALIDATION", "when a device opens",
           "Khronos' validation layer on every Vulkan instance",
           _read_validation, _bool("validation")),
    Option("debug_locks", False, "KOMPUTE_ML_DEBUG_LOCKS", "at import (the variable only)",
           "every lock checks the documented lock order",
           _read_debug_locks, _check_at_import),
    # memory and transfers
    Option("memory_limit", 0, "KOMPUTE_ML_MEMORY_LIMIT", "when a device's pool is made",
           "a cap on each device's pool, in bytes (0: none)", *_memory_limit),
    Option("staging_bytes", 16 << 20, "KOMPUTE_ML_STAGING_BYTES", "at each large transfer",
           "the size of one staging slot, in bytes", *_staging_bytes),
    Option("host_import", True, "KOMPUTE_ML_HOST_IMPORT",
           "when a device opens, and at each large transfer",
           "large transfers may map numpy's own pages where the driver offers it",
           _switch("KOMPUTE_ML_HOST_IMPORT"), _bool("host_import")),
    Option("direct_writes", _AUTO, None, "at each new buffer",
           "small buffers in device memory the host writes in place ('auto': where it can)",
           _no_env, _choice("direct_writes", ("auto", False))),
    Option("direct_reads", _AUTO, None, "at each download",
           "downloads read device memory in place ('auto': by device and size)",
           _no_env, _choice("direct_reads", _TRI)),
    Option("storage_in_place", _AUTO, None, "at each large transfer",
           "large buffers written and read in place where the host maps them",
           _no_env, _choice("storage_in_place", ("auto", False))),
    Option("device_slots", _AUTO, None, "when a device's first upload slots are made",
           "upload slots in the device's own memory ('auto': a GPU with host-visible memory)",
           _no_env, _choice("device_slots", _TRI)),
    Option("early_submit", _AUTO, None, "at each dispatch",
           "a batch repeating a recent one is submitted as its last dispatch is recorded",
           _no_env, _choice("early_submit", _TRI)),
    Option("device_sort", _AUTO, None, "at each sort",
           "sorts (and unique_*) on the device ('auto': a GPU, from a few thousand elements)",
           _no_env, _choice("device_sort", _TRI)),
    # kernels and shaders
    Option("glslang", "auto", "KOMPUTE_ML_GLSLANG", "at each compile",
           "the GLSL compiler: 'auto', 'library' (in-process) or 'program' (glslangValidator)",
           _read_glslang, _choice("glslang", ("auto", "library", "program"))),
    Option("cache_dir", None, "KOMPUTE_ML_CACHE_DIR", "at each compile",
           "the folder of the SPIR-V disk cache (None: $XDG_CACHE_HOME or ~/.cache)",
           _read_text, _check_text("cache_dir")),
    Option("shader_path", (), "KOMPUTE_ML_SHADER_PATH", "at each shader file lookup",
           "folders searched for shader files and #includes",
           _read_shader_path, _check_shader_path),
    Option("matmul_precision", "highest", "KOMPUTE_ML_MATMUL_PRECISION",
           "at each float32 matrix product",
           "float32 matmul: 'highest' (exact float32), 'high' (three float16 products on "
           "cooperative matrices), 'medium' (one)",
           _read_matmul_precision, _choice("matmul_precision", MATMUL_PRECISIONS)),
    Option("kernel_timeout", None, "KOMPUTE_ML_KERNEL_TIMEOUT", "at each submit",
           "seconds a submit may run (None: no limit)", _read_timeout, _check_timeout),
    # NVIDIA GPUs
    Option("hold_clocks", True, "KOMPUTE_ML_HOLD_CLOCKS", "when a device opens",
           "an NVIDIA GPU keeps its clocks (a CUDA context is retained)",
           _switch("KOMPUTE_ML_HOLD_CLOCKS"), _bool("hold_clocks")),
    Option("avoid_irq_cpus", True, "KOMPUTE_ML_AVOID_IRQ_CPUS", "when a device opens",
           "waits and copy workers keep off the CPUs of the GPU's interrupts",
           _switch("KOMPUTE_ML_AVOID_IRQ_CPUS"), _bool("avoid_irq_cpus")),
)}

class _Values:
    """The current values of the options without a variable, and ``generation`` (the changes
    made from Python: caches of values read per call check it). The layers below read these per
    op, as attributes of this one plain object (as cheap as the module globals they replace);
    only :func:`set` and :func:`reset` write them."""

    __slots__ = tuple(o.name for o in OPTIONS.values() if o.env is None) + ("generation",)

    def __init__(self):
        for name in self.__slots__[:-1]:
            setattr(self, name, OPTIONS[name].default)
        self.generation = 0


_values = _Values()
_lock = threading.Lock()
_set_values = {}       # values set from Python, by name


def _option(name):
    try:
        return OPTIONS[name]
    except KeyError:
        raise ValueError(f"km.config has no option {name!r}; its options: "
                         f"{', '.join(OPTIONS)}") from None


def get(name):
    """The value of option ``name`` now: set from Python, else its environment variable's,
    else its default (ValueError for a variable whose text is not a value of the option)."""
    opt = _option(name)
    value = _set_values.get(name, _UNSET)
    if value is not _UNSET:
        return value
    if opt.env is None:
        return opt.default
    return opt.from_env(os.environ.get(opt.env))


def source(name):
    """Where option ``name``'s value comes from: "set" (Python), "env" or "default"."""
    opt = _option(name)
    if name in _set_values:
        return "set"
    return "env" if opt.env is not None and os.environ.get(opt.env) is not None else "default"


class _Restore:
    """What :func:`set` changed; leaving the ``with`` block restores it (once)."""

    def __init__(self, previous):
        self._previous = previous

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        previous, self._previous = self._previous, None
        if previous:
            with _lock:
                for name, value in previous.items():
                    _assign(name, value)
        return False


def _assign(name, value):
    """Set (``_UNSET``: unset) one option's Python value; the lock held."""
    opt = OPTIONS[name]
    if value is _UNSET:
        _set_values.pop(name, None)
    else:
        _set_values[name] = value
    if opt.env is None:
        setattr(_values, name, opt.default if value is _UNSET else value)
    _values.generation += 1


def set(**options):
    """Set options for the whole process (checked first: ValueError names a bad one, and then
    nothing changes). Returns a context manager: leaving its block restores what they were.

    >>> import kompute_ml as km
    >>> with km.config.set(kernel_timeout=30):
    ...     km.config.get("kernel_timeout")
    30.0
    """
    checked = {}
    for name, value in options.items():
        checked[name] = _option(name).check(value)
    with _lock:
        previous = {name: _set_values.get(name, _UNSET) for name in checked}
        for name, value in checked.items():
            _assign(name, value)
    return _Restore(previous)


def reset(*names):
    """Unset the named options (every option where none is named): back to their environment
    variable or default."""
    for name in names:
        _option(name)
    with _lock:
        for name in names or list(_set_values):
            _assign(name, _UNSET)


def describe():
    """[(name, value or the error reading it, source, environment variable, summary)] of every
    option, as ``python -m kompute_ml info`` prints them."""
    rows = []
    for name, opt in OPTIONS.items():
        try:
            value = get(name)
        except ValueError as exc:
            value = f"<{exc}>"
        rows.append((name, value, source(name), opt.env, opt.summary))
    return rows


def env_reader(name):
    """A function returning option ``name``'s variable as os.environ holds it (None: unset),
    for caches of values read per call, which check it and ``_values.generation`` (the changes
    made from Python) before they call :func:`get` again. CPython's os.environ keeps the encoded
    environment in ``_data`` (updated by every write through os.environ), read here without
    decoding (os.environ.get costs ~1 us). Compare its results with each other only: they are
    bytes on CPython."""
    env = OPTIONS[name].env
    data = getattr(os.environ, "_data", None)
    try:
        key = os.environ.encodekey(env)
    except AttributeError:       # not CPython's os.environ
        data = None
    if data is None:
        return functools.partial(os.environ.get, env)
    return functools.partial(data.get, key)


def __getattr__(name):
    """``km.config.<option>``: the option's value now, as :func:`get` gives it."""
    if name in OPTIONS:
        return get(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _ConfigModule(types.ModuleType):
    """This module, whose options are set through :func:`set` only (checked). (Its attributes
    are read as any module's: the class adds no ``__getattr__`` of its own.)"""

    def __setattr__(self, name, value):
        if name in OPTIONS:
            raise AttributeError(f"use km.config.set({name}=...) to set an option (checked)")
        super().__setattr__(name, value)


_module = sys.modules[__name__]
_module.__class__ = _ConfigModule
