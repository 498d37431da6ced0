"""``python -m kompute_ml info | selftest | compile FILE.comp -o FILE.spv``.

A mistake of the user's or a failure of the device ends with one ``error: ...`` line on stderr and
exit status 1 (2 for a malformed command line, as argparse gives), never a traceback.
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

from .errors import KomputeMLError


def _info(args):
    import kompute_ml as km
    from kompute_ml._runtime import native as _native
    infos = km.devices()
    if not infos:
        try:
            km.get_device()
        except km.DeviceNotFoundError as exc:
            print(f"kompute_ml {km.__version__}: {exc}")
            print(f"native build: {_native.BUILD_STAMP}")
        return 1
    print(f"kompute_ml {km.__version__}")
    print(f"native build: {_native.BUILD_STAMP}")   # kp's patch set and kompute_ml/_native
    head = ("#", "name", "type", "vendor", "driver", "max wg invocations", "max wg count",
            "max buffer", "shared", "subgroup", "fp64")
    rows = []
    for d in infos:
        lim = d.limits
        rows.append((str(d.index), d.name, d.type, d.vendor, d.driver,
                     str(lim["max_workgroup_invocations"]),
                     "x".join(str(x) for x in lim["max_workgroup_count"]),
                     f"{lim['max_storage_buffer_range'] / 2**20:.0f} MiB",
                     f"{lim['max_shared_memory'] // 1024} KiB", str(lim["subgroup_size"]),
                     "yes" if lim["float64"] else "no"))
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    try:
        dev = km.get_device()
        print(f"default device: [{dev.index}] {dev.name}")
    except (km.KomputeMLError, ValueError) as exc:
        print(f"default device: none ({exc})")
    _print_config(km.config)
    return 0


def _print_config(config):
    """The options of ``km.config``: value, where it comes from (docs/config.md)."""
    print("configuration (km.config; docs/config.md):")
    rows = [(name, repr(value), source if env is None or source != "env" else f"env {env}")
            for name, value, source, env, _ in config.describe()]
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    for name, value, source in rows:
        print(f"  {name.ljust(widths[0])}  {value.ljust(widths[1])}  ({source})")


def _selftest(args):
    import numpy as np
    import kompute_ml as km
    from kompute_ml._runtime import memory as _memory, program as _program, stream as _stream
    dev = km.get_device(args.device)
    n = 1000
    buf = _memory.alloc(dev, 4 * n)
    t0 = time.perf_counter()
    # fill.comp — binding 0: out (uint words)
    _program.get("fill").dispatch_1d(dev, [buf], n, push=(n, 7))
    got = _stream.download(buf, n, np.uint32)
    ok = bool((got == 7).all())
    print(f"selftest on {dev.name}: fill {n} -> {'ok' if ok else 'WRONG'} "
          f"({(time.perf_counter() - t0) * 1e3:.1f} ms)")
    return 0 if ok else 1


def _load_python_shader(target):
    """The python2shader function named by ``file.py:function``."""
    import importlib.util
    path, _, attr = target.rpartition(":")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no Python file {path!r}")
    spec = importlib.util.spec_from_file_location(
        "_kompute_ml_user_" + os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    obj = getattr(module, attr, None)
    if obj is None or not hasattr(obj, "to_glsl"):
        raise ValueError(f"{path} has no python2shader function named {attr!r}")
    return obj


def _write(path, data):
    """Write ``data`` (bytes or str) to ``path`` through a temporary beside it and os.replace, so
    that a reader never sees half a file; the temporary is removed when the write fails."""
    mode, enc = ("wb", None) if isinstance(data, bytes) else ("w", "utf-8")
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, mode, encoding=enc) as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise OSError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _compile(argv):
    """``python -m kompute_ml compile FILE.comp [-o FILE.spv]``; returns the exit status."""
    from ._compile import glslang as _glslang
    from ._compile import spirv as _spirv
    from .kernel import _shader_path_dirs, find_shader
    p = argparse.ArgumentParser(
        prog="python -m kompute_ml compile",
        description="Compile a GLSL compute shader (or a python2shader function, FILE.py:NAME) "
                    "to SPIR-V, with the compiler and include rules kompute_ml uses at run time.")
    p.add_argument("file", help="FILE.comp, or FILE.py:FUNCTION for a python2shader function")
    p.add_argument("-o", "--output", help="output .spv (default: FILE with the suffix .spv)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="define a macro (repeatable)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="folder searched for #include (repeatable)")
    p.add_argument("--glsl", metavar="PATH", help="also write the GLSL compiled ('-': stdout); "
                   "for a python2shader function, the generated GLSL")
    p.add_argument("--info", action="store_true",
                   help="print the workgroup size, bindings and push-constant size")
    p.add_argument("--dis", action="store_true", help="print spirv-dis's disassembly")
    args = p.parse_args(argv)
    defines = {}
    for d in args.defines:
        k, eq, v = d.partition("=")
        defines[k] = v if eq else None
    if args.file.rpartition(":")[0].endswith(".py"):
        module = _load_python_shader(args.file)
        source, spirv = module.to_glsl(), module.to_spirv()
        default_out = args.file.rpartition(":")[0][:-3] + "_" + module.name + ".spv"
    else:
        path = find_shader(args.file)
        with open(path, encoding="utf-8") as f:
            source = f.read()
        spirv = _glslang.compile_glsl(source, defines or None,
                                      args.include_dirs + _shader_path_dirs(), filename=path)
        default_out = os.path.splitext(args.file)[0] + ".spv"
    info = _spirv.reflect(spirv)
    out = args.output or default_out
    _write(out, spirv)
    print(f"wrote {out} ({len(spirv)} bytes)")
    if args.glsl == "-":
        sys.stdout.write(source)
    elif args.glsl:
        _write(args.glsl, source)
    if args.info:
        print(f"local_size: {tuple(info.local_size)}\nbindings: {list(info.bindings)}\n"
              f"push constants: {info.push_constant_size} bytes\n"
              f"specialization constant ids: {list(info.spec_constant_ids)}")
    if args.dis:
        dis = shutil.which("spirv-dis")
        if dis is None:
            print("error: spirv-dis not found (Debian: apt install spirv-tools)", file=sys.stderr)
            return 1
        sys.stdout.write(subprocess.run([dis, out], capture_output=True, text=True).stdout)
    return 0


def main(argv=None):
    """Run one command; returns the exit status (argparse exits with 2 on a malformed line)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return _run(argv)
    except (KomputeMLError, OSError, ValueError) as exc:
        # the user's input or the device: one line naming what was wrong (the error classes say
        # which); anything else is a bug in kompute_ml and keeps its traceback
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _run(argv):
    if argv and argv[0] == "compile":
        # its own parser sees every argument (options before the file, -h included)
        return _compile(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m kompute_ml")
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("info", help="list Vulkan devices and their limits")
    p = sub.add_parser("selftest", help="run a tiny kernel on a device")
    p.add_argument("--device", default=None)
    sub.add_parser("compile", help="compile GLSL to SPIR-V: compile FILE.comp -o FILE.spv "
                                   "(python -m kompute_ml compile -h)")
    args = parser.parse_args(argv)
    return {"info": _info, "selftest": _selftest}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
