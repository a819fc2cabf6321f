"""``load_robot``: the entry point of the core API."""
from __future__ import annotations

from .description import RobotDescription, parse_description


def load_robot(description: str, gravity=None):
    """Build the model of a robot from its description (URDF text or file path).

    ``gravity``: 3-vector in the URDF root frame (default ``(0, 0, -9.80665)``).  Returns a
    :class:`~pkm_dynamics.core.module_chain.ModuleChainRobot` for module chains (no
    ``<platform>``), a :class:`~pkm_dynamics.core.pkm.ParallelRobot` for parallel manipulators.
    Raises :class:`~pkm_dynamics.core.errors.DescriptionError` naming what is wrong."""
    desc = parse_description(description, gravity)
    return robot_from_description(desc)


def robot_from_description(desc: RobotDescription):
    """The robot object of an already parsed description (see :func:`load_robot`)."""
    if desc.platform is not None:
        from .pkm import ParallelRobot
        return ParallelRobot(desc)
    from .module_chain import ModuleChainRobot
    return ModuleChainRobot(desc)
