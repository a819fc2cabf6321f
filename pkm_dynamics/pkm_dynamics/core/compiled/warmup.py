"""Compile every kernel once and store it in numba's cache, so that tests, demo and node start
warm: ``python -m pkm_dynamics.core.compiled.warmup`` (``make setup`` runs it after installing
the package).  Prints the cache location and the time taken."""
from __future__ import annotations

import sys
import time


def warm() -> float:
    """Run every compiled call (FD, ID, tree state, FK, joint reactions) once, batched, and FD
    for one state, on a generated chain (one compilation covers every module kind: the kernels
    branch at run time); returns seconds."""
    t = time.perf_counter()
    import numpy as np

    from ..examples import module_chain_urdf
    from ..robot import load_robot
    robot = load_robot(module_chain_urdf(2))
    x = np.zeros((2, robot.n))
    f = robot.inverse_dynamics(x, x, x, f_ext=np.zeros(6))
    robot.forward_dynamics(x, x, f)
    robot.forward_dynamics(x[0], x[0], f[0])                 # one state: chain_dynamics_one
    robot.tree_state(x, x, x)
    robot.forward_kinematics(x)
    robot.joint_reactions(x, x, f)
    return time.perf_counter() - t


_loaded = False


def load_kernels() -> None:
    """Every kernel in memory (loaded from numba's cache, or compiled where there is none) once
    per process, when the first module chain is built: its first call (a service's first
    request) then does not pay the ~0.5 s of loading them."""
    global _loaded
    if not _loaded:
        _loaded = True              # first: warm() builds a robot itself
        warm()


def main() -> int:
    from .cache import CACHE_DIR
    seconds = warm()
    where = "not cached (no writable location)" if CACHE_DIR is None else CACHE_DIR
    print(f"pkm_dynamics: compiled kernels ready in {seconds:.1f} s, cache: {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
