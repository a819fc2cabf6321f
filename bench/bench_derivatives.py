"""Benchmark of the exact dynamics derivatives (core/derivatives/derivatives.py, core/derivatives/pkm_derivatives.py).

Module chains (the crane ``heavy_duty_4dof`` and generated chains of n = 1 ... 32 modules), timed
interleaved in one process, medians in microseconds:

* our public ``robot.forward_dynamics`` (one FD call) next to ``robot.forward_dynamics_derivatives``
  (FD and all of dFD/dx, dFD/dxd, dFD/df: the forward-mode kernel of
  ``core/derivatives/chain_derivatives.py``) and ``robot.inverse_dynamics_derivatives``; the ratio
  derivatives / FD is the figure of the issue (<= 10);
* Pinocchio's ``constraintDynamics`` + ``computeConstraintDynamicsDerivatives`` of the same
  mechanism (spanning tree + one CONTACT_3D per cut joint, ``ProximalSettings(1e-10, 1e-12, 3)``, as
  bench_module_chain.py builds it), after checking that its dFD/dxd and dFD/df mapped to the
  actuators agree with ours (``|d|``, relative; its ddq_dq is not compared: see the package tests);
  and ``pin.computeRNEADerivatives`` of the open tree (the ID side).

Parallel robots: milliseconds per state of ``inverse_dynamics_derivatives`` and
``forward_dynamics_derivatives`` (numpy jets, :mod:`pkm_dynamics.core.pkm_derivatives`) next to one
``inverse_dynamics`` call.

    python bench/bench_derivatives.py [--quick]

Table on stdout, the same figures as JSON in ``bench/results/bench_derivatives.json``.
"""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_module_chain import PinocchioPeer, case_state  # noqa: E402
from common import machine  # noqa: E402
from pkm_dynamics.core.description.examples import module_chain_urdf  # noqa: E402
from pkm_dynamics.core.robot import load_robot  # noqa: E402
from pkm_dynamics.core.spatial.se3 import exp_se3  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")


def interleaved_us(fns, reps: int, block_s: float = 5e-4) -> list:
    """Median microseconds per call of each of ``fns``, timed in turns: each repeat runs one
    block of every function, each block about ``block_s`` long (its call count calibrated
    once), so that a slow call and a fast one are exposed alike to the preemptions of a loaded
    machine (equal call counts would give the slow one longer, more often interrupted blocks)."""
    inners = []
    for fn in fns:
        fn()
        t = time.perf_counter()
        fn()
        inners.append(max(1, int(block_s / max(time.perf_counter() - t, 1e-7))))
    times = [[] for _ in fns]
    for _ in range(reps):
        for fn, inner, tl in zip(fns, inners, times):
            t = time.perf_counter()
            for _ in range(inner):
                fn()
            tl.append((time.perf_counter() - t) / inner)
    return [float(np.median(tl) * 1e6) for tl in times]


def pinocchio_derivatives(peer, Q, QD, tau):
    """Pinocchio's constrained FD and its derivatives (one call of each, as a user would)."""
    pin = peer.pin
    pin.constraintDynamics(peer.model, peer.data, Q, QD, tau, peer.cmodels, peer.cdatas, peer.prox)
    pin.computeConstraintDynamicsDerivatives(peer.model, peer.data, peer.cmodels, peer.cdatas, peer.prox)


def chain_row(name, robot, rng, reps) -> dict:
    x, xd, xdd = case_state(robot, rng)
    f = robot.inverse_dynamics(x, xd, xdd)
    n = robot.n
    peer = PinocchioPeer(robot)
    pin = peer.pin
    Q, QD, QDD = robot.tree_state(x, xd, xdd)
    q, v, tau = peer.state(Q, QD, f)
    a_tree = peer.tree_vector(QDD)
    # agreement first: dFD/dxd = S ddq_dv H, dFD/df = S ddq_dtau S^T (tree order via tree_vector)
    ours = robot.forward_dynamics_derivatives(x, xd, f)
    pinocchio_derivatives(peer, q, v, tau)
    H = np.column_stack([peer.tree_vector(robot.tree_state(x, e, np.zeros(n))[1]) for e in np.eye(n)])
    S = np.array([peer.tree_vector(np.array(robot.tree_joints) == j) for j in robot.actuated_joints])
    d_xd = S @ peer.data.ddq_dv @ H
    d_f = S @ peer.data.ddq_dtau @ S.T
    agree = max(float(np.abs(ours.d_xd - d_xd).max() / np.abs(d_xd).max()),
                float(np.abs(ours.d_u - d_f).max() / np.abs(d_f).max()))
    fd, fdd, idd, pin_fdd, pin_idd = interleaved_us(
        [lambda: robot.forward_dynamics(x, xd, f), lambda: robot.forward_dynamics_derivatives(x, xd, f),
         lambda: robot.inverse_dynamics_derivatives(x, xd, xdd), lambda: pinocchio_derivatives(peer, q, v, tau),
         lambda: pin.computeRNEADerivatives(peer.model, peer.data, q, v, a_tree)], reps)
    return {"robot": name, "n": n, "fd_us": fd, "fd_derivatives_us": fdd, "id_derivatives_us": idd,
            "ratio_fd_derivatives_to_fd": fdd / fd, "pin_constraint_derivatives_us": pin_fdd,
            "ratio_to_pin_constraint_derivatives": fdd / pin_fdd, "pin_rnea_derivatives_us": pin_idd,
            "max_rel_diff_vs_pin": agree}


