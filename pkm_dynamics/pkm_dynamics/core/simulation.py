"""Simulation: the forward dynamics integrated in the robot's own minimal coordinates.

* **Module chains** (paper 000): the state is ``(x, xd)``, actuator positions and velocities
  (n_act,); ``xdd`` is Algorithm 1 (``robot.forward_dynamics``, compiled).
* **PKMs** (paper 001): the state is ``(x, V_t)``, task coordinates ``x`` (delta,) — the platform
  pose ``C = C_ref exp(P_p x)`` (``robot.task_pose``) — and the task twist ``V_t``; ``Vdot_t`` is
  eq. 39 (``robot.forward_dynamics``) at the IK solution of ``C``, which starts from the previous
  evaluation's solution (the warm start is carried along, so the robot stays on the working
  mode it started on).  The coordinates follow the body-fixed twist by
  ``dexp_{-P_p x} P_p xdot = P_p V_t`` (:func:`task_coordinate_rates`).

Efforts come from ``efforts`` — a function of time ``f(t)`` (n_act,) or a constant array — or
from a ``controller(t, x, xd)`` (state feedback, called at every evaluation of the dynamics).

Integrators: ``method="rk4"`` (classical Runge-Kutta, fixed step ``dt``: four evaluations per
step, fast enough for real time on module chains, see ``bench/bench_simulation.py``) and
``method="adaptive"`` (scipy's ``solve_ivp`` with DOP853 and ``rtol``/``atol``; its output is
sampled on the same grid of step ``dt``).

A state beyond a stroke, at a singularity or with a non-finite effort ends the simulation with
the robot's named error (:class:`StateError`, :class:`SingularityError`, naming the joint,
module or limb) prefixed by the simulation time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ConvergenceError, PkmDynamicsError, StateError
from .spatial.se3 import dexp

METHODS = ("rk4", "adaptive")


@dataclass(frozen=True)
class SimulationResult:
    """A simulated motion, N samples on the grid ``t = 0, dt, 2 dt, ..., k dt`` with ``k =
    round(duration / dt)``.

    ``t`` (N,) [s]; ``x`` (N, n): actuator positions (module chain) or task coordinates (PKM);
    ``xd`` (N, n): actuator velocities or the task twist ``V_t``; ``f`` (N, n_act): the efforts
    applied at each sample; ``pose`` (N, 4, 4): PKM platform poses (None for module chains);
    ``method``; ``evaluations``: forward-dynamics evaluations made."""

    t: np.ndarray
    x: np.ndarray
    xd: np.ndarray
    f: np.ndarray
    pose: np.ndarray | None
    method: str
    evaluations: int


def task_coordinate_rates(P_p: np.ndarray, x, V_t) -> np.ndarray:
    """``xdot`` (delta,) of the task coordinates ``x`` of ``C = C_ref exp(P_p x)`` moving with
    the body-fixed task twist ``V_t`` (delta,): ``dexp_{-P_p x} P_p xdot = P_p V_t`` (P_p (6,
    delta) selects the task components; a least-squares solve, exact when they span a
    subalgebra, as the motions of a platform do)."""
    A = dexp(-(P_p @ x)) @ P_p
    return np.linalg.lstsq(A, P_p @ V_t, rcond=None)[0]


class _Dynamics:
    """The first-order system ``y' = (xd, xdd)`` of one robot with its effort source."""

    def __init__(self, robot, efforts, controller, wrench, initial):
        if efforts is not None and controller is not None:
            raise StateError("give either efforts (a function of time) or a controller, not both")
        self.robot = robot
        self.parallel = getattr(robot.description, "platform", None) is not None
        self.n_act = len(robot.actuated_joints)
        if controller is not None:
            self.source = controller
        elif callable(efforts):
            self.source = lambda t, x, xd: efforts(t)
        else:
            const = np.zeros(self.n_act) if efforts is None else np.asarray(efforts, dtype=float)
            self.source = lambda t, x, xd: const
        self.wrench = wrench
        self.warm = initial
        self.evaluations = 0

    def efforts(self, t, x, xd) -> np.ndarray:
        f = np.asarray(self.source(t, x, xd), dtype=float)
        if f.shape != (self.n_act,) or not np.isfinite(f).all():
            raise StateError(f"the efforts at t = {t:.6g} s must be {self.n_act} finite values "
                             f"({', '.join(self.robot.actuated_joints)}), got {f.tolist()}")
        return f

    def __call__(self, t, y):
        """``(y', f)`` at time ``t``; a core error is re-raised with the time in its message."""
        n = len(y) // 2
        x, xd = y[:n], y[n:]
        try:
            f = self.efforts(t, x, xd)
            self.evaluations += 1
            if self.parallel:
                robot = self.robot
                sol = robot.inverse_kinematics(robot.task_pose(x), initial=self.warm)
                xdd = robot.forward_dynamics(sol, xd, f, wrench=self.wrench)
                self.warm = sol
                rate = task_coordinate_rates(robot.P_p, x, xd)
            else:
                xdd = self.robot.forward_dynamics(x, xd, f, wrench=self.wrench)
                rate = xd
        except PkmDynamicsError as exc:
            raise type(exc)(f"simulation at t = {t:.6g} s: {exc}") from exc
        return np.concatenate([rate, xdd]), f


