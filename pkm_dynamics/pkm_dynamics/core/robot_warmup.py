"""Compile every kernel once and store it in numba's cache, so that tests, demo and node start
warm (:mod:`.precompile`, the command, runs :func:`warm`), and load the kernels of one robot kind
once per process (:func:`load_kernels`, called by :func:`.robot.robot_from_description`): a
robot built without a valid cache compiles its kernels when it is built, never at its first call, and says so on the
``pkm_dynamics.core`` logger.  It builds example robots and runs their calls, so it sits above
the robots; the kernel-only warm-ups are in :mod:`.numba_support.warmup`."""
from __future__ import annotations

import logging
import os
import sys
import time

import numpy as np

from .identification.regressor import regressor
from .module_chain.chain_friction import chain_friction_forces, friction_one
from .module_chain.module_chain_robot import ModuleChainRobot
from .numba_support.warmup import warm_hoid, warm_hydraulics, warm_tree
from .pkm.parallel_robot import ParallelRobot
from .sweeps.chain_static import load_chart_cells, static_payload_forces
from .sweeps.pkm_workspace import workspace_sweep

#: where :func:`load_kernels` reports kernels it had to compile (the node forwards it to ROS)
LOG = logging.getLogger("pkm_dynamics.core")


def installed_robots() -> str:
    """The example robots of the installed package (``<prefix>/share/pkm_dynamics/robots``)."""
    return os.path.join(sys.prefix, "share", "pkm_dynamics", "robots")


#: the kernel families, each warmed by its own function below
FAMILIES = ("chain", "pkm", "hoid", "hydraulics", "loop_chain")


def warm(trees: bool = True, families: tuple = FAMILIES,
         robots: str | None = None) -> float:
    """Run every compiled call of the kernel ``families`` once: ``"chain"`` (:func:`warm_chain`),
    ``"loop_chain"`` (:func:`warm_loop_chain`),
    ``"pkm"`` the limb kernels (:func:`warm_pkm`, on the 3-RRR of ``robots``, default the
    installed examples), ``"hoid"`` the higher-order ID kernels of paper 002, ``"hydraulics"``
    the valve-cylinder kernels (:func:`~.numba_support.warmup.warm_hydraulics`), and with ``trees``
    the tree kernels (FK, kinematics, RNEA, CRBA, ABA, frame Jacobian) on the spanning tree of a
    generated chain.  Returns seconds."""
    t = time.perf_counter()
    tree = None
    if "chain" in families:
        tree = warm_chain()
    if "pkm" in families:
        warm_pkm(robots or installed_robots())
    if "hoid" in families:
        warm_hoid()
    if "hydraulics" in families:
        warm_hydraulics()
    if "loop_chain" in families:
        warm_loop_chain()
    if trees:
        if tree is None:
            from .description.robot_description import parse_description
            from .description.examples import module_chain_urdf
            tree = parse_description(module_chain_urdf(2)).tree
        warm_tree(tree)
    return time.perf_counter() - t


def warm_chain():
    """The module-chain kernels: FD, ID, their derivatives, tree state, the identification's
    regressor (:mod:`.identification.regressor_kernels`), FK and joint reactions, batched, FD for
    one state, the joint friction in actuator space (alone and in the FD / ID of one state), the
    static payload forces and a chunk of a load chart (:mod:`.sweeps`), the IK solve from one start and the
    compiled integrators of ``simulate`` (:mod:`.simulation.simulation_kernels`: efforts from a
    table, and from a compiled controller: :data:`~.simulation.simulation_kernels.CONTROLLER`), on
    a generated chain (one compilation covers every module kind: the kernels branch at run time).
    Returns the chain's spanning tree."""
    from .description.examples import module_chain_urdf
    from .simulation.simulation_kernels import zero_controller     # loads integrate_controlled
    robot = ModuleChainRobot(module_chain_urdf(2))
    x = np.zeros((2, robot.n))
    f = robot.inverse_dynamics(x, x, x, wrench=np.zeros(6))
    robot.forward_dynamics(x, x, f)
    robot.forward_dynamics(x[0], x[0], f[0])                 # one state: chain_dynamics_one
    robot.forward_dynamics_derivatives(x, x, f)              # chain_derivatives (one signature)
    robot.inverse_dynamics_derivatives(x, x, x, wrench=np.zeros(6))
    robot.tree_state(x, x, x)
    regressor(robot, x, x, x)                                # the identification's tree regressor
    robot.forward_kinematics(x)
    robot.joint_reactions(x, x, f)
    robot.inverse_kinematics(robot.forward_kinematics(x[0]), search=False)    # chain_ik_kernels
    mid = robot.seed_reference                                               # mid-stroke
    robot.simulate(mid, x[0], 2e-3, efforts=f[0])                            # integrate
    robot.simulate(mid, x[0], 2e-3, controller=zero_controller)              # integrate_controlled
    table = np.ones((robot.tree.nq, 5))                                      # joint friction rows
    table.setflags(write=False)
    chain_friction_forces(robot.compiled, table, x, x)                      # chain_friction_kernels
    friction_one(robot.compiled, table, False, x[0], x[0], f[0])            # FD / ID of one state with it
    static_payload_forces(robot, x)                                          # sweeps.chain_static_kernels
    load_chart_cells(robot, list(x.T), 0, 2, x[0], x[0], x[0] - 1, x[0] + 1, 1.0, 0.0)   # chain_chart_kernels
    return robot.tree


