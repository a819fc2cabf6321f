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
(:mod:`.grids`), each inverse kinematics warm-started from the points solved before it: from the
joints extrapolated along the grid line of the last two or three points where they continue it
with equal steps (a secant or quadratic predictor: fewer Newton iterations than from the last
solution), else from the last solved point of the chunk (cheaper than a cold start, and the
solution stays on the working mode it continues); where that fails the point is solved once more
from the reference configuration, directly or along the straight task-space path from the
reference pose, before it counts as out of reach.  Every start refines to round-off: the
solution does not depend on the start that converged.  A chunk is one compiled sweep of its
points (:mod:`pkm_dynamics.core.sweeps.pkm_workspace`: the robot's one-pose IK kernel per point,
``J_IK``, the forces at rest, ``M_t``, ``kappa(J_IK)``, the worst loop ``kappa(G_y)`` and
``lambda_max(M_t)``; a point a limb hands over to the reference route goes through the robot's
own calls).  Every chunk starts from the reference configuration, so its numbers do not depend on
the other chunks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.sweeps.pkm_workspace import line_orders, workspace_sweep

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


def rpy_matrices(roll, pitch, yaw) -> np.ndarray:
    """``Rz(yaw) Ry(pitch) Rx(roll)`` (B, 3, 3) of the angles (B,) each."""
    cr, sr, cp, sp, cy, sy = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    return np.stack([np.stack([cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr], axis=-1),
                     np.stack([sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr], axis=-1),
                     np.stack([-sp, cp * sr, cp * cr], axis=-1)], axis=-2)


def grid_pose(robot, coords: dict) -> np.ndarray:
    """The platform pose (4, 4) of the grid point ``coords`` ({name: value}, names of
    :data:`POSE_AXES`; missing ones 0) about ``robot.reference_pose`` (module docstring)."""
    names = list(coords)
    return grid_poses(robot, names, np.array([[coords[k] for k in names]], dtype=float))[0]


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


def grid_poses(robot, names, points) -> np.ndarray:
    """The platform poses (B, 4, 4) of the grid points ``points`` (B, d) (columns ``names`` of
    :data:`POSE_AXES`; missing ones 0) about ``robot.reference_pose`` (module docstring):
    ``(R_ref R, p_ref + R_ref d)``."""
    points = np.asarray(points, dtype=float).reshape(-1, len(names))
    col = {k: points[:, j] for j, k in enumerate(names)}
    zero = np.zeros(len(points))
    C = np.array(robot.reference_pose, dtype=float)
    d = np.stack([col.get(k, zero) for k in ("x", "y", "z")], axis=1)
    R = rpy_matrices(*(col.get(k, zero) for k in ("roll", "pitch", "yaw")))
    out = np.broadcast_to(C, (len(points), 4, 4)).copy()
    out[:, :3, :3] = np.einsum("ab,ibc->iac", C[:3, :3], R)
    out[:, :3, 3] = C[:3, 3] + d @ C[:3, :3].T
    return out


def static_forces(robot, J, u0, wrench) -> np.ndarray:
    """The static actuator forces (B, n_act) under the platform ``wrench`` (6,) at IK solutions
    with Jacobians ``J`` (B, n_act, dp) and forces at rest ``u0`` (B, n_act) (eq. 45 at rest,
    linear in the wrench): ``u = u_0 - J_IK^-T P_p^T W``; least squares for a redundantly
    actuated robot (as the robot's own solve); NaN where ``J_IK`` is singular."""
    if not np.any(wrench) or len(J) == 0:
        return u0
    rhs = robot.P_p.T @ wrench
    out = np.full_like(u0, np.nan)
    for i in range(len(J)):
        if not np.isfinite(J[i]).all():
            continue
        try:
            if J.shape[1] == J.shape[2]:
                out[i] = u0[i] - np.linalg.solve(J[i].T, rhs)
            else:
                out[i] = u0[i] - np.linalg.lstsq(J[i].T, rhs, rcond=None)[0]
        except np.linalg.LinAlgError:                     # J_IK singular
            pass
    return out


def workspace_chunk(robot, setup: WorkspaceSetup, points, order) -> WorkspacePart:
    """The map of the grid points ``points`` (B, d) (columns: ``setup.axes``; serpentine order,
    flat grid indices ``order`` (B,)): the IK of every point with continuation (the predictor
    along the grid's lines, :func:`~pkm_dynamics.core.sweeps.pkm_workspace.line_orders`), ``J_IK``,
    the forces at rest, ``kappa(J_IK)``, the worst loop ``kappa(G_y)`` and ``lambda_max(M_t)``
    (:func:`~pkm_dynamics.core.sweeps.pkm_workspace.workspace_sweep`: runs of points in one
    compiled call), then the static forces under ``setup.wrench`` (:func:`static_forces`)."""
    sw = workspace_sweep(robot, grid_poses(robot, list(setup.axes), points), line_orders(points))
    ok = sw.solved
    forces = static_forces(robot, sw.J_IK, sw.efforts, setup.wrench)
    return WorkspacePart(np.asarray(order), ok, sw.kappa_J, sw.kappa_G, sw.mass_max, sw.iterations,
                         np.where(ok[:, None], forces, np.nan))


def combine_workspace(parts, shape: tuple, n_act: int) -> WorkspacePart:
    """The whole grid (C order of ``shape``) from the parts of every chunk."""
    N = int(np.prod(shape))
    out = WorkspacePart(np.arange(N), np.zeros(N, dtype=bool), *(np.full(N, np.nan) for _ in range(4)),
                        np.full((N, n_act), np.nan))
    for p in parts:
        for name in ("reachable", "kappa_J", "kappa_G", "mass_max", "iterations", "forces"):
            getattr(out, name)[p.order] = getattr(p, name)
    return out
