"""Loop constraints of a limb and their resolution (paper 001 Sec. 3.3, eqs. 12-20, 33).

Per fundamental cycle (FC, a :class:`~.limb_model.LoopGroup`) of a limb: the cut-joint
constraints ``g``, their Jacobian ``G`` and acceleration bias ``Gdot thetad`` (eqs. 12-14,
App. A), the constraint resolution ``H`` (eqs. 16-18, 20) and its derivative ``Hdot`` (eq. 19),
the bias ``Hdot qd`` (eq. 20) and Algorithm 2, the Newton loop that closes every FC for given
independent coordinates (eq. 33).

==============================================  ===========================================
:func:`loop_constraints`                         ``g, G, Gdot qd`` of every FC (eqs. 12-14)
:func:`cut_joint_jacobian_derivative`            ``Gdot`` as a matrix (eqs. 54, 60)
:func:`constraint_resolution`                    ``H`` (eqs. 16-18, 20)
:func:`constraint_resolution_derivative`         ``Hdot`` (eq. 19)
:func:`loop_acceleration_bias`                   ``Hdot qd`` (eq. 20)
:func:`solve_loop_constraints`                   Algorithm 2 (inner loop, eq. 33)
==============================================  ===========================================
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..tree.cut_joints import CutJointGeometry, cut_joint_constraint
from ..errors import ConvergenceError, SingularityError
from .limb_kinematics import _I4, body_jacobian_derivative, limb_state
from ..spatial.se3 import cross_batch, hat
from ..status import INNER_MAX_ITER
from ..tree.tree_model import TreeModel
from ..tree.tree_dynamics import body_jacobian, kinematics

if TYPE_CHECKING:
    from .limb_types import Limb, LoopGroup


def loop_constraints(limb: Limb, C: np.ndarray, V=None, A0=None) -> list:
    """Per FC: ``(g (m,), G (m, n_l), Gdot qd (m,))`` at absolute poses ``C`` (eqs. 12-14).

    ``V``, ``A0``: body twists and accelerations for ``qdd = 0`` (from
    :func:`~.tree_dynamics.kinematics`) for the acceleration bias."""
    out = []
    for lp in limb.loops:
        parts = [cut_joint_constraint(limb.tree, geo, C, V, A0) for geo in lp.cuts]
        out.append((np.concatenate([p[0] for p in parts]), np.vstack([p[1] for p in parts]),
                    np.concatenate([p[2] for p in parts])))
    return out


def loop_residual(limb: Limb, theta) -> float:
    """Largest absolute cut-joint residual ``max |g|`` over the limb's FCs (m, rad)."""
    res = [np.max(np.abs(g)) for g, _, _ in limb_state(limb, theta)[2] if len(g)]
    return float(max(res)) if res else 0.0



def cut_joint_jacobian_derivative(tree: TreeModel, geo: CutJointGeometry, C, V) -> np.ndarray:
    """``Gdot`` (m, n) of one cut joint as a matrix, ``Gdot = Bdot J + B Jdot`` (paper 001
    eqs. 54-55 and 59-60; :mod:`.cut_joints` gives ``G`` and the vector ``Gdot qd``).

    ``C``: absolute poses (n, 4, 4); ``V``: body-fixed twists (n, 6) for the joint rates."""
    k, r = geo.body_k, geo.body_r
    Ck = _I4 if k < 0 else C[k]
    Cr = _I4 if r < 0 else C[r]
    Vk = np.zeros(6) if k < 0 else V[k]
    Vr = np.zeros(6) if r < 0 else V[r]
    Rk, Rr = Ck[:3, :3], Cr[:3, :3]
    R_kr = Rk.T @ Rr
    dd = Rk.T @ (Cr[:3, 3] - Ck[:3, 3]) + R_kr @ geo.d_r
    wk, wr = Vk[:3], Vr[:3]
    dR = R_kr @ hat(wr) - hat(wk) @ R_kr
    Z = np.zeros((3, 3))
    B_pos = np.hstack([hat(dd), -np.eye(3), -R_kr @ hat(geo.d_r), R_kr])
    d_dot = B_pos @ np.concatenate([Vk, Vr])
    Bd_pos = np.hstack([hat(d_dot), Z, -dR @ hat(geo.d_r), dR])
    B_rows, Bd_rows = [geo.u_pos @ B_pos], [geo.u_pos @ Bd_pos]
    for ua, ub in zip(geo.u_a, geo.u_b):
        w, wd = R_kr @ ub, dR @ ub
        B_rows.append((ua @ np.hstack([hat(w), Z, -R_kr @ hat(ub), Z]))[None])
        Bd_rows.append((ua @ np.hstack([hat(wd), Z, -dR @ hat(ub), Z]))[None])
    Bm, Bd = np.vstack(B_rows), np.vstack(Bd_rows)
    J = np.vstack([body_jacobian(tree, C, k), body_jacobian(tree, C, r)])
    Jd = np.vstack([body_jacobian_derivative(tree, C, V, k), body_jacobian_derivative(tree, C, V, r)])
    return Bd @ J + Bm @ Jd


