"""The public calls of the issue "public calls at kernel speed", in one process, timed in turns.

Rows (the figures ``bench/README.md`` quotes for them):

* ``hoid``: ``ParallelRobot.higher_order_inverse_dynamics`` of the Gough-Stewart platform along
  ``bench_hoid``'s roll (200 samples, each warm-started from the previous closed configuration);
* ``gs_ref``: the feedforward reference ``inverse_kinematics(P, V, A, initial=prev)`` then
  ``inverse_dynamics`` along ``bench_pkm``'s 6-UPS path (333 references);
* ``ref_motion``: ``reference_motion`` along the same path (warm: the previous ``theta``);
* ``sim_rk4``, ``sim_semi``: ``simulate`` of the crane (heavy_duty_4dof), 0.5 s at 1 ms with
  constant efforts, RK4 and semi-implicit Euler, microseconds per step;
* ``sim_rk4_nf``: ``sim_rk4`` on the crane without friction (``testing.frictionless``);
* ``crane_fd`` / ``pin_crane_fd``: the public ``forward_dynamics`` of the crane without friction
  (``testing.frictionless``: the physics Pinocchio's ``constraintDynamics`` computes, which knows
  no joint friction) at ``bench_module_chain``'s state against ``constraintDynamics``
  (``PinocchioPeer``), like for like; ``crane_fd_friction``: the example crane as it is (its
  cylinders' friction and pivot damping, ``robots/heavy_duty_4dof.urdf``) at the same state,
  reported beside them (``crane_fd_friction_over_pin``: not a like-for-like ratio);
* ``gs_fd`` / ``pin_gs_fd``: the 6-UPS ``forward_dynamics`` from an IK solution against
  ``constraintDynamics`` with five CONTACT_3D (``bench_pkm.fd_figures``' state).

Each repeat times one block of every row in turn; medians over the repeats.  ``--cpu``: thread
CPU time (``time.thread_time``) instead of wall time, which the load of a shared machine
inflates less.  ``--root DIR``: the tree whose ``pkm_dynamics`` and ``bench`` are imported
(default: this one), so two commits can be timed in turns from two checkouts.

    python bench/bench_public_calls.py [--reps 5] [--cpu] [--root DIR]

One JSON line on stdout.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = ap.parse_args(argv)
    clock = time.thread_time if args.cpu else time.perf_counter
    sys.path.insert(0, os.path.join(args.root, "pkm_dynamics"))
    sys.path.insert(0, os.path.join(args.root, "bench"))
    import bench_hoid
    from bench_module_chain import PinocchioPeer, case_state
    from bench_pkm import gough_stewart_path
    from pkm_dynamics.core.robot import load_robot
    from pkm_dynamics.testing import frictionless

    robots = os.path.join(args.root, "pkm_dynamics", "robots")
    crane = load_robot(os.path.join(robots, "heavy_duty_4dof.urdf"))
    crane_nf = load_robot(frictionless(os.path.join(robots, "heavy_duty_4dof.urdf")))
    gs = load_robot(os.path.join(robots, "gough_stewart_6ups.urdf"))
    x, xd, xdd = case_state(crane, np.random.default_rng(0))
    f = crane.inverse_dynamics(x, xd, xdd)
    peer = PinocchioPeer(crane_nf)
    q, v, tau = peer.state(*crane.tree_state(x, xd, xdd)[:2], f)
    x0, xd0 = np.array([0.3, 0.3, 0.3, 0.55]), np.array([0.3, 0.0, 0.0, 0.0])
    hold = crane.inverse_dynamics(x0, np.zeros(4), np.zeros(4))
    horizon = 0.5
    steps = int(round(horizon / 1e-3))
    P, V, A = gough_stewart_path(gs, np.arange(0.0, 1 / 3 + 1e-12, 0.001))
    i3 = len(P) // 3
    sol3 = gs.inverse_kinematics(P[i3], V[i3], A[i3])
    u3 = gs.inverse_dynamics(sol3, V[i3], A[i3])

    class Shim:                                   # what PinocchioPeer reads of a robot
        description, gravity = gs.description, gs.tree.gravity
        tree_joints, actuated_joints = gs.tree_joints, gs.actuated_joints
    gpeer = PinocchioPeer(Shim)
    gq, gv, gtau = gpeer.state(sol3.q, sol3.qd, u3)
    samples = [bench_hoid.gough_stewart_roll(t) for t in bench_hoid.T0 + bench_hoid.STEP * np.arange(-1, 200)]
    closed, guess = [], None
    for C, Vt in samples:
        guess = gs.higher_order_inverse_dynamics(C, *Vt, q_guess=guess).tree_motion[0]
        closed.append(guess)

    def per_sample(call, n):
        ts = []
        for i in range(1, n):
            t0 = clock()
            call(i)
            ts.append(clock() - t0)
        return float(np.median(ts) * 1e6)

    state = {}

    def reference(i):
        state["sol"] = gs.inverse_kinematics(P[i], V[i], A[i], initial=state["sol"])
        gs.inverse_dynamics(state["sol"], V[i], A[i])

    def motion(i):
        state["theta"] = gs.reference_motion(P[i], V[i], A[i], state["theta"]).theta

    def path(call, key, first):
        state[key] = first
        return per_sample(call, len(P))

    def block(call, inner):
        t0 = clock()
        for _ in range(inner):
            call()
        return (clock() - t0) / inner * 1e6

    rows = {
        "hoid": lambda: per_sample(lambda i: gs.higher_order_inverse_dynamics(
            samples[i][0], *samples[i][1], q_guess=closed[i - 1]), len(samples)),
        "gs_ref": lambda: path(reference, "sol", gs.inverse_kinematics(P[0], V[0], A[0])),
        "ref_motion": lambda: path(motion, "theta", gs.reference_motion(P[0], V[0], A[0]).theta),
        "sim_rk4": lambda: block(lambda: crane.simulate(x0, xd0, horizon, efforts=hold), 3) / steps,
        "sim_semi": lambda: block(lambda: crane.simulate(x0, xd0, horizon, efforts=hold,
                                                         method="semi_implicit"), 3) / steps,
        "sim_rk4_nf": lambda: block(lambda: crane_nf.simulate(x0, xd0, horizon, efforts=hold), 3) / steps,
        "crane_fd": lambda: block(lambda: crane_nf.forward_dynamics(x, xd, f), 400),
        "crane_fd_friction": lambda: block(lambda: crane.forward_dynamics(x, xd, f), 400),
        "pin_crane_fd": lambda: block(lambda: peer.forward_dynamics(q, v, tau), 400),
        "gs_fd": lambda: block(lambda: gs.forward_dynamics(sol3, V[i3], u3), 100),
        "pin_gs_fd": lambda: block(lambda: gpeer.forward_dynamics(gq, gv, gtau), 100),
    }
    for run in rows.values():                     # warm-up
        run()
    times = {k: [] for k in rows}
    for _ in range(args.reps):
        for k, run in rows.items():
            times[k].append(run())
    out = {k: float(np.median(t)) for k, t in times.items()}
    out["crane_fd_over_pin"] = out["crane_fd"] / out["pin_crane_fd"]
    out["crane_fd_friction_over_pin"] = out["crane_fd_friction"] / out["pin_crane_fd"]
    out["gs_fd_over_pin"] = out["gs_fd"] / out["pin_gs_fd"]
    print(json.dumps({"root": args.root, "clock": "thread CPU" if args.cpu else "wall", "load": os.getloadavg(),
                      "units": "us per call (sim_*: per step)", **{k: round(t, 3) for k, t in out.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
