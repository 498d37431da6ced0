"""The layer contract of DESIGN.md, read from the source: every import statement of every module
of kompute_ml (function-local ones and those under `if TYPE_CHECKING:` included) goes down the
layers, only kompute_ml/_runtime/kp.py imports the built kp (kompute_ml._kp) and only
kompute_ml/_runtime/native.py the native module (kompute_ml._native), nothing imports a top-level
`kp`, and no group of modules imports itself in a
circle. Nothing is imported: the modules are parsed (ast)."""

import ast
import pathlib

import kompute_ml

PACKAGE = pathlib.Path(kompute_ml.__file__).resolve().parent

# Bottom-up. A module may import from its own layer or any layer beneath it, never from above;
# within a layer, only without a cycle (checked below). "pkg.*" is the package and all its modules.
LAYERS = [
    ("errors",        ["errors", "config", "_version", "_locks", "_stamp"]),
    ("compile",       ["_compile.*"]),
    ("vulkan loader", ["_runtime", "_runtime.vulkan", "_runtime.clocks"]),  # __init__: a docstring
    ("native calls",  ["_runtime.native"]),     # the one wrapper of kompute_ml._native
    ("kp calls",      ["_runtime.kp"]),         # the one wrapper of kp: devices open through it
    ("device",        ["_runtime.device"]),
    ("memory",        ["_runtime.transfer", "_runtime.memory", "_runtime.staging"]),
    ("stream",        ["_runtime.stream"]),
    ("programs",      ["_runtime.program"]),
    ("kernels",       ["kernel", "_pytoglsl.*", "pyshader"]),
    ("arrays",        ["_array.*", "array", "random", "_benchmark"]),
    ("array API",     ["_api", "_api.*"]),        # the namespace and numpy's protocols, on array.py
    ("estimators",    ["linear_model.*"]),
    ("distributed",   ["dask", "dask.*"]),
    ("public face",   ["__init__", "__main__", "device"]),
]

# the extension modules and the one module that may import each (every call goes through it)
EXTENSIONS = {"_kp": "_runtime.kp", "_native": "_runtime.native"}


def _layer_of(name):
    """(index, layer name) of a module named relative to kompute_ml ("__init__" for the root)."""
    for i, (layer, patterns) in enumerate(LAYERS):
        for p in patterns:
            if name == p or (p.endswith(".*") and (name == p[:-2] or name.startswith(p[:-1]))):
                return i, layer
    return None


def _modules():
    """{relative name: path} of every module of the package ("__init__" is kompute_ml itself)."""
    mods = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _imports(name, path, known):
    """[(line, target)] for each import in the module: target is a kompute_ml module named
    relative to the package ("__init__" for kompute_ml itself), an extension module ("_kp",
    "_native"), or "kp" (the top-level kp), or None (others)."""
    is_pkg = path.name == "__init__.py"
    package = [] if name == "__init__" else name.split(".")[: None if is_pkg else -1]
    out = []

    def internal(dotted):
        # "kompute_ml.x.y" (or "" for kompute_ml itself) -> the module relative to the package
        if dotted in ("", "kompute_ml"):
            return "__init__"
        rel = dotted[len("kompute_ml."):] if dotted.startswith("kompute_ml.") else dotted
        if rel in EXTENSIONS:
            return rel
        while rel and rel not in known:      # `import kompute_ml.a.b` where b is not a module
            rel = rel.rpartition(".")[0]
        return rel or "__init__"

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                if top == "kp":
                    out.append((node.lineno, "kp"))
                elif top == "kompute_ml":
                    out.append((node.lineno, internal(a.name)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                if node.level - 1 > len(package):
                    raise AssertionError(f"{name}:{node.lineno}: relative import above kompute_ml")
                mod = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.split(".")[0] == "kompute_ml":
                mod = node.module[len("kompute_ml"):].lstrip(".")
            else:
                if node.module and node.module.split(".")[0] == "kp":
                    out.append((node.lineno, "kp"))
                continue
            for a in node.names:
                # `from .pkg import mod` imports the module pkg.mod; `from .mod import name`, mod
                sub = f"{mod}.{a.name}" if mod else a.name
                known_sub = sub in known or sub in EXTENSIONS
                out.append((node.lineno, sub if known_sub else internal(mod)))
    return out


def _graph():
    mods = _modules()
    return mods, {name: _imports(name, path, mods) for name, path in mods.items()}


def test_every_module_has_a_layer():
    mods, _ = _graph()
    missing = sorted(m for m in mods if _layer_of(m) is None)
    assert not missing, f"modules with no layer in test_layers.LAYERS (add them): {missing}"


def test_imports_go_down_the_layers():
    mods, graph = _graph()
    wrong = []
    for name, imports in graph.items():
        own = _layer_of(name)
        for line, target in imports:
            if target in (None, "kp") or target in EXTENSIONS or own is None:
                continue
            theirs = _layer_of(target)
            if theirs is not None and theirs[0] > own[0]:
                wrong.append(f"kompute_ml/{mods[name].relative_to(PACKAGE)}:{line}: {name} "
                             f"({own[1]}) imports {target} ({theirs[1]}, a higher layer)")
    assert not wrong, "\n".join(wrong)


def test_only_the_wrappers_import_the_extension_modules():
    mods, graph = _graph()
    wrong = [f"kompute_ml/{mods[name].relative_to(PACKAGE)}:{line}: import {target}"
             for name, imports in graph.items() for line, target in imports
             if target == "kp" or (target in EXTENSIONS and EXTENSIONS[target] != name)]
    assert not wrong, ("only kompute_ml/_runtime/kp.py may import kompute_ml._kp, only "
                       "_runtime/native.py kompute_ml._native, and nothing the top-level kp:\n"
                       + "\n".join(wrong))


def _cycles(edges):
    """Strongly connected components of more than one module (or a module importing itself):
    Tarjan's algorithm, iterative so that deep chains do not hit the recursion limit."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1 or node in edges.get(node, ()):
                    found.append(sorted(comp))
    return found


def test_cycle_finder_finds_cycles():
    """The finder itself, on a made-up graph: a -> b -> c -> a is one cycle, d -> d another."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "e"}, "d": {"d"}, "e": set()}
    assert sorted(_cycles(edges)) == [["a", "b", "c"], ["d"]]


def test_no_import_cycles():
    mods, graph = _graph()
    edges = {name: {t for _, t in imports if t in mods and t != name}
             for name, imports in graph.items()}
    cycles = _cycles(edges)
    lines = []
    for comp in cycles:
        members = set(comp)
        where = [f"  {name} -> {t} (kompute_ml/{mods[name].relative_to(PACKAGE)}:{line})"
                 for name in comp for line, t in graph[name] if t in members and t != name]
        lines.append(" <-> ".join(comp) + "\n" + "\n".join(sorted(set(where))))
    assert not cycles, "import cycles:\n" + "\n".join(lines)