def pkm_row(name, reps) -> dict:
    robot = load_robot(os.path.join(ROBOTS, f"{name}.urdf"))
    rng = np.random.default_rng(0)
    dp = robot.dof
    pose = robot.reference_pose @ exp_se3(robot.P_p @ rng.normal(scale=0.01, size=dp))
    V, A = rng.normal(scale=0.1, size=dp), rng.normal(scale=0.5, size=dp)
    u = robot.inverse_dynamics(pose, V, A)
    idt, idd, fdd = interleaved_us([lambda: robot.inverse_dynamics(pose, V, A),
                                    lambda: robot.inverse_dynamics_derivatives(pose, V, A),
                                    lambda: robot.forward_dynamics_derivatives(pose, V, u)], reps, 0.0)
    return {"robot": name, "dof": dp, "id_ms": idt / 1e3, "id_derivatives_ms": idd / 1e3,
            "fd_derivatives_ms": fdd / 1e3, "ratio_id_derivatives_to_id": idd / idt}


def run(quick: bool = False) -> dict:
    rng = np.random.default_rng(0)
    cases = [("heavy_duty_4dof", load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf")))]
    ns = [1, 4, 16] if quick else [1, 2, 4, 8, 16, 32]
    cases += [(f"chain_{n}", load_robot(module_chain_urdf(n))) for n in ns]
    reps = 11 if quick else 41
    chains = [chain_row(name, robot, rng, reps) for name, robot in cases]
    pkms = [pkm_row(name, 3 if quick else 5) for name in ("planar_3rrr", "irsbot2", "gough_stewart_6ups")]
    return {"benchmark": "bench_derivatives", "machine": machine(), "chains": chains, "pkms": pkms,
            "units": "chains: microseconds per call (median); pkms: milliseconds per state (median)"}


def table(res: dict) -> str:
    head = (f"{'robot':<18}{'n':>4}{'FD us':>9}{'dFD us':>9}{'dFD/FD':>8}{'dID us':>9}{'pin dFD':>9}"
            f"{'ours/pin':>9}{'pin dID':>9}{'|d| pin':>9}")
    lines = [head, "-" * len(head)]
    for r in res["chains"]:
        lines.append(f"{r['robot']:<18}{r['n']:>4}{r['fd_us']:>9.1f}{r['fd_derivatives_us']:>9.1f}"
                     f"{r['ratio_fd_derivatives_to_fd']:>8.2f}{r['id_derivatives_us']:>9.1f}"
                     f"{r['pin_constraint_derivatives_us']:>9.1f}{r['ratio_to_pin_constraint_derivatives']:>9.2f}"
                     f"{r['pin_rnea_derivatives_us']:>9.1f}{r['max_rel_diff_vs_pin']:>9.1e}")
    lines.append("dFD: forward_dynamics_derivatives (FD + all its derivatives); dID: inverse_dynamics_derivatives; "
                 "pin dFD: constraintDynamics + computeConstraintDynamicsDerivatives; pin dID: computeRNEADerivatives "
                 "of the open tree")
    lines.append("")
    lines.append(f"{'PKM':<20}{'dof':>4}{'ID ms':>9}{'dID ms':>9}{'dFD ms':>9}{'dID/ID':>8}")
    for r in res["pkms"]:
        lines.append(f"{r['robot']:<20}{r['dof']:>4}{r['id_ms']:>9.2f}{r['id_derivatives_ms']:>9.1f}"
                     f"{r['fd_derivatives_ms']:>9.1f}{r['ratio_id_derivatives_to_id']:>8.1f}")
    m = res["machine"]
    lines.append(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, numpy {m['numpy']}, "
                 f"Pinocchio {m['pinocchio']}")
    return "\n".join(lines)


def main() -> int:
    res = run("--quick" in sys.argv)
    print(table(res))
    out = os.path.join(ROOT, "bench", "results")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "bench_derivatives.json"), "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    t0 = time.perf_counter()
    code = main()
    print(f"({time.perf_counter() - t0:.0f} s)")
    sys.exit(code)
