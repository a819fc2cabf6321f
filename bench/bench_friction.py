"""Cost of joint and actuator friction in the inverse and forward dynamics of one state: the
HIAB 4-DoF crane (module chain, its example with the crane's cylinder curves and pivot damping,
against the same description without them) and the 6-UPS Gough-Stewart platform (with URDF
``<dynamics>`` on every passive joint and a ``<friction>`` element on every leg, against the
example without), timed interleaved in one process (:func:`bench_module_chain.interleaved_us`).

    python bench/bench_friction.py [--quick]
    python bench/bench_friction.py --derivatives [--quick]

Table on stdout (median microseconds per call, ratio), the figures as JSON in
``bench/results/bench_friction.json``.  ``--derivatives``: the cost of the friction in the
forward-mode jets of the derivative calls instead (``inverse_dynamics_derivatives`` and
``forward_dynamics_derivatives`` with and without friction, interleaved, median and range in ms):
the 6-UPS as above, the excavator (a chain of loops) with the cylinder and joint friction of
``test/core/friction/test_core_loop_chain_friction.py`` and the HIAB crane served as a chain of
loops (``LoopChainRobot``, its example friction); JSON in ``bench/results/bench_friction_derivatives.json``.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "pkm_dynamics"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_module_chain import interleaved_us  # noqa: E402
from common import machine  # noqa: E402
from pkm_dynamics.core.robot import load_robot  # noqa: E402
from pkm_dynamics.testing import frictionless, with_friction  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")


def pairs():
    """``(name, robot without friction, robot with friction, x of each, xd, xdd)`` of each case
    (a PKM's ``x``: its IK solution of the pose, as a planner passes it)."""
    crane = os.path.join(ROBOTS, "heavy_duty_4dof.urdf")
    plain, fric = load_robot(frictionless(crane)), load_robot(crane)
    x = np.array([0.3, 0.25, 0.3, 0.5])
    yield "HIAB 4-DoF crane", plain, fric, x, x, np.array([0.1, 0.05, -0.04, 0.05]), np.array([0.2, 0.1, -0.1, 0.3])
    with open(os.path.join(ROBOTS, "gough_stewart_6ups.urdf"), encoding="utf-8") as f:
        text = f.read()
    plain = load_robot(text)
    legs = plain.actuated_joints
    fric = load_robot(with_friction(text, legs, dict(coulomb=20.0, viscous=50.0, smoothing_velocity=0.01)))
    pose = plain.task_pose(np.full(plain.dof, 0.01))
    V, A = np.full(plain.dof, 0.05), np.full(plain.dof, 0.1)
    yield "Gough-Stewart 6-UPS", plain, fric, plain.inverse_kinematics(pose), fric.inverse_kinematics(pose), V, A


def main(quick: bool = False) -> None:
    reps, inner = (5, 50) if quick else (15, 200)
    rows = []
    for name, p, f, xp, xf, xd, xdd in pairs():
        up, uf = p.inverse_dynamics(xp, xd, xdd), f.inverse_dynamics(xf, xd, xdd)
        times = interleaved_us([lambda: p.inverse_dynamics(xp, xd, xdd), lambda: f.inverse_dynamics(xf, xd, xdd),
                                lambda: p.forward_dynamics(xp, xd, up), lambda: f.forward_dynamics(xf, xd, uf)],
                               reps, inner)
        rows.append(dict(robot=name, id_us=times[0], id_friction_us=times[1], fd_us=times[2],
                         fd_friction_us=times[3]))
    print(f"{'robot':24s} {'ID us':>8s} {'ID+fric':>8s} {'ratio':>6s} {'FD us':>8s} {'FD+fric':>8s} {'ratio':>6s}")
    for r in rows:
        print(f"{r['robot']:24s} {r['id_us']:8.1f} {r['id_friction_us']:8.1f} {r['id_friction_us'] / r['id_us']:6.2f} "
              f"{r['fd_us']:8.1f} {r['fd_friction_us']:8.1f} {r['fd_friction_us'] / r['fd_us']:6.2f}")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "bench_friction.json"), "w", encoding="utf-8") as fh:
        json.dump({"machine": machine(), "rows": rows}, fh, indent=1)


