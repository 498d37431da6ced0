"""``python -m kompute_ml info | selftest | compile FILE.comp -o FILE.spv``."""

import argparse
import sys
import time


def _info(args):
    import kompute_ml as km
    infos = km.devices()
    if not infos:
        try:
            km.get_device()
        except km.DeviceNotFoundError as exc:
            print(f"kompute_ml {km.__version__}: {exc}")
        return 1
    print(f"kompute_ml {km.__version__}")
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
    except km.KomputeMLError as exc:
        print(f"default device: none ({exc})")
    return 0


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


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "compile":
        # its own parser sees every argument (options before the file, -h included)
        from kompute_ml import kernel
        return kernel._cli_compile(argv[1:])
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
