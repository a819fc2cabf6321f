"""Cost of gravity at run time and of the actuator-limit checks (issue 27 items 4-5).

For the crane ``heavy_duty_4dof`` and the Gough-Stewart platform ``gough_stewart_6ups``, in one
process, interleaved, medians in microseconds:

* ``robot.with_gravity(g)`` (the light copy of core/gravity.py; the node's
  ``Model.with_gravity`` adds a shallow copy), the first inverse dynamics on the copy (its
  thread scratch allocated) and the steady-state inverse dynamics of the copy next to that of
  the robot it was made from (crane: ``inverse_dynamics``; PKM: the feedforward's
  ``reference_motion``, IK + ID in one compiled call);
* the feedforward's limit check per reference (``Diagnostics.utilisation``: ``|u| / u_max``,
  ``|xd| / xd_max`` and the running maxima), alone and as the share of one reference's core call
  with and without it.

    python bench/bench_gravity_limits.py [--repeat N]

Table on stdout, the same figures as JSON in ``bench/results/bench_gravity_limits.json``.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import machine  # noqa: E402
from pkm_dynamics.core.gravity import base_gravity  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")


def median_us(samples):
    return 1e6 * statistics.median(samples)


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def reference_call(robot):
    """One feedforward reference's core call and its (u, xd) (1, n)."""
    if robot.state_space == "actuator":
        x, xd = np.array([0.3, 0.2, 0.25, 0.4]), np.array([0.1, -0.05, 0.08, 0.05])
        xdd = np.array([0.2, 0.1, -0.3, 0.2])
        return (lambda r: r.inverse_dynamics(x, xd, xdd)), xd
    pose = robot.task_pose(np.array([0.01, -0.02, 0.015, 0.03, -0.02, 0.01]))
    V, A = np.array([0.1, -0.05, 0.08, 0.05, 0.02, -0.1]), np.array([0.3, 0.1, -0.2, 0.4, -0.1, 0.2])
    warm = robot.reference_motion(pose, V, A, None).theta
    return (lambda r: r.reference_motion(pose, V, A, warm)[3]), None


def bench(name, repeat):
    from pkm_dynamics.node.diagnostics import Diagnostics
    from pkm_dynamics.node.model import Model
    with open(os.path.join(ROBOTS, f"{name}.urdf"), encoding="utf-8") as f:
        model = Model(f.read(), [0.0, 0.0, -9.80665])
    robot = model.robot
    call, xd = reference_call(robot)
    call(robot)
    tilts = [base_gravity([np.sin(a / 2), 0.0, 0.0, np.cos(a / 2)]) for a in np.linspace(0.05, 0.3, repeat)]
    update, node_update, first, steady, original = [], [], [], [], []
    for g in tilts:
        node_update.append(timed(lambda: model.with_gravity(g)))
        t = time.perf_counter()
        copy = robot.with_gravity(g)
        update.append(time.perf_counter() - t)
        first.append(timed(lambda: call(copy)))
        steady.append(timed(lambda: call(copy)))
        original.append(timed(lambda: call(robot)))
    diag = Diagnostics()
    limits = robot.limits
    u = np.atleast_2d(call(robot))
    xd2 = np.zeros_like(u) if xd is None else np.atleast_2d(xd)
    check, with_check, without = [], [], []
    for _ in range(repeat * 10):
        check.append(timed(lambda: diag.utilisation(limits, u, xd2)))
        with_check.append(timed(lambda: diag.utilisation(limits, np.atleast_2d(call(robot)), xd2)))
        without.append(timed(lambda: np.atleast_2d(call(robot))))
    return {"with_gravity": median_us(update), "Model.with_gravity": median_us(node_update),
            "first call after": median_us(first),
            "call after (steady)": median_us(steady), "call of the original": median_us(original),
            "limit check": median_us(check), "call + limit check": median_us(with_check),
            "call alone": median_us(without)}


def main():
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 200
    info = machine()
    print(f"machine: {info}; medians [us], {repeat} gravity updates / {10 * repeat} limit checks, interleaved")
    results = {}
    for name in ("heavy_duty_4dof", "gough_stewart_6ups"):
        results[name] = r = bench(name, repeat)
        print(f"{name}: " + "; ".join(f"{k} {v:.1f}" for k, v in r.items()))
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "bench_gravity_limits.json"), "w", encoding="utf-8") as f:
        json.dump({"machine": info, "repeat": repeat, "medians_us": results}, f, indent=1)


if __name__ == "__main__":
    main()
