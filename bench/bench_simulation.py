"""Benchmark of the simulation (``robot.simulate``, core/simulation/) against a Pinocchio loop.

The 4-DoF crane (heavy_duty_4dof, the HIAB XS 031 of paper 000), RK4 at a 1 ms step: microseconds
per step of the public ``simulate`` call with the efforts

* a constant (RK4 and the semi-implicit Euler method), a schedule on the output grid, a numba
  ``@njit`` PD controller (each: the compiled route, the whole horizon in one kernel call);
* a Python ``controller`` (the Python route: four ``forward_dynamics`` calls from Python per step);

timed interleaved (one call of each per repeat, medians) with a plain Python RK4 loop over
Pinocchio's ``constraintDynamics`` (the URDF spanning tree, one CONTACT_3D constraint per cut
joint at the cut points, ``ProximalSettings(1e-10, 1e-12, 3)``: ``PinocchioPeer`` of
``bench_module_chain.py``; the configuration integrated with ``pin.integrate``) under the same
constant efforts, and the FD kernel alone (``chain_dynamics_one``, called from compiled code and
from Python; it takes the views of the chain's flat buffers at every call, which the integrator
takes once per horizon, so four of them are a little above an RK4 step's cost).

Loop closure along a 10 s run under the same PD controller (compiled for ours, its Python body
for the Pinocchio loop), from the same initial state: the distance between the two cut points of
every loop (the CONTACT_3D residual), computed for both by Pinocchio's forward kinematics of the
tree configuration (ours: ``robot.tree_state`` of each sample), largest over the loops, every
10 ms; and the largest difference of the actuator positions of the two runs.

    python bench/bench_simulation.py [--quick]

Table on stdout, the same figures as JSON in ``bench/results/bench_simulation.json``.
"""
from __future__ import annotations

import json
import os
import sys
import time

import numba
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "pkm_dynamics"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_module_chain import PinocchioPeer  # noqa: E402
from common import machine  # noqa: E402
from pkm_dynamics.core.module_chain import chain_kernels  # noqa: E402
from pkm_dynamics.core.robot import load_robot  # noqa: E402

ROBOTS = os.path.join(ROOT, "pkm_dynamics", "robots")
X0 = np.array([0.3, 0.3, 0.3, 0.55])                 # mid-stroke
XD0 = np.array([0.3, 0.0, 0.0, 0.0])                 # the slew turning
GAINS = np.array([2e4, 4e5, 2e5, 1e5])
HOLD = np.zeros(4)                                   # set in main (the holding efforts at X0)


@numba.njit
def pd(t, x, xd):
    """Holding efforts plus a PD law around a slow sinusoid about X0."""
    return HOLD + GAINS * (X0 + 0.02 * np.sin(2.0 * t) - x) - 0.1 * GAINS * xd


class PinocchioLoop:
    """A plain Python RK4 over ``pin.constraintDynamics`` of the crane (``PinocchioPeer``)."""

    def __init__(self, robot):
        self.peer = PinocchioPeer(robot)
        self.robot = robot
        m = self.peer.model
        self.act = [m.joints[m.getJointId(n)] for n in robot.actuated_joints]
        self.act_v = np.array([j.idx_v for j in self.act])

    def initial(self, x, xd):
        Q, QD, _ = self.robot.tree_state(x, xd)
        q, v, _ = self.peer.state(Q, QD, np.zeros(len(x)))
        return q, v

    def actuators(self, q, v):
        x = np.array([np.arctan2(q[j.idx_q + 1], q[j.idx_q]) if j.nq == 2 else q[j.idx_q] for j in self.act])
        return x, v[self.act_v]

    def tau(self, u):
        tau = np.zeros(self.peer.model.nv)
        tau[self.act_v] = u
        return tau

    def run(self, q, v, steps, dt, control=None, u=None):
        """RK4 with the efforts ``u`` (constant) or ``control(t, x, xd)``; returns the (q, v) of every step."""
        pin, m, fd = self.peer.pin, self.peer.model, self.peer.forward_dynamics
        tau = None if u is None else self.tau(u)
        out = [(q, v)]

        def f(t, q, v):
            if control is None:
                return fd(q, v, tau).copy()
            return fd(q, v, self.tau(control(t, *self.actuators(q, v)))).copy()
        for i in range(steps):
            t, h = i * dt, dt
            a1 = f(t, q, v)
            q2, v2 = pin.integrate(m, q, 0.5 * h * v), v + 0.5 * h * a1
            a2 = f(t + 0.5 * h, q2, v2)
            q3, v3 = pin.integrate(m, q, 0.5 * h * v2), v + 0.5 * h * a2
            a3 = f(t + 0.5 * h, q3, v3)
            q4, v4 = pin.integrate(m, q, h * v3), v + h * a3
            a4 = f(t + h, q4, v4)
            q = pin.integrate(m, q, (h / 6.0) * (v + 2.0 * v2 + 2.0 * v3 + v4))
            v = v + (h / 6.0) * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
            out.append((q, v))
        return out

    def residual(self, q):
        """Largest distance between the two cut points of a loop (CONTACT_3D residual) at ``q``."""
        pin, m, d = self.peer.pin, self.peer.model, self.peer.data
        pin.forwardKinematics(m, d, q)
        return max(float(np.linalg.norm((d.oMi[c.joint1_id] * c.joint1_placement).translation
                                        - (d.oMi[c.joint2_id] * c.joint2_placement).translation))
                   for c in self.peer.cmodels)


