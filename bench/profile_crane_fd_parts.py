"""The crane's FD kernel piece by piece: each step of Algorithm 1 (paper 000) for each module,
and the RK4 step's work besides the four FD evaluations, timed in compiled loops (no Python call
per evaluation), thread CPU time, median and minimum of 5 blocks of 100000 calls, µs per call,
at ``bench_public_calls``' crane state (frictionless).  The backward steps of module k run on the
scratch the steps of modules n-1 .. k+1 left (the state of a real call).

    python bench/profile_crane_fd_parts.py [ROOT]
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
    from pkm_dynamics.core.module_chain import chain_recursions as R
    from pkm_dynamics.core.module_chain.chain_closure import actuator_force_coefficients, closure
    from pkm_dynamics.core.module_chain.chain_kernels import check_inputs
    from pkm_dynamics.core.module_chain.chain_layout import (GEO_L, GEO_L1, GEO_LC, GEO_LC0, KIND, PARALLEL, SX,
                                                             model_arrays, scratch_arrays)
    from pkm_dynamics.core.robot import load_robot
    from pkm_dynamics.testing import frictionless

    @njit
    def prepare(model, data, x, xd, f, fe, k_stop):
        """The first pass, then the backward recursion down to module k_stop + 1."""
        n = x.shape[0]
        geo, mats, nud0 = model_arrays(model, n)
        A, V, S, W, w = scratch_arrays(data, n)
        R.first_forward_pass(geo, mats, A, V, S, W, w, x, xd, False)
        for i in range(6):
            for j in range(6):
                W[0, i, j] = 0.0
            w[1, i] = -fe[0, i]
        for k in range(n - 1, k_stop, -1):
            g = geo[k]
            fk = g[SX] * f[k]
            if g[KIND] == PARALLEL:
                R.parallel_alpha_beta(g, mats[k], A[k], V[k], S[k], W, w, k == n - 1)
                if k > 0:
                    R.parallel_base_inertia(g, mats[k], A[k], V[k], S[k], fk, W, w)
            else:
                R.serial_backward(g, mats[k], A[k], V[k], S[k], fk, k == 0, k == n - 1, W, w)

    @njit
    def loop_step(which, reps, model, data, x, xd, f, k):
        n = x.shape[0]
        geo, mats, nud0 = model_arrays(model, n)
        A, V, S, W, w = scratch_arrays(data, n)
        g = geo[k]
        fk = g[SX] * f[k]
        for _ in range(reps):
            if which == 0:
                R.parallel_alpha_beta(g, mats[k], A[k], V[k], S[k], W, w, k == n - 1)
            elif which == 1:
                R.parallel_base_inertia(g, mats[k], A[k], V[k], S[k], fk, W, w)
            elif which == 2:
                R.serial_backward(g, mats[k], A[k], V[k], S[k], fk, k == 0, k == n - 1, W, w)
            elif which == 3:
                closure(g[GEO_L], g[GEO_L1], g[GEO_LC], g[GEO_LC0], g[SX] * x[k], g[SX] * xd[k], S[k])
                actuator_force_coefficients(g[GEO_L1], g[GEO_LC], g[GEO_LC0], S[k])
            elif which == 4:
                R.parallel_first_pass(g, mats[k], V[k], S[k], w[0], w[1])
            elif which == 5:
                R.serial_first_pass(g, mats[k], A[k], V[k], S[k], w[0], W)
            elif which == 6:
                R.first_forward_pass(geo, mats, A, V, S, W, w, x, xd, False)

    @njit
    def loop_checks(reps, model, x, xd, f, fe, status):
        n = x.shape[0]
        geo, mats, nud0 = model_arrays(model, n)
        for _ in range(reps):
            check_inputs(False, geo, x.reshape((1, n)), xd.reshape((1, n)), f.reshape((1, n)), fe, status)

    robot = load_robot(frictionless(os.path.join(root, "pkm_dynamics", "robots", "heavy_duty_4dof.urdf")))
    x, xd, xdd = case_state(robot, np.random.default_rng(0))
    f = robot.inverse_dynamics(x, xd, xdd)
    model, data = robot.compiled, robot.compiled.data()
    flat, scratch, fe = model.flat, data.flat, data.no_wrench
    status = np.zeros(3, np.int64)
    kinds = ["serial" if model.geo[k, KIND] != PARALLEL else "parallel" for k in range(model.n)]
    rows = {"checks": (None, lambda r: loop_checks(r, flat, x, xd, f, fe, status))}
    for k in range(model.n - 1, -1, -1):
        if kinds[k] == "parallel":
            rows[f"alpha_beta[{k}]"] = (k, lambda r, k=k: loop_step(0, r, flat, scratch, x, xd, f, k))
            if k > 0:
                rows[f"base_inertia[{k}]"] = (k, lambda r, k=k: loop_step(1, r, flat, scratch, x, xd, f, k))
        else:
            rows[f"serial_backward[{k}]"] = (k, lambda r, k=k: loop_step(2, r, flat, scratch, x, xd, f, k))
    for k in range(model.n):
        if kinds[k] == "parallel":
            rows[f"closure[{k}]"] = (-1, lambda r, k=k: loop_step(3, r, flat, scratch, x, xd, f, k))
            rows[f"parallel_first[{k}]"] = (-1, lambda r, k=k: loop_step(4, r, flat, scratch, x, xd, f, k))
        else:
            rows[f"serial_first[{k}]"] = (-1, lambda r, k=k: loop_step(5, r, flat, scratch, x, xd, f, k))
    rows["first_pass"] = (-1, lambda r: loop_step(6, r, flat, scratch, x, xd, f, 0))
    for name, (k, fn) in rows.items():
        if k is not None:
            prepare(flat, scratch, x, xd, f, fe, k)
        med, low = per_call_us(fn, BLOCK)
        print(f"{name:20s} {med:.3f} (min {low:.3f})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
