"""The checkable rules of the layout (DESIGN.md, *Rules of the layout*), read from the source
with ``ast``: no import cycle between the package's modules (imports at module level and inside
functions both count; a package's ``__init__`` re-exporting its children is not a cycle), no
folder over 15 modules, no module over 450 lines, no private attribute written onto another
object (``x._name = ...`` with ``x`` not ``self`` / ``cls``), no ``__dict__`` write.

Dependencies point down: inside the core a module imports only modules of its own layer and of
the layers below (:data:`CORE_LAYERS`), and a compiled module (one that defines kernels with the
decorators of :mod:`~pkm_dynamics.core.numba_support.cache`) imports only compiled modules and
the constants below them (:data:`KERNEL_BASE`), never a module of the numpy route.

Known exceptions: :data:`LONG_MODULES` lists the modules still over the line limit, to be split
along their concepts, :data:`HIDDEN_STATE_WRITES` the writes still to remove (file and
attribute), :data:`UPWARD_IMPORTS` the imports still against the order of the layers.  The
lists only shrink: every entry must still be true (a module split or a write removed is taken
off its list in the same change), so the lists stay exact."""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pkm_dynamics"
MAX_MODULES_PER_FOLDER, MAX_LINES = 15, 450

#: modules over MAX_LINES, paths relative to PACKAGE (the list only shrinks)
LONG_MODULES = set()
#: (file, what) of the hidden-state writes still to remove (the list only shrinks)
HIDDEN_STATE_WRITES = set()

#: The layers of the core, bottom first (DESIGN.md, *Rules of the layout*: dependencies point
#: down).  A core module may import the modules of its own layer and of the layers below, never
#: those of a layer above.  An entry names a concept (a folder of ``core/`` or a module beside
#: them) or, where one module sits on another layer than its folder, that module: a module
#: belongs to the most specific entry naming it.  At the bottom what every concept uses (errors,
#: status codes and shared constants, input bounds, the Robot protocol and options, spatial
#: algebra, the numba cache); then the description and the tree model; the three papers' concepts
#: (the PKM above the limbs it is made of, the HOID route above the chain and the PKM it serves);
#: the services across concepts (reactions, derivatives, simulation); at the top the robots that
#: compose them all behind the Robot protocol, load_robot and the warm-up of every kernel.
CORE_LAYERS = (
    ("errors", "status", "bounds", "gravity", "limits", "interface", "spatial", "numba_support", "deprecated_paths"),
    ("description", "friction"),
    ("tree",),
    ("module_chain",),
    ("limb",),
    ("pkm",),
    ("hoid",),
    ("reactions", "derivatives", "simulation", "forward_state", "identification", "hydraulics", "sweeps"),
    ("robot", "robot_warmup", "precompile", "numba_support.warmup", "module_chain.module_chain_robot",
     "pkm.parallel_robot", "loop_chain"),
)
#: (importing module, imported module) of the upward imports still to remove (the list only
#: shrinks): the description builds its tree with the tree's parser and checks its loops with
#: the tree's kinematics; the payload names its link with the chain's recognition and builds the
#: robot; the PKM's task-space dynamics reaches its derivatives (a method of the robot)
UPWARD_IMPORTS = {
    ("description.robot_description", "tree.tree_model"),
    ("description.robot_description", "tree.tree_dynamics"),
    ("description.payload", "module_chain.module_chain"),
    ("description.payload", "robot"),
    ("pkm.pkm_task_dynamics", "derivatives.pkm_derivatives"),
}
#: what a compiled module may import beside compiled modules: the constants the kernels read (the
#: status codes, the input bounds, the named layout of the packed limb model and scratch), the
#: scalar formulas both routes evaluate (compiled by :mod:`.spatial.se3_kernels`) and the view
#: intrinsic of :mod:`.numba_support.views`
KERNEL_BASE = ("status", "bounds", "numba_support.cache", "numba_support.views", "spatial.scalar_forms",
               "limb.limb_layout")
#: the import of the kernel decorators that marks a compiled module (as ``cache.source_hash``)
_KERNEL_IMPORT = re.compile(r"numba_support\.cache import [^\n]*kernel")


