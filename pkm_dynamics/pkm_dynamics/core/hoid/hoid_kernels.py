"""Compiled second-order inverse dynamics of a PKM with simple limbs (paper 002 Sec. V) and the
series-elastic feedforward (eqs. 1-2), and the two public kernels: :func:`hoid_call` (loop
closure + recursion + SEA for a batch of samples, one call) and :func:`hoid_recursion_call`
(the recursion alone from a closed configuration, the figure paper 002 reports).  Model and
data layouts: :mod:`.hoid_kinematics`.  The numpy forms they follow:
:func:`..hoid_recursion.limb_second_order_forces`,
:func:`..hoid_recursion.second_order_inverse_dynamics`, :func:`..sea.sea_feedforward`.
"""
from __future__ import annotations

import math

from ..bounds import MAX_POSITION, MAX_RATE
from ..numba_support.cache import scratch_kernel
from ..spatial.small_linalg import lu_inverse, mat_vec, matT_vec
from .hoid_kinematics import (ACTUATORS, F_INV_JT, INERTIA_M, J_IK, JACOBIAN_J, LU_A, N_REAL, PLATFORM_OFFSET,
                              POSE_C, POSE_P, POSES_H, Q_BAR, RHS_R, SCREW_X, SEA_PARAMS, SLOT_JOINT, SLOT_Q,
                              STROKES, TASK_ROWS, THETA, TWIST_V, TWISTS_W, VECTORS_W, copy_vector,
                              limb_fourth_order_kinematics, limb_newton, limb_poses)
from ..spatial.se3_kernels import ad_inv_T_apply, bracket_scaled, dot, matvec, pose_mul, wrench_bias
from ..status import BAD_INPUT, LIMIT_SLACK, NONFINITE_RESULT, OK, STROKE

__all__ = ["hoid_call", "hoid_sample", "hoid_recursion_call"]

#: the bounds of the task twist's derivatives of orders 1..4 (:data:`..bounds.MAX_RATE`)
RATE_BOUNDS = (MAX_RATE[1], MAX_RATE[2], MAX_RATE[3], MAX_RATE[4])


@scratch_kernel
def _add_inertial(M, A, g, W):
    """``W += M (A + g)`` (6,): the inertial wrench of a body (6, 6) under the acceleration
    ``A`` and gravity ``g`` as a body acceleration (or their derivatives)."""
    for i in range(6):
        s = 0.0
        for j in range(6):
            s += M[i, j] * (A[j] + g[j])
        W[i] += s


