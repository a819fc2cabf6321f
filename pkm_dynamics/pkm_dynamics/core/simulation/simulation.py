"""``simulate``: the forward dynamics integrated in the robot's own minimal coordinates (actuator
positions and velocities of a module chain, task coordinates and task twist of a PKM: the loops
are closed exactly at every state, there is nothing to drift; see :mod:`.reference`).

Efforts (``n_act`` each):

* ``efforts``: None (zero), a constant (n_act,), a **schedule** (N, n_act) on the output grid
  ``t = 0, dt, ..., k dt`` (N = k + 1 samples), linear between its samples (RK4's midpoint
  stages take the mean of the two neighbours; the semi-implicit method reads the sample at the
  step's start), or a Python function of time ``f(t)``;
* ``controller(t, x, xd)``: state feedback, called at every evaluation of the dynamics; a
  numba ``@njit`` function (returning a float array (n_act,)) runs inside the compiled
  integrator, a Python function through the Python route.

Integrators (fixed step ``dt``): ``"rk4"`` (classical Runge-Kutta, four evaluations per step),
``"semi_implicit"`` (semi-implicit Euler: ``xd += h xdd(x, xd)``, then ``x += h xdot(x, xd)``,
one evaluation per step, first order; symplectic only in canonical coordinates, so the energy
error of a robot whose mass matrix depends on ``x`` still grows along a run, at O(h)); and
``"adaptive"`` (scipy's ``solve_ivp``, DOP853 under ``rtol``/``atol``, sampled on the grid).

Routes: a **module chain** (its compiled model ``robot.compiled``) with a constant, a schedule or
a compiled controller under ``"rk4"`` or ``"semi_implicit"`` runs the whole horizon in one
kernel call (:mod:`.chain_integrator`, :mod:`.simulation_kernels`: each evaluation calls the
compiled Algorithm 1 directly); every other case (a Python function of time or controller,
``"adaptive"``, every PKM: its evaluation solves the IK of the platform pose first, which is not
a kernel the integrator can call; and every chain of loops, :mod:`..loop_chain`) the Python
route (:mod:`.reference`) with the same arithmetic.  Both raise the same named errors.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba.core.dispatcher import Dispatcher

from ..errors import PkmDynamicsError, StateError
from ..module_chain.chain_model import ChainModel
from .chain_integrator import integrate_chain
from .reference import Dynamics, adaptive, check_efforts, rk4, semi_implicit

METHODS = ("rk4", "semi_implicit", "adaptive")


@dataclass(frozen=True)
class SimulationResult:
    """A simulated motion, N samples on the grid ``t = 0, dt, 2 dt, ..., k dt`` with ``k =
    round(duration / dt)``.

    ``t`` (N,) [s]; ``x`` (N, n): actuator positions (module chain) or task coordinates (PKM);
    ``xd`` (N, n): actuator velocities or the task twist ``V_t``; ``f`` (N, n_act): the efforts
    applied at each sample; ``pose`` (N, 4, 4): PKM platform poses (None for module chains);
    ``method``; ``evaluations``: forward-dynamics evaluations made; ``compiled``: whether the
    horizon ran in one kernel call."""

    t: np.ndarray
    x: np.ndarray
    xd: np.ndarray
    f: np.ndarray
    pose: np.ndarray | None
    method: str
    evaluations: int
    compiled: bool = False


def schedule_source(grid: np.ndarray, F: np.ndarray):
    """``f(t, x, xd)`` of the schedule ``F`` (N, n_act) on ``grid`` (N,), linear between samples:
    the Python route's reading of what :func:`.simulation_kernels.efforts_at` computes."""
    last = len(grid) - 2

    def source(t, x, xd):
        if last < 0:
            return F[0]
        k = min(max(int(np.searchsorted(grid, t, side="right")) - 1, 0), last)
        w = (t - grid[k]) / (grid[k + 1] - grid[k])
        return F[k] + w * (F[k + 1] - F[k])
    return source


def effort_source(robot, efforts, controller, grid: np.ndarray):
    """``(kind, value)`` of the effort arguments: ``("table", F)`` with ``F`` (1, n_act) a
    constant or (N, n_act) a schedule on ``grid`` (N,), checked here (the first non-finite
    sample named with its time); ``("compiled", controller)`` a numba controller; ``("python",
    source(t, x, xd))`` otherwise."""
    if efforts is not None and controller is not None:
        raise StateError("give either efforts (a function of time) or a controller, not both")
    if controller is not None:
        return ("compiled", controller) if isinstance(controller, Dispatcher) else ("python", controller)
    if callable(efforts):
        return "python", lambda t, x, xd: efforts(t)
    n_act = len(robot.actuated_joints)
    F = np.zeros(n_act) if efforts is None else np.asarray(efforts, dtype=float)
    if F.ndim == 2:
        if F.shape != (len(grid), n_act):
            raise StateError(f"the efforts schedule has shape {F.shape}, expected ({len(grid)}, {n_act}): one "
                             f"row per sample of the output grid 0, dt, ..., {grid[-1]:.6g} s")
        rows = [i for i in range(len(F)) if not np.isfinite(F[i]).all()]
        k = rows[0] if rows else 0
    else:
        F, k = F.reshape(1, -1) if F.ndim == 1 else F.reshape(1, *F.shape), 0
    try:
        check_efforts(robot, grid[k], F[k])
    except PkmDynamicsError as exc:
        raise type(exc)(f"simulation at t = {grid[k]:.6g} s: {exc}") from exc
    return "table", np.ascontiguousarray(F)


