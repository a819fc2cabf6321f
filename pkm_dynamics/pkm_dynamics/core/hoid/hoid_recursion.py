"""Paper 002's recursion (Mueller, Kumar, Kordik): fourth-order kinematics (Sec. IV-B) and
second-order inverse dynamics (Sec. V) of a PKM with simple limbs (:mod:`.simple_limb`), in
numpy, every limb at once (batched arrays).  The compiled form is
:mod:`~pkm_dynamics.core.hoid.hoid_kernels`; this one is the reference it is tested against.

* :func:`fourth_order_kinematics` is the four-pass recursion of Sec. IV-B: pass ``nu`` solves
  the ``nu``-th order limb inverse kinematics (eqs. 15-18, ``(*)``) with the closed-form
  Jacobian derivatives of Lemma 1 (eqs. 22-28) and runs the ``(nu-1)``-th order forward
  kinematics of the limb's bodies; one LU factorisation of each task-space Jacobian
  ``J_t(l) = P_t J_p(l)`` serves the four solves (Sec. IV-C).
* :func:`second_order_inverse_dynamics` is the backward recursion of Sec. V-C
  (``W_bar, Wdot_bar, Wddot_bar -> Q_bar, Qdot_bar, Qddot_bar``) and eqs. 14, 19, 20 with
  ``Fdot``, ``Fddot`` (Sec. V-A) and ``J_IK`` and its derivatives as rows of ``F`` (Sec. V-B).

Corrections to the printed formulas (each checked against finite differences and against
the Taylor route in the tests): eq. 18 reads ``c^4 = J''' thd + 3 J'' thdd + 3 J' thddd``
(binomial coefficients of eq. 16; printed ``2 J''``); eq. 25 reads
``J''' = (-ad^3 + 2 ad_dV' ad_dV + ad_dV ad_dV' - ad_dV'') J``, i.e. ``3 ad_dV' ad_dV +
ad_{ad_dV dV'}`` (printed ``2 ad_dV' ad_dV + ad_{ad_dV dV'}``); eq. 28 reads
``dV'' = Vddot_p - Ad Vddot_i + ad_dV (Ad Vdot_i + Vdot_p) + ad_dV' V_p`` (the derivative of
eq. 27 with ``d/dt Ad_{C_p,i} = -ad_dV Ad_{C_p,i}``; the printed form drops terms and the
proof has a sign slip); ``Fddot = 2 F Jdot F Jdot F - F Jddot F`` (printed
``2 Fdot Jdot Fdot``).  Gravity is carried as the body-fixed acceleration
``g_i = Ad(C_i)^-1 (0, -g)`` with ``gdot_i = -ad(V_i) g_i`` added to ``Vdot_i`` only where
the Newton-Euler equations take the acceleration (``M_i (Vdot_i + g_i)``); the ``ad`` terms of
the differentiated Newton-Euler equations use the kinematic ``Vdot_i``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..errors import SingularityError
from .simple_limb import SimpleLimbModel, limb_poses
from ..spatial.se3 import Ad_batch, Ad_inv_batch, ad_batch, mv_batch, pose_inv
from ..status import MAX_JT_CONDITION


@dataclass
class SimpleLimbKinematics:
    """Output of :func:`fourth_order_kinematics`, limb-batched (``L`` limbs, ``delta`` slots):
    ``th`` (5, L, delta) joint derivatives of orders 0..4 (cut-joint slots: quasi-velocities,
    order 0 unused), relative poses ``P`` and absolute poses ``C`` (L, delta, 4, 4), body
    twists ``V`` (4, L, delta, 6) (``V, Vdot, Vddot, Vdddot``), platform Jacobian ``Jp``
    (4, L, 6, delta) and its derivatives (eqs. 22-25), ``F`` (L, delta, delta) the inverse of
    ``J_t`` (from one LU factorisation per limb) and ``Jt`` (3, L, delta, delta)."""

    th: np.ndarray
    P: np.ndarray
    C: np.ndarray
    V: np.ndarray
    Jp: np.ndarray
    Jt: np.ndarray
    F: np.ndarray
    Tr: np.ndarray | None = None     # (L, delta, delta, 6, 6) Ad(C_i^-1 C_j) for j <= i, else 0


def _transfer(model: SimpleLimbModel, C) -> np.ndarray:
    """``Ad(C_i^-1 C_j)`` (L, delta, delta, 6, 6) for ``j <= i`` (zero above the diagonal): the
    products of the ``Ad(C_k,k-1)`` of a limb's forward recursions from slot ``j`` to ``i``."""
    T = Ad_inv_batch(C)[:, :, None] @ Ad_batch(C)[:, None, :]               # Ad(C_i)^-1 Ad(C_j)
    return T * model.lower_slots[None, :, :, None, None]


