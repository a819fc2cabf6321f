"""Benchmark of the PKM route of paper 001 on the IRSBot-2 (``robots/irsbot2_paths.urdf``).

Along the parabolic path of Sec. 6.4 (dx = 0.25 m, dz = 0.45 m, 3 cycles per second) sampled at
dt = 1 ms and 10 ms: per-step median microseconds of the inverse kinematics (nested Algorithms
1+2 and the compound Algorithm 3, warm-started from the previous step, both limbs, positions
only and with velocities/accelerations), the distribution of outer/inner iteration counts (the
data of Figs. 11, 12 and 16), and per-call median microseconds of the task-space inverse
dynamics (eq. 45) and forward dynamics (eq. 39) from a stored IK solution, side by side with
the constrained (KKT) inverse dynamics of the whole spanning tree in the same process (the
check path, ``core.constrained``).  The input-singularity path reports the peak of kappa(F).

    python bench/bench_pkm.py [--quick]

Table on stdout, the same figures as JSON in ``bench/results/bench_pkm.json``.
"""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "pkm_dynamics"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import machine  # noqa: E402
from pkm_dynamics.core.constrained import kkt_inverse_dynamics  # noqa: E402
from pkm_dynamics.core.pkm import ParallelRobot, parabolic_trajectory, sample  # noqa: E402
from pkm_dynamics.core.interface import SolverOptions  # noqa: E402

ROBOT = os.path.join(ROOT, "pkm_dynamics", "robots", "irsbot2_paths.urdf")




def per_step(fn, items):
    times, out = [], []
    for it in items:
        t0 = time.perf_counter()
        out.append(fn(it))
        times.append(time.perf_counter() - t0)
    return float(np.median(times) * 1e6), out


def histogram(a):
    a = np.asarray(a, dtype=int).ravel()
    return {int(k): int(v) for k, v in zip(*np.unique(a, return_counts=True))}


def main(quick: bool = False) -> int:
    robot = ParallelRobot(ROBOT)
    results = {"machine": machine(), "robot": "irsbot2_paths", "ik": [], "dynamics": {}}
    t_end = 1 / 6 if quick else 1 / 3
    print(f"IRSBot-2 (paper 001 Sec. 6), {results['machine']['cpu']}, {os.cpu_count()} cores, "
          f"numpy 3x3 matmul {results['machine']['numpy_3x3_matmul_us']:.2f} us")
    print(f"{'IK':<30}{'dt':>7}{'steps':>7}{'median us/step':>16}  outer iterations (limb 1)   inner (distal loop)")
    for scheme in ("nested", "compound"):
        for dt in (0.001, 0.01):
            t = np.arange(0.0, t_end + 1e-12, dt)
            P, V, A = parabolic_trajectory(t, robot.reference_pose, 0.25, 0.45)
            state = {"sol": robot.inverse_kinematics(P[0])}

            def step(i, with_rates=False):
                s = robot.inverse_kinematics(P[i], V[i] if with_rates else None,
                                             A[i] if with_rates else None, initial=state["sol"], scheme=scheme)
                state["sol"] = s
                return s

            us, sols = per_step(step, range(1, len(P)))
            state["sol"] = robot.inverse_kinematics(P[0])
            us_rates, _ = per_step(lambda i: step(i, True), range(1, len(P)))
            outer = [s.iterations[0] for s in sols]
            inner = [int(st[1]) for s in sols for st in s.inner[0]] if scheme == "nested" else []
            row = {"scheme": scheme, "dt": dt, "steps": len(P) - 1, "median_us_per_step": us,
                   "median_us_per_step_with_rates": us_rates, "outer_iterations": histogram(outer),
                   "inner_iterations_distal": histogram(inner) if inner else {},
                   "max_loop_residual": float(max(s.residual for s in sols))}
            results["ik"].append(row)
            print(f"{scheme:<30}{dt:>7g}{len(P) - 1:>7}{us:>16.0f}  {row['outer_iterations']!s:<27}"
                  f"{row['inner_iterations_distal'] or '-'}")
            print(f"{'  (with velocity/acceleration)':<30}{'':>14}{us_rates:>16.0f}")

    t = np.arange(0.0, t_end + 1e-12, 0.01)
    P, V, A = parabolic_trajectory(t, robot.reference_pose, 0.25, 0.45)
    s = robot.inverse_kinematics(P, V, A)
    samples = [sample(s, i) for i in range(len(P))]
    desc = robot.description
    act = [desc.tree.joint_index(n) for n in desc.actuated_joints]
    us_id, u = per_step(lambda i: robot.inverse_dynamics(samples[i], V[i], A[i]), range(len(P)))
    us_fd, _ = per_step(lambda i: robot.forward_dynamics(samples[i], V[i], u[i]), range(len(P)))
    us_kkt, uk = per_step(lambda i: kkt_inverse_dynamics(desc, s.q[i], s.qd[i], s.qdd[i], act), range(len(P)))
    us_full, _ = per_step(lambda i: robot.inverse_dynamics(P[i], V[i], A[i], initial=samples[max(i - 1, 0)]),
                          range(len(P)))
    err = max(float(np.abs(a - b).max() / np.abs(b).max()) for a, b in zip(u, uk))
    results["dynamics"] = {"id_us": us_id, "fd_us": us_fd, "kkt_id_us": us_kkt, "id_with_ik_us": us_full,
                           "ratio_id_to_kkt": us_id / us_kkt, "max_rel_diff_id_vs_kkt": err}
    print(f"\n{'per call (median us)':<34}{'ours':>10}{'KKT tree':>10}{'ratio':>8}{'|du|/|u|':>11}")
    print(f"{'task-space ID (eq. 45), IK given':<34}{us_id:>10.0f}{us_kkt:>10.0f}{us_id / us_kkt:>8.2f}{err:>11.1e}")
    print(f"{'task-space FD (eq. 39), IK given':<34}{us_fd:>10.0f}")
    print(f"{'ID including IK (warm start)':<34}{us_full:>10.0f}")

    rs = ParallelRobot(ROBOT, options=SolverOptions(singularity_threshold=None))
    t = np.arange(0.0, 1 / 6 + 1e-12, 0.001)
    P, V, A = parabolic_trajectory(t, rs.reference_pose, 0.15, 0.6075)
    ss = rs.inverse_kinematics(P, V, A)
    k = ss.condition[:, 0]
    results["singularity_path"] = {"dx": 0.15, "dz": 0.6075, "kappa_F_limb1_start": float(k[0]),
                                   "kappa_F_limb1_peak": float(k.max()),
                                   "outer_iterations": histogram(ss.iterations[1:, 0])}
    print(f"\ninput-singularity path (0.15, 0.6075): kappa(F_1) {k[0]:.3g} -> peak {k.max():.3g}, "
          f"outer iterations {histogram(ss.iterations[1:, 0])}")

    out = os.path.join(ROOT, "bench", "results")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "bench_pkm.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main("--quick" in sys.argv))
