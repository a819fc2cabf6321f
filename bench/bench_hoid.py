"""Benchmark of the second-order inverse dynamics of paper 002 (u, u-dot, u-ddot).

For the 6-UPS Gough-Stewart platform (paper 002 Sec. VI-A: 0.75 ms per call, MATLAB, Intel
Core i7-4810MQ 2.8 GHz, mean of 10000 calls) and the SEA 3RRR, along the example paths
(warm-started from the previous sample), the per-call median (this machine) of:

* ``robot method``: ``ParallelRobot.higher_order_inverse_dynamics``, the public call a user makes
  (a float sample takes the short path): one compiled kernel call
  (``core/hoid/hoid_robot_kernels.py``) with the checks of the robot's inverse kinematics
  (pose, working mode, joint limits, input and output singularities), the zeroth-order limb
  inverse kinematics (per-limb Newton, warm start), the four-pass 4th-order kinematics, the
  2nd-order ID and the SEA feedforward;
* ``kernel``: that kernel call alone (``hoid_full_call`` with the robot's threshold, on
  prepared arrays);
* ``recursion``: paper 002's algorithm proper, the four-pass kinematics (Sec. IV-B) and the
  2nd-order ID (Sec. V) from the closed configuration theta -- the figure the paper reports (it
  takes theta as given, Sec. IV-B) -- compiled (``hoid_recursion``) and in numpy
  (``core/hoid/hoid_recursion.py``, the reference);
* ``taylor route``: the robot method with ``method="taylor"`` (Taylor jets through the closure
  and the tree RNEA), the independent check of the recursion;
* ``reference route``: ``core.hoid.higher_order.reference_route``, what the robot method ran
  before and runs for a sample the kernel refuses: paper 001's inverse kinematics with every
  check (``admissible_task_state``), then the recursion's kernel.

The samples follow the path from t = 0.1 s in 1 ms steps (a 1 kHz feedforward), each call
warm-started from the previous sample's closed configuration.  Every figure of a run is one
block of calls along the samples (the Taylor and reference routes every 10th sample), the
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
from pkm_dynamics.core.hoid.higher_order import reference_route  # noqa: E402
from pkm_dynamics.core.hoid.hoid_motions import gough_stewart_roll, pick_and_place  # noqa: E402
from pkm_dynamics.core.hoid.hoid_recursion import fourth_order_kinematics, second_order_inverse_dynamics  # noqa: E402
from pkm_dynamics.core.robot import load_robot  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")
PAPER_MS = 0.75
TARGET_US = 60.0
#: the samples: from T0 along the path in steps of STEP [s]
T0, STEP = 0.1, 1e-3
FIGURES = ("robot_method_us", "kernel_us", "recursion_compiled_us", "recursion_numpy_us", "taylor_route_us",
           "reference_route_us")


def _median_us(fn, n: int, every: int = 1) -> float:
    """Median time [us] of ``fn(k)`` over the samples ``k = 1, 1 + every, ...`` below ``n``
    (sample 0 is only the start of sample 1)."""
    ts = []
    for k in range(1, n, every):
        t0 = time.perf_counter()
        fn(k)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e6)


def one_run(robot, samples, q, order) -> dict:
    """Median per call [us] of every figure along the samples: one block of calls per figure
    (each call warm-started from the previous sample's closed configuration ``q[k - 1]``),
    the blocks in the given ``order``."""
    m = robot.hoid_model
    g = robot.tree.gravity
    thr = -1.0 if robot.singularity_threshold is None else robot.singularity_threshold
    n = len(samples)
    calls = {
        "robot_method_us": (lambda k: robot.higher_order_inverse_dynamics(*_args(samples[k]), q_guess=q[k - 1]), 1),
        "kernel_us": (lambda k: hoid_full_call(m.kernel, samples[k][0][None], samples[k][1][None], q[k - 1], g,
                                               threshold=thr), 1),
        "recursion_compiled_us": (lambda k: hoid_recursion(m.kernel, q[k], samples[k][1], g), 1),
        "recursion_numpy_us": (lambda k: second_order_inverse_dynamics(
            m.limbs, fourth_order_kinematics(m.limbs, q[k], samples[k][1])), 1),
        "taylor_route_us": (lambda k: robot.higher_order_inverse_dynamics(*_args(samples[k]), q_guess=q[k - 1],
                                                                          method="taylor"), 10),
        "reference_route_us": (lambda k: reference_route(robot, samples[k][0], tuple(samples[k][1]),
                                                         q_guess=q[k - 1]), 10),
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
        robot = load_robot(os.path.join(ROBOTS, name + ".urdf"))
        m = robot.hoid_model
        ts = T0 + STEP * np.arange(-1, n_samples)        # 1 ms steps, as a 1 kHz feedforward
        samples = [motion(t) for t in ts]
        q, guess, worst = [], None, 0.0              # closed configurations along the samples
        for C, Vt in samples:
            r = robot.higher_order_inverse_dynamics(C, *Vt, q_guess=guess)
            guess = r.tree_motion[0]
            q.append(guess)
        for k in range(1, len(samples), 10):         # agreement before timing
            a = robot.higher_order_inverse_dynamics(*_args(samples[k]), q_guess=q[k - 1])
            b = robot.higher_order_inverse_dynamics(*_args(samples[k]), q_guess=q[k - 1], method="taylor")
            for key in ("u", "du", "ddu"):
                worst = max(worst, float(np.linalg.norm(a[key] - b[key]) / max(np.linalg.norm(b[key]), 1e-9)))
        per_run = [one_run(robot, samples, q, FIGURES if r % 2 == 0 else FIGURES[::-1]) for r in range(runs)]
        out["robots"][name] = {
            "tree_joints": robot.tree.nq, "limbs": len(m.limbs.limbs), "max_rel_diff_to_taylor": worst,
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
    heads = ("robot method", "kernel", "recursion", "rec. numpy", "taylor route", "reference route")
    print(f"{'robot':20s}" + "".join(f"{h:>19s}" for h in heads) + f"{'|u-u_taylor|':>14s}")
    for name, r in res["robots"].items():
        cells = "".join(f"{r['range'][k][0]:9.1f}-{r['range'][k][1]:<9.1f}" for k in FIGURES)
        print(f"{name:20s}{cells}{r['max_rel_diff_to_taylor']:14.1e}")
    gsp = res["robots"]["gough_stewart_6ups"]["range"]["robot_method_us"]
    print(f"Gough-Stewart robot method: {gsp[0]:.1f}-{gsp[1]:.1f} us (target {TARGET_US:.0f} us; paper 002: "
          f"{PAPER_MS * 1e3:.0f} us, MATLAB, Intel Core i7-4810MQ 2.8 GHz, recursion with theta given): "
          f"{PAPER_MS * 1e3 / gsp[1]:.1f}-{PAPER_MS * 1e3 / gsp[0]:.1f}x faster than the paper")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "bench_hoid.json"), "w", encoding="utf-8") as f:
        json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