@scratch_kernel
def limb_second_order_forces(mdl, dat, l, gravity):
    """Sec. V-C backward recursion over limb ``l``'s bodies (leaf to base): the body terms
    ``W_bar, Wdot_bar, Wddot_bar`` of the (differentiated) Newton-Euler equations with gravity
    as the body acceleration ``g_i = Ad(C_i)^-1 (0, -g)``, ``gdot = -ad_V g``, carried back by
    ``Ad(C_i+1,i)^T`` with the corrections of the moving screws, and
    ``Q_bar^(k)_i = W^(k)_i . X_i`` into ``Qf[:, l]`` (zero in the cut-joint slots)."""
    nreal, X, M = mdl[N_REAL], mdl[SCREW_X], mdl[INERTIA_M]
    P, C, th, V, w, Qf = dat[POSE_P], dat[POSE_C], dat[THETA], dat[TWIST_V], dat[TWISTS_W], dat[Q_BAR]
    n = nreal[l]
    Qf[:, l, :] = 0.0
    g0, g1, g2, a, b, MV0, MV1, MV2 = w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]
    W0, W1, W2, S0, S1, S2, xW0 = w[8], w[9], w[10], w[11], w[12], w[13], w[14]
    for i in range(n - 1, -1, -1):
        V0, V1, V2, V3, Xi, Mi = V[0, l, i], V[1, l, i], V[2, l, i], V[3, l, i], X[l, i], M[l, i]
        t1, t2 = th[1, l, i], th[2, l, i]
        R = C[l, i]
        for k in range(3):
            g0[k] = 0.0
            g0[3 + k] = -(R[0, k] * gravity[0] + R[1, k] * gravity[1] + R[2, k] * gravity[2])
        bracket_scaled(V0, g0, -1.0, g1)
        bracket_scaled(V1, g0, -1.0, g2)
        bracket_scaled(V0, g1, -1.0, a)
        for k in range(6):
            g2[k] += a[k]
        matvec(Mi, V0, MV0)
        matvec(Mi, V1, MV1)
        matvec(Mi, V2, MV2)
        # carried from the next body: Ad(C_i+1,i)^T S_{i+1}, S = W + corr
        if i == n - 1:
            W0[:] = 0.0
            W1[:] = 0.0
            W2[:] = 0.0
        else:
            ad_inv_T_apply(P[l, i + 1], S0, W0)
            ad_inv_T_apply(P[l, i + 1], S1, W1)
            ad_inv_T_apply(P[l, i + 1], S2, W2)
        # W_bar = M (V' + g) - ad_V^T M V and its derivatives (-ad_V^T h = wrench_bias(V, h))
        _add_inertial(Mi, V1, g0, W0)
        wrench_bias(V0, MV0, a)
        for k in range(6):
            W0[k] += a[k]
        _add_inertial(Mi, V2, g1, W1)
        wrench_bias(V0, MV1, a)
        wrench_bias(V1, MV0, b)
        for k in range(6):
            W1[k] += a[k] + b[k]
        _add_inertial(Mi, V3, g2, W2)
        wrench_bias(V0, MV2, a)
        wrench_bias(V2, MV0, b)
        for k in range(6):
            W2[k] += a[k] + b[k]
        wrench_bias(V1, MV1, a)
        for k in range(6):
            W2[k] += 2.0 * a[k]
        # corrections: corr1 = -t1 ad_X^T W0, corr2 = -2 t1 ad_X^T W1 + t1^2 (ad_X^T)^2 W0 - t2 ad_X^T W0
        wrench_bias(Xi, W0, xW0)                               # = -ad_X^T W0
        for k in range(6):
            S0[k] = W0[k]
            S1[k] = W1[k] + t1 * xW0[k]
        wrench_bias(Xi, W1, a)                                 # -ad_X^T W1
        wrench_bias(Xi, xW0, b)                                # (ad_X^T)^2 W0
        for k in range(6):
            S2[k] = W2[k] + 2.0 * t1 * a[k] + t1 * t1 * b[k] + t2 * xW0[k]
        Qf[0, l, i] = dot(W0, Xi)
        Qf[1, l, i] = dot(W1, Xi)
        Qf[2, l, i] = dot(W2, Xi)


@scratch_kernel
def _task_T(Jk, task, a, out):
    """``out = J_t^T a`` (D,) of ``J_t = P_t J`` with ``J``'s columns ``Jk`` (D, 6)."""
    for i in range(Jk.shape[0]):
        s = 0.0
        for r in range(task.shape[0]):
            s += Jk[i, task[r]] * a[r]
        out[i] = s


