"""A function compiled without numba's memory manager (``scratch_kernel``, ``_nrt=False``) cannot
create an array, and neither can any compiled function it calls: numba compiles the callee in
the caller's setting, where ``np.empty`` and the like do not compile.  Nothing else catches
such a call before the package's precompile (``make setup``): a test run from the source tree
may compile the callee first through a caller *with* the memory manager, and the cache then
serves it.  This test reads the source with ``ast``: from every ``@scratch_kernel`` function it
follows the calls it can resolve (functions of the same module, names imported from other
modules of the package, ``module.function`` through an imported module) and refuses a call that
creates an array (:data:`ALLOCATING`), a ``.copy()`` and the ``@`` operator in any function it
reaches.  Arithmetic on whole arrays (``a + b``) allocates too and is not seen: the rule catches
the explicit constructions."""
from __future__ import annotations

import ast
from pathlib import Path

from test_structure import PACKAGE, imported, modules

#: numpy functions that create an array
ALLOCATING = {"empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like", "array",
              "copy", "arange", "linspace", "eye", "identity", "concatenate", "stack", "hstack", "vstack", "dot",
              "outer", "cross", "kron", "tile", "repeat", "diag", "where", "sort", "argsort"}
DECORATORS = {"kernel", "scratch_kernel", "inline_kernel", "typed_kernel"}


def _decorator_names(fn) -> set:
    names = set()
    for d in fn.decorator_list:
        d = d.func if isinstance(d, ast.Call) else d
        names.add(d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", None))
    return names


class Module:
    """A module's top-level functions, the names it imports (``name -> (module, name)``) and the
    modules it imports under a name (``alias -> module``)."""

    def __init__(self, mods: dict, name: str):
        tree = ast.parse(mods[name].read_text(encoding="utf-8"))
        self.name = name
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.names, self.aliases = {}, {}
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                prefix = imported(mods, name, node)[0]
                for a in node.names:
                    target = f"{prefix}.{a.name}"
                    if target in mods:
                        self.aliases[a.asname or a.name] = target
                    elif prefix in mods:
                        self.names[a.asname or a.name] = (prefix, a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in mods:
                        self.aliases[a.asname or a.name] = a.name


def allocations(fn) -> list:
    """``(line, what)`` of the array creations in the function ``fn`` (numpy as ``np``)."""
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if isinstance(f.value, ast.Name) and f.value.id in ("np", "numpy") and f.attr in ALLOCATING:
                out.append((node.lineno, f"np.{f.attr}"))
            elif isinstance(f.value, ast.Attribute) and getattr(f.value.value, "id", None) in ("np", "numpy"):
                out.append((node.lineno, f"np.{f.value.attr}.{f.attr}"))        # np.linalg.*
            elif f.attr == "copy" and not node.args:
                out.append((node.lineno, ".copy()"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            out.append((node.lineno, "@"))
    return out


def callees(module: Module, fn) -> list:
    """``(module name, function name)`` of the calls in ``fn`` this reading resolves."""
    out = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name):
            if f.id in module.functions:
                out.append((module.name, f.id))
            elif f.id in module.names:
                out.append(module.names[f.id])
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in module.aliases:
            out.append((module.aliases[f.value.id], f.attr))
    return out


def scratch_allocations(package: Path = PACKAGE) -> list:
    """``"module.function:line what (from scratch_kernel module.function)"`` for every array
    creation in a function a ``scratch_kernel`` reaches."""
    mods = modules() if package == PACKAGE else _modules_of(package)
    read = {}

    def module(name):
        if name not in read:
            read[name] = Module(mods, name)
        return read[name]

    found = []
    for name, path in mods.items():
        if "scratch_kernel" not in path.read_text(encoding="utf-8"):
            continue
        m = module(name)
        for root, fn in m.functions.items():
            if "scratch_kernel" not in _decorator_names(fn):
                continue
            seen, todo = set(), [(name, root)]
            while todo:
                key = todo.pop()
                if key in seen or key[0] not in mods:
                    continue
                seen.add(key)
                mk = module(key[0])
                f = mk.functions.get(key[1])
                if f is None:
                    if key[1] in mk.names:                  # re-exported: follow the name
                        todo.append(mk.names[key[1]])
                    continue
                if not _decorator_names(f) & DECORATORS:
                    continue                                 # not compiled: not reached by numba
                found += [f"{key[0]}.{key[1]}:{line} {what} (from scratch_kernel {name}.{root})"
                          for line, what in allocations(f)]
                todo += callees(mk, f)
    return sorted(set(found))


def _modules_of(package: Path) -> dict:
    """:func:`test_structure.modules` of another package folder (the finder's own test)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        name = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def test_no_function_reached_from_a_scratch_kernel_creates_an_array():
    found = scratch_allocations()
    assert not found, "array creation where no memory manager is compiled:\n" + "\n".join(found)


def test_the_allocation_finder_follows_calls_across_modules(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text(
        "import numpy as np\nfrom .cache import kernel\n\n\n@kernel\ndef norms(a):\n"
        "    b = np.empty(3)\n    return b\n\n\n@kernel\ndef fine(a):\n    return a[0]\n")
    (pkg / "high.py").write_text(
        "from .cache import scratch_kernel, kernel\nfrom .low import norms\nfrom . import low as L\n\n\n"
        "@scratch_kernel\ndef top(a):\n    x = norms(a)\n    return helper(a) + L.fine(a)\n\n\n"
        "@kernel\ndef helper(a):\n    return (a @ a).copy()\n")
    found = scratch_allocations(pkg)
    assert [f.split(" (")[0] for f in found] == ["pkg.high.helper:14 .copy()", "pkg.high.helper:14 @",
                                                  "pkg.low.norms:7 np.empty"]
