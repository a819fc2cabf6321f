"""Workspace sweep of a parallel robot over a list of platform poses (the workspace map's
question), the Python layer of :mod:`.pkm_workspace_kernels`: the poses the kernel solves in one
call, the others by the robot's own one-pose inverse kinematics from the same warm start."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import PkmDynamicsError
from ..limb.ik_refinement import loop_conditions
from ..limb.limb_layout import LD_G_JAC
from . import pkm_workspace_kernels as K


@dataclass
class WorkspaceSweep:
    """Per pose (B,): ``solved``; ``J_IK`` (B, na, dp), ``efforts`` (B, na) (eq. 45 at rest:
    the static actuator forces under gravity), ``M_t`` (B, dp, dp), ``iterations`` (outer IK
    iterations summed over the limbs), ``kappa_G`` (the worst loop ``kappa(G_y)``, eq. 18; 1
    without loops); NaN where not solved."""

    solved: np.ndarray
    J_IK: np.ndarray
    efforts: np.ndarray
    M_t: np.ndarray
    iterations: np.ndarray
    kappa_G: np.ndarray


def worst_loop_condition(robot, limb_states) -> float:
    """The largest ``kappa(G_y)`` over every loop of every limb at the limbs' states (1 for a
    robot without intra-limb loops)."""
    worst = 1.0
    for limb, state in zip(robot.limbs, limb_states):
        if limb.loops:
            worst = max(worst, float(loop_conditions(limb, state).max()))
    return worst


def worst_loop_conditions(robot, FD) -> np.ndarray:
    """:func:`worst_loop_condition` (B,) of the limb scratches ``FD`` (B, len(fd)) of B solved
    poses (:func:`.pkm_workspace_kernels.workspace_rows`): each loop's ``G_y`` (the selected rows
    and dependent columns of its Jacobian, eq. 18, as
    :func:`~pkm_dynamics.core.limb.ik_refinement.loop_conditions`) of every pose, one batched SVD
    per loop."""
    T = robot.limb_tables
    worst = np.ones(len(FD))
    for l, limb in enumerate(robot.limbs):
        if not limb.loops:
            continue
        o, *shape = (int(v) for v in T.layout[l, LD_G_JAC])
        shape = [s for s in shape if s]
        G = FD[:, o:o + int(np.prod(shape))].reshape([len(FD)] + shape)
        for k, lp in enumerate(limb.loops):
            Gy = G[:, k, :lp.size][:, lp.rows][:, :, lp.dependent]
            if Gy.size == 0:
                continue
            s = np.linalg.svd(Gy, compute_uv=False)
            with np.errstate(divide="ignore", invalid="ignore"):
                kappa = np.where(s[:, -1] > 0, s[:, 0] / s[:, -1], np.inf)
            worst = np.maximum(worst, kappa)
    return worst


def solve_from(robot, pose, flat):
    """The robot's one-pose IK solution at rest (``inverse_kinematics(pose, 0, 0, initial)``) from
    the flat limb joint vector ``flat`` (a previous solution's ``flat``; None: the reference
    configuration), then from the reference configuration; None where both refuse."""
    zero = np.zeros(robot.dof)
    for start in ((flat, None) if flat is not None else (None,)):
        try:
            if start is None:
                return robot.inverse_kinematics(pose, zero, zero)
            return robot.inverse_kinematics_from(pose, start, zero, zero)
        except PkmDynamicsError:
            continue
    return None


def workspace_sweep(robot, poses) -> WorkspaceSweep:
    """:class:`WorkspaceSweep` of the platform poses (B, 4, 4) of the parallel ``robot`` in order,
    each inverse kinematics warm-started from the last pose solved (the first from the reference
    configuration): runs of poses in one compiled call (:func:`.pkm_workspace_kernels.workspace_rows`),
    a pose it hands over by :func:`solve_from` (the robot's own calls: ``J_IK``, the static
    forces, ``mass_matrix``)."""
    T, rc, K_rows = robot.limb_tables, robot.reference_constants, robot.J_IK_positions   # read only
    fd = T.data()[0]
    poses = np.ascontiguousarray(poses, dtype=float)
    B, n, (na, dp) = len(poses), T.n, K_rows.shape
    keep = any(limb.loops for limb in robot.limbs)
    Theta, J, U = np.full((B, n), np.nan), np.full((B, na, dp), np.nan), np.full((B, na), np.nan)
    Mt, its, kG = np.full((B, dp, dp), np.nan), np.full(B, np.nan), np.ones(B)
    FD = np.empty((B if keep else 1, len(fd)))
    solved = np.zeros(B, dtype=bool)
    Mp = robot.P_p.T @ robot.M_p @ robot.P_p
    thr, lthr = robot.singularity_threshold, robot.loop_singularity_threshold
    thr, lthr = -1.0 if thr is None else float(thr), -1.0 if lthr is None else float(lthr)
    reference = np.zeros(n)
    warm = np.zeros(n)
    zero = np.zeros(dp)
    thd, thdd, W = np.empty(n), np.empty(n), np.empty(dp)
    i = 0
    while i < B:                                          # the robot's own calls in between use the scratch too
        fd, idt, hd, out, status, rs, Wl, prepare = T.reference_scratch()
        stop = K.workspace_rows(T.fm, T.im, T.hm, fd, idt, hd, T.toff, poses, i, warm, reference,
                                robot.ik_scheme == "nested", robot.tol, T.max_iter, thr, lthr, out, status, rc,
                                rs, K_rows, zero, zero, thd, thdd, Wl, W, prepare, Mp, Theta, J, U, Mt, its, FD, keep)
        solved[i:stop] = True
        if keep and stop > i:
            kG[i:stop] = worst_loop_conditions(robot, FD[i:stop])
        if stop == B:
            break
        sol = solve_from(robot, poses[stop], warm if solved[:stop].any() else None)
        if sol is not None:
            solved[stop] = True
            J[stop], its[stop] = sol.J_IK, float(np.sum(sol.iterations))
            kG[stop] = worst_loop_condition(robot, sol.limb_states)
            Mt[stop] = robot.mass_matrix(sol)
            try:
                U[stop] = robot.inverse_dynamics(sol, zero, zero)
            except PkmDynamicsError:                     # J_IK singular: no static forces
                pass
            warm[:] = sol.flat
        i = stop + 1
    kG[~solved] = np.nan
    return WorkspaceSweep(solved, J, U, Mt, its, kG)
