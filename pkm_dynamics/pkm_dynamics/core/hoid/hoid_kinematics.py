"""Compiled kinematics of a PKM with simple limbs (paper 002): limb poses, the zeroth-order limb
inverse kinematics (Newton, warm-started) and the four-pass 4th-order kinematics of Sec. IV-B,
one limb per call, in the scalar style of :mod:`.chain_kernels`.  The numpy forms they follow
are :func:`..simple_limb.simple_limb_inverse_kinematics` and
:func:`..hoid_recursion.fourth_order_kinematics`.  Like every HOID kernel they allocate
nothing and run without numba's memory manager (:func:`.cache.scratch_kernel`: no
reference counts on the many views they take; arrays are copied entry by entry).

Model ``mdl`` (read-only, built by :mod:`.hoid_model`) and data ``dat`` (scratch of one
thread) are tuples of arrays, each entry named below by the constant that indexes it (with
paper 002's symbol; ``L`` limbs, ``D`` slots = task dimension, ``na`` actuators, ``nq`` tree
joints): ``dat[Q_BAR]`` reads as the paper's ``Q_bar``.
"""
from __future__ import annotations

import math

from ..numba_support.cache import scratch_kernel
from ..spatial.small_linalg import lu_inverse, lu_solve, mat_vec, norm1
from ..spatial.se3_kernels import ad_apply, ad_inv_apply, bracket_scaled, exp_se3, log_se3, matvec, pose_inv, pose_mul
from ..status import MAX_JT_CONDITION, NO_CONVERGENCE, OK, SINGULAR, SINGULAR_NEWTON


# -- the model tuple ``mdl`` ------------------------------------------------------------------
N_REAL = 0             # (L,) tree joints per limb; the slots after them are its cut-joint freedoms
SLOT_JOINT = 1         # (L, D) tree joint of each slot
SCREW_X = 2            # (L, D, 6) joint screws X_i
INERTIA_M = 3          # (L, D, 6, 6) body inertias M_i
REFERENCE_B = 4        # (L, D, 4, 4) reference poses B_i
CUT_SCREWS = 5         # (L, D, 6) cut-joint screws of the padding slots (platform frame, zero elsewhere)
END_TO_PLATFORM_T = 6  # (L, 4, 4) T_l: limb end -> platform frame at the reference configuration
CUT_PROJECTOR = 7      # (L, 6, 6) Pi_l: projector onto the span of the cut screws
PLATFORM_OFFSET = 8    # (4, 4) platform body -> platform frame (limb 0 carries the platform)
TASK_ROWS = 9          # (D,) the rows of P_t
ACTUATORS = 10         # (na, 2) actuator (limb, slot)
STROKES = 11           # (na, 2) its stroke (lower, upper)
SEA_PARAMS = 12        # (na, 2) 1/K (0: rigid) and M_m (eqs. 1-2)
C_REF = 13             # (4, 4) C_ref, the reference pose of the task manifold C_ref exp(P_p x)
P_P = 14               # (6, D) P_p, the task-space selection (paper 001 eq. 11)
JOINT_LIMITS = 15      # (nq, 2) lower and upper limit of every tree joint
# -- the data tuple ``dat`` -------------------------------------------------------------------
POSE_P = 0             # (L, D, 4, 4) P_i, relative poses (Ad(P_i)^-1 = Ad(C_i,i-1) carries twists up)
POSE_C = 1             # (L, D, 4, 4) C_i, absolute poses
POSE_CP = 2            # (L, D, 4, 4) C_p,i = F^-1 C_i, the poses in the platform frame
JACOBIAN_J = 3         # (4, L, D, 6) columns of J_p and its derivatives (eqs. 22-25)
THETA = 4              # (5, L, D) slot values theta and derivatives
TWIST_V = 5            # (4, L, D, 6) body twists V and derivatives
DELTA_V = 6            # (3, L, D, 6) Delta V and derivatives (eqs. 26-28)
BRACKETS = 7           # (3, L, D, 6) ad_X V, ad_dV J, Ad V'
F_INV_JT = 8           # (L, D, D) F = J_t^-1
CUT_S = 9              # (L, 4, 4) S_l, the cut-joint subgroup elements
SLOT_Q = 10            # (L, D) slot values of the Newton
LU_A = 11              # (D, D) a matrix to solve with (:mod:`..spatial.small_linalg`)
RHS_R = 12             # (D, D) its right-hand sides or inverse
POSES_H = 13           # (4, 4, 4) pose scratch
TWISTS_W = 14          # (16, 6) twist scratch
VECTORS_W = 15         # (8, D) vector scratch
Q_BAR = 16             # (3, L, D) Q_bar and derivatives (Sec. V-C)
J_IK = 17              # (3, D, D) J_IK and derivatives (eq. 14)
INFO = 18              # (1,) residual or condition number
GRAM = 19              # (2 D, D) scratch of a condition-number test
#: the entries of ``mdl`` and ``dat`` (their tuples are built by :mod:`.hoid_model` in this order)
MODEL_ENTRIES, DATA_ENTRIES = 16, 20