@scratch_kernel
def second_order_inverse_dynamics(mdl, dat, U):
    """Eqs. 14, 19, 20: ``U`` (3, na) = ``(u, udot, uddot)`` from every limb's ``F = J_t^-1``,
    ``Jdot_t, Jddot_t`` and ``Q_bar``, with ``Fdot = -F Jdot_t F`` and ``Fddot = 2 F Jdot_t F
    Jdot_t F - F Jddot_t F`` applied as products of vectors: ``s^(k) = sum_l (F^(k))^T Q``
    terms, e.g. ``Fdot^T Q = -F^T Jdot_t^T F^T Q``; ``J_IK`` and its derivatives are the
    actuated rows of ``F, Fdot, Fddot`` (``Fdot`` row ``r1 = -(r0 Jdot_t) F``, ``Fddot`` row
    ``-(2 r1 Jdot_t + r0 Jddot_t) F``); one inverse of ``J_IK^T`` serves the three solves.  Returns OK
    or NONFINITE_RESULT (``J_IK`` singular, or a result not finite)."""
    task, act = mdl[TASK_ROWS], mdl[ACTUATORS]
    J, F, LU, G, wD = dat[JACOBIAN_J], dat[F_INV_JT], dat[LU_A], dat[RHS_R], dat[VECTORS_W]
    Qf, JIK = dat[Q_BAR], dat[J_IK]
    L, D = F.shape[0], F.shape[1]
    s0, s1, s2, a0, a1, b, c = wD[0], wD[1], wD[2], wD[3], wD[4], wD[5], wD[6]
    s0[:] = 0.0
    s1[:] = 0.0
    s2[:] = 0.0
    for l in range(L):
        F0, J1, J2 = F[l], J[1, l], J[2, l]
        matT_vec(F0, D, D, Qf[0, l], a0)                       # F^T Q
        matT_vec(F0, D, D, Qf[1, l], a1)                       # F^T Qdot
        matT_vec(F0, D, D, Qf[2, l], b)                        # F^T Qddot
        for j in range(D):
            s0[j] += a0[j]
            s2[j] += b[j]
        _task_T(J1, task, a0, b)
        matT_vec(F0, D, D, b, c)                               # -Fdot^T Q
        for j in range(D):
            s1[j] += a1[j] - c[j]
            a1[j] = 2.0 * (c[j] - a1[j])
        _task_T(J1, task, a1, b)                         # Jdot_t^T (2 c - 2 F^T Qdot)
        _task_T(J2, task, a0, c)
        for j in range(D):
            b[j] -= c[j]
        matT_vec(F0, D, D, b, c)                               # 2 Fdot^T Qdot + Fddot^T Q
        for j in range(D):
            s2[j] += c[j]
    for a in range(act.shape[0]):                        # rows of F, Fdot, Fddot: J_IK and derivatives
        l, i = act[a, 0], act[a, 1]
        F0, r0, r1, r2 = F[l], JIK[0, a], JIK[1, a], JIK[2, a]
        copy_vector(F0[i], r0)
        _task_T(J[1, l], task, r0, b)
        matT_vec(F0, D, D, b, r1)
        for j in range(D):
            r1[j] = -r1[j]
        _task_T(J[1, l], task, r1, b)
        _task_T(J[2, l], task, r0, c)
        for j in range(D):
            b[j] = 2.0 * b[j] + c[j]
        matT_vec(F0, D, D, b, r2)
        for j in range(D):
            r2[j] = -r2[j]
    na = act.shape[0]
    for i in range(na):
        for j in range(na):
            LU[i, j] = JIK[0, j, i]
    if not lu_inverse(LU, na, G):                        # G = J_IK^-T
        return NONFINITE_RESULT
    u0, u1, u2 = U[0], U[1], U[2]
    mat_vec(G, na, na, s0, u0)
    for j in range(na):
        s = s1[j]
        for a in range(na):
            s -= JIK[1, a, j] * u0[a]
        b[j] = s
    mat_vec(G, na, na, b, u1)
    for j in range(na):
        s = s2[j]
        for a in range(na):
            s -= JIK[2, a, j] * u0[a] + 2.0 * JIK[1, a, j] * u1[a]
        b[j] = s
    mat_vec(G, na, na, b, u2)
    for k in range(3):
        for j in range(na):
            if not math.isfinite(U[k, j]):
                return NONFINITE_RESULT
    return OK


@scratch_kernel
def sea_feedforward(mdl, dat, U, out):
    """Eqs. 1-2: ``out`` (4, na) motor position, velocity, acceleration and torque
    ``q_m = theta_a + K^-1 u`` (and its two derivatives), ``tau = u + M_m qdd_m``; a rigid
    actuator has ``K^-1 = 0``."""
    act, sea, th = mdl[ACTUATORS], mdl[SEA_PARAMS], dat[THETA]
    for a in range(act.shape[0]):
        l, i = act[a, 0], act[a, 1]
        c, Mm = sea[a, 0], sea[a, 1]
        for k in range(3):
            out[k, a] = th[k, l, i] + c * U[k, a]
        out[3, a] = U[0, a] + Mm * out[2, a]


@scratch_kernel
def _recursion(mdl, dat, Vt, gravity, U, status) -> int:
    """Fourth-order kinematics and second-order ID of every limb from the poses of
    :func:`.hoid_kinematics.limb_poses` (platform pose from limb 0); ``status[2]``: the limb."""
    off, F = mdl[PLATFORM_OFFSET], dat[F_INV_JT]
    H = dat[POSES_H]
    L = F.shape[0]
    nreal, C = mdl[N_REAL], dat[POSE_C]
    pose_mul(C[0, nreal[0] - 1], off, H[3])              # limb 0 carries the platform
    for l in range(L):
        code = limb_fourth_order_kinematics(mdl, dat, l, H[3], Vt)
        if code != OK:
            status[2] = l
            return code
        limb_second_order_forces(mdl, dat, l, gravity)
    return second_order_inverse_dynamics(mdl, dat, U)


@scratch_kernel
def _tree_motion(mdl, dat, out):
    """``out`` (5, nq): every tree joint's derivatives of orders 0..4 from its limb slot."""
    nreal, index, th = mdl[N_REAL], mdl[SLOT_JOINT], dat[THETA]
    for l in range(nreal.shape[0]):
        for i in range(nreal[l]):
            for k in range(5):
                out[k, index[l, i]] = th[k, l, i]