def modules() -> dict:
    """Dotted module name -> path of every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def imported(mods: dict, name: str, node) -> list:
    """The dotted names an import statement ``node`` of module ``name`` may refer to."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = name.split(".")
    if mods[name].name != "__init__.py":
        base = base[:-1]
    if node.level:
        base = base[:len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    return [prefix] + [f"{prefix}.{a.name}" for a in node.names]


def import_graph(mods: dict) -> dict:
    graph = defaultdict(set)
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in imported(mods, name, node):
                    face = mods.get(target) is not None and mods[target].name == "__init__.py" \
                        and name.startswith(target + ".")
                    if target in mods and target != name and not face:
                        graph[name].add(target)
    return graph


def cycles(graph: dict, nodes) -> list:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def hidden_state_writes(path: Path, root: Path = PACKAGE) -> list:
    """``(file, line, what)`` of every private attribute written onto another object and every
    ``__dict__`` write (item assignment or ``__dict__.update`` / ``setdefault``) in ``path``."""
    found = []
    rel = path.relative_to(root).as_posix()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("update", "setdefault") and isinstance(node.func.value, ast.Attribute) \
                and node.func.value.attr == "__dict__":
            found.append((rel, node.lineno, f"__dict__.{node.func.attr}"))
        if not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            continue
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Attribute) and sub.attr.startswith("_") and not sub.attr.startswith("__") \
                        and not (isinstance(sub.value, ast.Name) and sub.value.id in ("self", "cls")):
                    found.append((rel, node.lineno, f".{sub.attr}"))
                if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Attribute) \
                        and sub.value.attr == "__dict__":
                    found.append((rel, node.lineno, "__dict__[...]"))
    return sorted(found)


def line_count(path: Path) -> int:
    return path.read_text(encoding="utf-8").count("\n")


def test_no_import_cycle():
    mods = modules()
    assert cycles(import_graph(mods), mods) == []


def test_the_cycle_finder_finds_a_cycle():
    """The checks' own check: a two-module cycle and a three-module cycle are found."""
    graph = defaultdict(set, {"a": {"b"}, "b": {"a", "c"}, "c": {"d"}, "d": {"e"}, "e": {"c"}})
    assert sorted(cycles(graph, "abcde")) == [["a", "b"], ["c", "d", "e"]]


def test_no_crowded_folder():
    per_folder = defaultdict(list)
    for path in modules().values():
        per_folder[path.parent.relative_to(PACKAGE).as_posix()].append(path.name)
    crowded = {d: len(m) for d, m in per_folder.items() if len(m) > MAX_MODULES_PER_FOLDER}
    assert crowded == {}


def test_no_long_module_beyond_the_known_ones():
    long = {p.relative_to(PACKAGE).as_posix() for p in modules().values() if line_count(p) > MAX_LINES}
    assert long - LONG_MODULES == set(), "modules over the line limit: split them along their concepts"
    assert LONG_MODULES - long == set(), "now within the limit: take them off LONG_MODULES"


def test_no_hidden_state_write_beyond_the_known_ones():
    found = [f for p in modules().values() for f in hidden_state_writes(p)]
    new = [f"{rel}:{line} {what}" for rel, line, what in found if (rel, what) not in HIDDEN_STATE_WRITES]
    assert new == [], "keep results in named fields and scratch with its owner"
    assert HIDDEN_STATE_WRITES - {(rel, what) for rel, _, what in found} == set(), \
        "gone: take them off HIDDEN_STATE_WRITES"


def test_the_hidden_state_finder_finds_writes(tmp_path):
    """The checks' own check: each kind of write is found, ``self._x`` is not."""
    src = tmp_path / "m.py"
    src.write_text("def f(robot, self):\n    robot._cache = 1\n    self._ok = 2\n"
                   "    robot.__dict__['_m'] = 3\n    robot.__dict__.update(m=4)\n    robot.data._x += 1\n")
    assert hidden_state_writes(src, tmp_path) == [("m.py", 2, "._cache"), ("m.py", 4, "__dict__[...]"),
                                                  ("m.py", 5, "__dict__.update"), ("m.py", 6, "._x")]


def core_name(name: str) -> str | None:
    """``pkm_dynamics.core.x.y`` -> ``x.y``; None for a module outside the core and for its face."""
    prefix = f"{PACKAGE.name}.core."
    return name[len(prefix):] if name.startswith(prefix) else None


def layer(name: str, layers=CORE_LAYERS) -> int | None:
    """The index in ``layers`` of the core module ``name`` (``x.y``): its most specific entry."""
    best = None
    for i, entries in enumerate(layers):
        for entry in entries:
            if (name == entry or name.startswith(entry + ".")) and (best is None or len(entry) > len(best[1])):
                best = (i, entry)
    return None if best is None else best[0]


def upward_imports(graph: dict, layers=CORE_LAYERS) -> set:
    """``(importer, imported)`` (core names) of every import of a module of a higher layer."""
    found = set()
    for name, targets in graph.items():
        a = core_name(name)
        if a is None or layer(a, layers) is None:
            continue
        for target in targets:
            b = core_name(target)
            if b is not None and layer(b, layers) is not None and layer(b, layers) > layer(a, layers):
                found.add((a, b))
    return found