def _resolve(lp: LoopGroup, G: np.ndarray):
    """``(Gy, Gq)`` of a FC from its full Jacobian rows (m, n_l): the selected rows."""
    Gr = G[lp.rows]
    return Gr[:, lp.dependent], Gr[:, lp.independent]


def _solve(A, b, limb, lp=None, what=None):
    """``A^-1 b``; a singular ``A`` raises :class:`SingularityError` naming the limb and the loop
    ``lp`` (or ``what``) -- the message is only formatted then."""
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        where = f"{limb.name} loop {lp.names}" if lp is not None else f"{limb.name} {what or ''}".rstrip()
        raise SingularityError(f"{where}: singular matrix (a loop or limb singularity)") from None


def constraint_resolution(limb: Limb, theta=None, constraints=None) -> np.ndarray:
    """``H_(l)`` (n_l, delta_l) with ``thetad = H qd`` (eqs. 16-18 per FC, eq. 20 assembled).

    Columns follow ``limb.independent``; rows of an independent coordinate are unit rows, rows of
    a dependent coordinate hold ``-G_y^-1 G_q`` (eq. 18)."""
    if constraints is None:
        constraints = limb_state(limb, theta)[2]
    H = np.zeros((limb.n, limb.dof))
    col = {int(j): c for c, j in enumerate(limb.independent)}
    for j, c in col.items():
        H[j, c] = 1.0
    for lp, (_, G, _) in zip(limb.loops, constraints):
        Gy, Gq = _resolve(lp, G)
        Hy = -_solve(Gy, Gq, limb, lp)
        cols = [col[int(j)] for j in lp.independent]
        H[np.ix_(lp.dependent, cols)] = Hy
    return H


def constraint_resolution_derivative(limb: Limb, theta, thetad, H=None) -> np.ndarray:
    """``Hdot_(l)`` (n_l, delta_l), eq. 19: rows of ``y``: ``-G_y^-1 (Gdot_y H_y + Gdot_q)``.

    ``thetad`` (n_l,) must satisfy the velocity constraints (eq. 13)."""
    _, C, V, _ = kinematics(limb.tree, theta, thetad)
    cons = loop_constraints(limb, C)
    H = constraint_resolution(limb, constraints=cons) if H is None else H
    Hd = np.zeros_like(H)
    col = {int(j): c for c, j in enumerate(limb.independent)}
    for lp, (_, G, _) in zip(limb.loops, cons):
        Gd = np.vstack([cut_joint_jacobian_derivative(limb.tree, geo, C, V) for geo in lp.cuts])
        Gy, _ = _resolve(lp, G)
        Gdy, Gdq = _resolve(lp, Gd)
        cols = [col[int(j)] for j in lp.independent]
        Hy = H[np.ix_(lp.dependent, cols)]
        Hd[np.ix_(lp.dependent, cols)] = -_solve(Gy, Gdy @ Hy + Gdq, limb, lp)
    return Hd


def _cut_bias(geo: CutJointGeometry, C, V, A0) -> np.ndarray:
    """``Gdot thetad`` (m,) of one cut joint: ``B (Vdot_k, Vdot_r)|_{thetadd=0} + Bdot (V_k, V_r)``
    (paper 001 eqs. 53-55, 57, 60); same formula as :func:`.cut_joints.cut_joint_constraint`
    without rebuilding ``G``."""
    k, r = geo.body_k, geo.body_r
    z = np.zeros(6)
    Ck = _I4 if k < 0 else C[k]
    Cr = _I4 if r < 0 else C[r]
    Vk, Vr = (z if k < 0 else V[k]), (z if r < 0 else V[r])
    Ak, Ar = (z if k < 0 else A0[k]), (z if r < 0 else A0[r])
    Rk, Rr = Ck[:3, :3], Cr[:3, :3]
    R_kr = Rk.T @ Rr
    dd = Rk.T @ (Cr[:3, 3] - Ck[:3, 3]) + R_kr @ geo.d_r
    wk, vk, wr, vr = Vk[:3], Vk[3:], Vr[:3], Vr[3:]
    dR = R_kr @ hat(wr) - hat(wk) @ R_kr
    rd = R_kr @ hat(geo.d_r)
    d_dot = hat(dd) @ wk - vk - rd @ wr + R_kr @ vr               # B_pos (V_k, V_r), eq. 52
    acc = hat(dd) @ Ak[:3] - Ak[3:] - rd @ Ar[:3] + R_kr @ Ar[3:]   # B_pos (Vdot_k, Vdot_r)
    bdot = cross_batch(d_dot, wk) - dR @ hat(geo.d_r) @ wr + dR @ vr     # Bdot_pos (V_k, V_r)
    out = [geo.u_pos @ (acc + bdot)]
    if len(geo.u_a):
        w = geo.u_b @ R_kr.T                                           # rows R_kr u_b
        wd = geo.u_b @ dR.T
        rot = (cross_batch(w, Ak[:3]) - (R_kr @ cross_batch(geo.u_b, Ar[:3]).T).T
               + cross_batch(wd, wk) - (dR @ cross_batch(geo.u_b, wr).T).T)
        out.append(np.einsum("ij,ij->i", geo.u_a, rot))
    return np.concatenate(out)


