"""Benchmark of the second-order inverse dynamics of paper 002 (u, u-dot, u-ddot).

For the 6-UPS Gough-Stewart platform (paper 002 Sec. VI-A: 0.75 ms per call, MATLAB, Intel
Core i7-4810MQ 2.8 GHz, mean of 10000 calls) and the SEA 3RRR, along the example paths, the
per-call median (this machine) of:

* ``recursion``: paper 002's algorithm proper, the four-pass 4th-order kinematics (Sec. IV-B)
  and the 2nd-order ID (Sec. V) from the closed configuration theta -- the figure the paper
  reports (it takes theta as given, Sec. IV-B);
* ``api call``: ``higher_order_inverse_dynamics`` with the zeroth-order limb inverse kinematics
  (per-limb Newton, warm start from the previous sample) and the SEA feedforward;
* ``taylor route``: the general route (Taylor jets through the closure and the tree RNEA),
  the reference the recursion is tested against.

    python bench/bench_hoid.py [--quick]

Table on stdout, the same figures as JSON in ``bench/results/bench_hoid.json``.
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
from pkm_dynamics.core.description import parse_description  # noqa: E402
from pkm_dynamics.core.higher_order import higher_order_inverse_dynamics, hoid_model  # noqa: E402
from pkm_dynamics.core.hoid_recursion import fourth_order_kinematics, second_order_inverse_dynamics  # noqa: E402
from pkm_dynamics.core.hoid_motions import gough_stewart_roll, pick_and_place  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")
PAPER_MS = 0.75




def run(quick: bool) -> dict:
    n_samples = 20 if quick else 200
    out = {"machine": machine(), "paper_ms": PAPER_MS, "samples_per_case": n_samples, "robots": {}}
    for name, motion in (("gough_stewart_6ups", gough_stewart_roll), ("planar_3rrr", pick_and_place)):
        desc = parse_description(os.path.join(ROBOTS, name + ".urdf"))
        m = hoid_model(desc)
        ts = np.linspace(0.0, 1.0, n_samples, endpoint=False)
        samples = [motion(t) for t in ts]
        q = []
        guess = None
        for C, Vt in samples:
            r = higher_order_inverse_dynamics(desc, C, *Vt, q_guess=guess)
            guess = r.tree_motion[0]
            q.append(guess)
        rec, api, tay = [], [], []
        for k, (C, Vt) in enumerate(samples):
            t0 = time.perf_counter()
            kins = fourth_order_kinematics(m.limbs, q[k], Vt)
            second_order_inverse_dynamics(m.limbs, kins)
            rec.append(time.perf_counter() - t0)
            prev = q[k - 1]
            t0 = time.perf_counter()
            higher_order_inverse_dynamics(desc, C, *Vt, q_guess=prev)
            api.append(time.perf_counter() - t0)
            if k % 5 == 0:
                t0 = time.perf_counter()
                higher_order_inverse_dynamics(desc, C, *Vt, q_guess=prev, method="taylor")
                tay.append(time.perf_counter() - t0)
        out["robots"][name] = {
            "tree_joints": desc.tree.nq, "limbs": len(m.limbs.limbs),
            "recursion_ms": float(np.median(rec) * 1e3), "api_call_ms": float(np.median(api) * 1e3),
            "taylor_route_ms": float(np.median(tay) * 1e3)}
    return out


def main():
    quick = "--quick" in sys.argv
    res = run(quick)
    mc = res["machine"]
    print(f"second-order inverse dynamics (u, du, ddu), median per call, {mc['cpu']}, Python {mc['python']}")
    print(f"{'robot':22s} {'recursion [ms]':>15s} {'api call [ms]':>14s} {'taylor route [ms]':>18s} {'paper [ms]':>11s}")
    for name, r in res["robots"].items():
        paper = f"{PAPER_MS:.2f}" if name.startswith("gough") else "-"
        print(f"{name:22s} {r['recursion_ms']:15.3f} {r['api_call_ms']:14.3f} {r['taylor_route_ms']:18.3f} {paper:>11s}")
    print("paper 002: MATLAB, Intel Core i7-4810MQ 2.8 GHz, mean of 10000 calls (recursion, theta given)")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "bench_hoid.json"), "w", encoding="utf-8") as f:
        json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
