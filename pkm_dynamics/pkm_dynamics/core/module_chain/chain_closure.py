"""The closed-chain kinematics of one parallel module (paper 000 eqs. 2, 4-5, 7, 27-28, 61-64; its
twist maps of eq. 6 applied to twists and wrenches: :func:`carry_to_bodies`,
:func:`carry_back_to_base`; the map AE of any module's attachment frame: :func:`map_e`,
:func:`carry_from_e`), shared by the dynamics (:mod:`.chain_recursions`) and the kinematics
(:mod:`.chain_kinematics`).  ``S`` (30,) is one module's row of the scratch laid out in
:mod:`.chain_layout`; the status codes the kernels return: :mod:`..status`.
"""
from __future__ import annotations

import math

from ..bounds import MAX_EFFORT, MAX_POSITION, MAX_RATE
from ..numba_support.cache import scratch_kernel
from ..spatial.se3_kernels import (ad_inv_pose_rz_T_add, ad_inv_pose_rz_vec, carry_from_next, congruence_rz,
                                   congruence_translation, mat6T_vec, mat6_vec)
from ..status import CLOSURE, LIMIT_SLACK, OK, SINGULAR_ANGLE, SINGULAR_DET, SINGULAR_SIN, STROKE
from .chain_layout import (C_E, COS_Q, COS_Q1, COS_Q2, E_RZ, K1, K2, K3, K4, K5, K6, KA, KB, KE, KF, LOWER, MAP_E,
                           SIN_Q, SIN_Q1, SIN_Q2, UPPER, X_ACT, XD_ACT)

#: the input bounds of :mod:`..bounds` the kernels check (as module_chain._as_state): position of
#: a joint without limits, velocity, acceleration, effort and wrench components
BOUND_POSITION, BOUND_VELOCITY, BOUND_ACCELERATION, BOUND_EFFORT = (MAX_POSITION, MAX_RATE[1],
                                                                    MAX_RATE[2], MAX_EFFORT)


@scratch_kernel
def check_strokes(geo, X, status):
    """Every actuator of every row of ``X`` (B, n) within its stroke ``geo[k, LOWER]``, ``geo[k, UPPER]`` (as
    module_chain._check_actuators); else STROKE with ``status = (STROKE, row, module)``."""
    B, n = X.shape
    for r in range(B):
        for k in range(n):
            if X[r, k] < geo[k, LOWER] - LIMIT_SLACK or X[r, k] > geo[k, UPPER] + LIMIT_SLACK:
                status[0], status[1], status[2] = STROKE, r, k
                return STROKE
    return OK


