"""Where a compiled module-chain call spends its time: each pass of the kernels timed inside a
compiled loop (no Python, no argument boxing), then the whole kernel through its entry point and
the public call from Python, for the crane (``heavy_duty_4dof``) or a generated chain of n modules.

    python bench/profile_module_chain.py [n ...]

Pinocchio's ``constraintDynamics`` and ``rnea`` of the same mechanism (as in
``bench_module_chain.py``) are timed the same way.  Figures are the minimum over 301 blocks of
calls (on a shared machine the minimum is the figure
least disturbed by other jobs; ``bench_module_chain.py`` gives the medians next to Pinocchio).
Not part of ``make bench``: the loops below are compiled in every run (a few seconds).
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np
from numba import njit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "pkm_dynamics"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_module_chain import PinocchioPeer  # noqa: E402

from pkm_dynamics.core.module_chain import chain_kernels as K  # noqa: E402
from pkm_dynamics.core.module_chain import chain_model  # noqa: E402
from pkm_dynamics.core.description.examples import module_chain_urdf  # noqa: E402
from pkm_dynamics.core.robot import load_robot  # noqa: E402


@njit(_nrt=False)
def _check(reps, geo, X, XD, T, FE, status):
    for _ in range(reps):
        K.check_inputs(False, geo, X, XD, T, FE, status)


@njit(_nrt=False)
def _first(reps, geo, mats, A, V, S, W, w, x, xd):
    for _ in range(reps):
        K.first_forward_pass(geo, mats, A, V, S, W, w, x, xd, False)     # as the FD and ID call it


@njit(_nrt=False)
def _fd(reps, geo, mats, nud0, A, V, S, W, w, f, fe, out):
    for _ in range(reps):
        K.fd_recursions(geo, mats, nud0, A, V, S, W, w, f, fe, out)


@njit(_nrt=False)
def _id(reps, geo, mats, nud0, A, V, S, W, w, xdd, fe, out):
    for _ in range(reps):
        K.id_recursions(geo, mats, nud0, A, V, S, W, w, xdd, fe, out)


def min_us(fn, reps: int = 200, blocks: int = 301) -> float:
    """Minimum over ``blocks`` of the mean microseconds per call of ``fn(reps)``."""
    fn(10)
    best = np.inf
    for _ in range(blocks):
        t = time.perf_counter()
        fn(reps)
        best = min(best, (time.perf_counter() - t) / reps)
    return best * 1e6


def python_loop(call):
    def loop(reps):
        for _ in range(reps):
            call()
    return loop


def profile(robot) -> dict:
    m, d = robot.compiled, robot.compiled.data()
    n = robot.n
    lo = np.array([i.lower for i in robot.chain.info])
    hi = np.array([i.upper for i in robot.chain.info])
    lo, hi = np.where(np.isfinite(lo), lo, -1.0), np.where(np.isfinite(hi), hi, 1.0)
    rng = np.random.default_rng(0)
    x = lo + (hi - lo) * rng.uniform(0.3, 0.6, n)
    xd, xdd = rng.normal(scale=0.2, size=n), rng.normal(scale=0.5, size=n)
    f = robot.inverse_dynamics(x, xd, xdd)
    out = np.empty(n)
    fe = d.no_wrench
    s = d.status
    args = (m.geo, m.mats, m.nud0, d.A, d.V, d.S, d.W, d.w)
    run = chain_model._one(m)[0]
    res = {"check inputs": min_us(lambda r: _check(r, m.geo, x[None], xd[None], f[None], fe, s)),
           "first forward pass": min_us(lambda r: _first(r, m.geo, m.mats, *args[3:], x, xd)),
           "FD recursions": min_us(lambda r: _fd(r, *args, f, fe[0], out))}
    K.first_forward_pass(m.geo, m.mats, *args[3:], x, xd, False)
    res["ID recursions"] = min_us(lambda r: _id(r, *args, xdd, fe[0], out))
    for inverse, name, t in ((False, "FD", f), (True, "ID", xdd)):
        res[f"{name} entry point from Python"] = min_us(python_loop(
            lambda: run(inverse, m.flat, d.flat, x, xd, t, fe, out, s)), 50)
    res["FD public call"] = min_us(python_loop(lambda: robot.forward_dynamics(x, xd, f)), 50)
    res["ID public call"] = min_us(python_loop(lambda: robot.inverse_dynamics(x, xd, xdd)), 50)
    peer = PinocchioPeer(robot)
    Q, QD, QDD = robot.tree_state(x, xd, xdd)
    q, v, tau = peer.state(Q, QD, f)
    a_tree = peer.tree_vector(QDD)
    res["Pinocchio constraintDynamics"] = min_us(python_loop(lambda: peer.forward_dynamics(q, v, tau)), 50)
    res["pin.rnea"] = min_us(python_loop(lambda: peer.rnea(q, v, a_tree)), 50)
    return res


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cases = [("heavy_duty_4dof", os.path.join(ROOT, "pkm_dynamics", "robots", "heavy_duty_4dof.urdf"))]
    cases += [(f"chain_{a}", module_chain_urdf(int(a))) for a in argv]
    for name, src in cases:
        res = profile(load_robot(src))
        print(f"{name}: " + ", ".join(f"{k} {v:.2f} us" for k, v in res.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
