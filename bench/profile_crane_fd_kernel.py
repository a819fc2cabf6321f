"""The crane's FD kernel and its two recursions timed in compiled loops (no Python call per
evaluation), thread CPU time, median and minimum of 5 blocks of 100000 calls, µs per call:
``full`` (``chain_dynamics_one``: checks, Algorithm 1, finite check), ``first``
(``first_forward_pass``), ``fd_rec`` (``fd_recursions``), at ``bench_public_calls``' crane state
(frictionless).  ROOT: the checkout whose ``pkm_dynamics`` and ``bench`` are imported, so two trees
are timed in turns by running it for each:

    python bench/profile_crane_fd_kernel.py ROOT
"""
from __future__ import annotations

import os
import sys

import numpy as np

from common import per_call_us   # this folder's, before ROOT's bench is on the path

BLOCK = 100000


def main(root: str) -> None:
    sys.path.insert(0, os.path.join(root, "pkm_dynamics"))
    sys.path.insert(0, os.path.join(root, "bench"))
    from bench_module_chain import case_state
    from numba import njit
    from pkm_dynamics.core.module_chain.chain_kernels import chain_dynamics_one
    from pkm_dynamics.core.module_chain.chain_layout import model_arrays, scratch_arrays
    from pkm_dynamics.core.module_chain.chain_recursions import fd_recursions, first_forward_pass
    from pkm_dynamics.core.robot import load_robot
    from pkm_dynamics.testing import frictionless

    @njit
    def loop_full(k, model, data, x, xd, f, fe, out, status):
        for _ in range(k):
            chain_dynamics_one(False, model, data, x, xd, f, fe, out, status)

    @njit
    def loop_first(k, model, data, x, xd):
        geo, mats, _ = model_arrays(model, x.shape[0])
        A, V, S, W, w = scratch_arrays(data, x.shape[0])
        for _ in range(k):
            first_forward_pass(geo, mats, A, V, S, W, w, x, xd, False)

    @njit
    def loop_fd(k, model, data, x, xd, f, fe, out):
        geo, mats, nud0 = model_arrays(model, x.shape[0])
        A, V, S, W, w = scratch_arrays(data, x.shape[0])
        first_forward_pass(geo, mats, A, V, S, W, w, x, xd, False)
        for _ in range(k):
            fd_recursions(geo, mats, nud0, A, V, S, W, w, f, fe[0], out)

    robot = load_robot(frictionless(os.path.join(root, "pkm_dynamics", "robots", "heavy_duty_4dof.urdf")))
    x, xd, xdd = case_state(robot, np.random.default_rng(0))
    f = robot.inverse_dynamics(x, xd, xdd)
    model, data = robot.compiled, robot.compiled.data()
    flat, scratch, fe = model.flat, data.flat, data.no_wrench
    out, status = np.empty(robot.n), np.zeros(3, np.int64)
    rows = {"full": lambda k: loop_full(k, flat, scratch, x, xd, f, fe, out, status),
            "first": lambda k: loop_first(k, flat, scratch, x, xd),
            "fd_rec": lambda k: loop_fd(k, flat, scratch, x, xd, f, fe, out)}
    for name, fn in rows.items():
        med, low = per_call_us(fn, BLOCK)
        print(f"{name:8s} {med:.3f} (min {low:.3f})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
