"""Inverse kinematics of one limb (paper 001 Sec. 4, eqs. 21-33, Algorithms 1-3).

==============================================  ===========================================
:func:`limb_jacobians`                           ``L_p, L_t, F, K = H F`` (eqs. 22, 25, 27)
:func:`pose_error`                               ``Delta x_t`` (eq. 31)
:func:`limb_inverse_kinematics_nested`           Algorithms 1 + 2 (eq. 31)
:func:`limb_inverse_kinematics_compound`         Algorithm 3
:func:`compound_newton_step`                     one Newton step of Algorithm 3
:func:`limb_velocity_ik`                         eqs. 27-28
:func:`limb_acceleration_ik`                     eq. 29
==============================================  ===========================================
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConvergenceError, SingularityError
from .limb_kinematics import _spatial_to_body, limb_platform_pose, limb_state
from .loop_constraints import _resolve, _solve, constraint_resolution, loop_acceleration_bias, solve_loop_constraints
from .loop_partition import partition_at, same_partition
from ..spatial.se3 import Ad_inv, log_so3, pose_inv
from ..status import LOOP_SINGULARITY_THRESHOLD
from ..tree.tree_dynamics import kinematics

if TYPE_CHECKING:
    from .limb_types import Limb


@dataclass(frozen=True)
class LimbJacobians:
    """Velocity-level quantities of a limb at one configuration (paper 001 eqs. 20-27).

    ``H`` (n_l, delta_l); ``J_p`` (6, n_l) platform Jacobian (eq. 5); ``L_p = J_p H`` (6,
    delta_l) (eq. 22); ``L_t = P_t L_p`` (delta_p(l), delta_l); ``F = L_t^-1 D_t`` (delta_l,
    delta_p) (eq. 27); ``K = H F`` (n_l, delta_p) with ``thetad = K V_t`` (eq. 28)."""

    H: np.ndarray
    J_p: np.ndarray
    L_p: np.ndarray
    L_t: np.ndarray
    F: np.ndarray
    K: np.ndarray

    @property
    def condition(self) -> float:
        """``sqrt(kappa(F^T F)) = kappa(F)``, the measure of Fig. 20b (inf when singular)."""
        if self.F.size == 0:
            return 1.0
        s = np.linalg.svd(self.F, compute_uv=False)
        return float(s[0] / s[-1]) if s[-1] > 0 else np.inf


def limb_jacobians(limb: Limb, theta, state=None) -> LimbJacobians:
    """:class:`LimbJacobians` at ``theta`` (n_l,); ``state``: ``limb_state(limb, theta)`` if known."""
    C, Y, constraints = limb_state(limb, theta) if state is None else state
    H = constraint_resolution(limb, constraints=constraints)
    J = _spatial_to_body(C, Y, limb.kin, limb.platform_body, limb.platform_offset)
    Lp = J @ H
    if len(limb.task_rows) == 0:
        return LimbJacobians(H, J, Lp, np.zeros((0, limb.dof)), np.zeros((limb.dof, 0)), np.zeros((limb.n, 0)))
    Lt = Lp[limb.task_rows]
    try:
        F = np.linalg.solve(Lt, limb.D_t)
    except np.linalg.LinAlgError:
        F = np.full((limb.dof, limb.D_t.shape[1]), np.inf)
    return LimbJacobians(H, J, Lp, Lt, F, H @ F)


def pose_error(limb: Limb, C_current, C_target) -> np.ndarray:
    """``Delta x_t = P_t (Delta C_p - I)^vee`` (eq. 31), ``Delta C_p = C_current^-1 C_target``:
    rotation part from the logarithm of ``Delta R``, translation part ``Delta C_p``'s."""
    D = pose_inv(C_current) @ C_target
    e = np.concatenate([log_so3(D[:3, :3]), D[:3, 3]])
    return e[limb.task_rows]


def _norm(limb: Limb, dx, alpha=1.0, beta=1.0) -> float:
    """Left-invariant norm ``alpha |xi| + beta |eta|`` of Sec. 4.1.1 on the selected rows."""
    rot = limb.task_rows < 3
    return float(alpha * np.linalg.norm(dx[rot]) + beta * np.linalg.norm(dx[~rot]))


@dataclass
class LimbIKInfo:
    """Iteration record of one limb IK solve: outer iterations and, per outer step, the inner
    iterations of each FC (nested scheme) -- the data of Figs. 11-13 and 16; ``state``: the
    position-level data ``limb_state(limb, theta)`` at the returned ``theta``."""

    outer: int = 0
    inner: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    state: tuple | None = field(default=None, repr=False)