def test_every_core_module_has_a_layer():
    unplaced = {core_name(n) for n in modules() if core_name(n) is not None and layer(core_name(n)) is None}
    assert unplaced == set(), "place the new concept in CORE_LAYERS"


def test_dependencies_point_down():
    found = upward_imports(import_graph(modules()))
    assert found - UPWARD_IMPORTS == set(), "a core module imports a layer above its own (CORE_LAYERS)"
    assert UPWARD_IMPORTS - found == set(), "gone: take them off UPWARD_IMPORTS"


def test_the_layer_check_finds_an_upward_import():
    """The checks' own check: an import of a higher layer is found, one of the same or a lower
    layer is not, and a module listed on its own takes its entry's layer, not its folder's."""
    core = f"{PACKAGE.name}.core."
    graph = defaultdict(set, {core + "base.a": {core + "top.b", core + "base.c"},
                              core + "top.b": {core + "base.a"}, core + "top.face": {core + "top.b"}})
    layers = (("base", "top.face"), ("top",))
    assert upward_imports(graph, layers) == {("base.a", "top.b"), ("top.face", "top.b")}


def test_kernels_import_no_numpy_route():
    mods = modules()
    compiled = {core_name(n) for n, p in mods.items() if core_name(n) and _KERNEL_IMPORT.search(p.read_text())}
    assert {"module_chain.chain_kernels", "limb.limb_kernels", "tree.tree_kernels", "hoid.hoid_kernels"} <= compiled
    found = {(core_name(n), core_name(t)) for n, targets in import_graph(mods).items() if core_name(n) in compiled
             for t in targets if core_name(t) and core_name(t) not in compiled and core_name(t) not in KERNEL_BASE}
    assert found == set(), "kernels and reference never import each other"


def module_level_caches(path: Path) -> list:
    """``(line, name)`` of the module-level assignments of ``path`` that bind an empty mutable
    container (``{}``, ``[]``, ``set()``, ``dict()``, ``list()``): a cache that outlives every
    model and thread (DESIGN.md, *Rules of the layout*).  Filled tables (constants) are not
    counted."""
    out = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        v = node.value
        empty = (isinstance(v, (ast.Dict, ast.List, ast.Set)) and not getattr(v, "keys", getattr(v, "elts", None))) \
            or (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("set", "dict", "list")
                and not v.args and not v.keywords)
        if empty:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out += [(node.lineno, ast.unparse(t)) for t in targets]
    return out


def test_no_module_level_mutable_cache():
    found = {(str(p.relative_to(PACKAGE)), name) for p in modules().values()
             for _, name in module_level_caches(p)}
    assert found == set(), "module-level mutable caches: keep per-model or per-thread state in the model's Data"


def test_the_cache_finder_finds_caches(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("_ENTRY = {}\n_loaded = set()\nTABLE = {1: 2}\nNAMES = ['a']\ndef f():\n    local = {}\n")
    assert [n for _, n in module_level_caches(f)] == ["_ENTRY", "_loaded"]


#: the packages of pkm_dynamics above the core, each importing the core and never each other; the
#: core imports none of them (DESIGN.md, *Layers*: node -> core; analysis -> core, ROS-free)
ABOVE_CORE = ("node", "analysis")


def imports_across(graph: dict, package: str) -> set:
    """``(importer, imported)`` of every import that breaks the layering around the core: a core
    module importing a package above it, or ``analysis`` importing ``node`` (or ``rclpy``)."""
    top = PACKAGE.name
    found = set()
    for name, targets in graph.items():
        for target in targets:
            if name.startswith(f"{top}.core") and any(target.startswith(f"{top}.{p}") for p in ABOVE_CORE):
                found.add((name, target))
            if name.startswith(f"{top}.{package}") and target.startswith(f"{top}.node"):
                found.add((name, target))
    return found


def test_analysis_is_a_layer_above_the_core():
    mods = modules()
    assert any(n.startswith(f"{PACKAGE.name}.analysis.") for n in mods)
    assert imports_across(import_graph(mods), "analysis") == set()
    for name, path in mods.items():
        if name.startswith(f"{PACKAGE.name}.analysis"):
            assert "rclpy" not in path.read_text(encoding="utf-8"), f"{name} imports ROS"


def test_the_layer_check_finds_a_core_import_of_the_analysis():
    top = PACKAGE.name
    graph = defaultdict(set, {f"{top}.core.robot": {f"{top}.analysis.maps"},
                              f"{top}.analysis.maps": {f"{top}.core.robot", f"{top}.node.runtime"}})
    assert imports_across(graph, "analysis") == {(f"{top}.core.robot", f"{top}.analysis.maps"),
                                                 (f"{top}.analysis.maps", f"{top}.node.runtime")}