def per_step_us(calls: dict, reps: int) -> dict:
    """Median microseconds per step of each ``name: (fn, steps)``, one call of each per repeat."""
    for fn, _ in calls.values():
        fn()
    times = {k: [] for k in calls}
    for _ in range(reps):
        for name, (fn, steps) in calls.items():
            t = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t) / steps * 1e6)
    return {k: float(np.median(v)) for k, v in times.items()}


@numba.njit(error_model="numpy")
def fd_loop(calls, model, data, x, xd, f, fe, out, status):
    """``calls`` FD kernel calls from compiled code (what an integrator step pays per evaluation)."""
    for _ in range(calls):
        chain_kernels.chain_dynamics_one(False, model, data, x, xd, f, fe, out, status)


def fd_kernel_us(robot, reps: int, inner: int = 2000) -> dict:
    """The FD kernel alone, prepared arrays: called from Python (``chain_dynamics_one``'s entry
    point) and from compiled code (:func:`fd_loop`), microseconds per call (medians)."""
    m, d = robot.compiled, robot.compiled.data()
    K = chain_kernels.chain_dynamics_one
    run = K.overloads[K.signatures[0]].entry_point
    out = np.empty(robot.n)
    args = (False, m.flat, d.flat, X0, XD0, HOLD, d.no_wrench, out, d.status)
    fd_loop(1, *args[1:])                            # compiled here (not cached: the bench's own)
    times, inside = [], []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(inner):
            run(*args)
        times.append((time.perf_counter() - t) / inner * 1e6)
        t = time.perf_counter()
        fd_loop(inner, *args[1:])
        inside.append((time.perf_counter() - t) / inner * 1e6)
    return {"from_python": float(np.median(times)), "from_compiled_code": float(np.median(inside))}


def timings(robot, loop, quick: bool) -> dict:
    H, h = (0.2 if quick else 0.5), 1e-3
    n = int(round(H / h))
    sched = HOLD + np.outer(np.sin(np.linspace(0.0, H, n + 1)), [10.0, 100.0, 100.0, 50.0])
    ps = int(round(0.1 / h))                         # the Python routes: 100 steps a call
    q0, v0 = loop.initial(X0, XD0)
    calls = {
        "compiled_rk4_constant": (lambda: robot.simulate(X0, XD0, H, efforts=HOLD), n),
        "compiled_semi_implicit_constant": (lambda: robot.simulate(X0, XD0, H, efforts=HOLD,
                                                                   method="semi_implicit"), n),
        "compiled_rk4_schedule": (lambda: robot.simulate(X0, XD0, H, efforts=sched), n),
        "compiled_rk4_njit_controller": (lambda: robot.simulate(X0, XD0, H, controller=pd), n),
        "python_rk4_controller": (lambda: robot.simulate(X0, XD0, 0.1, controller=lambda t, x, xd: HOLD), ps),
        "pinocchio_rk4_constant": (lambda: loop.run(q0, v0, ps, h, u=HOLD), ps),
    }
    out = per_step_us(calls, 3 if quick else 7)
    out["fd_kernel_us"] = fd_kernel_us(robot, 3 if quick else 7)
    pin_step = out["pinocchio_rk4_constant"]
    out["ratios"] = {k: out[k] / pin_step for k in calls if k != "pinocchio_rk4_constant"}
    out["compiled_rk4_constant_over_python_route"] = out["compiled_rk4_constant"] / out["python_rk4_controller"]
    out["compiled_rk4_constant_over_4_fd_kernels"] = (out["compiled_rk4_constant"]
                                                      / (4 * out["fd_kernel_us"]["from_compiled_code"]))
    return out


