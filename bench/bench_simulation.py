"""Benchmark of the simulation (``robot.simulate``, core/simulation.py) and the joint reactions.

For the 4-DoF crane (heavy_duty_4dof) and a 64-module generated chain under a PD controller
around their gravity-holding efforts (a ``controller`` callback), and the 3-RRR planar PKM
(gravity in its plane) under constant efforts: RK4 steps per second at a 1 ms step, real-time
factor (simulated time / wall time), forward-dynamics evaluations per second, and scipy's
adaptive integrator (DOP853, rtol 1e-9) on the same motion (real-time factor, evaluations,
largest difference to RK4); the crane driven by the inverse dynamics of a smooth 2 s motion
(the feedforward evaluated at every stage) and its largest tracking error.  Next to them the
cost of one ``forward_dynamics`` call (the floor of an evaluation) and of one
``joint_reactions`` call.  Wall times are the best of several runs (the machine is shared).

    python bench/bench_simulation.py [--quick]

Table on stdout, the same figures as JSON in ``bench/results/bench_simulation.json``.
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
from pkm_dynamics.core.description.examples import module_chain_urdf  # noqa: E402
from pkm_dynamics.core.robot import load_robot  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")


def per_call_us(fn, reps=5, inner=200):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t) / inner)
    return float(np.median(times) * 1e6)


def best_wall(fn, reps):
    """Shortest wall time of ``reps`` runs of ``fn`` (the machine is shared: the least
    disturbed run) and the last result."""
    best, out = np.inf, None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def case(name, robot, x0, xd0, duration, dt, reps, source, reaction_calls=50):
    """Figures of one robot driven by ``source`` (the ``efforts=`` or ``controller=`` keyword)."""
    probe = np.asarray(next(iter(source.values()))(0.0, x0, xd0) if "controller" in source
                       else source["efforts"], dtype=float)
    pkm = robot_is_pkm(robot)
    fd = per_call_us(lambda: robot.forward_dynamics(x0, xd0, probe), inner=20 if pkm else 200)
    wall, sim = best_wall(lambda: robot.simulate(x0, xd0, duration, dt=dt, **source), reps)
    steps = len(sim.t) - 1
    awall, asim = best_wall(lambda: robot.simulate(x0, xd0, duration, dt=dt, method="adaptive",
                                                   **source), 1)
    return {"robot": name, "dt_ms": dt * 1e3, "duration_s": duration,
            "rk4_steps_per_s": steps / wall, "rk4_real_time_factor": sim.t[-1] / wall,
            "evaluations_per_s": sim.evaluations / wall, "forward_dynamics_us": fd,
            "adaptive_real_time_factor": asim.t[-1] / awall,
            "adaptive_evaluations": asim.evaluations,
            "rk4_vs_adaptive_max_dx": float(np.abs(sim.x - asim.x).max()),
            "joint_reactions_us": per_call_us(lambda: robot.joint_reactions(x0, xd0, probe),
                                              reps=3, inner=reaction_calls)}


def pd_controller(hold, x0, K, D):
    """Holding efforts plus a PD law around a slow sinusoid about ``x0``."""
    def control(t, x, xd):
        return hold + K * (x0 + 0.02 * np.sin(2.0 * t) - x) - D * xd
    return control


def robot_is_pkm(robot):
    return robot.description.platform is not None


def tracking(robot, reps):
    """The crane driven by the inverse dynamics of a smooth motion: error and real-time factor."""
    x0 = np.array([0.3, 0.2, 0.25, 0.4])
    A, w = np.array([0.2, 0.05, 0.05, 0.1]), np.array([1.0, 2.0, 1.5, 2.5])

    def motion(t):
        return x0 + A * np.sin(w * t), A * w * np.cos(w * t), -A * w * w * np.sin(w * t)
    wall, sim = best_wall(lambda: robot.simulate(x0, motion(0)[1], 2.0, dt=1e-3,
                                                 efforts=lambda t: robot.inverse_dynamics(*motion(t))), reps)
    err = np.abs(sim.x - np.array([motion(t)[0] for t in sim.t])).max()
    return {"robot": "heavy_duty_4dof", "duration_s": 2.0, "dt_ms": 1.0, "max_tracking_error": float(err),
            "real_time_factor": 2.0 / wall}


def main():
    quick = "--quick" in sys.argv
    reps = 2 if quick else 5
    crane = load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))
    x0 = np.array([0.3, 0.3, 0.3, 0.55])                 # mid-stroke
    z4 = np.zeros(4)
    hold = crane.inverse_dynamics(x0, z4, z4)
    K = np.array([2e4, 4e5, 2e5, 1e5])
    rows = [case("heavy_duty_4dof", crane, x0, z4, 1.0, 1e-3, reps,
                 {"controller": pd_controller(hold, x0, K, 0.1 * K)})]
    chain = load_robot(module_chain_urdf(64))
    x64, z64 = np.full(64, 0.25), np.zeros(64)
    hold = chain.inverse_dynamics(x64, z64, z64)
    rows.append(case("chain_64", chain, x64, z64, 0.2, 1e-3, reps,
                     {"controller": pd_controller(hold, x64, 1e5, 2e3)}, reaction_calls=1))
    rrr = load_robot(os.path.join(ROBOTS, "planar_3rrr.urdf"), gravity=[0.0, -9.80665, 0.0])
    p0, z3 = rrr.task_pose(np.zeros(3)), np.zeros(3)
    hold = rrr.inverse_dynamics(p0, z3, z3)
    rows.append(case("planar_3rrr", rrr, p0, z3, 0.05 if quick else 0.1, 1e-3, 1,
                     {"efforts": hold * 1.02 + 0.01}, reaction_calls=3))
    track = tracking(crane, reps)
    print(f"{'robot':18s} {'dt':>5s} {'RK4 steps/s':>12s} {'RK4 RTF':>8s} {'FD evals/s':>11s} "
          f"{'FD us':>8s} {'adaptive RTF':>12s} {'evals':>6s} {'|dx| rk4-adapt':>15s} {'reactions us':>13s}")
    for r in rows:
        print(f"{r['robot']:18s} {r['dt_ms']:4.1f}ms {r['rk4_steps_per_s']:12.0f} {r['rk4_real_time_factor']:8.2f} "
              f"{r['evaluations_per_s']:11.0f} {r['forward_dynamics_us']:8.1f} {r['adaptive_real_time_factor']:12.2f} "
              f"{r['adaptive_evaluations']:6d} {r['rk4_vs_adaptive_max_dx']:15.2g} {r['joint_reactions_us']:13.0f}")
    print(f"crane driven by the inverse dynamics of a 2 s motion (RK4, 1 ms): max |x - x_ref| = "
          f"{track['max_tracking_error']:.2g}, real-time factor {track['real_time_factor']:.1f}")
    out = {"machine": machine(), "simulation": rows, "tracking": track}
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "bench_simulation.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