@scratch_kernel
def copy_pose(A, out):
    """``out[:, :] = A`` (4, 4) entry by entry (an array assignment would need numba's memory
    manager for its overlap copy, which these kernels run without)."""
    for i in range(4):
        for j in range(4):
            out[i, j] = A[i, j]


@scratch_kernel
def copy_vector(a, out):
    """``out[:] = a`` entry by entry (see :func:`copy_pose`)."""
    for i in range(a.shape[0]):
        out[i] = a[i]


@scratch_kernel
def limb_poses(mdl, dat, l):
    """``P_i = B_i exp(X_i theta_i)``, ``C_i = C_{i-1} P_i`` (paper 002 Sec. IV-B, pass 0) of
    limb ``l``'s tree joints from ``qs[l]``."""
    nreal, X, B = mdl[N_REAL], mdl[SCREW_X], mdl[REFERENCE_B]
    P, C, qs, H = dat[POSE_P], dat[POSE_C], dat[SLOT_Q], dat[POSES_H]
    for i in range(nreal[l]):
        exp_se3(X[l, i], qs[l, i], H[0])
        pose_mul(B[l, i], H[0], P[l, i])
        if i == 0:
            copy_pose(P[l, 0], C[l, 0])
        else:
            pose_mul(C[l, i - 1], P[l, i], C[l, i])


@scratch_kernel
def limb_end_pose(mdl, dat, l, out):
    """``out = C_end T_l`` (4, 4): the platform frame carried by limb ``l``'s chain before its
    cut-joint freedoms (the identity chain for a limb without tree joints)."""
    nreal, T, C = mdl[N_REAL], mdl[END_TO_PLATFORM_T], dat[POSE_C]
    n = nreal[l]
    if n == 0:
        copy_pose(T[l], out)
    else:
        pose_mul(C[l, n - 1], T[l], out)


