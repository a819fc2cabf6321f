"""The Python route of the simulation (:mod:`.simulation`): the integrators as Python loops over
the robot's public ``forward_dynamics``, for every robot kind and every effort source, among
them the ``controller(t, x, xd)`` callback in Python: :class:`Dynamics` (the first-order system and
its effort source), :func:`rk4`, :func:`semi_implicit`, :func:`adaptive`.  For module chains it
is also the independent check of the compiled integrators (:mod:`.simulation_kernels`), which do
the same arithmetic in the same order.

* **Module chains** (paper 000): the state is ``(x, xd)``, actuator positions and velocities
  (n_act,); ``xdd`` is Algorithm 1 (``robot.forward_dynamics``, compiled).
* **PKMs** (paper 001): the state is ``(x, V_t)``, task coordinates ``x`` (delta,) — the platform
  pose ``C = C_ref exp(P_p x)`` (``robot.task_pose``) — and the task twist ``V_t``; ``Vdot_t`` is
  eq. 39 (``robot.forward_dynamics``) at the IK solution of ``C``, which starts from the previous
  evaluation's solution (the warm start is carried along, so the robot stays on the working
  mode it started on).  The coordinates follow the body-fixed twist by
  ``dexp_{-P_p x} P_p xdot = P_p V_t`` (:func:`task_coordinate_rates`).

A state beyond a stroke, at a singularity or with a non-finite effort ends the simulation with
the robot's named error (:class:`StateError`, :class:`SingularityError`, naming the joint,
module or limb) prefixed by the simulation time.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError, PkmDynamicsError, StateError
from ..spatial.se3 import dexp


def task_coordinate_rates(P_p: np.ndarray, x, V_t) -> np.ndarray:
    """``xdot`` (delta,) of the task coordinates ``x`` of ``C = C_ref exp(P_p x)`` moving with
    the body-fixed task twist ``V_t`` (delta,): ``dexp_{-P_p x} P_p xdot = P_p V_t`` (P_p (6,
    delta) selects the task components; a least-squares solve, exact when they span a
    subalgebra, as the motions of a platform do)."""
    A = dexp(-(P_p @ x)) @ P_p
    return np.linalg.lstsq(A, P_p @ V_t, rcond=None)[0]


def check_efforts(robot, t, f) -> np.ndarray:
    """``f`` as ``n_act`` finite floats, else :class:`StateError` naming the time and the actuators."""
    f = np.asarray(f, dtype=float)
    n_act = len(robot.actuated_joints)
    if f.shape != (n_act,) or not np.isfinite(f).all():
        raise StateError(f"the efforts at t = {t:.6g} s must be {n_act} finite values "
                         f"({', '.join(robot.actuated_joints)}), got {f.tolist()}")
    return f


class Dynamics:
    """The first-order system ``y' = (xdot, xdd)`` of one robot driven by ``source(t, x, xd)``
    (n_act,) under a constant end-effector / platform ``wrench``; ``initial``: the PKM IK start."""

    def __init__(self, robot, source, wrench, initial):
        self.robot = robot
        self.parallel = robot.description.platform is not None
        self.n_act = len(robot.actuated_joints)
        self.source = source
        self.wrench = wrench
        self.warm = initial
        self.evaluations = 0

    def efforts(self, t, x, xd) -> np.ndarray:
        return check_efforts(self.robot, t, self.source(t, x, xd))

    def rates(self, x, xd) -> np.ndarray:
        """``xdot`` (n,): ``xd`` for a module chain, :func:`task_coordinate_rates` for a PKM."""
        return task_coordinate_rates(self.robot.P_p, x, xd) if self.parallel else xd

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
            else:
                xdd = self.robot.forward_dynamics(x, xd, f, wrench=self.wrench)
        except PkmDynamicsError as exc:
            raise type(exc)(f"simulation at t = {t:.6g} s: {exc}") from exc
        return np.concatenate([self.rates(x, xd), xdd]), f


def rk4(dyn: Dynamics, y0: np.ndarray, t: np.ndarray):
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


def semi_implicit(dyn: Dynamics, y0: np.ndarray, t: np.ndarray):
    """Semi-implicit Euler on the grid ``t`` (N,): ``xd' = xd + h xdd(x, xd)``, then
    ``x' = x + h xdot(x, xd')`` (one evaluation per step, first order; the symplectic Euler
    method in canonical coordinates, not in the velocities of a configuration-dependent mass
    matrix: the energy error of the crane grows along a run, at O(h)); states (N, 2n) and
    efforts (N, n_act)."""
    Y = np.empty((len(t), len(y0)))
    F = np.empty((len(t), dyn.n_act))
    n = len(y0) // 2
    Y[0] = y0
    for i in range(len(t) - 1):
        h = t[i + 1] - t[i]
        k, F[i] = dyn(t[i], Y[i])
        Y[i + 1, n:] = Y[i, n:] + h * k[n:]
        Y[i + 1, :n] = Y[i, :n] + h * dyn.rates(Y[i, :n], Y[i + 1, n:])
    F[-1] = dyn(t[-1], Y[-1])[1]
    return Y, F


def adaptive(dyn: Dynamics, y0: np.ndarray, t: np.ndarray, rtol: float, atol: float):
    """scipy's ``solve_ivp`` (DOP853, error control ``rtol``, ``atol``) sampled on ``t``."""
    from scipy.integrate import solve_ivp       # imported here: it takes ~0.5 s, RK4 needs none
    out = solve_ivp(lambda ti, y: dyn(ti, y)[0], (t[0], t[-1]), y0, method="DOP853", t_eval=t,
                    rtol=rtol, atol=atol)
    if not out.success:
        raise ConvergenceError(f"the adaptive integrator stopped at t = {out.t[-1]:.6g} s: {out.message}")
    Y = out.y.T
    F = np.array([dyn(ti, y)[1] for ti, y in zip(t, Y)])
    return Y, F
