"""Benchmark of a chain of loops served on the constraint-embedding route (core/loop_chain): the
excavator (robots/excavator.urdf), the grapple crane (robots/grapple_crane.urdf: passive joints;
its ID column is Featherstone's hybrid dynamics) and, for the route's cost on a module chain, the
4-DoF crane as a LoopChainRobot next to its ModuleChainRobot.

Per-call median microseconds of the public ``forward_dynamics`` / ``inverse_dynamics`` at a few
states over the strokes, timed interleaved with Pinocchio's constrained forward dynamics of the
same spanning tree and loops (one CONTACT_3D constraint per cut joint, ``pin.constraintDynamics``,
:class:`bench_module_chain.PinocchioPeer`), whose actuated accelerations are compared with ours
first (column ``|d| FD``).  The feedforward of one reference: the node's path for a
``JointTrajectory`` (ID of the point, column ``ID us``), and for a pose reference the inverse
kinematics from the previous solution (pose, twist and acceleration to ``x, xd, xdd``, no
search) followed by the ID (column ``IK+ID us``); a 1 kHz stream fits when that stays well
under 1000 us (the node's own cost per reference, ``bench_ros.py``, comes on top).

    python bench/bench_loop_chain.py [--quick]

Table on stdout, the same figures as JSON in ``bench/results/bench_loop_chain.json``.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "pkm_dynamics"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_module_chain import PinocchioPeer, interleaved_us  # noqa: E402
from common import machine  # noqa: E402
from pkm_dynamics.core.loop_chain.loop_chain_robot import LoopChainRobot  # noqa: E402
from pkm_dynamics.core.robot import load_robot  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")


def states(robot, count, seed=0):
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(robot.lower), robot.lower, -1.0)
    hi = np.where(np.isfinite(robot.upper), robot.upper, 1.0)
    for _ in range(count):
        yield lo + (hi - lo) * rng.uniform(0.3, 0.6, robot.n), rng.normal(scale=0.2, size=robot.n), \
            rng.normal(scale=0.5, size=robot.n)


def task_reference(robot, x, xd, xdd) -> tuple:
    """The end effector's pose (4, 4), body-fixed twist and acceleration (6,) of the actuator
    motion ``(x, xd, xdd)`` (``J xd``, ``J xdd + Jdot xd`` from a central difference of ``J``
    along ``xd``): the task reference whose IK returns that motion."""
    from pkm_dynamics.core.loop_chain.loop_chain_ik import end_effector_jacobian
    J = end_effector_jacobian(robot, x)[0]
    h = 1e-6
    Jd = (end_effector_jacobian(robot, x + h * xd)[0] - end_effector_jacobian(robot, x - h * xd)[0]) / (2 * h)
    return robot.forward_kinematics(x), J @ xd, J @ xdd + Jd @ xd


def case(name, robot, reps, inner):
    peer = PinocchioPeer(robot)
    rows = []
    for x, xd, xdd in states(robot, 3):
        u = robot.inverse_dynamics(x, xd, xdd)
        q, qd, _ = robot.tree_state(x, xd)
        pq, pv, ptau = peer.state(q, qd, u)
        diff = float(np.abs(peer.actuated(peer.forward_dynamics(pq, pv, ptau)) - xdd).max())
        pose, twist, accel = task_reference(robot, x, xd, xdd)
        span = robot.upper - robot.lower
        near = x + 1e-4 * np.where(np.isfinite(span), span, 1.0)      # the previous reference's solution

        def feedforward():
            sol = robot.inverse_kinematics(pose, twist, accel, initial=near, search=False)
            return robot.inverse_dynamics(sol.actuators, sol.actuators_d, sol.actuators_dd)

        ff_diff = float(np.abs(feedforward() - u).max() / np.abs(u).max())
        fd, id_, ff, pin_fd = interleaved_us([lambda: robot.forward_dynamics(x, xd, u),
                                              lambda: robot.inverse_dynamics(x, xd, xdd), feedforward,
                                              lambda: peer.forward_dynamics(pq, pv, ptau)], reps, inner)
        rows.append({"fd_us": fd, "id_us": id_, "ik_id_us": ff, "pin_constraint_dynamics_us": pin_fd,
                     "fd_diff": diff, "ff_diff": ff_diff})
    med = {k: float(np.median([r[k] for r in rows])) for k in rows[0]}
    med["fd_diff"] = max(r["fd_diff"] for r in rows)
    med["ff_diff"] = max(r["ff_diff"] for r in rows)
    med.update(robot=name, fd_ratio=med["fd_us"] / med["pin_constraint_dynamics_us"],
               id_ratio=med["id_us"] / med["pin_constraint_dynamics_us"])
    return med


def passive_case(name, robot, reps, inner):
    """A chain of loops with passive joints (the grapple crane): FD (the state holds the passive
    joints; zero effort there) and Featherstone's hybrid dynamics (actuator accelerations in,
    efforts and passive accelerations out) against ``constraintDynamics`` with zero torque at
    the passive joints; ``|d| FD``: Pinocchio's actuated accelerations at the hybrid dynamics'
    efforts against the actuator accelerations given."""
    peer = PinocchioPeer(robot)
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(3):
        x = np.array([0.3, 0.2, 0.25, 0.4, 0.3, 0.0, 0.0]) + np.concatenate([rng.uniform(-0.05, 0.05, 5),
                                                                            rng.uniform(-0.5, 0.5, 2)])
        xd, xdd = rng.normal(scale=0.2, size=robot.n), rng.normal(scale=0.5, size=robot.n_act)
        u, passive = robot.hybrid_dynamics(x, xd, xdd)
        q, qd, _ = robot.tree_state(x, xd)
        pq, pv, ptau = peer.state(q, qd, u)
        diff = float(np.abs(peer.actuated(peer.forward_dynamics(pq, pv, ptau)) - xdd).max())
        fd, id_, pin_fd = interleaved_us([lambda: robot.forward_dynamics(x, xd, u),
                                          lambda: robot.hybrid_dynamics(x, xd, xdd),
                                          lambda: peer.forward_dynamics(pq, pv, ptau)], reps, inner)
        rows.append({"fd_us": fd, "id_us": id_, "pin_constraint_dynamics_us": pin_fd, "fd_diff": diff})
    med = {k: float(np.median([r[k] for r in rows])) for k in rows[0]}
    med["fd_diff"] = max(r["fd_diff"] for r in rows)
    med.update(robot=name, ik_id_us=float("nan"), ff_diff=float("nan"),
               fd_ratio=med["fd_us"] / med["pin_constraint_dynamics_us"],
               id_ratio=med["id_us"] / med["pin_constraint_dynamics_us"])
    return med


def run(quick: bool = False) -> dict:
    reps, inner = (5, 5) if quick else (11, 10)
    from pkm_dynamics.testing import frictionless
    # the crane without its cylinders' friction and pivot damping: the physics Pinocchio's
    # constraintDynamics computes (with them the accelerations differ by tens of m/s^2)
    crane = load_robot(frictionless(os.path.join(ROBOTS, "heavy_duty_4dof.urdf")))
    cases = [("excavator", load_robot(os.path.join(ROBOTS, "excavator.urdf"))),
             ("heavy_duty_4dof as a chain of loops, no friction", LoopChainRobot(crane.description))]
    grapple = load_robot(frictionless(os.path.join(ROBOTS, "grapple_crane.urdf")))
    return {"machine": machine(), "cases": [case(n, r, reps, inner) for n, r in cases]
            + [passive_case("grapple_crane (hybrid ID), no friction", grapple, reps, inner)]}


if __name__ == "__main__":
    out = run("--quick" in sys.argv)
    print(f"{'robot':38s} {'FD us':>9s} {'ID us':>9s} {'IK+ID us':>9s} {'pin cD us':>10s} {'FD/pin':>8s} "
          f"{'ID/pin':>8s} {'|d| FD':>9s} {'|d| IK+ID':>10s}")
    for c in out["cases"]:
        print(f"{c['robot']:38s} {c['fd_us']:9.1f} {c['id_us']:9.1f} {c['ik_id_us']:9.1f} "
              f"{c['pin_constraint_dynamics_us']:10.1f} {c['fd_ratio']:8.2f} {c['id_ratio']:8.2f} {c['fd_diff']:9.2g} "
              f"{c['ff_diff']:10.2g}")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "bench_loop_chain.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