@scratch_kernel
def limb_newton(mdl, dat, l, x, tol, max_iter) -> int:
    """Zeroth-order inverse kinematics of limb ``l`` for the platform pose ``x`` (4, 4), from
    the slot values in ``qs[l]`` (:func:`..simple_limb.simple_limb_inverse_kinematics`): the
    cut-joint freedoms start at ``S = exp(Pi log((C_end T)^-1 x))``; Newton steps with the
    task-space Jacobian of eq. 22 on the body-fixed error of ``F_l^-1 x``,
    ``F_l = C_end T_l S_l``, until its largest entry is below ``tol``.  Returns OK,
    SINGULAR_NEWTON or NO_CONVERGENCE (``info[0]``: the last residual)."""
    nreal, X, cutc, proj, task = mdl[N_REAL], mdl[SCREW_X], mdl[CUT_SCREWS], mdl[CUT_PROJECTOR], mdl[TASK_ROWS]
    C, qs, Sg, LU, R = dat[POSE_C], dat[SLOT_Q], dat[CUT_S], dat[LU_A], dat[RHS_R]
    H, w, info = dat[POSES_H], dat[TWISTS_W], dat[INFO]
    n, D = nreal[l], X.shape[1]
    limb_poses(mdl, dat, l)
    limb_end_pose(mdl, dat, l, H[1])
    pose_inv(H[1], H[0])
    pose_mul(H[0], x, H[2])
    log_se3(H[2], w[0])
    matvec(proj[l], w[0], w[1])
    exp_se3(w[1], 1.0, Sg[l])
    e = w[2]
    for _ in range(max_iter):
        limb_end_pose(mdl, dat, l, H[1])
        pose_mul(H[1], Sg[l], H[2])
        pose_inv(H[2], H[3])                                  # F_l^-1
        pose_mul(H[3], x, H[2])                               # E = F_l^-1 x
        E = H[2]
        e[0], e[1], e[2] = 0.5 * (E[2, 1] - E[1, 2]), 0.5 * (E[0, 2] - E[2, 0]), 0.5 * (E[1, 0] - E[0, 1])
        e[3], e[4], e[5] = E[0, 3], E[1, 3], E[2, 3]
        res = 0.0
        for k in range(6):
            res = max(res, abs(e[k]))
        info[0] = res
        if res < tol:
            return OK
        for i in range(D):                                    # J_t = P_t J_p(l), eq. 22
            if i < n:
                pose_mul(H[3], C[l, i], H[0])
                ad_apply(H[0], X[l, i], w[3])
                for r in range(D):
                    LU[r, i] = w[3, task[r]]
            else:
                for r in range(D):
                    LU[r, i] = cutc[l, i, task[r]]
        for r in range(D):
            R[r, 0] = e[task[r]]
        if not lu_solve(LU, D, R, 1):
            return SINGULAR_NEWTON
        for i in range(n):
            qs[l, i] += R[i, 0]
        xi = w[4]
        xi[:] = 0.0
        for i in range(n, D):
            for k in range(6):
                xi[k] += cutc[l, i, k] * R[i, 0]
        exp_se3(xi, 1.0, H[0])
        pose_mul(Sg[l], H[0], H[1])
        copy_pose(H[1], Sg[l])
        limb_poses(mdl, dat, l)
    return NO_CONVERGENCE


@scratch_kernel
def _column_sum(Jk, th, scale, out):
    """``out += scale * sum_i Jk[i] th[i]`` (6,): a Jacobian (columns ``Jk`` (D, 6)) times ``th``."""
    for i in range(Jk.shape[0]):
        s = scale * th[i]
        for k in range(6):
            out[k] += Jk[i, k] * s


@scratch_kernel
def _task_solve(F0, Vt, c, task, out):
    """``out = F (V_t - P_t c)`` (D,): the ``nu``-th order limb inverse kinematics (*)."""
    D = F0.shape[0]
    for i in range(D):
        s = 0.0
        for j in range(D):
            s += F0[i, j] * (Vt[j] - c[task[j]])
        out[i] = s


