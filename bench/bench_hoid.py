"""Benchmark of the second-order inverse dynamics of paper 002 (u, u-dot, u-ddot).

For the 6-UPS Gough-Stewart platform (paper 002 Sec. VI-A: 0.75 ms per call, MATLAB, Intel
Core i7-4810MQ 2.8 GHz, mean of 10000 calls) and the SEA 3RRR, along the example paths
(warm-started from the previous sample), the per-call median (this machine) of:

* ``full call``: ``higher_order_inverse_dynamics(description, ...)``, the public call: input
  checks, the zeroth-order limb inverse kinematics (per-limb Newton, warm start), the four-pass
  4th-order kinematics, the 2nd-order ID and the SEA feedforward -- one compiled kernel call
  (``core/hoid/hoid_kernels.py``; a float sample takes the short path,
  ``core.higher_order._one_sample``);
* ``kernel``: that kernel call alone (``hoid_full_call`` on prepared arrays);
* ``recursion``: paper 002's algorithm proper, the four-pass kinematics (Sec. IV-B) and the
  2nd-order ID (Sec. V) from the closed configuration theta -- the figure the paper reports (it
  takes theta as given, Sec. IV-B) -- compiled (``hoid_recursion``) and in numpy
  (``core/hoid/hoid_recursion.py``, the reference);
* ``taylor route``: the general route (Taylor jets through the closure and the tree RNEA),
  the independent check of the recursion;
* ``robot method``: ``ParallelRobot.higher_order_inverse_dynamics``, which first runs the
  PKM inverse kinematics of paper 001 (``admissible_task_state``: limits, singularities,
  working mode) before the same kernel.

The samples follow the path from t = 0.1 s in 1 ms steps (a 1 kHz feedforward), each call
warm-started from the previous sample's closed configuration.  Every figure of a run is one
block of calls along the samples (the Taylor route and the robot method every 10th sample), the
blocks in turns within one process, their order reversed from run to run; the agreement of the
compiled call with the Taylor route is checked first.  Several runs (``--runs``).

    python bench/bench_hoid.py [--quick] [--runs N]

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
from pkm_dynamics.core.hoid.hoid_model import hoid_full_call, hoid_recursion  # noqa: E402
from pkm_dynamics.core.description.robot_description import parse_description  # noqa: E402
from pkm_dynamics.core.hoid.higher_order import higher_order_inverse_dynamics, hoid_model  # noqa: E402
from pkm_dynamics.core.hoid.hoid_motions import gough_stewart_roll, pick_and_place  # noqa: E402
from pkm_dynamics.core.hoid.hoid_recursion import fourth_order_kinematics, second_order_inverse_dynamics  # noqa: E402
from pkm_dynamics.core.robot import load_robot  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")
PAPER_MS = 0.75
TARGET_US = 75.0
#: the samples: from T0 along the path in steps of STEP [s]
T0, STEP = 0.1, 1e-3
FIGURES = ("full_call_us", "kernel_us", "recursion_compiled_us", "recursion_numpy_us", "taylor_route_us",
           "robot_method_us")


def _median_us(fn, n: int, every: int = 1) -> float:
    """Median time [us] of ``fn(k)`` over the samples ``k = 1, 1 + every, ...`` below ``n``
    (sample 0 is only the start of sample 1)."""
    ts = []
    for k in range(1, n, every):
        t0 = time.perf_counter()
        fn(k)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e6)


def one_run(desc, robot, samples, q, order) -> dict:
    """Median per call [us] of every figure along the samples: one block of calls per figure
    (each call warm-started from the previous sample's closed configuration ``q[k - 1]``),
    the blocks in the given ``order``."""
    m = hoid_model(desc)
    g = desc.tree.gravity
    n = len(samples)
    calls = {
        "full_call_us": (lambda k: higher_order_inverse_dynamics(desc, *_args(samples[k]), q_guess=q[k - 1]), 1),
        "kernel_us": (lambda k: hoid_full_call(m.kernel, samples[k][0][None], samples[k][1][None], q[k - 1], g), 1),
        "recursion_compiled_us": (lambda k: hoid_recursion(m.kernel, q[k], samples[k][1], g), 1),
        "recursion_numpy_us": (lambda k: second_order_inverse_dynamics(
            m.limbs, fourth_order_kinematics(m.limbs, q[k], samples[k][1])), 1),
        "taylor_route_us": (lambda k: higher_order_inverse_dynamics(desc, *_args(samples[k]), q_guess=q[k - 1],
                                                                    method="taylor"), 10),
        "robot_method_us": (lambda k: robot.higher_order_inverse_dynamics(*_args(samples[k]), q_guess=q[k - 1]), 10),
    }
    return {key: _median_us(calls[key][0], n, calls[key][1]) for key in order}


def _args(sample) -> tuple:
    C, Vt = sample
    return (C, *Vt)


def run(quick: bool, runs: int) -> dict:
    n_samples = 20 if quick else 200
    out = {"machine": machine(), "paper_ms": PAPER_MS, "target_us": TARGET_US, "samples_per_case": n_samples,
           "runs": runs, "robots": {}}
    for name, motion in (("gough_stewart_6ups", gough_stewart_roll), ("planar_3rrr", pick_and_place)):
        path = os.path.join(ROBOTS, name + ".urdf")
        desc = parse_description(path)
        robot = load_robot(path)
        m = hoid_model(desc)
        ts = T0 + STEP * np.arange(-1, n_samples)        # 1 ms steps, as a 1 kHz feedforward
        samples = [motion(t) for t in ts]
        q, guess, worst = [], None, 0.0              # closed configurations along the samples
        for C, Vt in samples:
            r = higher_order_inverse_dynamics(desc, C, *Vt, q_guess=guess)
            guess = r.tree_motion[0]
            q.append(guess)
        for k in range(1, len(samples), 10):         # agreement before timing
            a = higher_order_inverse_dynamics(desc, *_args(samples[k]), q_guess=q[k - 1])
            b = higher_order_inverse_dynamics(desc, *_args(samples[k]), q_guess=q[k - 1], method="taylor")
            for key in ("u", "du", "ddu"):
                worst = max(worst, float(np.linalg.norm(a[key] - b[key]) / max(np.linalg.norm(b[key]), 1e-9)))
        per_run = [one_run(desc, robot, samples, q, FIGURES if r % 2 == 0 else FIGURES[::-1]) for r in range(runs)]
        out["robots"][name] = {
            "tree_joints": desc.tree.nq, "limbs": len(m.limbs.limbs), "max_rel_diff_to_taylor": worst,
            "runs": per_run,
            "range": {k: [min(r[k] for r in per_run), max(r[k] for r in per_run)] for k in FIGURES}}
    return out


def main():
    quick = "--quick" in sys.argv
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    res = run(quick, runs)
    mc = res["machine"]
    print(f"second-order inverse dynamics (u, du, ddu), median per call over {res['samples_per_case']} samples, "
          f"range over {runs} runs [us]; {mc['cpu']}, {mc['cores']} cores, Python {mc['python']}")
    heads = ("full call", "kernel", "recursion", "rec. numpy", "taylor route", "robot method")
    print(f"{'robot':20s}" + "".join(f"{h:>19s}" for h in heads) + f"{'|u-u_taylor|':>14s}")
    for name, r in res["robots"].items():
        cells = "".join(f"{r['range'][k][0]:9.1f}-{r['range'][k][1]:<9.1f}" for k in FIGURES)
        print(f"{name:20s}{cells}{r['max_rel_diff_to_taylor']:14.1e}")
    gsp = res["robots"]["gough_stewart_6ups"]["range"]["full_call_us"]
    print(f"Gough-Stewart full call: {gsp[0]:.1f}-{gsp[1]:.1f} us (target {TARGET_US:.0f} us; paper 002: "
          f"{PAPER_MS * 1e3:.0f} us, MATLAB, Intel Core i7-4810MQ 2.8 GHz, recursion with theta given): "
          f"{PAPER_MS * 1e3 / gsp[1]:.1f}-{PAPER_MS * 1e3 / gsp[0]:.1f}x faster than the paper")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "bench_hoid.json"), "w", encoding="utf-8") as f:
        json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