def rk4(dyn: _Dynamics, y0: np.ndarray, t: np.ndarray):
    """Classical Runge-Kutta on the grid ``t`` (N,): states (N, 2n) and efforts (N, n_act)."""
    Y = np.empty((len(t), len(y0)))
    F = np.empty((len(t), dyn.n_act))
    y = Y[0] = y0
    for i in range(len(t) - 1):
        h, ti = t[i + 1] - t[i], t[i]
        k1, F[i] = dyn(ti, y)
        k2 = dyn(ti + 0.5 * h, y + 0.5 * h * k1)[0]
        k3 = dyn(ti + 0.5 * h, y + 0.5 * h * k2)[0]
        k4 = dyn(ti + h, y + h * k3)[0]
        y = Y[i + 1] = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    F[-1] = dyn(t[-1], y)[1]                 # the efforts at, and the checks of, the last state
    return Y, F


def adaptive(dyn: _Dynamics, y0: np.ndarray, t: np.ndarray, rtol: float, atol: float):
    """scipy's ``solve_ivp`` (DOP853, error control ``rtol``, ``atol``) sampled on ``t``."""
    from scipy.integrate import solve_ivp       # imported here: it takes ~0.5 s, RK4 needs none
    out = solve_ivp(lambda ti, y: dyn(ti, y)[0], (t[0], t[-1]), y0, method="DOP853", t_eval=t,
                    rtol=rtol, atol=atol)
    if not out.success:
        raise ConvergenceError(f"the adaptive integrator stopped at t = {out.t[-1]:.6g} s: {out.message}")
    Y = out.y.T
    F = np.array([dyn(ti, y)[1] for ti, y in zip(t, Y)])
    return Y, F


def simulate(robot, x0, xd0, duration: float, efforts=None, controller=None, dt: float = 1e-3,
             method: str = "rk4", rtol: float = 1e-9, atol: float = 1e-12, wrench=None,
             initial=None) -> SimulationResult:
    """Simulate ``robot`` for ``duration`` seconds from ``(x0, xd0)`` (module docstring).

    ``x0``: actuator positions (n_act,) of a module chain; for a PKM task coordinates (delta,)
    or a platform pose (4, 4) on the task manifold.  ``xd0``: actuator velocities or ``V_t``.
    ``efforts``: ``f(t)`` -> (n_act,), a constant (n_act,) or None (zero); ``controller``:
    ``(t, x, xd)`` -> (n_act,) instead.  ``dt``: the RK4 step and the output grid; ``rtol``,
    ``atol``: the adaptive integrator's tolerances.  ``wrench`` (6,): a constant external
    wrench on the end effector / platform (its frame).  ``initial``: PKM IK start (working
    mode), as ``inverse_kinematics``."""
    if method not in METHODS:
        raise StateError(f"method '{method}' is not one of {', '.join(METHODS)}")
    if not (np.isfinite(duration) and duration > 0 and np.isfinite(dt) and 0 < dt <= duration):
        raise StateError(f"duration ({duration}) and dt ({dt}) must be finite with 0 < dt <= duration")
    dyn = _Dynamics(robot, efforts, controller, wrench, initial)
    x0 = np.asarray(x0, dtype=float)
    if dyn.parallel and x0.shape == (4, 4):
        pose, x0 = x0, robot.task_coordinates(x0)
        off = np.abs(robot.task_pose(x0) - pose).max()
        if not off <= 1e-9:
            raise StateError(f"x0: the platform pose is off the task manifold of robot "
                             f"'{robot.description.name}' ({' '.join(robot.task_space)}) by {off:.3g}")
    n = robot.dof if dyn.parallel else robot.n
    xd0 = np.asarray(xd0, dtype=float)
    if x0.shape != (n,) or xd0.shape != (n,) or not (np.isfinite(x0).all() and np.isfinite(xd0).all()):
        raise StateError(f"x0 and xd0 must be {n} finite values each, got shapes {x0.shape}, {xd0.shape}")
    steps = max(1, int(round(duration / dt)))
    t = np.linspace(0.0, steps * dt, steps + 1)
    y0 = np.concatenate([x0, xd0])
    Y, F = rk4(dyn, y0, t) if method == "rk4" else adaptive(dyn, y0, t, rtol, atol)
    pose = np.stack([robot.task_pose(xi) for xi in Y[:, :n]]) if dyn.parallel else None
    return SimulationResult(t, Y[:, :n].copy(), Y[:, n:].copy(), F, pose, method, dyn.evaluations)
