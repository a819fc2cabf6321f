"""Workspace and singularity maps of parallel robots over a grid of platform poses: where the
inverse kinematics succeeds on the working mode of the reference configuration, the condition
numbers ``kappa(J_IK)`` (paper 001 eq. 30) and the worst loop ``kappa(G_y)`` (eq. 18, Remarks
2-3), the static actuator forces under a platform wrench and the largest eigenvalue of the
reflected mass ``M_t`` (eq. 40).

**Poses.**  A grid point holds the platform's displacement ``(x, y, z)`` (m) along the axes of
the reference platform frame and its rotation ``(roll, pitch, yaw)`` (rad) about them
(``R = Rz(yaw) Ry(pitch) Rx(roll)``): pose ``(R_ref R, p_ref + R_ref d)``.  Only the
coordinates of the robot's task space may vary (a planar robot's grid lies in its plane).

**Continuation.**  The points of a chunk are visited in the grid's serpentine order
(:mod:`.grids`), each inverse kinematics warm-started from the last solved point of the chunk
(cheaper than a cold start: fewer iterations, and the solution stays on the working mode it
continues); where that fails the point is solved once more from the reference configuration
before it counts as out of reach.  Every chunk starts from the reference configuration, so its
numbers do not depend on the other chunks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import PkmDynamicsError
from ..core.limb.ik_refinement import loop_conditions

#: the coordinates of a grid point and the task-space component each one moves
POSE_AXES = {"x": "vx", "y": "vy", "z": "vz", "roll": "wx", "pitch": "wy", "yaw": "wz"}
#: the quantities of a workspace map, their units and meaning
WORKSPACE_FIELDS = {
    "reachable": ("1", "inverse kinematics solved on the reference working mode"),
    "kappa_J": ("1", "condition number of J_IK (eq. 30); inf where singular"),
    "kappa_G": ("1", "largest condition number of a loop's G_y (eq. 18); 1 without loops"),
    "mass_max": ("kg or kg m^2", "largest eigenvalue of the reflected mass M_t (eq. 40)"),
    "iterations": ("1", "inverse kinematics iterations summed over the limbs"),
}


@dataclass(frozen=True)
class WorkspaceSetup:
    """What every chunk of a workspace map needs: the grid ``axes`` ({name: (k,)}, names of
    :data:`POSE_AXES`, m / rad), the platform ``wrench`` (6,) (moment, force; body-fixed, N m /
    N) of the force map."""

    axes: dict
    wrench: np.ndarray

    @property
    def shape(self) -> tuple:
        return tuple(len(v) for v in self.axes.values())


@dataclass
class WorkspacePart:
    """The map of one chunk, per point in the chunk's order: ``order`` (B,) the flat grid index,
    ``reachable`` (B,), ``kappa_J``, ``kappa_G``, ``mass_max``, ``iterations`` (B,), ``forces``
    (B, n_act) (N, N m; NaN out of reach)."""

    order: np.ndarray
    reachable: np.ndarray
    kappa_J: np.ndarray
    kappa_G: np.ndarray
    mass_max: np.ndarray
    iterations: np.ndarray
    forces: np.ndarray


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """``Rz(yaw) Ry(pitch) Rx(roll)`` (3, 3)."""
    cr, sr, cp, sp, cy, sy = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def grid_pose(robot, coords: dict) -> np.ndarray:
    """The platform pose (4, 4) of the grid point ``coords`` ({name: value}, names of
    :data:`POSE_AXES`; missing ones 0) about ``robot.reference_pose`` (module docstring)."""
    C = np.array(robot.reference_pose, dtype=float)
    d = np.array([coords.get(k, 0.0) for k in ("x", "y", "z")])
    R = rpy_matrix(*(coords.get(k, 0.0) for k in ("roll", "pitch", "yaw")))
    out = C.copy()
    out[:3, :3] = C[:3, :3] @ R
    out[:3, 3] = C[:3, 3] + C[:3, :3] @ d
    return out


def check_axes(robot, axes: dict) -> None:
    """Raise ``GridError`` for an axis that is no pose coordinate or moves a component outside
    the robot's task space (a value other than 0 there)."""
    from .grids import GridError
    for name, values in axes.items():
        if name not in POSE_AXES:
            raise GridError(f"axis '{name}' is not a pose coordinate ({', '.join(POSE_AXES)})")
        if POSE_AXES[name] not in robot.task_space and np.any(np.asarray(values) != 0):
            raise GridError(f"axis '{name}' moves {POSE_AXES[name]}, which is not in the task space of "
                            f"'{robot.name}' ({' '.join(robot.task_space)})")