def _check_condition(limb, jac: LimbJacobians, threshold):
    if threshold is None:
        return
    k = jac.condition
    if not np.isfinite(k) or k > threshold:
        raise SingularityError(f"{limb.name}: inverse kinematics Jacobian F is ill-conditioned "
                               f"(kappa(F) = {k:.3g} > threshold {threshold:.3g}): near an input singularity")


def limb_inverse_kinematics_nested(limb: Limb, C_target, theta0, tol: float = 1e-10,
                                   inner_tol: float | None = None, max_iter: int = 50,
                                   singularity_threshold: float | None = None):
    """Algorithm 1 with Algorithm 2 as inner loop: ``theta`` (n_l,) of the limb whose platform
    frame reaches ``C_target`` (4x4), starting from the admissible ``theta0`` (n_l,).

    Outer step (eq. 31): ``Delta q = F_t Delta x_t`` with ``F_t = L_t^-1``; then
    ``theta = psi(q)`` by :func:`solve_loop_constraints`; ``q`` of each step are those of
    :func:`.loop_partition.partition_at` there (Remarks 2-3).  Returns ``(theta, LimbIKInfo)``.
    Raises :class:`ConvergenceError` after ``max_iter`` outer steps and
    :class:`SingularityError` when ``kappa(F)`` exceeds ``singularity_threshold``."""
    inner_tol = tol if inner_tol is None else inner_tol
    theta = np.array(theta0, dtype=float)
    state = limb_state(limb, theta)
    dx = pose_error(limb, limb_platform_pose(limb, theta, state[0]), C_target)
    info = LimbIKInfo(errors=[_norm(limb, dx)])
    while info.errors[-1] > tol:
        if info.outer >= max_iter:
            raise ConvergenceError(f"{limb.name}: inverse kinematics did not converge in {max_iter} "
                                   f"iterations (|dx| = {info.errors[-1]:.3g} > {tol:g})")
        theta, its, state = _nested_step(limb, theta, state, dx, inner_tol, singularity_threshold)
        info.outer += 1
        info.inner.append(its)
        dx = pose_error(limb, limb_platform_pose(limb, theta, state[0]), C_target)
        info.errors.append(_norm(limb, dx))
    info.state = state
    return theta, info


def _nested_step(limb: Limb, theta, state, dx, inner_tol, singularity_threshold):
    """One outer step of Algorithm 1 (eq. 31) and Algorithm 2: ``Delta q = L_t^-1 Delta x_t``,
    ``theta = psi(q + Delta q)``; returns ``(theta, inner iterations, state)``.

    ``q`` are local coordinates on the loops' solution variety (Remark 2): the step uses the
    partition of :func:`.loop_partition.partition_at` at ``state``; where Algorithm 2 finds no
    ``psi(q + Delta q)`` (the step asked for a ``q`` beyond the partition's extremum, near a
    configuration where its ``G_y`` is singular) it is taken again with every loop on its
    best-conditioned partition at ``state`` (Remark 3), if that is another one."""
    lk, jac = step_partition(limb, theta, state, singularity_threshold)
    while True:
        dq = _solve(jac.L_t, dx, lk, what="task-space Jacobian L_t")
        try:
            return solve_loop_constraints(lk, theta, theta[lk.independent] + dq, inner_tol,
                                          state=state, return_state=True)
        except (ConvergenceError, SingularityError):
            best = partition_at(limb, state, level=1.0)
            if same_partition(best, lk):
                raise
            lk, jac = best, limb_jacobians(best, theta, state)
            _check_condition(lk, jac, singularity_threshold)


def step_partition(limb: Limb, theta, state, singularity_threshold=None, level=LOOP_SINGULARITY_THRESHOLD,
                   check: bool = True):
    """``(limb, jac)``: the limb whose partition an IK step at ``theta`` (n_l,) uses and its
    :class:`LimbJacobians` (Remarks 2-3): :func:`.loop_partition.partition_at` ``state``;
    where ``kappa(F)`` then exceeds ``singularity_threshold`` -- ``F`` (eq. 27) maps the task
    twist to ``qd``, so a ``q`` at its extremum makes it singular although the limb is not -- every
    loop on its best-conditioned partition, if that is better.  ``level``: that of
    :func:`~.loop_partition.partition_at`.  Raises :class:`SingularityError` where ``kappa(F)``
    exceeds the threshold in both (``check`` False: the caller checks)."""
    lk = partition_at(limb, state, level)
    jac = limb_jacobians(lk, theta, state)
    if singularity_threshold is not None and not jac.condition <= singularity_threshold:
        best = partition_at(limb, state, level=1.0)
        if not same_partition(best, lk):
            jb = limb_jacobians(best, theta, state)
            if jb.condition < jac.condition:
                lk, jac = best, jb
    if check:
        _check_condition(lk, jac, singularity_threshold)
    return lk, jac