def warm_loop_chain() -> None:
    """The kernel of a chain of loops (:mod:`.loop_chain.loop_chain_kernels`: one signature serves
    every call) on a generated module chain served as a chain of loops: ID with a wrench, FD,
    the tree state, ``(H^T M H, bias)`` and the IK (its pose and Jacobian; the tree kinematics
    of its acceleration, :mod:`.tree.compiled_tree`)."""
    from .description.examples import module_chain_urdf
    from .description.robot_description import parse_description
    from .loop_chain.loop_chain_robot import LoopChainRobot
    robot = LoopChainRobot(parse_description(module_chain_urdf(2)))
    x = np.tile(robot.seed_reference, (2, 1))
    z = np.zeros_like(x)
    u = robot.inverse_dynamics(x, z, z, wrench=np.zeros(6))
    robot.forward_dynamics(x[0], z[0], u[0])
    robot.tree_state(x, z, z)
    robot.compiled.mass_and_bias(x, z)
    robot.inverse_kinematics(robot.forward_kinematics(x[0]), np.zeros(6), np.zeros(6), search=False)


def warm_pkm(robots: str) -> None:
    """The limb kernels (:mod:`.limb.limb_ik_kernels`, :mod:`.pkm.robot_kernels`: both IK schemes,
    rates, ID; the workspace sweep (:mod:`.sweeps`); the identification's regressor and its
    constraint embedding (:mod:`.identification.embedding_kernels`);
    :mod:`.pkm.robot_dynamics`: FD, with and without a wrench) on the example planar 3-RRR of the
    directory ``robots`` (skipped where it is not there: the kernels then compile
    when the first parallel robot is built)."""
    path = os.path.join(robots, "planar_3rrr.urdf")
    if not os.path.exists(path):
        return
    robot = ParallelRobot(path)
    pose = robot.task_pose(np.full(robot.dof, 0.01))
    z = np.zeros(robot.dof)
    for scheme in ("nested", "compound"):
        sol = robot.inverse_kinematics(pose, z, z, scheme=scheme)
    u = robot.inverse_dynamics(sol, z, z)
    regressor(robot, pose, z, z)              # the identification's tree regressor and embedding_kernels
    workspace_sweep(robot, pose[None])                       # sweeps.pkm_workspace_kernels
    robot.forward_dynamics(sol, z, u)
    robot.forward_dynamics(sol, z, u, wrench=np.zeros(6))


def kernels_in_memory(family: str) -> bool:
    """Whether the kernels of ``family`` are in memory in this process: the kernel its warm-up
    calls last (:func:`warm_chain`: the IK solve, :func:`warm_pkm`: the forward dynamics,
    :func:`~.numba_support.warmup.warm_hoid`: the recursion alone, ``"hydraulics"``: the reverse
    map) has a signature -- numba's dispatcher keeps what it compiled or loaded, so no record of
    its own is kept here."""
    if family == "chain":
        from .module_chain.chain_ik_kernels import pose_newton as last
    elif family == "loop_chain":
        from .loop_chain.loop_chain_kernels import loop_chain_calls as last
    elif family == "pkm":
        from .pkm.robot_dynamics import robot_forward_dynamics as last
    elif family == "hydraulics":
        from .hydraulics.valve_kernels import cylinder_forces as last
    else:
        from .hoid.hoid_kernels import hoid_recursion_call as last
    return bool(last.signatures)


def load_kernels(family: str | None = None) -> int:
    """The kernels of one ``family`` (``"chain"``, ``"pkm"``, ``"hoid"``, ``"hydraulics"``,
    ``"loop_chain"``; None: every family) in memory (loaded from numba's cache, or compiled where
    there is none) once per process
    (:func:`kernels_in_memory`: a second call warms nothing; it spared building the example
    robot again, 13-18 ms for ``"pkm"``), when :func:`.robot.robot_from_description` builds the
    first robot of that kind: its first call (a service's first request) then does not pay the
    ~0.5 s of loading them, and a robot does not pay for the kernels of another kind.  The tree
    kernels are not among them (the robots' calls do not use them; each loads on its first call,
    about 0.05 s).  Returns how many kernel signatures had to be compiled (no valid cache);
    when any, a line on :data:`LOG` says so, how long it took and where they are kept."""
    from numba.core import event
    wanted = tuple(f for f in (FAMILIES if family is None else (family,))
                   if not kernels_in_memory(f))
    if not wanted:
        return 0
    with event.install_recorder("numba:compile") as compiles:
        seconds = warm(trees=False, families=wanted)
    compiled = sum(1 for _, e in compiles.buffer if e.is_start)
    if compiled:
        LOG.warning("compiled %d numba kernel signatures (%s) in %.1f s: no valid cache of them "
                    "in %s", compiled, ", ".join(wanted), seconds, cache_location())
    return compiled


def cache_location() -> str:
    """Where the kernels are cached (:mod:`.numba_support.cache`), in words."""
    from .numba_support.cache import CACHE_DIR
    if CACHE_DIR is None:
        return "no writable location: not cached, every process compiles them"
    return f"{CACHE_DIR} (kept for the next start)"
