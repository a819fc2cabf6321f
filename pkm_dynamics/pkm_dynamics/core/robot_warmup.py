"""Compile every kernel once and store it in numba's cache, so that tests, demo and node start
warm (:func:`main`: ``python -m pkm_dynamics.core.precompile``, which ``make setup`` runs after
installing the package; prints the cache location and the time taken), and load the kernels of
one robot kind once per process (:func:`load_kernels`, called by
:func:`.robot.robot_from_description`).  It builds example robots and runs their calls, so it
sits above the robots; the kernel-only warm-ups are in :mod:`.numba_support.warmup`."""
from __future__ import annotations

import sys
import time

import numpy as np

from .module_chain.module_chain_robot import ModuleChainRobot
from .numba_support.warmup import warm_hoid, warm_tree
from .pkm.parallel_robot import ParallelRobot


def warm(trees: bool = True, families: tuple = ("chain", "pkm", "hoid")) -> float:
    """Run every compiled call of the kernel ``families`` once: ``"chain"`` (:func:`warm_chain`),
    ``"pkm"`` the limb kernels (:func:`warm_pkm`), ``"hoid"`` the higher-order ID kernels of
    paper 002, and with ``trees`` the tree kernels (FK, kinematics, RNEA, CRBA, ABA, frame
    Jacobian) on the spanning tree of a generated chain; returns seconds."""
    t = time.perf_counter()
    tree = None
    if "chain" in families:
        tree = warm_chain()
    if "pkm" in families:
        warm_pkm()
    if "hoid" in families:
        warm_hoid()
    if trees:
        if tree is None:
            from .description.robot_description import parse_description
            from .description.examples import module_chain_urdf
            tree = parse_description(module_chain_urdf(2)).tree
        warm_tree(tree)
    return time.perf_counter() - t


def warm_chain():
    """The module-chain kernels: FD, ID, their derivatives, tree state, FK and joint reactions,
    batched, FD for one state, and the IK solve from one start, on a generated chain (one
    compilation covers every module kind: the kernels branch at run time).  Returns the chain's
    spanning tree."""
    from .description.examples import module_chain_urdf
    robot = ModuleChainRobot(module_chain_urdf(2))
    x = np.zeros((2, robot.n))
    f = robot.inverse_dynamics(x, x, x, wrench=np.zeros(6))
    robot.forward_dynamics(x, x, f)
    robot.forward_dynamics(x[0], x[0], f[0])                 # one state: chain_dynamics_one
    robot.forward_dynamics_derivatives(x, x, f)              # chain_derivatives (one signature)
    robot.inverse_dynamics_derivatives(x, x, x, wrench=np.zeros(6))
    robot.tree_state(x, x, x)
    robot.forward_kinematics(x)
    robot.joint_reactions(x, x, f)
    robot.inverse_kinematics(robot.forward_kinematics(x[0]), search=False)    # chain_ik_kernels
    return robot.tree


def warm_pkm() -> None:
    """The limb kernels (:mod:`.limb.limb_ik_kernels`, :mod:`.pkm.robot_kernels`: both IK schemes,
    rates, ID; :mod:`.pkm.robot_dynamics`: FD, with and without a wrench) on the example planar
    3-RRR of the installed share directory (skipped where it is not installed there: the kernels then
    compile at their first call)."""
    import os

    path = os.path.join(sys.prefix, "share", "pkm_dynamics", "robots", "planar_3rrr.urdf")
    if not os.path.exists(path):
        return
    robot = ParallelRobot(path)
    pose = robot.task_pose(np.full(robot.dof, 0.01))
    z = np.zeros(robot.dof)
    for scheme in ("nested", "compound"):
        sol = robot.inverse_kinematics(pose, z, z, scheme=scheme)
    u = robot.inverse_dynamics(sol, z, z)
    robot.forward_dynamics(sol, z, u)
    robot.forward_dynamics(sol, z, u, wrench=np.zeros(6))


#: the kernel families already in memory in this process (see :func:`load_kernels`)
_loaded = set()


def load_kernels(family: str | None = None) -> None:
    """The kernels of one ``family`` (``"chain"``, ``"pkm"``, ``"hoid"``; None: every family)
    in memory (loaded from numba's cache, or compiled where there is none) once per process,
    when :func:`.robot.robot_from_description` builds the first robot of that kind: its first
    call (a service's first request) then does not pay the ~0.5 s of loading them, and a robot
    does not pay for the kernels of another kind.  The tree kernels are not among them (the
    robots' calls do not use them; each loads on its first call, about 0.05 s)."""
    wanted = tuple(f for f in (("chain", "pkm", "hoid") if family is None else (family,)) if f not in _loaded)
    if wanted:
        _loaded.update(wanted)
        warm(trees=False, families=wanted)


def main() -> int:
    from .numba_support.cache import CACHE_DIR
    seconds = warm()
    where = "not cached (no writable location)" if CACHE_DIR is None else CACHE_DIR
    print(f"pkm_dynamics: compiled kernels ready in {seconds:.1f} s, cache: {where}")
    return 0