@scratch_kernel
def closure(L, L1, Lc, Lc0, x, xd, S):
    """Closed-chain kinematics of a parallel module (eqs. 2, 4-5, 7, 27-28) into ``S`` (30,):
    x, xd, k1..k6, cos and sin of q, q1, q2 (the angles themselves, ``-acos`` of their cosines
    (eq. 2), only where wanted: :func:`loop_angles`); returns CLOSURE / SINGULAR_ANGLE / OK as
    :func:`.parallel_module.closure` raises."""
    d = x + Lc + Lc0
    if not (abs(L - L1) < d < L + L1):
        return CLOSURE
    cq = (d * d - L * L - L1 * L1) / (2.0 * L * L1)
    c1 = (d * d + L * L - L1 * L1) / (2.0 * d * L)
    c2 = (d * d + L1 * L1 - L * L) / (2.0 * d * L1)
    cq, c1, c2 = min(1.0, max(-1.0, cq)), min(1.0, max(-1.0, c1)), min(1.0, max(-1.0, c2))
    # q = -acos(cq) etc. (eq. 2), sin(-acos c) = -sqrt(1 - c^2): the sines without the angles
    s, s1, s2 = -math.sqrt(1.0 - cq * cq), -math.sqrt(1.0 - c1 * c1), -math.sqrt(1.0 - c2 * c2)
    if abs(s) < SINGULAR_SIN or abs(s1) < SINGULAR_SIN or abs(s2) < SINGULAR_SIN:
        return SINGULAR_ANGLE
    k1 = -d / (L * L1 * s)                                  # eq. 5a
    k2 = -(d - L * c1) / (d * L * s1)                       # eq. 5b
    k3 = -(d - L1 * c2) / (d * L1 * s2)                     # eq. 5c
    qd, qd1, qd2 = k1 * xd, k2 * xd, k3 * xd                # eq. 4
    k1d = -xd / (L * L1 * s) + d * cq * qd / (L * L1 * s * s)
    num, den = -(d - L * c1), d * L * s1
    k2d = (-(xd + L * s1 * qd1) * den - num * L * (xd * s1 + d * c1 * qd1)) / (den * den)
    num, den = -(d - L1 * c2), d * L1 * s2
    k3d = (-(xd + L1 * s2 * qd2) * den - num * L1 * (xd * s2 + d * c2 * qd2)) / (den * den)
    S[X_ACT], S[XD_ACT] = x, xd
    S[K1], S[K2], S[K3], S[K4], S[K5], S[K6] = k1, k2, k3, k1d * xd, k2d * xd, k3d * xd   # eq. 28
    S[COS_Q], S[SIN_Q], S[COS_Q1], S[SIN_Q1], S[COS_Q2], S[SIN_Q2] = cq, s, c1, s1, c2, s2
    return OK


@scratch_kernel
def loop_angles(S):
    """The loop angles ``q, q1`` of a parallel module (eq. 2: ``-acos`` of the cosines that
    :func:`closure` left in ``S``)."""
    return -math.acos(S[COS_Q]), -math.acos(S[COS_Q1])


@scratch_kernel
def actuator_force_coefficients(L1, Lc, Lc0, S):
    """``k_a = x + Lc0``, ``k_b = -L1 sin q2``, ``k_e = k_a + Lc``, ``k_f = L1 cos q2 / (k_b k_e)``
    of eqs. 62-64 into ``S`` after :func:`closure`; SINGULAR_DET when ``det A = k_b k_e``
    vanishes (eq. 61, as :func:`.parallel_module.actuator_wrench_maps`)."""
    ka = S[X_ACT] + Lc0
    kb = -L1 * S[SIN_Q2]
    ke = ka + Lc
    if abs(kb * ke) < SINGULAR_SIN * max(1.0, L1 * ke):     # det A (eq. 61)
        return SINGULAR_DET
    S[KA], S[KB], S[KE], S[KF] = ka, kb, ke, L1 * S[COS_Q2] / (kb * ke)
    return OK


@scratch_kernel
def congruence_translation_xz(M, px, pz, out):
    """``out = A^T M A`` (6, 6) for ``A = Ad_inv(T([px, 0, pz]))``: the translations of a parallel
    module's maps, in its plane (``T([L, 0, h])`` of A1, eq. 6a; ``T([k_a, 0, 0])`` of A4 after the
    rotation by q1, eq. 6d).  :func:`..spatial.se3_kernels.congruence_translation` without its
    products by the zero entries of ``Q = -[p]x`` (48 of 108 products; the same numbers, the terms
    dropped being exact zeros)."""
    for i in range(6):                              # out = M A
        m3, m4, m5 = M[i, 3], M[i, 4], M[i, 5]
        out[i, 0] = M[i, 0] - m4 * pz
        out[i, 1] = M[i, 1] + m3 * pz - m5 * px
        out[i, 2] = M[i, 2] + m4 * px
        out[i, 3], out[i, 4], out[i, 5] = m3, m4, m5
    for j in range(6):                              # out = A^T out (rows 3-5 unchanged)
        r3, r4, r5 = out[3, j], out[4, j], out[5, j]
        out[0, j] += -pz * r4
        out[1, j] += pz * r3 - px * r5
        out[2, j] += px * r4


