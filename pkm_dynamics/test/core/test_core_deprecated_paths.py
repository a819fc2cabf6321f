"""The import paths of the flat core (before the concept folders) keep working, with a
DeprecationWarning: an old module path gives the very module it moved to, and a name of a flat
module that became a package resolves through the package.  The old paths below are those the
package README showed and a selection of the kernel modules of ``core/compiled/``."""
from __future__ import annotations

import importlib
import sys

import pytest

from pkm_dynamics.core import deprecated_paths

OLD_TO_NEW = [
    ("pkm_dynamics.core.higher_order", "pkm_dynamics.core.hoid.higher_order"),
    ("pkm_dynamics.core.payload", "pkm_dynamics.core.description.payload"),
    ("pkm_dynamics.core.hoid_motions", "pkm_dynamics.core.hoid.hoid_motions"),
    ("pkm_dynamics.core.module_chain_robot", "pkm_dynamics.core.module_chain.module_chain_robot"),
    ("pkm_dynamics.core.compiled.limb_tables", "pkm_dynamics.core.pkm.limb_tables"),
    ("pkm_dynamics.core.compiled.spatial_kernels", "pkm_dynamics.core.spatial.se3_kernels"),
]


@pytest.mark.parametrize("old,new", OLD_TO_NEW)
def test_an_old_module_path_is_the_module_it_moved_to(old, new):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)


def test_every_old_module_path_imports():
    for old, new in deprecated_paths.MOVED_MODULES.items():
        if new is None:
            continue
        sys.modules.pop(f"{deprecated_paths.CORE}.{old}", None)
        with pytest.warns(DeprecationWarning):
            module = importlib.import_module(f"{deprecated_paths.CORE}.{old}")
        assert module.__name__ == f"{deprecated_paths.CORE}.{new}"


def test_the_names_of_a_flat_module_resolve_through_its_package():
    from pkm_dynamics.core.pkm.parallel_robot import ParallelRobot, parabolic_trajectory
    from pkm_dynamics.core.description.robot_description import parse_description
    with pytest.warns(DeprecationWarning, match="pkm_dynamics.core.pkm.parallel_robot"):
        from pkm_dynamics.core.pkm import ParallelRobot as Old, parabolic_trajectory as old_path
    assert Old is ParallelRobot and old_path is parabolic_trajectory
    with pytest.warns(DeprecationWarning):
        from pkm_dynamics.core.description import parse_description as old_parse
    assert old_parse is parse_description
    with pytest.raises(ImportError, match="no_such_name"):
        from pkm_dynamics.core.pkm import no_such_name  # noqa: F401
