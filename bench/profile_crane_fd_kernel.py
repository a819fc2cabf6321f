"""The crane's FD kernel and its two recursions timed in compiled loops (no Python call per
evaluation), thread CPU time, median and minimum of 5 blocks of 100000 calls, µs per call:
``full`` (``chain_dynamics_one``: checks, Algorithm 1, finite check), ``first``
(``first_forward_pass``), ``fd_rec`` (``fd_recursions``), at ``bench_public_calls``' crane state
(frictionless); ``rk4_step``: one step of the compiled integrator (``simulation_kernels.rk4_step``,
constant efforts, the same state each time: four evaluations of the FD and the stages' work, 25000
calls a block), ``fd4_rows`` (the integrator's four FD calls alone: ``chain_kernels.state_dynamics``
on rows of the state arrays, as ``simulation_kernels.evaluate`` makes them; ``chain_dynamics`` on
(1, n) rows in a tree without it) and ``rk4_rest`` = ``rk4_step`` -
``fd4_rows``, the step's work besides the FD (efforts, stage states, the combination).  ROOT: the
checkout whose ``pkm_dynamics`` and ``bench`` are imported, so two trees are timed in turns by
running it for each:

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
    from pkm_dynamics.core.module_chain import chain_kernels as CK
    from pkm_dynamics.core.module_chain.chain_kernels import chain_dynamics_one, forward_flag
    from pkm_dynamics.core.module_chain.chain_layout import model_arrays, scratch_arrays
    from pkm_dynamics.core.module_chain.chain_recursions import fd_recursions, first_forward_pass
    from pkm_dynamics.core.friction.friction_model import NO_FRICTION
    from pkm_dynamics.core.robot import load_robot
    from pkm_dynamics.core.simulation import simulation_kernels as SK
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

    @njit
    def loop_rk4(k, model, data, fe, F, friction, T, X, XD, FO, work, status, clock):
        chain = SK.chain_views(model, data, X.shape[1])
        for _ in range(k):
            SK.rk4_step(chain, fe, F, None, friction, 0, T, X, XD, FO, work, status, clock)

    if hasattr(CK, "state_dynamics"):            # the integrator's one-state driver, where the tree has it
        @njit
        def one_evaluation(inverse, geo, mats, nud0, A, V, S, W, w, x, xd, f, fe, out, status):
            return CK.state_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, x[0], xd[0], f[0], fe, out[0], status)
    else:
        one_evaluation = CK.chain_dynamics

    @njit
    def loop_fd4(k, model, data, fe, X, XD, FO, out, status):
        geo, mats, nud0, A, V, S, W, w = SK.chain_views(model, data, X.shape[1])
        for _ in range(k):
            for _ in range(4):
                one_evaluation(forward_flag(X), geo, mats, nud0, A, V, S, W, w, X[0:1], XD[0:1], FO[0:1], fe,
                               out, status)

    robot = load_robot(frictionless(os.path.join(root, "pkm_dynamics", "robots", "heavy_duty_4dof.urdf")))
    x, xd, xdd = case_state(robot, np.random.default_rng(0))
    f = robot.inverse_dynamics(x, xd, xdd)
    model, data = robot.compiled, robot.compiled.data()
    flat, scratch, fe = model.flat, data.flat, data.no_wrench
    out, status = np.empty(robot.n), np.zeros(3, np.int64)
    rows = {"full": lambda k: loop_full(k, flat, scratch, x, xd, f, fe, out, status),
            "first": lambda k: loop_first(k, flat, scratch, x, xd),
            "fd_rec": lambda k: loop_fd(k, flat, scratch, x, xd, f, fe, out)}
    T, X, XD, FO = np.array([0.0, 1e-3]), np.zeros((2, robot.n)), np.zeros((2, robot.n)), np.zeros((2, robot.n))
    X[0], XD[0] = x, xd
    work, clock, F = np.zeros((SK.WORK_ROWS, robot.n)), np.zeros(1), f.reshape(1, -1).copy()
    FO[0] = f
    rows["rk4_step"] = lambda k: loop_rk4(k, flat, scratch, fe, F, NO_FRICTION, T, X, XD, FO, work, status, clock)
    rows["fd4_rows"] = lambda k: loop_fd4(k, flat, scratch, fe, X, XD, FO, np.empty((1, robot.n)), status)
    got = {}
    for name, fn in rows.items():
        med, low = per_call_us(fn, BLOCK // 4 if name in ("rk4_step", "fd4_rows") else BLOCK)
        got[name] = med
        print(f"{name:8s} {med:.3f} (min {low:.3f})")
    print(f"rk4_rest {got['rk4_step'] - got['fd4_rows']:.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