def fourth_order_kinematics(model: SimpleLimbModel, q, Vt) -> SimpleLimbKinematics:
    """Paper 002 Sec. IV-B: ``theta^(1..4)`` of every limb from the closed configuration ``q``
    (tree coordinates, (n,)) and the task twist derivatives ``Vt`` (4, delta)
    (``V_t, Vdot_t, Vddot_t, Vdddot_t``), with the body twists and their first three
    derivatives: four passes (eqs. 15-18 with Lemma 1, eqs. 22-28), every limb at once (the
    limbs are independent, "possible in parallel"; here as one batched array operation)."""
    m = model
    Pt, real, X = m.Pt, m.real, m.X
    L, D = real.shape
    Vt = np.asarray(Vt, dtype=float)
    # pass 0: poses.  P_i = B_i exp(X_i theta_i) (R: Rodrigues, P: translation), C_i = C_{i-1} P_i
    qs = np.where(real, np.asarray(q, dtype=float)[m.index], 0.0)
    P, C = limb_poses(m, qs)
    F = C[0, len(m.limbs[0].bodies) - 1] @ m.platform_offset      # limb 0 carries the platform
    Fi = pose_inv(F)
    AdP = Ad_batch(Fi @ C)                                              # Ad(C_p,i)  (L, D, 6, 6)
    # forward recursions V_i = Ad(C_i,i-1) V_{i-1} + b_i of every order, unrolled:
    # V_i = sum_{j <= i} Ad(C_i^-1 C_j) b_j
    Tr = _transfer(m, C)

    def propagate(b):
        return np.einsum("lijab,ljb->lia", Tr, b)

    aX = ad_batch(X)
    mask = real[:, None, :]
    J = np.zeros((4, L, 6, D))
    J[0] = np.where(mask, np.einsum("ldij,ldj->lid", AdP, X), m.cut_columns)    # eq. 22
    Jt0 = Pt @ J[0]
    try:
        Finv = np.linalg.inv(Jt0)                                  # one LU per limb (getrf/getri)
    except np.linalg.LinAlgError:
        raise SingularityError("a limb's task-space Jacobian J_t is singular at this configuration") from None
    # condition number kappa_1 = |J_t|_1 |J_t^-1|_1 from the inverse at hand (no SVD)
    cond = np.abs(Jt0).sum(axis=-2).max(axis=-1) * np.abs(Finv).sum(axis=-2).max(axis=-1)
    if np.any(cond > MAX_JT_CONDITION):
        l = int(np.argmax(cond))
        raise SingularityError(f"limb '{m.limbs[l].name}': task-space Jacobian J_t is singular "
                               f"(condition number {cond[l]:.3g})")
    th = np.zeros((5, L, D))
    V = np.zeros((4, L, D, 6))
    c2 = c3 = None
    # pass 1: 1st-order IK (*)
    th[1] = Finv @ Vt[0]
    Vp0 = mv_batch(J[0], th[1])                                          # (L, 6), equal for all limbs
    # pass 2: twists, Delta V (eq. 26), Jdot (eq. 23), c^2 (eq. 17), 2nd-order IK (*)
    V[0] = propagate(X * th[1, ..., None])
    dV0 = Vp0[:, None] - mv_batch(AdP, V[0])
    A = ad_batch(dV0)
    J[1] = np.where(mask, -np.einsum("ldij,ljd->lid", A, J[0]), 0.0)
    c2 = mv_batch(J[1], th[1])
    th[2] = mv_batch(Finv, Vt[1] - c2 @ Pt.T)
    Vp1 = mv_batch(J[0], th[2]) + c2
    # pass 3: accelerations, Delta Vdot (eq. 27), Jddot (eq. 24), c^3, 3rd-order IK
    aXV0 = mv_batch(aX, V[0])
    V[1] = propagate(X * th[2, ..., None] - th[1, ..., None] * aXV0)
    AdV1 = mv_batch(AdP, V[1])
    dV1 = Vp1[:, None] - AdV1 + mv_batch(A, Vp0[:, None])
    Bm = ad_batch(dV1)
    AJ = np.einsum("ldij,ljd->lid", A, J[0])                       # ad_dV J_i
    J[2] = np.where(mask, np.einsum("ldij,ljd->lid", A, AJ) - np.einsum("ldij,ljd->lid", Bm, J[0]), 0.0)
    c3 = mv_batch(J[2], th[1]) + 2.0 * mv_batch(J[1], th[2])
    th[3] = mv_batch(Finv, Vt[2] - c3 @ Pt.T)
    Vp2 = mv_batch(J[0], th[3]) + c3
    # pass 4: 2nd derivatives of twists, Delta Vddot (eq. 28), Jdddot (eq. 25), c^4, 4th-order IK
    t1, t2, t3 = th[1, ..., None], th[2, ..., None], th[3, ..., None]
    V[2] = propagate(X * t3 - mv_batch(aX, t2 * V[0] + 2.0 * t1 * V[1]) - t1 ** 2 * mv_batch(aX, aXV0))
    dV2 = (Vp2[:, None] - mv_batch(AdP, V[2]) + mv_batch(A, AdV1 + Vp1[:, None]) + mv_batch(Bm, Vp0[:, None]))
    Cm = ad_batch(dV2)
    AAJ = np.einsum("ldij,ljd->lid", A, AJ)
    BJ = np.einsum("ldij,ljd->lid", Bm, J[0])
    J[3] = np.where(mask, -np.einsum("ldij,ljd->lid", A, AAJ) + 2.0 * np.einsum("ldij,ljd->lid", Bm, AJ)
                    + np.einsum("ldij,ljd->lid", A, BJ) - np.einsum("ldij,ljd->lid", Cm, J[0]), 0.0)
    c4 = mv_batch(J[3], th[1]) + 3.0 * mv_batch(J[2], th[2]) + 3.0 * mv_batch(J[1], th[3])
    th[4] = mv_batch(Finv, Vt[3] - c4 @ Pt.T)
    # 3rd-order forward kinematics
    V[3] = propagate(X * th[4, ..., None]
                     - mv_batch(aX, t3 * V[0] + 3.0 * t2 * V[1] + 3.0 * t1 * V[2])
                     - 3.0 * t1 * mv_batch(aX, mv_batch(aX, t2 * V[0] + t1 * V[1]))
                     - t1 ** 3 * mv_batch(aX, mv_batch(aX, aXV0)))
    th[0] = qs
    return SimpleLimbKinematics(th, P, C, V, J, np.einsum("ij,kljd->klid", Pt, J[:3]), Finv, Tr)