@scratch_kernel
def cylinder_piston_inertia(M3, M4, ka, out):
    """``out = M_B3 + T^T M_B4 T`` (6, 6), ``T = Ad_inv(T([k_a, 0, 0]))``: the cylinder and the
    piston of a parallel module at B3 (eq. 6d: ``A4 = T A3``), before their common rotation by q1.
    :func:`congruence_translation_xz` at ``pz = 0`` without its products by that zero, with M_B3
    added (the same numbers)."""
    for i in range(6):                              # out = M_B4 T
        m4, m5 = M4[i, 4], M4[i, 5]
        out[i, 0] = M4[i, 0]
        out[i, 1] = M4[i, 1] - m5 * ka
        out[i, 2] = M4[i, 2] + m4 * ka
        out[i, 3], out[i, 4], out[i, 5] = M4[i, 3], m4, m5
    for j in range(6):                              # out = T^T out + M_B3
        r4, r5 = out[4, j], out[5, j]
        out[0, j] += M3[0, j]
        out[1, j] = out[1, j] - ka * r5 + M3[1, j]
        out[2, j] = out[2, j] + ka * r4 + M3[2, j]
        for i in range(3, 6):
            out[i, j] += M3[i, j]


@scratch_kernel
def rotation_z_vec(c, s, v, out):
    """``out = A v`` (6,) for ``A = Ad_inv(Rz(theta))`` (A3 of eq. 6c): both halves of the twist
    rotated by ``R^T``; :func:`..spatial.se3_kernels.ad_inv_pose_rz_vec` without the products by
    its zero offset (the same numbers)."""
    w0, w1, u0, u1 = v[0], v[1], v[3], v[4]
    out[0], out[1], out[2] = c * w0 + s * w1, c * w1 - s * w0, v[2]
    out[3], out[4], out[5] = c * u0 + s * u1, c * u1 - s * u0, v[5]


@scratch_kernel
def rotation_z_T_add(c, s, y, out):
    """``out += A^T y`` (6,) for ``A = Ad_inv(Rz(theta))``: a wrench rotated by ``R``;
    :func:`..spatial.se3_kernels.ad_inv_pose_rz_T_add` without its zero offset (the same numbers)."""
    f0, f1 = c * y[3] - s * y[4], s * y[3] + c * y[4]
    out[0] += c * y[0] - s * y[1]
    out[1] += s * y[0] + c * y[1]
    out[2] += y[2]
    out[3] += f0
    out[4] += f1
    out[5] += y[5]


@scratch_kernel
def carry_to_bodies(S, L, h, v, out):
    """``out[0], out[1], out[2] = A1 v, A3 v, A4 v`` (3, 6): a twist (or acceleration) of the
    base frame Bc of a parallel module seen from B1, B3, B4, the maps of eq. 6 (``A1 =
    Ad_inv(T([L, 0, h]) Rz(q))``, ``A3 = Ad_inv(Rz(q1))``, ``A4 = Ad_inv(T(k_a [cos q1, sin q1,
    0]) Rz(q1))``) applied without the matrices, from the cosines and sines in ``S``."""
    c, s, c1, s1, ka = S[COS_Q], S[SIN_Q], S[COS_Q1], S[SIN_Q1], S[KA]
    ad_inv_pose_rz_vec(c, s, L, 0.0, h, v, out[0])
    rotation_z_vec(c1, s1, v, out[1])
    ad_inv_pose_rz_vec(c1, s1, c1 * ka, s1 * ka, 0.0, v, out[2])