def limb_inverse_kinematics_compound(limb: Limb, C_target, theta0, tol: float = 1e-10,
                                     constraint_tol: float | None = None, max_iter: int = 50,
                                     singularity_threshold: float | None = None):
    """Algorithm 3: one compound Newton step for limb IK and loop constraints together.

    Step: ``Delta theta = H Delta q + c`` with the loop correction ``c_y = -G_y^-1 g`` (eq. 33)
    and ``Delta q = F_t (Delta x_t - P_t J_p c)``, the exact Newton step of the stacked system
    ``(g, Delta x_t) = 0`` (the printed Algorithm 3 omits ``c``: without it ``g`` is never
    reduced).  Stops when ``|Delta x_t| <= tol`` and ``|g| <= constraint_tol``.  Returns
    ``(theta, LimbIKInfo)`` (``inner`` empty)."""
    ctol = tol if constraint_tol is None else constraint_tol
    theta = np.array(theta0, dtype=float)
    info = LimbIKInfo()
    while True:
        state = limb_state(limb, theta)
        C, _, cons = state
        dx = pose_error(limb, limb_platform_pose(limb, theta, C), C_target)
        gnorm = max([np.linalg.norm(g) for g, _, _ in cons], default=0.0)
        info.errors.append(_norm(limb, dx))
        if info.errors[-1] <= tol and gnorm <= ctol:
            info.state = state
            return theta, info
        if info.outer >= max_iter:
            raise ConvergenceError(f"{limb.name}: inverse kinematics (compound scheme) did not converge "
                                   f"in {max_iter} iterations (|dx| = {info.errors[-1]:.3g}, |g| = {gnorm:.3g})")
        lk, jac = step_partition(limb, theta, state, singularity_threshold)    # Remarks 2-3
        theta = theta + compound_newton_step(lk, state, jac, dx)
        info.outer += 1


def compound_newton_step(limb: Limb, state, jac: LimbJacobians, dx) -> np.ndarray:
    """The compound Newton step ``Delta theta = H Delta q + c`` (n_l,) of Algorithm 3 for the
    stacked system ``(g, Delta x_t) = 0``: loop correction ``c_y = -G_y^-1 g`` (eq. 33) and
    ``Delta q = L_t^-1 (Delta x_t - P_t J_p c)``.  ``state``: ``limb_state(limb, theta)``;
    ``jac``: :func:`limb_jacobians` there; ``dx`` (delta_p(l),): :func:`pose_error`."""
    c = np.zeros(limb.n)
    for lp, (g, G, _) in zip(limb.loops, state[2]):
        Gy, _ = _resolve(lp, G)
        c[lp.dependent] = -_solve(Gy, g[lp.rows], limb, lp)
    dq = _solve(jac.L_t, dx - (jac.J_p @ c)[limb.task_rows], limb, what="task-space Jacobian L_t")
    return jac.H @ dq + c


def limb_velocity_ik(limb: Limb, theta, V_t, jac: LimbJacobians | None = None):
    """Eqs. 27-28: ``qd = F V_t`` (delta_l,) and ``thetad = H qd`` (n_l,)."""
    jac = limb_jacobians(limb, theta) if jac is None else jac
    qd = jac.F @ np.asarray(V_t, dtype=float)
    return qd, jac.H @ qd


def limb_acceleration_ik(limb: Limb, theta, thetad, Vdot_t, jac: LimbJacobians | None = None,
                         state=None, motion=None):
    """Eq. 29: ``thetadd = H F Vdot_t + (Hdot - H L_t^-1 Ldot_t) qd`` (n_l,) with
    ``Ldot_t qd = P_t (Jdot_p thetad + J_p Hdot qd)`` evaluated as the platform acceleration of
    the tree motion ``(theta, thetad, Hdot qd)``.  Returns ``(qdd, thetadd)``.  ``state``:
    ``limb_state(limb, theta)`` if known (e.g. from the IK); ``motion``: ``(C, V, A0)`` of
    :func:`~.tree_dynamics.kinematics` at ``(theta, thetad)`` if known."""
    jac = limb_jacobians(limb, theta) if jac is None else jac
    if motion is None:
        motion = kinematics(limb.tree, theta, thetad)[1:]
    C, V, A0 = motion                                             # Jdot thetad = A0
    bias = loop_acceleration_bias(limb, theta, thetad, state=state, motion=(C, V, A0))   # Hdot qd
    # platform frame acceleration of the motion (theta, thetad, Hdot qd): Jdot_p thetad + J_p Hdot qd
    A_p = Ad_inv(limb.platform_offset) @ A0[limb.platform_body] + jac.J_p @ bias
    qdd = jac.F @ np.asarray(Vdot_t, dtype=float) - _solve(jac.L_t, A_p[limb.task_rows], limb)
    return qdd, jac.H @ qdd + bias