def limb_second_order_forces(model: SimpleLimbModel, kin: SimpleLimbKinematics, gravity) -> np.ndarray:
    """Sec. V-C backward recursion over the limbs' bodies (leaf to base):
    ``W_bar, Wdot_bar, Wddot_bar`` and ``Q_bar, Qdot_bar, Qddot_bar`` (3, L, delta)."""
    X, M = model.X, model.M
    L, D = model.real.shape
    V, th = kin.V, kin.th
    a0 = np.concatenate([np.zeros(3), -np.asarray(gravity, dtype=float)])
    g0 = mv_batch(Ad_inv_batch(kin.C), a0)                       # gravity as a body acceleration (L, D, 6)
    g1 = -mv_batch(ad_batch(V[0]), g0)
    g2 = -mv_batch(ad_batch(V[1]), g0) - mv_batch(ad_batch(V[0]), g1)
    aT = np.swapaxes(ad_batch(V[:3]), -1, -2)               # (3, L, D, 6, 6)
    MV = mv_batch(M[None], V[:3])                           # (3, L, D, 6)
    Wb = np.empty((3, L, D, 6))                        # body terms of W, Wdot, Wddot
    Wb[0] = mv_batch(M, V[1] + g0) - mv_batch(aT[0], MV[0])
    Wb[1] = mv_batch(M, V[2] + g1) - mv_batch(aT[0], MV[1]) - mv_batch(aT[1], MV[0])
    Wb[2] = mv_batch(M, V[3] + g2) - mv_batch(aT[0], MV[2]) - mv_batch(aT[2], MV[0]) - 2.0 * mv_batch(aT[1], MV[1])
    # backward recursions W_i = Wb_i + Ad(C_i+1,i)^T (W_{i+1} + corr_{i+1}) of every order, with
    # the corrections corr_j = -t1 x W0, -2 t1 x W1 + t1^2 x x W0 - t2 x W0 (x = ad(X_j)^T),
    # unrolled: W_i + corr_i = sum_{j >= i} Ad(C_j^-1 C_i)^T (Wb_j + corr_j)
    Tr = _transfer(model, kin.C) if kin.Tr is None else kin.Tr

    def propagate_back(b):
        return np.einsum("ljiac,lja->lic", Tr, b)

    xT = np.swapaxes(ad_batch(X), -1, -2)
    t1, t2 = th[1, ..., None], th[2, ..., None]
    W = np.empty((3, L, D, 6))
    W[0] = propagate_back(Wb[0])
    xW0 = mv_batch(xT, W[0])
    corr = -t1 * xW0
    W[1] = propagate_back(Wb[1] + corr) - corr
    corr = -2.0 * t1 * mv_batch(xT, W[1]) + t1 * t1 * mv_batch(xT, xW0) - t2 * xW0
    W[2] = propagate_back(Wb[2] + corr) - corr
    return np.einsum("klia,lia->kli", W, X)


