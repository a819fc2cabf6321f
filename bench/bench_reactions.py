"""Benchmark of the joint reactions of module chains: the compiled route (paper 000's module
recursion and 4-bar pin forces, ``robot.joint_reactions``, core/reactions/chain_reactions.py)
against the general route (core/reactions/reactions.py: tree, constraint Jacobian, minimum-norm
multipliers, Newton-Euler pass) and Pinocchio's ``constraintDynamics`` of the same mechanism
(spanning tree + CONTACT_3D rod-end pivots: accelerations and pin loads, not the tree joints'
wrenches), for the 4-DoF crane and generated chains of n = 1, 2, 4, ..., 64 modules.

Agreement first (largest difference relative to the largest load: ours against the general
route over every tree and cut wrench; ours against Pinocchio over the pin-load magnitudes), then
per-call medians timed interleaved in one process (blocks of calls in turns), over several
runs; the general route gets fewer calls as it grows (2 s per call at 64 modules).

    python bench/bench_reactions.py [--quick]

Table on stdout, the same figures as JSON in ``bench/results/bench_reactions.json``.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "pkm_dynamics"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_module_chain import PinocchioPeer, case_state, interleaved_us  # noqa: E402
from common import machine  # noqa: E402
from pkm_dynamics.core.description.examples import module_chain_urdf  # noqa: E402
from pkm_dynamics.core.reactions.reactions import joint_reactions as general_reactions  # noqa: E402
from pkm_dynamics.core.reactions.reactions import reaction_model  # noqa: E402
from pkm_dynamics.core.robot import load_robot  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")


def case(name, robot, runs, quick):
    rng = np.random.default_rng(7)
    x, xd, _ = case_state(robot, rng)
    f = robot.inverse_dynamics(x, xd, np.zeros(robot.n)) + rng.normal(scale=500.0, size=robot.n)
    ours = robot.joint_reactions(x, xd, f)
    gm = reaction_model(robot)
    ref = general_reactions(robot, x, xd, f, model=gm)
    scale = max(np.abs(ref.joint_wrenches).max(), np.abs(ref.cut_wrenches).max())
    d_general = max(np.abs(ours.joint_wrenches - ref.joint_wrenches).max(),
                    np.abs(ours.cut_wrenches - ref.cut_wrenches).max()) / scale
    pin = PinocchioPeer(robot)
    Q, QD, _ = robot.tree_state(x, xd)
    q, v, tau = pin.state(Q, QD, f)
    pin.forward_dynamics(q, v, tau)
    pin_loads = np.array([np.linalg.norm(cd.contact_force.linear) for cd in pin.cdatas])
    d_pin = np.abs(pin_loads - np.linalg.norm(ours.cut_wrenches[:, 3:], axis=1)).max() / pin_loads.max()
    n = robot.n
    inner = 200 if n <= 8 else (50 if n <= 32 else 20)
    g_inner = max(1, 100 // (n * n)) if not quick else 1
    ours_us, pin_us, general_us = [], [], []
    for _ in range(runs):
        a, b = interleaved_us([lambda: robot.joint_reactions(x, xd, f),
                               lambda: pin.forward_dynamics(q, v, tau)], reps=7, inner=inner)
        c = interleaved_us([lambda: general_reactions(robot, x, xd, f, model=gm)], reps=3 if n < 32 else 1,
                           inner=g_inner)[0]
        ours_us.append(a)
        pin_us.append(b)
        general_us.append(c)
    return {"robot": name, "modules": n, "tree_joints": robot.tree.nq, "cut_joints": len(ours.cut_joints),
            "max_rel_diff_general": float(d_general), "max_rel_diff_pinocchio_pin_loads": float(d_pin),
            "ours_us": ours_us, "pinocchio_constraint_dynamics_us": pin_us, "general_us": general_us,
            "ours_median_us": float(np.median(ours_us)), "pinocchio_median_us": float(np.median(pin_us)),
            "general_median_us": float(np.median(general_us))}


def main():
    quick = "--quick" in sys.argv
    runs = 2 if quick else 3
    rows = [case("heavy_duty_4dof", load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf")), runs, quick)]
    for n in (1, 2, 4, 8, 16, 32, 64):
        rows.append(case(f"chain_{n}", load_robot(module_chain_urdf(n)), runs, quick))
    print(f"{'robot':16s} {'n':>3s} {'ours us (runs)':>24s} {'pin CD us':>10s} {'general us':>11s} "
          f"{'general/ours':>12s} {'pin/ours':>9s} {'|d| general':>11s} {'|d| pin':>8s}")
    for r in rows:
        runs_txt = "/".join(f"{t:.0f}" for t in r["ours_us"])
        print(f"{r['robot']:16s} {r['modules']:3d} {runs_txt:>24s} {r['pinocchio_median_us']:10.0f} "
              f"{r['general_median_us']:11.0f} {r['general_median_us'] / r['ours_median_us']:12.0f} "
              f"{r['pinocchio_median_us'] / r['ours_median_us']:9.2f} {r['max_rel_diff_general']:11.1e} "
              f"{r['max_rel_diff_pinocchio_pin_loads']:8.1e}")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "bench_reactions.json"), "w", encoding="utf-8") as f:
        json.dump({"machine": machine(), "reactions": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
