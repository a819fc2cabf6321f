"""``load_kernels`` keeps no record of its own of what it loaded (DESIGN.md: no module-level
mutable caches): numba's dispatchers know (:func:`~pkm_dynamics.core.robot_warmup.kernels_in_memory`)."""
import ast
import inspect

from pkm_dynamics.core import robot_warmup


def _module_level_containers(module) -> list:
    """Names bound at module level to a set, dict or list (a literal or ``set()`` ...)."""
    names = []
    for node in ast.parse(inspect.getsource(module)).body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        value = node.value
        call = isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
        empty = call and value.func.id in ("set", "dict", "list")
        container = isinstance(value, (ast.Set, ast.Dict, ast.List)) or empty
        if container:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def test_loaded_kernels_are_known_from_numba_not_a_module_level_set():
    """robot_warmup kept the families it had warmed in a module-level set (``_loaded``)."""
    assert _module_level_containers(robot_warmup) == []
    robot_warmup.load_kernels("hoid")
    assert robot_warmup.kernels_in_memory("hoid")
    assert robot_warmup.load_kernels("hoid") == 0          # nothing warmed again
