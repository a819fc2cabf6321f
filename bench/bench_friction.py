"""Cost of joint and actuator friction in the inverse and forward dynamics of one state: the
HIAB 4-DoF crane (module chain, its example with the crane's cylinder curves and pivot damping,
against the same description without them) and the 6-UPS Gough-Stewart platform (with URDF
``<dynamics>`` on every passive joint and a ``<friction>`` element on every leg, against the
example without), timed interleaved in one process (:func:`bench_module_chain.interleaved_us`).

    python bench/bench_friction.py [--quick]

Table on stdout (median microseconds per call, ratio), the figures as JSON in
``bench/results/bench_friction.json``.
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


if __name__ == "__main__":
    main("--quick" in sys.argv)