def loop_acceleration_bias(limb: Limb, theta, thetad, state=None, motion=None) -> np.ndarray:
    """``Hdot qd`` (n_l,) of eq. 20 from the cut-joint acceleration bias ``Gdot thetad``:
    rows of ``y`` hold ``-G_y^-1 (Gdot thetad)``, rows of ``q`` zero.  ``state``:
    ``limb_state(limb, theta)``; ``motion``: ``(C, V, A0)`` of the tree motion with
    ``thetadd = 0`` (:func:`~.tree_dynamics.kinematics`), computed when not given."""
    C, _, cons = limb_state(limb, theta) if state is None else state
    if motion is None:
        _, C, V, A0 = kinematics(limb.tree, theta, thetad)
    else:
        C, V, A0 = motion
    out = np.zeros(limb.n)
    for lp, (_, G, _) in zip(limb.loops, cons):
        bias = np.concatenate([_cut_bias(geo, C, V, A0) for geo in lp.cuts])
        Gy, _ = _resolve(lp, G)
        out[lp.dependent] = -_solve(Gy, bias[lp.rows], limb, lp)
    return out


def solve_loop_constraints(limb: Limb, theta, q, tol: float = 1e-10, max_iter: int = INNER_MAX_ITER,
                           state=None, return_state: bool = False):
    """Algorithm 2 (inner loop): ``theta = psi_(l)(q)`` for the limb's generalized coordinates
    ``q`` (delta_l,), Newton-Raphson from the admissible ``theta`` (n_l,) (eq. 33).

    All FCs are iterated side by side (they are independent for a hybrid limb), each until its
    residual ``||g|| <= tol``.  Returns ``(theta, iterations)`` with the number of Newton steps
    of each FC (the predictor step of eq. 33 counts as the first); with ``return_state`` also
    ``limb_state(limb, theta)`` at the solution.  ``state``: ``limb_state`` at the start."""
    theta = np.array(theta, dtype=float)
    q = np.asarray(q, dtype=float)
    cons = (limb_state(limb, theta) if state is None else state)[2]
    dq = q - theta[limb.independent]
    dtheta_q = np.zeros(limb.n)
    dtheta_q[limb.independent] = dq
    its = np.zeros(len(limb.loops), dtype=int)
    # predictor (eq. 33): linearized constraints at the start configuration
    for i, (lp, (g, G, _)) in enumerate(zip(limb.loops, cons)):
        Gy, Gq = _resolve(lp, G)
        rhs = g[lp.rows] + Gq @ dtheta_q[lp.independent]
        theta[lp.dependent] -= _solve(Gy, rhs, limb, lp)
        its[i] = 1
    theta[limb.independent] = q
    active = np.ones(len(limb.loops), dtype=bool)
    while True:
        st = limb_state(limb, theta)
        cons = st[2]
        for i, (lp, (g, G, _)) in enumerate(zip(limb.loops, cons)):
            if not active[i]:
                continue
            if np.linalg.norm(g) <= tol:
                active[i] = False
                continue
            if its[i] >= max_iter:
                raise ConvergenceError(f"{limb.name} loop {lp.names}: constraints not solved in "
                                       f"{max_iter} iterations (|g| = {np.linalg.norm(g):.3g} > {tol:g})")
            Gy, _ = _resolve(lp, G)
            theta[lp.dependent] -= _solve(Gy, g[lp.rows], limb, lp)
            its[i] += 1
        if not active.any():
            return (theta, its, st) if return_state else (theta, its)
