"""Benchmark of the identification's regressor (core/identification): ``regressor(robot, x, xd,
xdd)`` per state next to the robot's own inverse dynamics (``robot.inverse_dynamics``, batched the
same way), and its spanning-tree part (the compiled ``tree_regressor``) next to Pinocchio's
``computeJointTorqueRegressor`` of the same tree (one state per call, the peer's way), timed
interleaved in one process (blocks of calls in turns, median over repeats).

Cases: the HIAB crane (heavy_duty_4dof) one state and batches of 1000 states of the two-sine motion
of the tests; the 3-RRR and the Gough-Stewart, batches of 50 task states.

    python bench/bench_identification.py [--quick]

Table on stdout, the same figures as JSON in ``bench/results/bench_identification.json``.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "pkm_dynamics"))
sys.path.insert(0, os.path.join(ROOT, "pkm_dynamics", "test"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_module_chain import interleaved_us  # noqa: E402
from common import machine  # noqa: E402
from identification_motions import crane_motion, task_motion  # noqa: E402
from pkm_dynamics.core.identification import regressor, tree_regressor  # noqa: E402
from pkm_dynamics.core.robot import load_robot  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")


def pinocchio_tree(robot, name):
    """Pinocchio's model of the robot's spanning tree (example ``name``) and a per-state
    regressor call."""
    from pinocchio_loops import PinocchioLoops
    import pinocchio as pin
    tree = robot.description.tree
    with open(os.path.join(ROBOTS, f"{name}.urdf"), encoding="utf-8") as f:
        pl = PinocchioLoops(f.read(), tree.joint_names, tree.gravity)
    return lambda q, v, a: pin.computeJointTorqueRegressor(pl.model, pl.data, pl.q_pin(pl.to_pin(q)),
                                                           pl.to_pin(v), pl.to_pin(a))


def case(name, motion, reps, inner):
    robot = load_robot(os.path.join(ROBOTS, f"{name}.urdf"))
    states = motion(robot)
    N = len(states[0]) if np.ndim(states[0]) > (2 if robot.state_space == "task" else 1) else 1
    R = regressor(robot, *states)
    tree = robot.description.tree
    peer = pinocchio_tree(robot, name)
    q, qd, qdd = R.q[0], R.qd[0], R.qdd[0]
    reg, inv, tr, pn = interleaved_us([lambda: regressor(robot, *states), lambda: robot.inverse_dynamics(*states),
                                       lambda: tree_regressor(tree, q, qd, qdd), lambda: peer(q, qd, qdd)],
                                      reps, inner)
    return dict(robot=name, states=N, regressor_us=reg / N, inverse_dynamics_us=inv / N,
                tree_regressor_us=tr, pinocchio_tree_regressor_us=pn, parameters=R.Y.shape[-1])


def main(quick=False):
    reps, inner = (3, 1) if quick else (7, 2)
    t = np.arange(0.0, 20.0, 0.02)
    cases = [("heavy_duty_4dof", lambda r: [a[0] for a in crane_motion(t[:1])]),
             ("heavy_duty_4dof", lambda r: crane_motion(t)),
             ("planar_3rrr", lambda r: task_motion(r, t[:50], [0.06, 0.06, 0.15])),
             ("gough_stewart_6ups", lambda r: task_motion(r, t[:50], [0.02] * 6))]
    rows = [case(name, motion, reps, inner) for name, motion in cases]
    print(f"{'robot':20s} {'states':>6s} {'Y us/state':>11s} {'ID us/state':>11s} {'Y_tree us':>10s} {'pin us':>8s}")
    for r in rows:
        print(f"{r['robot']:20s} {r['states']:6d} {r['regressor_us']:11.1f} {r['inverse_dynamics_us']:11.1f} "
              f"{r['tree_regressor_us']:10.1f} {r['pinocchio_tree_regressor_us']:8.1f}")
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "bench_identification.json"), "w", encoding="utf-8") as f:
        json.dump(dict(machine=machine(), cases=rows), f, indent=1)


if __name__ == "__main__":
    main("--quick" in sys.argv)
