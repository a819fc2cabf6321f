"""Benchmark of the PKM route of paper 001: the IRSBot-2 (``robots/irsbot2_paths.urdf``) and the
6-UPS Gough-Stewart platform (``robots/gough_stewart_6ups.urdf``).

Per robot, along its path sampled at dt = 1 ms (IRSBot-2: the parabolic path of Sec. 6.4, dx =
0.25 m, dz = 0.45 m, 3 cycles per second; Gough-Stewart: a translation of the tilted platform,
``x = 0.03 sin(2 pi t)``, ``y = 0.03 (1 - cos(2 pi t))``, ``z = 0.02 sin(4 pi t)``):

* one feedforward reference as the node computes it -- inverse kinematics with rates, warm-started
  from the previous reference, then the task-space inverse dynamics (eq. 45) from that solution --
  median microseconds per reference, both IK schemes;
* the same for the numpy reference route (``robot.compiled = False``: every limb through
  core/limb/limb_ik.py, working_mode.py, ik_refinement.py and the tree RNEA/CRBA) over the first 60
  references, timed in the same run (the speed-up);
* the outer/inner iteration counts of the compiled IK and of the numpy reference route
  (``ParallelRobot._limb_ik_reference``) along the same path (they must be equal);
* the forward dynamics (eq. 39) from an IK solution; for the Gough-Stewart platform next to
  Pinocchio's ``constraintDynamics`` of its spanning tree with one CONTACT_3D per spherical cut
  joint (``ProximalSettings(1e-10, 1e-12, 3)``), timed in turns in the same process after
  checking that the actuated accelerations agree.

``--runs N`` repeats the timings (ranges over the runs); ``--quick`` shortens the paths.

    python bench/bench_pkm.py [--quick] [--runs N]

Table on stdout, the same figures as JSON in ``bench/results/bench_pkm.json``.
"""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(ROOT), "pkm_dynamics"))
sys.path.insert(0, ROOT)

from bench_module_chain import PinocchioPeer, interleaved_us  # noqa: E402
from common import machine  # noqa: E402
from pkm_dynamics.core.pkm.parallel_robot import ParallelRobot, parabolic_trajectory  # noqa: E402

ROBOTS = os.path.join(os.path.dirname(ROOT), "pkm_dynamics", "robots")


def gough_stewart_path(robot, t):
    """Poses, body-fixed task twists and accelerations of a translation of the platform, tilted
    by a constant 0.05 rad about x from the reference pose (its body-fixed twist is ``(0,
    R^T pdot)``)."""
    w = 2 * np.pi
    p = np.stack([0.03 * np.sin(w * t), 0.03 * (1 - np.cos(w * t)), 0.02 * np.sin(2 * w * t)], axis=1)
    pd = np.stack([0.03 * w * np.cos(w * t), 0.03 * w * np.sin(w * t), 0.04 * w * np.cos(2 * w * t)], axis=1)
    pdd = np.stack([-0.03 * w**2 * np.sin(w * t), 0.03 * w**2 * np.cos(w * t),
                    -0.08 * w**2 * np.sin(2 * w * t)], axis=1)
    C0 = robot.task_pose(np.array([0.05, 0, 0, 0, 0, 0]) @ robot.P_p) if robot.dof == 6 else robot.reference_pose
    P = np.repeat(C0[None], len(t), axis=0)
    P[:, :3, 3] += p
    R = C0[:3, :3]
    V = np.concatenate([np.zeros((len(t), 3)), pd @ R], axis=1) @ robot.P_p
    A = np.concatenate([np.zeros((len(t), 3)), pdd @ R], axis=1) @ robot.P_p
    return P, V, A


def paths(quick):
    t = np.arange(0.0, (1 / 6 if quick else 1 / 3) + 1e-12, 0.001)
    ir = ParallelRobot(os.path.join(ROBOTS, "irsbot2_paths.urdf"))
    gs = ParallelRobot(os.path.join(ROBOTS, "gough_stewart_6ups.urdf"))
    return {"irsbot2_paths": (ir, parabolic_trajectory(t, ir.reference_pose, 0.25, 0.45)),
            "gough_stewart_6ups": (gs, gough_stewart_path(gs, t))}


def reference_us(robot, P, V, A, scheme, steps=None):
    """Median microseconds per feedforward reference (IK with rates warm-started, then ID), over
    the first ``steps`` references of the path (all by default)."""
    sol = robot.inverse_kinematics(P[0], V[0], A[0], scheme=scheme)
    times = []
    for i in range(1, len(P) if steps is None else steps + 1):
        t0 = time.perf_counter()
        sol = robot.inverse_kinematics(P[i], V[i], A[i], initial=sol, scheme=scheme)
        robot.inverse_dynamics(sol, V[i], A[i])
        times.append(time.perf_counter() - t0)
    return float(np.median(times) * 1e6)