def worst_loop_condition(robot, sol) -> float:
    """The largest ``kappa(G_y)`` over every loop of every limb at the one-pose IK solution
    ``sol`` (1 for a robot without intra-limb loops)."""
    worst = 1.0
    for l, limb in enumerate(robot.limbs):
        if limb.loops:                           # the state of a limb is built when read
            worst = max(worst, float(loop_conditions(limb, sol.limb_states[l]).max()))
    return worst


def solve_point(robot, pose, warm):
    """The IK solution of ``pose`` at rest (task twist and acceleration zero: the compiled IK then
    solves eq. 45 in the same call, the static actuator forces ``efforts``) from ``warm`` (a
    previous solution; None: the reference configuration), once more from the reference where
    the warm start fails; None where both fail (out of reach, a limit, a singularity the robot's
    options refuse)."""
    zero = np.zeros(robot.dof)
    for start in ((warm, None) if warm is not None else (None,)):
        try:
            return robot.inverse_kinematics(pose, zero, zero, initial=start)
        except PkmDynamicsError:
            continue
    return None


def static_forces(robot, sol, wrench) -> np.ndarray:
    """The static actuator forces (n_act,) at the IK solution ``sol`` (of :func:`solve_point`)
    under the platform ``wrench`` (6,): eq. 45 at rest is linear in the wrench,
    ``u = u_0 - J_IK^-T P_p^T W`` with ``u_0`` the robot's inverse dynamics at rest (computed
    with the IK); least squares for a redundantly actuated robot (as the robot's own solve)."""
    zero = np.zeros(robot.dof)
    u = robot.inverse_dynamics(sol, zero, zero)
    if not np.any(wrench):
        return u
    J = np.asarray(sol.J_IK)
    rhs = robot.P_p.T @ wrench
    if J.shape[0] == J.shape[1]:
        return u - np.linalg.solve(J.T, rhs)
    return u - np.linalg.lstsq(J.T, rhs, rcond=None)[0]


def workspace_chunk(robot, setup: WorkspaceSetup, points, order) -> WorkspacePart:
    """The map of the grid points ``points`` (B, d) (columns: ``setup.axes``; serpentine order,
    flat grid indices ``order`` (B,)): per point the IK with continuation (:func:`solve_point`),
    ``kappa(J_IK)``, the worst loop ``kappa(G_y)``, the static actuator forces under
    ``setup.wrench`` (:func:`static_forces`) and ``lambda_max(M_t)``."""
    names = list(setup.axes)
    B, n_act = len(points), len(robot.actuated_joints)
    reach = np.zeros(B, dtype=bool)
    kJ, kG, lam, its = (np.full(B, np.nan) for _ in range(4))
    forces = np.full((B, n_act), np.nan)
    warm = None
    for i, p in enumerate(points):
        sol = solve_point(robot, grid_pose(robot, dict(zip(names, p))), warm)
        if sol is None:
            continue
        warm = sol
        reach[i] = True
        its[i] = float(np.sum(sol.iterations))
        s = np.linalg.svd(sol.J_IK, compute_uv=False)
        kJ[i] = s[0] / s[-1] if s[-1] > 0 else np.inf
        kG[i] = worst_loop_condition(robot, sol)
        lam[i] = np.linalg.eigvalsh(robot.mass_matrix(sol))[-1]
        try:
            forces[i] = static_forces(robot, sol, setup.wrench)
        except (PkmDynamicsError, np.linalg.LinAlgError):     # J_IK singular
            pass
    return WorkspacePart(np.asarray(order), reach, kJ, kG, lam, its, forces)


def combine_workspace(parts, shape: tuple, n_act: int) -> WorkspacePart:
    """The whole grid (C order of ``shape``) from the parts of every chunk."""
    N = int(np.prod(shape))
    out = WorkspacePart(np.arange(N), np.zeros(N, dtype=bool), *(np.full(N, np.nan) for _ in range(4)),
                        np.full((N, n_act), np.nan))
    for p in parts:
        for name in ("reachable", "kappa_J", "kappa_G", "mass_max", "iterations", "forces"):
            getattr(out, name)[p.order] = getattr(p, name)
    return out
