"""Workspace sweep of a parallel robot over a list of platform poses (the workspace map's
question), the Python layer of :mod:`.pkm_workspace_kernels`: the poses the kernel solves in one
call (with the predictor along the grid's lines, :func:`line_orders`), the others by the robot's own
one-pose inverse kinematics from the last solution."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..bounds import MAX_CONTINUATION_STEPS
from ..errors import PkmDynamicsError
from ..limb.ik_refinement import loop_conditions
from . import pkm_workspace_kernels as K


@dataclass
class WorkspaceSweep:
    """Per pose (B,): ``solved``; ``J_IK`` (B, na, dp), ``efforts`` (B, na) (eq. 45 at rest:
    the static actuator forces under gravity), ``M_t`` (B, dp, dp), ``iterations`` (outer IK
    iterations summed over the limbs), ``kappa_J`` (``kappa(J_IK)``, eq. 30; inf where singular),
    ``kappa_G`` (the worst loop ``kappa(G_y)``, eq. 18; 1 without loops), ``mass_max``
    (``lambda_max(M_t)``); NaN where not solved."""

    solved: np.ndarray
    J_IK: np.ndarray
    efforts: np.ndarray
    M_t: np.ndarray
    iterations: np.ndarray
    kappa_J: np.ndarray
    kappa_G: np.ndarray
    mass_max: np.ndarray


def worst_loop_condition(robot, limb_states) -> float:
    """The largest ``kappa(G_y)`` over every loop of every limb at the limbs' states (1 for a
    robot without intra-limb loops)."""
    worst = 1.0
    for limb, state in zip(robot.limbs, limb_states):
        if limb.loops:
            worst = max(worst, float(loop_conditions(limb, state).max()))
    return worst


def line_orders(points, rtol: float = 1e-6) -> np.ndarray:
    """How many of the points before each of ``points`` (B, d) continue its straight line with
    equal steps, at most 2 (B,) int: 2 where ``p_i - p_(i-1)``, ``p_(i-1) - p_(i-2)`` and
    ``p_(i-2) - p_(i-3)`` agree (to ``rtol`` of the step), 1 where the first two do, else 0: the
    order of the sweep's predictor (:func:`.pkm_workspace_kernels.predicted_start`)."""
    P = np.asarray(points, dtype=float).reshape(len(points), -1)
    out = np.zeros(len(P), dtype=np.int64)
    if len(P) < 3:
        return out
    d = np.diff(P, axis=0)                               # d[k] = p_(k+1) - p_k
    size = np.abs(d).max(axis=1)
    same = (np.abs(d[1:] - d[:-1]).max(axis=1) <= rtol * size[1:]) & (size[1:] > 0)   # d_(i-1) == d_(i-2), i = 2..
    out[2:] = same
    out[3:] += same[1:] & same[:-1]
    return out


def condition_number(J) -> float:
    """``kappa(J)`` (the extreme singular values' ratio; inf where singular)."""
    s = np.linalg.svd(J, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else np.inf


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


def workspace_sweep(robot, poses, line=None) -> WorkspaceSweep:
    """:class:`WorkspaceSweep` of the platform poses (B, 4, 4) of the parallel ``robot`` in order,
    each inverse kinematics warm-started from the poses solved before it (the first from the
    reference configuration; ``line`` (B,): :func:`line_orders` of the grid points, None: of the
    poses' entries): runs of poses in one compiled call
    (:func:`.pkm_workspace_kernels.workspace_rows`), a pose it hands over by :func:`solve_from`
    (the robot's own calls: ``J_IK``, the static forces, ``mass_matrix``)."""
    T, rc, K_rows = robot.limb_tables, robot.reference_constants, robot.J_IK_positions   # read only
    poses = np.ascontiguousarray(poses, dtype=float)
    B, n, (na, dp) = len(poses), T.n, K_rows.shape
    line = line_orders(poses) if line is None else np.ascontiguousarray(line, dtype=np.int64)
    Theta, J, U = np.full((B, n), np.nan), np.full((B, na, dp), np.nan), np.full((B, na), np.nan)
    Mt, its = np.full((B, dp, dp), np.nan), np.full(B, np.nan)
    kJ, kG, lam = np.full(B, np.nan), np.full(B, np.nan), np.full(B, np.nan)
    solved = np.zeros(B, dtype=bool)
    Mp = robot.P_p.T @ robot.M_p @ robot.P_p
    thr, lthr = robot.singularity_threshold, robot.loop_singularity_threshold
    thr, lthr = -1.0 if thr is None else float(thr), -1.0 if lthr is None else float(lthr)
    reference = np.zeros(n)
    warm = np.zeros(n)
    zero = np.zeros(dp)
    thd, thdd, W, guess = np.empty(n), np.empty(n), np.empty(dp), np.empty(n)
    path, xi, Wk, Sm = np.empty((2, 4, 4)), np.empty(6), np.empty((max(na, dp), min(na, dp))), np.empty((dp, dp))
    i = 0
    while i < B:                                          # the robot's own calls in between use the scratch too
        fd, idt, hd, out, status, rs, Wl, prepare = T.reference_scratch()
        stop = K.workspace_rows(T.fm, T.im, T.hm, fd, idt, hd, T.toff, poses, i, line, warm, reference,
                                robot.ik_scheme == "nested", robot.tol, T.max_iter, thr, lthr, out, status, rc, rs,
                                K_rows, zero, zero, thd, thdd, Wl, W, prepare, Mp, MAX_CONTINUATION_STEPS, guess,
                                path, xi, Wk, Sm, solved, Theta, J, U, Mt, its, kJ, kG, lam)
        if stop == B:
            break
        sol = solve_from(robot, poses[stop], warm if solved[:stop].any() else None)
        if sol is not None:
            solved[stop] = True
            Theta[stop], J[stop], its[stop] = sol.flat, sol.J_IK, float(np.sum(sol.iterations))
            kJ[stop], kG[stop] = condition_number(sol.J_IK), worst_loop_condition(robot, sol.limb_states)
            Mt[stop] = robot.mass_matrix(sol)
            lam[stop] = np.linalg.eigvalsh(Mt[stop])[-1]
            U[stop] = np.nan
            try:
                U[stop] = robot.inverse_dynamics(sol, zero, zero)
            except PkmDynamicsError:                     # J_IK singular: no static forces
                pass
            warm[:] = sol.flat
        i = stop + 1
    for a in (J, U, Mt, its, kJ, kG, lam):               # what the attempts at a pose out of reach left
        a[~solved] = np.nan
    return WorkspaceSweep(solved, J, U, Mt, its, kJ, kG, lam)