def residuals(robot, loop, quick: bool) -> dict:
    """Loop residuals along the run (every 10 ms) and the largest actuator difference."""
    T, h = (2.0 if quick else 10.0), 1e-3
    ours = robot.simulate(X0, XD0, T, controller=pd)
    q0, v0 = loop.initial(X0, XD0)
    theirs = loop.run(q0, v0, len(ours.t) - 1, h, control=pd.py_func)
    every = 10
    ours_r = [loop.residual(loop.peer.state(robot.tree_state(x)[0], np.zeros(len(robot.tree_joints)),
                                            np.zeros(4))[0]) for x in ours.x[::every]]
    pin_r = [loop.residual(q) for q, _ in theirs[::every]]
    pin_x = np.array([loop.actuators(q, v)[0] for q, v in theirs[::every]])
    return {"duration_s": T, "dt_ms": 1.0, "samples": len(ours_r),
            "ours_max_residual_m": max(ours_r), "ours_final_residual_m": ours_r[-1],
            "pinocchio_max_residual_m": max(pin_r), "pinocchio_final_residual_m": pin_r[-1],
            "pinocchio_residual_at_1s_m": pin_r[min(len(pin_r) - 1, 100)],
            "max_abs_dx_ours_vs_pinocchio": float(np.abs(pin_x - ours.x[::every]).max()),
            "motion_range": np.ptp(ours.x, axis=0).tolist()}


def main():
    quick = "--quick" in sys.argv
    robot = load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))
    HOLD[:] = robot.inverse_dynamics(X0, np.zeros(4), np.zeros(4))
    loop = PinocchioLoop(robot)
    tim = timings(robot, loop, quick)
    res = residuals(robot, loop, quick)
    print("crane (heavy_duty_4dof), RK4 at 1 ms: microseconds per step (medians, interleaved)")
    print(f"{'route':36s} {'us/step':>9s} {'/ Pinocchio loop':>17s}")
    for k, r in tim["ratios"].items():
        print(f"{k:36s} {tim[k]:9.2f} {r:17.3f}")
    print(f"{'pinocchio_rk4_constant':36s} {tim['pinocchio_rk4_constant']:9.2f} {1.0:17.3f}")
    fdk = tim["fd_kernel_us"]
    print(f"FD kernel alone: {fdk['from_compiled_code']:.2f} us from compiled code, {fdk['from_python']:.2f} us "
          f"from Python; compiled RK4 step / (4 FD kernels) = {tim['compiled_rk4_constant_over_4_fd_kernels']:.2f}; "
          f"compiled RK4 / Python route = {tim['compiled_rk4_constant_over_python_route']:.3f}")
    print(f"loop closure over {res['duration_s']:.0f} s (PD controller, every 10 ms): ours max "
          f"{res['ours_max_residual_m']:.2e} m, Pinocchio max {res['pinocchio_max_residual_m']:.2e} m "
          f"(at 1 s {res['pinocchio_residual_at_1s_m']:.2e} m, final {res['pinocchio_final_residual_m']:.2e} m); "
          f"max |x_ours - x_pin| = {res['max_abs_dx_ours_vs_pinocchio']:.2e}")
    out = {"benchmark": "bench_simulation", "machine": machine(), "timings_us_per_step": tim, "loop_closure": res}
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "bench_simulation.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
