"""The import paths of the flat core of before the concept folders, kept working with a
``DeprecationWarning``.

Until the layout by concept, the core was 44 flat modules and ``core/compiled/`` (the kernels):
``pkm_dynamics.core.higher_order``, ``pkm_dynamics.core.payload``,
``pkm_dynamics.core.compiled.limb_tables``, ...  Importing such a path now gives the module it
moved to (the same module object: :data:`MOVED_MODULES`), and the names of a flat module that
became a package of the same name (``from pkm_dynamics.core.pkm import ParallelRobot``) resolve
through that package's ``__getattr__`` (:func:`moved_name`, :data:`MOVED_NAMES`).  Each warns
once per place with the new path to use.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: the dotted name of the core package
CORE = __name__.rpartition(".")[0]

#: each module of the flat core and of ``core/compiled/`` (relative to the core) -> where it is now
MOVED_MODULES = {
    "chain_ik": "module_chain.chain_ik", "constrained": "tree.constrained", "cut_joints": "tree.cut_joints",
    "examples": "description.examples", "higher_order": "hoid.higher_order", "hoid_motions": "hoid.hoid_motions",
    "hoid_recursion": "hoid.hoid_recursion", "ik_refinement": "limb.ik_refinement",
    "jet_dynamics": "hoid.jet_dynamics", "limb_chain": "pkm.limb_chain", "limb_ik": "limb.limb_ik",
    "limb_kinematics": "limb.limb_kinematics", "limb_model": "limb.limb_model", "limb_tree": "limb.limb_tree",
    "loop_constraints": "limb.loop_constraints", "module_chain_dynamics": "module_chain.module_chain_dynamics",
    "module_chain_robot": "module_chain.module_chain_robot", "parallel_module": "module_chain.parallel_module",
    "payload": "description.payload", "pkm_derivatives": "derivatives.pkm_derivatives",
    "pkm_kinematics": "pkm.pkm_kinematics", "pkm_solution": "pkm.pkm_solution",
    "pkm_task_dynamics": "pkm.pkm_task_dynamics", "sea": "hoid.sea", "simple_limb": "hoid.simple_limb",
    "taylor": "spatial.taylor", "tree_dynamics": "tree.tree_dynamics", "validation": "description.validation",
    "working_mode": "pkm.working_mode",
    "compiled": None,                    # the package of the kernels: its modules below
    "compiled.cache": "numba_support.cache", "compiled.chain_closure": "module_chain.chain_closure",
    "compiled.chain_derivatives": "derivatives.chain_derivatives",
    "compiled.chain_ik_kernels": "module_chain.chain_ik_kernels",
    "compiled.chain_kernels": "module_chain.chain_kernels",
    "compiled.chain_kinematics": "module_chain.chain_kinematics", "compiled.chain_model": "module_chain.chain_model",
    "compiled.chain_reactions": "reactions.chain_reactions",
    "compiled.chain_reactions_model": "reactions.chain_reactions_model", "compiled.hoid_kernels": "hoid.hoid_kernels",
    "compiled.hoid_kinematics": "hoid.hoid_kinematics", "compiled.hoid_model": "hoid.hoid_model",
    "compiled.limb_dynamics_kernels": "limb.limb_dynamics_kernels", "compiled.limb_ik_kernels": "limb.limb_ik_kernels",
    "compiled.limb_kernels": "limb.limb_kernels", "compiled.limb_tables": "pkm.limb_tables",
    "compiled.robot_dynamics": "pkm.robot_dynamics", "compiled.robot_kernels": "pkm.robot_kernels",
    "compiled.small_linalg": "spatial.small_linalg", "compiled.spatial_kernels": "spatial.se3_kernels",
    "compiled.tree_kernels": "tree.tree_kernels", "compiled.tree_model": "tree.tree_model",
    "compiled.warmup": "numba_support.warmup",
}
#: each flat module that became a package of the same name -> the modules its names are in now
MOVED_NAMES = {
    "description": ("description.robot_description",), "pkm": ("pkm.parallel_robot",),
    "tree": ("tree.tree_model",), "derivatives": ("derivatives.derivatives",),
    "reactions": ("reactions.reactions",), "simulation": ("simulation.simulation", "simulation.reference"),
    "module_chain": ("module_chain.module_chain",),
}


def moved_name(package: str, name: str):
    """The object ``name`` of the flat module that became ``package`` (a package's
    ``__getattr__``), with a DeprecationWarning naming its module now; AttributeError if it had
    none of that name."""
    short = package[len(CORE) + 1:]
    for target in MOVED_NAMES.get(short, ()):
        module = importlib.import_module(f"{CORE}.{target}")
        if hasattr(module, name):
            warnings.warn(f"{package}.{name} moved: import it from {module.__name__}", DeprecationWarning,
                          stacklevel=3)
            return getattr(module, name)
    raise AttributeError(f"module {package!r} has no attribute {name!r}")


class MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths of :data:`MOVED_MODULES` and loads each as the module it moved to (the
    import system takes what the loader leaves in ``sys.modules``)."""

    def find_spec(self, fullname, path=None, target=None):
        old = fullname[len(CORE) + 1:] if fullname.startswith(CORE + ".") else None
        if old not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=MOVED_MODULES[old] is None)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        new = MOVED_MODULES[module.__name__[len(CORE) + 1:]]
        if new is None:
            return
        warnings.warn(f"{module.__name__} moved: import {CORE}.{new}", DeprecationWarning, stacklevel=2)
        sys.modules[module.__name__] = importlib.import_module(f"{CORE}.{new}")


def install() -> None:
    """Put the finder of the old paths on ``sys.meta_path`` (once per process)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