def second_order_inverse_dynamics(model: SimpleLimbModel, kin: SimpleLimbKinematics, gravity=None) -> np.ndarray:
    """Eqs. 14, 19, 20: ``(u, udot, uddot)`` (3, na) from the limb kinematics of
    :func:`fourth_order_kinematics`, with ``Fdot = -F Jdot_t F``,
    ``Fddot = 2 F Jdot_t F Jdot_t F - F Jddot_t F`` and ``J_IK`` the actuated rows of ``F``
    (Sec. V-B).  The rows of the cut-joint slots of ``F`` meet ``Q_bar = 0`` there (``F_bar``)."""
    tree = model.desc.tree
    g = tree.gravity if gravity is None else np.asarray(gravity, dtype=float)
    F0 = kin.F
    J1, J2 = kin.Jt[1], kin.Jt[2]
    F1 = -F0 @ J1 @ F0
    FJ = F0 @ J1
    F2 = 2.0 * FJ @ FJ @ F0 - F0 @ J2 @ F0
    Q = limb_second_order_forces(model, kin, g)       # zero in the cut-joint slots
    tr = lambda A: np.swapaxes(A, -1, -2)  # noqa: E731
    s0 = mv_batch(tr(F0), Q[0]).sum(axis=0)
    s1 = (mv_batch(tr(F0), Q[1]) + mv_batch(tr(F1), Q[0])).sum(axis=0)
    s2 = (mv_batch(tr(F0), Q[2]) + 2.0 * mv_batch(tr(F1), Q[1]) + mv_batch(tr(F2), Q[0])).sum(axis=0)
    al, ai = model.actuator_limb, model.actuator_local
    JIK = (F0[al, ai], F1[al, ai], F2[al, ai])
    lu = scipy.linalg.lu_factor(JIK[0].T, check_finite=False)
    u0 = scipy.linalg.lu_solve(lu, s0, check_finite=False)
    u1 = scipy.linalg.lu_solve(lu, s1 - JIK[1].T @ u0, check_finite=False)
    u2 = scipy.linalg.lu_solve(lu, s2 - JIK[2].T @ u0 - 2.0 * JIK[1].T @ u1, check_finite=False)
    return np.array([u0, u1, u2])


def tree_motion_from_limbs(model: SimpleLimbModel, kin: SimpleLimbKinematics) -> np.ndarray:
    """Derivatives (5, n) of every tree joint (orders 0..4) from the limbs' solutions."""
    out = np.zeros((5, model.desc.tree.nq))
    out[:, model.index[model.real]] = kin.th[:, model.real]
    return out