def iterations(robot, P, scheme):
    """Outer iterations per limb and step, and inner iterations, of the compiled route and of the
    reference route along the path (each warm-started from its own previous solution)."""
    sol = robot.inverse_kinematics(P[0], scheme=scheme)
    th = list(sol.limb_theta)
    got, ref = [], []
    for i in range(1, len(P)):
        sol = robot.inverse_kinematics(P[i], initial=sol, scheme=scheme)
        got.append((sol.iterations.tolist(), [[list(map(int, a)) for a in inn] for inn in sol.inner]))
        row_o, row_i = [], []
        for li, limb in enumerate(robot.limbs):
            t, outer, inner = robot._limb_ik_reference(limb, P[i], th[li], scheme, robot.tol)[:3]
            th[li] = t
            row_o.append(outer)
            row_i.append([list(map(int, a)) for a in inner])
        ref.append((row_o, row_i))
    outer = np.array([g[0] for g in got])
    hist = {int(k): int(v) for k, v in zip(*np.unique(outer, return_counts=True))}
    return hist, got == ref


def fd_figures(robot, P, V, A, runs, reps):
    """FD per call from an IK solution (median us per run); for a robot with cut joints only
    (the Gough-Stewart platform) also Pinocchio's constraintDynamics in turns and the largest
    relative difference of the actuated accelerations."""
    i = len(P) // 3
    sol = robot.inverse_kinematics(P[i], V[i], A[i])
    u = robot.inverse_dynamics(sol, V[i], A[i])
    out = {"fd_us": [], "pin_us": [], "ratio": []}
    fns = [lambda: robot.forward_dynamics(sol, V[i], u)]
    pin_ok = robot.description.name.startswith("gough")
    if pin_ok:
        class Shim:                                   # what PinocchioPeer reads of a robot
            description, gravity = robot.description, robot.tree.gravity
            tree_joints, actuated_joints = robot.tree_joints, robot.actuated_joints
        peer = PinocchioPeer(Shim)
        q, v, tau = peer.state(sol.q, sol.qd, u)
        ddq = peer.forward_dynamics(q, v, tau)
        got = peer.actuated(ddq)
        out["agreement"] = float(np.abs(got - sol.actuators_dd).max() / np.abs(sol.actuators_dd).max())
        fns.append(lambda: peer.forward_dynamics(q, v, tau))
    acc = robot.forward_dynamics(sol, V[i], u)
    out["fd_round_trip"] = float(np.abs(acc - A[i]).max() / max(np.abs(A[i]).max(), 1e-300))
    for _ in range(runs):
        t = interleaved_us(fns, reps, 20)
        out["fd_us"].append(t[0])
        if pin_ok:
            out["pin_us"].append(t[1])
            out["ratio"].append(t[0] / t[1])
    return out


def rng_(a):
    return f"{min(a):.0f}-{max(a):.0f}" if a else "-"


def main(argv) -> int:
    quick = "--quick" in argv
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    results = {"machine": machine(), "runs": runs, "robots": {}}
    m = results["machine"]
    print(f"PKM (paper 001), {m['cpu']}, {m['cores']} cores, numpy 3x3 matmul {m['numpy_3x3_matmul_us']:.2f} us, "
          f"{runs} runs")
    print(f"{'robot':<20}{'scheme':<10}{'IK+ID us/reference (runs)':>28}{'numpy route':>13}  outer iterations"
          f"   same as numpy route")
    for name, (robot, (P, V, A)) in paths(quick).items():
        res = results["robots"][name] = {"steps": len(P) - 1, "dt": 0.001}
        for scheme in ("nested", "compound"):
            us, ref = [], []
            for _ in range(runs):
                us.append(reference_us(robot, P, V, A, scheme))
                robot.compiled = False
                ref.append(reference_us(robot, P, V, A, scheme, 60))
                robot.compiled = True
            hist, same = iterations(robot, P, scheme)
            res[scheme] = {"ik_id_us_per_reference": us, "numpy_route_us_per_reference": ref,
                           "outer_iterations": hist, "iterations_equal_to_numpy_route": same}
            print(f"{name:<20}{scheme:<10}{rng_(us):>28}{rng_(ref):>13}  {str(hist):<19}{same}")
        res["fd"] = fd_figures(robot, P, V, A, runs, 15 if quick else 40)
    print(f"\n{'FD from an IK solution':<24}{'ours us':>12}{'Pinocchio us':>14}{'ratio':>12}  agreement")
    for name, res in results["robots"].items():
        fd = res["fd"]
        ratio = f"{min(fd['ratio']):.1f}-{max(fd['ratio']):.1f}" if fd["ratio"] else "-"
        agree = f"{fd['agreement']:.1e}" if "agreement" in fd else "-"
        print(f"{name:<24}{rng_(fd['fd_us']):>12}{rng_(fd['pin_us']):>14}{ratio:>12}  {agree}"
              f"  (FD(ID) round trip {fd['fd_round_trip']:.1e})")
    out = os.path.join(ROOT, "results")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "bench_pkm.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
