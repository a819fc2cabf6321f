"""``load_robot``: the entry point of the core API."""
from __future__ import annotations

from .description.robot_description import RobotDescription, parse_description
from .errors import DescriptionError
from .interface import SolverOptions
from .robot_warmup import load_kernels


def load_robot(description: str, gravity=None, options: SolverOptions | None = None):
    """Build the model of a robot from its description (URDF text or file path).

    ``gravity``: 3-vector in the URDF root frame (default ``(0, 0, -9.80665)``); ``options``:
    the solver settings (:class:`~.interface.SolverOptions`, default ``SolverOptions()``), fixed
    for the robot's life.  Returns a :class:`~pkm_dynamics.core.module_chain_robot.ModuleChainRobot`
    for module chains (no ``<platform>``), a
    :class:`~pkm_dynamics.core.loop_chain.loop_chain_robot.LoopChainRobot` for the other serial
    chains of loops (the recogniser refuses them: an excavator's bucket linkage), a
    :class:`~pkm_dynamics.core.pkm.ParallelRobot` for parallel manipulators; all follow
    :class:`~.interface.Robot`.  Raises
    :class:`~pkm_dynamics.core.errors.DescriptionError` naming what is wrong."""
    desc = parse_description(description, gravity)
    return robot_from_description(desc, options)


def robot_from_description(desc: RobotDescription, options: SolverOptions | None = None):
    """The robot object of an already parsed description (see :func:`load_robot`), with the
    kernels of its kind in memory (:func:`.robot_warmup.load_kernels`, once per process), and
    those of the valve model where it has cylinders (``<hydraulics>``)."""
    robot = robot_of_kind(desc, options)
    if desc.hydraulics is not None:
        load_kernels("hydraulics")
    return robot


def robot_of_kind(desc: RobotDescription, options: SolverOptions | None = None):
    """The robot object of ``desc`` by its kind (see :func:`load_robot`), with that kind's
    kernels in memory."""
    if desc.platform is not None:
        from .pkm.parallel_robot import ParallelRobot
        robot = ParallelRobot(desc, options=options)
        load_kernels("pkm")             # a parallel robot does not load the chain kernels
        load_kernels("hoid")
        return robot
    from .module_chain.module_chain import ChainOrderError
    from .module_chain.module_chain_robot import ModuleChainRobot
    try:
        robot = ModuleChainRobot(desc, options=options)
    except ChainOrderError:
        raise
    except DescriptionError as refused:
        return loop_chain_robot(desc, options, refused)
    load_kernels("chain")
    return robot


def loop_chain_robot(desc: RobotDescription, options, refused: DescriptionError):
    """The robot of a description the module-chain recogniser ``refused``: a serial chain of
    loops on the constraint-embedding route (:class:`~.loop_chain.loop_chain_robot.LoopChainRobot`,
    paper 001), or a :class:`DescriptionError` with both reasons (the recogniser's first, then
    what the chain of loops lacks, naming the joint or loop).  (A module chain refused only for
    the order of its actuators, :class:`~.module_chain.module_chain.ChainOrderError`, is not
    brought here: listed in chain order, the faster route serves it.)"""
    from .loop_chain.loop_chain_robot import LoopChainRobot
    if not desc.cut_joints:
        raise refused
    try:
        robot = LoopChainRobot(desc, options=options)
    except DescriptionError as err:
        raise DescriptionError(f"{refused}; as a chain of loops (paper 001): {err}") from err
    load_kernels("loop_chain")
    return robot