def derivative_pairs():
    """``(name, robot without friction, robot with friction, x, xd, xdd)`` of the derivative
    calls (a PKM's ``x``: the pose)."""
    from pkm_dynamics.core.description.robot_description import parse_description
    from pkm_dynamics.core.loop_chain.loop_chain_robot import LoopChainRobot
    with open(os.path.join(ROBOTS, "gough_stewart_6ups.urdf"), encoding="utf-8") as f:
        text = f.read()
    plain = load_robot(text)
    fric = load_robot(with_friction(text, plain.actuated_joints, dict(coulomb=20.0, viscous=50.0,
                                                                      smoothing_velocity=0.01)))
    yield ("Gough-Stewart 6-UPS", plain, fric, plain.task_pose(np.full(plain.dof, 0.01)), np.full(plain.dof, 0.05),
           np.full(plain.dof, 0.1))
    with open(os.path.join(ROBOTS, "excavator.urdf"), encoding="utf-8") as f:
        text = f.read()
    cyl = dict(coulomb=2000.0, viscous=3000.0, stribeck=800.0, stribeck_velocity=0.05, smoothing_velocity=0.01)
    fric = load_robot(with_friction(text, ("boom_cylinder", "arm_cylinder", "bucket_cylinder"), cyl, damping=50.0,
                                    coulomb=100.0))
    x = np.r_[0.2, fric.lower[1:] + 0.3 * (fric.upper[1:] - fric.lower[1:])]      # the swing: continuous
    yield "excavator (chain of loops)", load_robot(text), fric, x, np.full(4, 0.1), np.full(4, 0.2)
    crane = os.path.join(ROBOTS, "heavy_duty_4dof.urdf")
    yield ("HIAB crane as chain of loops", LoopChainRobot(parse_description(frictionless(crane))),
           LoopChainRobot(parse_description(crane)), np.array([0.3, 0.25, 0.3, 0.5]),
           np.array([0.1, 0.05, -0.04, 0.05]), np.array([0.2, 0.1, -0.1, 0.3]))


def derivatives_main(quick: bool = False) -> None:
    """The ``--derivatives`` table (module docstring)."""
    import time
    reps, inner = (3, 2) if quick else (9, 3)
    rows = []
    for name, p, f, x, xd, xdd in derivative_pairs():
        up, uf = p.inverse_dynamics(x, xd, xdd), f.inverse_dynamics(x, xd, xdd)
        fns = [lambda: p.inverse_dynamics_derivatives(x, xd, xdd), lambda: f.inverse_dynamics_derivatives(x, xd, xdd),
               lambda: p.forward_dynamics_derivatives(x, xd, up), lambda: f.forward_dynamics_derivatives(x, xd, uf)]
        for fn in fns:
            fn()
        times = [[] for _ in fns]
        for _ in range(reps):
            for fn, tl in zip(fns, times):
                t = time.perf_counter()
                for _ in range(inner):
                    fn()
                tl.append((time.perf_counter() - t) / inner * 1e3)
        med = [float(np.median(t)) for t in times]
        rows.append(dict(robot=name, ms=med, range_ms=[[float(min(t)), float(max(t))] for t in times],
                         calls=["ID derivatives", "ID derivatives + friction", "FD derivatives",
                                "FD derivatives + friction"]))
        r = rows[-1]["range_ms"]
        print(f"{name:30s} ID {med[0]:7.2f} ({r[0][0]:.2f}-{r[0][1]:.2f}) +fric {med[1]:7.2f} "
              f"({r[1][0]:.2f}-{r[1][1]:.2f}) ms {med[1] / med[0]:5.2f}x | FD {med[2]:7.2f} "
              f"({r[2][0]:.2f}-{r[2][1]:.2f}) +fric {med[3]:7.2f} ({r[3][0]:.2f}-{r[3][1]:.2f}) ms "
              f"{med[3] / med[2]:5.2f}x")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "bench_friction_derivatives.json"), "w", encoding="utf-8") as fh:
        json.dump({"machine": machine(), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    if "--derivatives" in sys.argv:
        derivatives_main("--quick" in sys.argv)
    else:
        main("--quick" in sys.argv)