@scratch_kernel
def limb_fourth_order_kinematics(mdl, dat, l, Fp, Vt) -> int:
    """Paper 002 Sec. IV-B for limb ``l`` (its poses from :func:`limb_poses`; ``Fp`` (4, 4) the
    platform pose, ``Vt`` (4, D) the task twist and its derivatives): ``J_p`` (eq. 22), one LU
    of ``J_t`` giving ``F = J_t^-1``, and the four passes -- ``theta^(nu)`` by (*) with
    ``c^2..c^4`` (eqs. 16-18), ``Delta V`` and its derivatives (eqs. 26-28), ``Jdot, Jddot,
    Jdddot`` (eqs. 23-25, as brackets ``ad_dV J``), and the body twists ``V .. V'''`` by the
    forward recursion ``V_i = Ad(C_i,i-1) V_{i-1} + b_i``.  Returns SINGULAR (``info[0]``: the
    condition number) when ``kappa_1(J_t) > MAX_JT_CONDITION``."""
    nreal, X, cutc, task = mdl[N_REAL], mdl[SCREW_X], mdl[CUT_SCREWS], mdl[TASK_ROWS]
    P, C, CP, J, th = dat[POSE_P], dat[POSE_C], dat[POSE_CP], dat[JACOBIAN_J], dat[THETA]
    V, dV, XV, F = dat[TWIST_V], dat[DELTA_V], dat[BRACKETS], dat[F_INV_JT]
    qs, LU, H, w, info = dat[SLOT_Q], dat[LU_A], dat[POSES_H], dat[TWISTS_W], dat[INFO]
    n, D = nreal[l], X.shape[1]
    F0 = F[l]
    pose_inv(Fp, H[0])
    for i in range(D):                                       # eq. 22
        if i < n:
            pose_mul(H[0], C[l, i], CP[l, i])                # C_p,i = F^-1 C_i
            ad_apply(CP[l, i], X[l, i], J[0, l, i])
        else:
            copy_vector(cutc[l, i], J[0, l, i])
        for k in range(1, 4):
            J[k, l, i, :] = 0.0
        for r in range(D):
            LU[r, i] = J[0, l, i, task[r]]
    n1 = norm1(LU, D)
    if not lu_inverse(LU, D, F0):
        info[0] = math.inf
        return SINGULAR
    cond = n1 * norm1(F0, D)
    if not cond <= MAX_JT_CONDITION:
        info[0] = cond
        return SINGULAR
    t0, t1, t2, t3, t4 = th[0, l], th[1, l], th[2, l], th[3, l], th[4, l]
    for i in range(D):
        t0[i] = qs[l, i] if i < n else 0.0
    c, Vp0, Vp1, Vp2, u, v = w[5], w[6], w[7], w[8], w[9], w[10]
    # pass 1: 1st-order IK
    mat_vec(F0, D, D, Vt[0], t1)
    Vp0[:] = 0.0
    _column_sum(J[0, l], t1, 1.0, Vp0)
    # pass 2: twists, Delta V (eq. 26), Jdot (eq. 23), c^2 (eq. 17), 2nd-order IK
    c[:] = 0.0
    for i in range(n):
        V0, dV0 = V[0, l, i], dV[0, l, i]
        if i == 0:
            V0[:] = 0.0
        else:
            ad_inv_apply(P[l, i], V[0, l, i - 1], V0)
        for k in range(6):
            V0[k] += X[l, i, k] * t1[i]
        ad_apply(CP[l, i], V0, u)
        for k in range(6):
            dV0[k] = Vp0[k] - u[k]
        bracket_scaled(dV0, J[0, l, i], -1.0, J[1, l, i])
    _column_sum(J[1, l], t1, 1.0, c)
    _task_solve(F0, Vt[1], c, task, t2)
    copy_vector(c, Vp1)
    _column_sum(J[0, l], t2, 1.0, Vp1)
    # pass 3: accelerations, Delta Vdot (eq. 27), Jddot (eq. 24), c^3, 3rd-order IK
    c[:] = 0.0
    for i in range(n):
        V0, V1, dV0, dV1 = V[0, l, i], V[1, l, i], dV[0, l, i], dV[1, l, i]
        aXV0, AJ, AdV1 = XV[0, l, i], XV[1, l, i], XV[2, l, i]
        bracket_scaled(X[l, i], V0, 1.0, aXV0)
        if i == 0:
            V1[:] = 0.0
        else:
            ad_inv_apply(P[l, i], V[1, l, i - 1], V1)
        for k in range(6):
            V1[k] += X[l, i, k] * t2[i] - t1[i] * aXV0[k]
        ad_apply(CP[l, i], V1, AdV1)
        bracket_scaled(dV0, Vp0, 1.0, u)
        for k in range(6):
            dV1[k] = Vp1[k] - AdV1[k] + u[k]
        bracket_scaled(dV0, J[0, l, i], 1.0, AJ)
        bracket_scaled(dV0, AJ, 1.0, J[2, l, i])
        bracket_scaled(dV1, J[0, l, i], 1.0, u)
        for k in range(6):
            J[2, l, i, k] -= u[k]
    _column_sum(J[2, l], t1, 1.0, c)
    _column_sum(J[1, l], t2, 2.0, c)
    _task_solve(F0, Vt[2], c, task, t3)
    copy_vector(c, Vp2)
    _column_sum(J[0, l], t3, 1.0, Vp2)
    # pass 4: Vddot, Delta Vddot (eq. 28), Jdddot (eq. 25), c^4, 4th-order IK
    c[:] = 0.0
    for i in range(n):
        V0, V1, V2, dV0, dV1, dV2 = V[0, l, i], V[1, l, i], V[2, l, i], dV[0, l, i], dV[1, l, i], dV[2, l, i]
        aXV0, AJ, AdV1 = XV[0, l, i], XV[1, l, i], XV[2, l, i]
        if i == 0:
            V2[:] = 0.0
        else:
            ad_inv_apply(P[l, i], V[2, l, i - 1], V2)
        for k in range(6):
            u[k] = t2[i] * V0[k] + 2.0 * t1[i] * V1[k]
        bracket_scaled(X[l, i], u, 1.0, v)
        for k in range(6):
            V2[k] += X[l, i, k] * t3[i] - v[k]
        bracket_scaled(X[l, i], aXV0, t1[i] * t1[i], v)
        for k in range(6):
            V2[k] -= v[k]
        ad_apply(CP[l, i], V2, u)
        for k in range(6):
            dV2[k] = Vp2[k] - u[k]
            v[k] = AdV1[k] + Vp1[k]
        bracket_scaled(dV0, v, 1.0, u)
        for k in range(6):
            dV2[k] += u[k]
        bracket_scaled(dV1, Vp0, 1.0, u)
        for k in range(6):
            dV2[k] += u[k]
        J3 = J[3, l, i]
        bracket_scaled(dV0, AJ, 1.0, u)                     # -ad^3 J
        bracket_scaled(dV0, u, -1.0, J3)
        bracket_scaled(dV1, AJ, 2.0, u)                     # + 2 ad_dV' ad_dV J
        for k in range(6):
            J3[k] += u[k]
        bracket_scaled(dV1, J[0, l, i], 1.0, v)             # + ad_dV ad_dV' J
        bracket_scaled(dV0, v, 1.0, u)
        for k in range(6):
            J3[k] += u[k]
        bracket_scaled(dV2, J[0, l, i], 1.0, u)             # - ad_dV'' J
        for k in range(6):
            J3[k] -= u[k]
    _column_sum(J[3, l], t1, 1.0, c)
    _column_sum(J[2, l], t2, 3.0, c)
    _column_sum(J[1, l], t3, 3.0, c)
    _task_solve(F0, Vt[3], c, task, t4)
    # 3rd-order forward kinematics
    a, b = w[11], w[12]
    for i in range(n):
        V0, V1, V2, V3 = V[0, l, i], V[1, l, i], V[2, l, i], V[3, l, i]
        s1, s2, s3 = t1[i], t2[i], t3[i]
        if i == 0:
            V3[:] = 0.0
        else:
            ad_inv_apply(P[l, i], V[3, l, i - 1], V3)
        for k in range(6):
            u[k] = s3 * V0[k] + 3.0 * s2 * V1[k] + 3.0 * s1 * V2[k]
        bracket_scaled(X[l, i], u, 1.0, v)
        for k in range(6):
            V3[k] += X[l, i, k] * t4[i] - v[k]
            u[k] = s2 * V0[k] + s1 * V1[k]
        bracket_scaled(X[l, i], u, 1.0, a)
        bracket_scaled(X[l, i], a, 3.0 * s1, b)
        for k in range(6):
            V3[k] -= b[k]
        bracket_scaled(X[l, i], XV[0, l, i], 1.0, a)
        bracket_scaled(X[l, i], a, s1 * s1 * s1, b)
        for k in range(6):
            V3[k] -= b[k]
    return OK