@scratch_kernel
def _slots_from_tree(mdl, dat, q):
    """``qs[l, i] = q[index[l, i]]`` of the tree joints, 0 in the cut-joint slots."""
    nreal, index, qs = mdl[N_REAL], mdl[SLOT_JOINT], dat[SLOT_Q]
    qs[:, :] = 0.0
    for l in range(nreal.shape[0]):
        for i in range(nreal[l]):
            qs[l, i] = q[index[l, i]]


@scratch_kernel
def _input_within_bounds(X, Vt) -> bool:
    """Every entry of the pose ``X`` (4, 4) finite, its position within ``MAX_POSITION``, and
    the ``k``-th derivative of the task twist (``Vt[k-1]``) within ``MAX_RATE[k]`` (the checks
    of :mod:`..bounds`; NaN fails every comparison)."""
    for i in range(4):
        for j in range(4):
            if not math.isfinite(X[i, j]):
                return False
    for i in range(3):
        if not abs(X[i, 3]) <= MAX_POSITION:
            return False
    for k in range(4):
        for j in range(Vt.shape[1]):
            if not abs(Vt[k, j]) <= RATE_BOUNDS[k]:
                return False
    return True


@scratch_kernel
def hoid_sample(mdl, dat, X, Vt, q_start, gravity, tol, max_iter, Q, U, motor, status) -> int:
    """The full higher-order inverse dynamics of one sample: the input bounds of the platform
    pose ``X`` (4, 4) and the task twist derivatives ``Vt`` (4, D) (BAD_INPUT), the loop closure
    (:func:`.hoid_kinematics.limb_newton` per limb, from the tree configuration ``q_start``
    (nq,)), the actuators checked against their strokes, the recursion, and the SEA
    feedforward, into ``Q`` (5, nq), ``U`` (3, na), ``motor`` (4, na).  Returns OK or the
    status, with ``status[0]`` its code and ``status[2]`` the limb or actuator."""
    nreal, lim, act = mdl[N_REAL], mdl[STROKES], mdl[ACTUATORS]
    qs = dat[SLOT_Q]
    if not _input_within_bounds(X, Vt):
        status[0], status[2] = BAD_INPUT, 0
        return BAD_INPUT
    _slots_from_tree(mdl, dat, q_start)
    for l in range(nreal.shape[0]):
        code = limb_newton(mdl, dat, l, X, tol, max_iter)
        if code != OK:
            status[0], status[2] = code, l
            return code
    for a in range(act.shape[0]):
        v = qs[act[a, 0], act[a, 1]]
        if v < lim[a, 0] - LIMIT_SLACK or v > lim[a, 1] + LIMIT_SLACK:
            status[0], status[2] = STROKE, a
            return STROKE
    code = _recursion(mdl, dat, Vt, gravity, U, status)
    status[0] = code
    if code != OK:
        return code
    _tree_motion(mdl, dat, Q)
    sea_feedforward(mdl, dat, U, motor)
    return OK


@scratch_kernel
def hoid_call(mdl, dat, Xs, Vts, q0, gravity, tol, max_iter, Q, U, motor, status) -> int:
    """:func:`hoid_sample` of each row ``r`` of a batch: platform poses ``Xs`` (B, 4, 4), task
    twist derivatives ``Vts`` (B, 4, D), the loop closure from ``q0`` (nq,) for row 0 and from
    the previous row's solution after, into ``Q`` (B, 5, nq), ``U`` (B, 3, na), ``motor``
    (B, 4, na).  Returns OK or the status, with ``status = (code, row, limb or actuator)``."""
    status[0] = OK
    for r in range(Xs.shape[0]):
        status[1] = r
        code = hoid_sample(mdl, dat, Xs[r], Vts[r], q0 if r == 0 else Q[r - 1, 0], gravity, tol, max_iter, Q[r],
                           U[r], motor[r], status)
        if code != OK:
            return code
    return OK


@scratch_kernel
def hoid_recursion_call(mdl, dat, q, Vt, gravity, Q, U, status) -> int:
    """Paper 002's recursion alone (the figure it reports: ``theta`` given): from the closed
    tree configuration ``q`` (nq,) and ``Vt`` (4, D), ``Q`` (5, nq) and ``U`` (3, na)."""
    _slots_from_tree(mdl, dat, q)
    for l in range(mdl[N_REAL].shape[0]):
        limb_poses(mdl, dat, l)
    status[1] = 0
    code = _recursion(mdl, dat, Vt, gravity, U, status)
    status[0] = code
    if code == OK:
        _tree_motion(mdl, dat, Q)
    return code