def check_arguments(robot, x0, xd0, duration, dt, method, parallel):
    """``(x0, xd0, grid)`` checked: the method, ``0 < dt <= duration`` finite, the initial state
    (a PKM's platform pose on its task manifold turned into task coordinates)."""
    if method not in METHODS:
        raise StateError(f"method '{method}' is not one of {', '.join(METHODS)}")
    if not (np.isfinite(duration) and duration > 0 and np.isfinite(dt) and 0 < dt <= duration):
        raise StateError(f"duration ({duration}) and dt ({dt}) must be finite with 0 < dt <= duration")
    x0 = np.asarray(x0, dtype=float)
    if parallel and x0.shape == (4, 4):
        pose, x0 = x0, robot.task_coordinates(x0)
        off = np.abs(robot.task_pose(x0) - pose).max()
        if not off <= 1e-9:
            raise StateError(f"x0: the platform pose is off the task manifold of robot "
                             f"'{robot.description.name}' ({' '.join(robot.task_space)}) by {off:.3g}")
    n = robot.dof if parallel else robot.n
    xd0 = np.asarray(xd0, dtype=float)
    if x0.shape != (n,) or xd0.shape != (n,) or not (np.isfinite(x0).all() and np.isfinite(xd0).all()):
        raise StateError(f"x0 and xd0 must be {n} finite values each, got shapes {x0.shape}, {xd0.shape}")
    steps = max(1, int(round(duration / dt)))
    return x0, xd0, np.linspace(0.0, steps * dt, steps + 1)


def simulate(robot, x0, xd0, duration: float, efforts=None, controller=None, dt: float = 1e-3,
             method: str = "rk4", rtol: float = 1e-9, atol: float = 1e-12, wrench=None,
             initial=None) -> SimulationResult:
    """Simulate ``robot`` for ``duration`` seconds from ``(x0, xd0)`` (module docstring).

    ``x0``: actuator positions (n_act,) of a module chain; for a PKM task coordinates (delta,)
    or a platform pose (4, 4) on the task manifold.  ``xd0``: actuator velocities or ``V_t``.
    ``efforts``: None (zero), a constant (n_act,), a schedule (N, n_act) on the output grid, or
    ``f(t)`` -> (n_act,); ``controller``: ``(t, x, xd)`` -> (n_act,) instead (Python or numba
    ``@njit``).  ``dt``: the step and the output grid; ``method``: ``"rk4"``,
    ``"semi_implicit"`` or ``"adaptive"``; ``rtol``, ``atol``: the adaptive integrator's
    tolerances.  ``wrench`` (6,): a constant external wrench on the end effector / platform (its
    frame).  ``initial``: PKM IK start (working mode), as ``inverse_kinematics``."""
    parallel = robot.description.platform is not None
    x0, xd0, t = check_arguments(robot, x0, xd0, duration, dt, method, parallel)
    n = len(x0)
    kind, source = effort_source(robot, efforts, controller, t)
    if isinstance(getattr(robot, "compiled", None), ChainModel) and kind != "python" and method != "adaptive":
        F = source if kind == "table" else np.zeros((1, n))
        X, XD, FO = integrate_chain(robot, x0, xd0, t, F, source if kind == "compiled" else None, wrench,
                                    method == "semi_implicit")
        evaluations = (4 if method == "rk4" else 1) * (len(t) - 1) + 1
        return SimulationResult(t, X, XD, FO, None, method, evaluations, True)
    if kind == "table":
        table = source
        source = schedule_source(t, table) if len(table) > 1 else (lambda ti, x, xd: table[0])
    dyn = Dynamics(robot, source, wrench, initial)
    y0 = np.concatenate([x0, xd0])
    if method == "adaptive":
        Y, F = adaptive(dyn, y0, t, rtol, atol)
    else:
        Y, F = (rk4 if method == "rk4" else semi_implicit)(dyn, y0, t)
    pose = np.stack([robot.task_pose(xi) for xi in Y[:, :n]]) if parallel else None
    return SimulationResult(t, Y[:, :n].copy(), Y[:, n:].copy(), F, pose, method, dyn.evaluations)