@scratch_kernel
def carry_back_to_base(S, L, h, y1, y3, y4, out):
    """``out += A1^T y1 + A3^T y3 + A4^T y4`` (6,): wrenches on B1, B3, B4 of a parallel module
    carried to its base frame Bc by the transposes of the maps of eq. 6 (``A1 = Ad_inv(T([L, 0,
    h]) Rz(q))``, ``A3 = Ad_inv(Rz(q1))``, ``A4 = Ad_inv(T(k_a [cos q1, sin q1, 0]) Rz(q1))``),
    applied without the matrices from the cosines and sines in ``S``."""
    c, s, c1, s1, ka = S[COS_Q], S[SIN_Q], S[COS_Q1], S[SIN_Q1], S[KA]
    ad_inv_pose_rz_T_add(c, s, L, 0.0, h, y1, out)
    rotation_z_T_add(c1, s1, y3, out)
    ad_inv_pose_rz_T_add(c1, s1, c1 * ka, s1 * ka, 0.0, y4, out)


# The constant map AE = Ad_inv(C_E) of any module (eqs. 6b, 9: twists of its last body B1 / B4 seen
# from the attachment frame E; inertias and wrenches carried back by its transpose, eqs. 23-24, 50).
# When C_E = T(p) Rz(theta) (the flag E_RZ, set at build) it applies as a rotation and a
# translation: a twist in 15 products instead of 36, an inertia in two structured congruences
# instead of the general one (324 products); else as the matrix of slot MAP_E.  ``g`` one
# module's row of ``geo``, ``Mk`` its slots of ``mats`` (5, 6, 6).


@scratch_kernel
def map_e(g, Mk, v, out):
    """``out = AE v`` (6,): a twist or acceleration of the module's last body seen from E (eq. 9b)."""
    if g[E_RZ] != 0.0:
        C = Mk[C_E]
        ad_inv_pose_rz_vec(C[0, 0], C[1, 0], C[0, 3], C[1, 3], C[2, 3], v, out)
    else:
        mat6_vec(Mk[MAP_E], v, out)


@scratch_kernel
def map_e_T_add(g, Mk, y, out, tmp):
    """``out += AE^T y`` (6,): a wrench at E carried onto the module's last body (eqs. 24, 50b);
    ``tmp`` (6,) scratch of the matrix path."""
    if g[E_RZ] != 0.0:
        C = Mk[C_E]
        ad_inv_pose_rz_T_add(C[0, 0], C[1, 0], C[0, 3], C[1, 3], C[2, 3], y, out)
    else:
        mat6T_vec(Mk[MAP_E], y, tmp)
        for j in range(6):
            out[j] += tmp[j]


@scratch_kernel
def carry_from_e(g, Mk, M_own, p_own, M_next, p_next, M_out, p_out, tmp, tip):
    """``M_out = M_own + AE^T M_next AE``, ``p_out = p_own + AE^T p_next`` (6, 6), (6,): the next
    module's articulated inertia and bias at E carried onto the module's last body (eqs. 23-24,
    50a-b; :func:`..spatial.se3_kernels.carry_from_next`); ``tmp`` (6, 6) scratch, not aliasing
    ``M_out``; ``tip``: the chain's last module (``M_E = 0``, eq. 20: ``M_out = M_own``)."""
    if g[E_RZ] == 0.0:
        carry_from_next(M_own, p_own, Mk[MAP_E], M_next, p_next, M_out, p_out, tmp, tip)
        return
    C = Mk[C_E]
    c, s, px, py, pz = C[0, 0], C[1, 0], C[0, 3], C[1, 3], C[2, 3]
    if tip:
        for i in range(6):
            for j in range(6):
                M_out[i, j] = M_own[i, j]
    else:
        if px == 0.0 and py == 0.0 and pz == 0.0:           # E at the body's origin (the crane's
            congruence_rz(M_next, c, s, M_out)              # second 4-bar): the translation is the identity
        else:
            congruence_rz(M_next, c, s, tmp)                # Ad_inv(T(p) Rz) = Ad_inv(Rz) Ad_inv(T(p))
            congruence_translation(tmp, px, py, pz, M_out)
        for i in range(6):
            for j in range(6):
                M_out[i, j] += M_own[i, j]
    for j in range(6):
        p_out[j] = p_own[j]
    ad_inv_pose_rz_T_add(c, s, px, py, pz, p_next, p_out)

