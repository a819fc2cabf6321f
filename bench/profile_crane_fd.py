"""The crane's forward dynamics and ``simulate`` timed in one process (thread CPU time, median and
minimum of 7 blocks): the FD kernel alone through its entry point, the public FD without and with
friction, RK4 with and without friction and semi-implicit Euler (0.5 s at 1 ms, constant efforts),
microseconds per call or per step, at ``bench_public_calls``' states.  ``ROOT``: the checkout whose
``pkm_dynamics`` and ``bench`` are imported, so two trees are timed in turns by running it for each:

    python bench/profile_crane_fd.py ROOT
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np


def timed(fn, k: int) -> tuple:
    """Median and minimum over 7 blocks of ``k`` calls of ``fn``, µs per call (thread CPU time)."""
    per = []
    for _ in range(7):
        t0 = time.thread_time()
        for _ in range(k):
            fn()
        per.append((time.thread_time() - t0) / k * 1e6)
    return float(np.median(per)), min(per)


def main(root: str) -> None:
    sys.path.insert(0, os.path.join(root, "pkm_dynamics"))
    sys.path.insert(0, os.path.join(root, "bench"))
    from bench_module_chain import case_state
    from pkm_dynamics.core.robot import load_robot
    from pkm_dynamics.testing import frictionless

    urdf = os.path.join(root, "pkm_dynamics", "robots", "heavy_duty_4dof.urdf")
    crane, nf = load_robot(urdf), load_robot(frictionless(urdf))
    x, xd, xdd = case_state(crane, np.random.default_rng(0))
    f = crane.inverse_dynamics(x, xd, xdd)
    x0, xd0 = np.array([0.3, 0.3, 0.3, 0.55]), np.array([0.3, 0.0, 0.0, 0.0])
    hold = crane.inverse_dynamics(x0, np.zeros(4), np.zeros(4))
    nf.forward_dynamics(x, xd, f)                       # the thread's entry point is known after it
    run, mflat, dflat, fe, status, n, _ = nf.compiled.one_call()
    out = np.empty(n)
    steps = 500
    rows = {
        "FD kernel alone, no friction (us)": (lambda: run(False, mflat, dflat, x, xd, f, fe, out, status), 20000, 1),
        "public FD, no friction (us)": (lambda: nf.forward_dynamics(x, xd, f), 20000, 1),
        "public FD, friction (us)": (lambda: crane.forward_dynamics(x, xd, f), 20000, 1),
        "RK4, friction (us/step)": (lambda: crane.simulate(x0, xd0, 0.5, efforts=hold), 5, steps),
        "RK4, no friction (us/step)": (lambda: nf.simulate(x0, xd0, 0.5, efforts=hold), 5, steps),
        "semi-implicit, friction (us/step)": (
            lambda: crane.simulate(x0, xd0, 0.5, efforts=hold, method="semi_implicit"), 5, steps),
    }
    for name, (fn, k, per) in rows.items():
        med, low = timed(fn, k)
        print(f"{name:36s} {med / per:7.3f} (min {low / per:.3f})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
