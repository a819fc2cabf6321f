"""The recursions of Algorithm 1 of paper 000 (Paz & Mattila), compiled: the first forward
recursion (:func:`first_forward_pass`, lines 2-10: closure, twists, wrench biases and xi of each
module), the backward recursion and second forward recursion of the forward dynamics
(:func:`fd_recursions`, lines 11-32) and those of the inverse dynamics (:func:`id_recursions`),
with the steps of one parallel or serial module each calls; the same steps as
:mod:`.parallel_module` and :mod:`.module_chain_dynamics` (the reference route the tests compare
against), as loops over modules with scalar arithmetic inside.  Model and scratch as laid out
in :mod:`.chain_layout`; the drivers of a public call are in :mod:`.chain_kernels`.
"""
from __future__ import annotations

from ..numba_support.cache import scratch_kernel
from ..status import OK, SINGULAR_ALPHA
from .chain_closure import (actuator_force_coefficients, carry_back_to_base, carry_from_e, carry_to_bodies, closure,
                            congruence_translation_xz, cylinder_piston_inertia, map_e, map_e_T_add)
from ..spatial.se3_kernels import (ad_inv, ad_inv_pose_rz, ad_inv_pose_rz_vec, bracket_scaled,
                              congruence_add, congruence_rz, congruence_translation, dot, exp_se3,
                              mat6T_vec, mat6_vec, pose_mul, wrench_bias)
from .chain_layout import (ALPHA, B1, B3, B4, COS_Q, COS_Q1, DELTA, GEO_H, GEO_L, GEO_L1, GEO_LC, GEO_LC0, K1,
                           K2, K4, K5, KA, KB, KF, KIND, MAP_E, NU, NUD, P_BIAS, PARALLEL, PSI, SCREW, SCREW0,
                           SERIAL_B, SERIAL_BODY, SERIAL_TIP, SIN_Q, SIN_Q1, SX, TIP_PRISMATIC, X_ACT, XD_ACT,
                           XI_C, XI_U)

@scratch_kernel
def parallel_maps(geo, S, A):
    """The twist maps A1, A3, A4 (eq. 6) of a parallel module as matrices into ``A`` (3, 6, 6),
    from the closure in ``S``: only the derivatives read them (the FD and ID steps apply the maps
    without the matrices, :func:`.chain_closure.carry_to_bodies`)."""
    c, s, c1, s1, ka = S[COS_Q], S[SIN_Q], S[COS_Q1], S[SIN_Q1], S[KA]
    ad_inv_pose_rz(c, s, geo[GEO_L], 0.0, geo[GEO_H], A[B1])          # Bc -> B1: T([L, 0, h]) Rz(q)
    ad_inv_pose_rz(c1, s1, 0.0, 0.0, 0.0, A[B3])              # Bc -> B3: Rz(q1)
    ad_inv_pose_rz(c1, s1, c1 * ka, s1 * ka, 0.0, A[B4])      # Bc -> B4


@scratch_kernel
def parallel_first_pass(geo, M, V, S, nu_Bc, tmp):
    """Algorithm 1 lines 4-7 for one parallel module: twists (eqs. 6a-d), wrench biases (eq. 12)
    and xi_1..xi_8 (eq. 30) from the closure in ``S``."""
    L, h = geo[GEO_L], geo[GEO_H]
    k1, k2, k4, k5 = S[K1], S[K2], S[K4], S[K5]
    xd, ka = S[XD_ACT], S[KA]
    qd, qd1 = k1 * xd, k2 * xd
    nus, ps, xa, xb = V[NU], V[P_BIAS], V[XI_U], V[XI_C]
    carry_to_bodies(S, L, h, nu_Bc, nus)
    nus[B1, 2] += qd                                         # eq. 6a
    nus[B3, 2] += qd1                                        # eq. 6c
    nus[B4, 2] += qd1                                        # eq. 6d
    nus[B4, 3] += xd
    nus[B4, 4] += ka * qd1
    for i in range(3):
        mat6_vec(M[i], nus[i], tmp)
        wrench_bias(nus[i], tmp, ps[i])                      # eq. 12
    for i in range(3):
        for j in range(6):
            xa[i, j] = 0.0
    xa[B1, 2] = k1                                           # eq. 30a
    xa[B3, 2] = k2                                           # eq. 30d
    xa[B4, 2] = k2                                           # eq. 30g
    xa[B4, 3] = 1.0
    xa[B4, 4] = ka * k2
    n1, n3, n4 = nus[B1], nus[B3], nus[B4]
    # xi_2 = s_z k4 + c1 (eq. 30b), xi_5 = s_z k5 + c3 (eq. 30e), c_i = ad(nu_i) s_i qd_i (eq. 10)
    xi2, xi5, xi8 = xb[B1], xb[B3], xb[B4]
    xi2[0], xi2[1], xi2[2] = n1[1] * qd, -n1[0] * qd, k4
    xi2[3], xi2[4], xi2[5] = n1[4] * qd, -n1[3] * qd, 0.0
    w0, w1, w2 = n3[1] * qd1, -n3[0] * qd1, k5
    v0, v1, v2 = n3[4] * qd1, -n3[3] * qd1, 0.0
    xi5[0], xi5[1], xi5[2], xi5[3], xi5[4], xi5[5] = w0, w1, w2, v0, v1, v2
    # xi_8 = Ad xi_5 + c4 (eq. 30h), c4 = ad(nu_B4) s_x xd
    xi8[0], xi8[1], xi8[2], xi8[3] = w0, w1, w2, v0
    xi8[4] = v1 + ka * w2 + n4[2] * xd
    xi8[5] = v2 - ka * w1 - n4[1] * xd


@scratch_kernel
def serial_first_pass(geo, M, A, V, S, nu_Bc, W):
    """Algorithm 1 lines 8-10 for a serial module: ``A = Ad_inv(B exp(X x))``, twist
    ``nu = A nu_Bc + X xd``, bias ``c = ad(nu) X xd`` (eq. 10) and ``p = -ad*(nu) M nu``
    (eq. 12).  ``W`` (3, 6, 6): scratch."""
    X = geo[SCREW]
    x, xd = S[X_ACT], S[XD_ACT]
    G, P = W[0, :4, :4], W[1, :4, :4]
    exp_se3(X, x, G)
    pose_mul(M[SERIAL_B, :4, :4], G, P)                      # B exp(X x)
    ad_inv(P, A[SERIAL_BODY])
    nu = V[NU, SERIAL_BODY]
    mat6_vec(A[SERIAL_BODY], nu_Bc, nu)
    for j in range(6):
        nu[j] += X[j] * xd
    bracket_scaled(nu, X, xd, V[XI_C, SERIAL_BODY])          # c (eq. 10)
    h = W[2, 0]
    mat6_vec(M[SERIAL_BODY], nu, h)
    wrench_bias(nu, h, V[P_BIAS, SERIAL_BODY])               # p (eq. 12)


@scratch_kernel
def first_forward_pass(geo, mats, A, V, S, W, w, x, xd, maps):
    """First forward recursion of Algorithm 1 (lines 2-10) for one state ``x``, ``xd`` (n,);
    ``maps``: the parallel modules' twist maps into ``A`` as well (:func:`parallel_maps`).
    Returns (code, module)."""
    n = geo.shape[0]
    nu, tmp = w[0], w[1]
    for j in range(6):
        nu[j] = 0.0
    for k in range(n):
        g = geo[k]
        sx = g[SX]
        if g[KIND] == PARALLEL:
            code = closure(g[GEO_L], g[GEO_L1], g[GEO_LC], g[GEO_LC0], sx * x[k], sx * xd[k], S[k])
            if code == OK:
                code = actuator_force_coefficients(g[GEO_L1], g[GEO_LC], g[GEO_LC0], S[k])
            if code != OK:
                return code, k
            if maps:
                parallel_maps(g, S[k], A[k])
            parallel_first_pass(g, mats[k], V[k], S[k], nu, tmp)
            src = V[k, NU, B1]                               # nu_B1
        else:
            S[k, X_ACT], S[k, XD_ACT] = x[k], xd[k]
            serial_first_pass(g, mats[k], A[k], V[k], S[k], nu, W)
            src = V[k, NU, SERIAL_BODY]                      # nu_B4
        map_e(g, mats[k], src, nu)                           # nu_E, eq. 6b / 9
    return OK, -1


@scratch_kernel
def parallel_alpha_beta(geo, M, A, V, S, W, w, tip):
    """Backward step of a parallel module: ``M~_B1``, ``p~_B1`` (eqs. 23-24) into ``W[1]``,
    ``w[2]`` from ``M_E = W[0]``, ``p_E = w[1]`` (``tip``: the chain's last module, ``M_E = 0``);
    then with the rows ``s_x^T K_i`` of eqs. 62-64 alpha (eqs. 32, 34), delta (eqs. 26, 43, 45)
    and psi (eqs. 42, 45) into ``S``.  Returns SINGULAR_ALPHA (eq. 36) or OK."""
    Mt, pt = W[1], w[2]
    carry_from_e(geo, M, M[B1], V[P_BIAS, B1], W[0], w[1], Mt, pt, W[2], tip)    # eqs. 23-24
    ka, kb, kf = S[KA], S[KB], S[KF]
    M3, M4, ps, xa, xb = M[B3], M[B4], V[P_BIAS], V[XI_U], V[XI_C]
    w1, w3, w4 = w[3], w[4], w[5]
    for j in range(6):                                       # s_x^T K_i M_i
        w1[j] = Mt[2, j] / kb
        w3[j] = kf * M3[2, j]
        w4[j] = kf * M4[2, j] + M4[3, j] + ka * kf * M4[4, j]
    alpha = dot(w1, xa[B1]) + dot(w3, xa[B3]) + dot(w4, xa[B4])
    gamma = pt[2] / kb + kf * ps[B3, 2] + kf * ps[B4, 2] + ps[B4, 3] + ka * kf * ps[B4, 4]
    delta = dot(w1, xb[B1]) + dot(w3, xb[B3]) + dot(w4, xb[B4]) + gamma
    psi = S[PSI]
    for j in range(6):
        psi[j] = 0.0
    carry_back_to_base(S, geo[GEO_L], geo[GEO_H], w1, w3, w4, psi)      # eq. 42
    S[ALPHA], S[DELTA] = alpha, delta
    if not abs(alpha) > 0.0:
        return SINGULAR_ALPHA
    return OK


@scratch_kernel
def parallel_base_inertia(geo, M, A, V, S, fk, W, w):
    """Assembled inertia ``M^A_Bc`` and bias ``p^A_Bc`` of a parallel module at Bc, eqs. 47-49
    (``M_B0 = 0``), into ``W[0]``, ``w[1]`` (the M_E, p_E of the previous module), from
    ``M~_B1 = W[1]``, ``p~_B1 = w[2]`` of :func:`parallel_alpha_beta`.

    The maps factor as ``A1 = Ad_inv(Rz(q)) Ad_inv(T([L, 0, h]))``, ``A3 = Ad_inv(Rz(q1))`` and
    ``A4 = Ad_inv(T([x + Lc0, 0, 0])) A3``, so ``sum_i A_i^T M_i A_i`` is a translation and a
    rotation of ``M~_B1`` plus one rotation of ``M_B3 + T^T M_B4 T``.  With
    ``x_i = xi_i u + xi_i+1`` (eqs. 48d-f), ``sum_i A_i^T (M_i x_i + p_i)`` is ``u hsum +
    sum_i A_i^T (M_i xi_i+1 + p_i)``, ``hsum = sum_i A_i^T M_i xi_i``; ``M_i xi_i`` are
    columns of the inertias (xi_1, xi_4, xi_7 of eq. 30 have one to three entries)."""
    alpha, delta = S[ALPHA], S[DELTA]
    psi = S[PSI]
    u = (fk - delta) / alpha
    MA, pA, hsum, y1, y3, y4 = W[3], w[1], w[7], w[8], w[9], w[6]
    congruence_rz(W[1], S[COS_Q], S[SIN_Q], W[2])            # A1^T M~_B1 A1
    congruence_translation_xz(W[2], geo[GEO_L], geo[GEO_H], MA)
    cylinder_piston_inertia(M[B3], M[B4], S[KA], W[2])     # M_B3 + T^T M_B4 T
    congruence_rz(W[2], S[COS_Q1], S[SIN_Q1], W[4])
    for i in range(6):
        for j in range(6):
            MA[i, j] += W[4, i, j]
    Mt, M3, M4 = W[1], M[B3], M[B4]
    k1, k2, ka = S[K1], S[K2], S[KA]
    for j in range(6):                                       # M_i xi_i, eq. 30a, d, g
        y1[j] = k1 * Mt[j, 2]
        y3[j] = k2 * M3[j, 2]
        y4[j] = k2 * M4[j, 2] + M4[j, 3] + ka * k2 * M4[j, 4]
        hsum[j] = 0.0
    carry_back_to_base(S, geo[GEO_L], geo[GEO_H], y1, y3, y4, hsum)
    xb, ps = V[XI_C], V[P_BIAS]
    mat6_vec(Mt, xb[B1], y1)                                   # M_i xi_i+1 + p_i
    mat6_vec(M3, xb[B3], y3)
    mat6_vec(M4, xb[B4], y4)
    for j in range(6):
        y1[j] += w[2, j]
        y3[j] += ps[B3, j]
        y4[j] += ps[B4, j]
        pA[j] = u * hsum[j]
    carry_back_to_base(S, geo[GEO_L], geo[GEO_H], y1, y3, y4, pA)   # eq. 49b
    for i in range(6):
        h = hsum[i] / alpha
        for j in range(6):
            W[0, i, j] = MA[i, j] - h * psi[j]              # eq. 49a


@scratch_kernel
def serial_base_projections(geo, M, V, S, fk, tip, W, w):
    """Backward step of a serial first module (its base fixed: no ``M_E``, ``p_E`` for a previous
    one), eqs. 50-51 without ``M^A`` itself: ``U = M^A X = M_B4 X + AE^T (M_E (AE X))``,
    ``p^A`` (eq. 50b) into ``w[2]``, ``D = X^T U``, ``u = f - X^T p^A`` into ``S``, from ``M_E =
    W[0]``, ``p_E = w[1]`` (``tip``: ``M_E = 0``).  The numbers of :func:`serial_backward` to
    round-off (two products of a matrix and a vector in place of its congruence)."""
    X, U, pA, y, z = geo[SCREW], S[PSI], w[2], w[3], w[4]
    mat6_vec(M[SERIAL_BODY], X, U)
    if not tip:
        map_e(geo, M, X, y)                                  # AE X
        mat6_vec(W[0], y, z)
        map_e_T_add(geo, M, z, U, w[5])                      # eqs. 50a, 51
    for j in range(6):
        pA[j] = V[P_BIAS, SERIAL_BODY, j]
    map_e_T_add(geo, M, w[1], pA, w[5])                      # eq. 50b
    S[ALPHA], S[DELTA] = dot(X, U), fk - dot(X, pA)


@scratch_kernel
def serial_tip_prismatic(geo, M, A, V, S, fk, W, w):
    """Backward step of a prismatic serial module at the chain's tip (eqs. 50-52 with ``M_E =
    0``: ``M^A = M_B4``, ``U = M_B4 X``, ``D`` constant): ``u`` (eq. 51), ``p^a`` (eq. 52b with
    ``M^a c = M_B4 c - U (U^T c) / D``) and ``M_E = A^T M^a A`` (eq. 52c) for the previous module
    as one translation of the build's constant ``Ad_inv(B)^T M^a Ad_inv(B)`` (slot
    :data:`.chain_layout.SERIAL_TIP`): ``A = Ad_inv(B exp(X x)) = Ad_inv(B) Ad_inv(T(R_B e x))``
    for ``X = (0, e)``.  The numbers of :func:`serial_backward` to round-off (108 products of
    the congruence in place of 324)."""
    X, U, pA, pa, c, Mb = geo[SCREW], S[PSI], w[2], w[3], V[XI_C, SERIAL_BODY], M[SERIAL_BODY]
    mat6_vec(Mb, X, U)                                         # eq. 51
    for j in range(6):
        pA[j] = V[P_BIAS, SERIAL_BODY, j]
    map_e_T_add(geo, M, w[1], pA, w[5])                      # eq. 50b
    D = dot(X, U)
    u = fk - dot(X, pA)
    S[ALPHA], S[DELTA] = D, u
    mat6_vec(Mb, c, pa)
    uc = dot(U, c) / D
    for j in range(6):
        pa[j] += pA[j] + U[j] * (u / D) - U[j] * uc         # eq. 52b
    B, x = M[SERIAL_B], S[X_ACT]
    d0 = (B[0, 0] * X[3] + B[0, 1] * X[4] + B[0, 2] * X[5]) * x
    d1 = (B[1, 0] * X[3] + B[1, 1] * X[4] + B[1, 2] * X[5]) * x
    d2 = (B[2, 0] * X[3] + B[2, 1] * X[4] + B[2, 2] * X[5]) * x
    congruence_translation(M[SERIAL_TIP], d0, d1, d2, W[0])  # eq. 52c
    mat6T_vec(A[SERIAL_BODY], pa, w[1])                        # eq. 52d


@scratch_kernel
def serial_backward(geo, M, A, V, S, fk, last, tip, W, w):
    """Backward step of a serial module (articulated-body step, eqs. 50-52): ``M^A``, ``p^A`` at
    B4, ``U = M^A X``, ``D = X^T U``, ``u = f - X^T p^A`` into ``S``; unless ``last`` (the first
    module: its base is fixed), the module's ``M_E``, ``p_E`` for the previous one.  ``tip``:
    the chain's last module (``M_E = 0``, eq. 20).  The first module takes
    :func:`serial_base_projections`, a prismatic tip :func:`serial_tip_prismatic`."""
    if last:
        serial_base_projections(geo, M, V, S, fk, tip, W, w)
        return
    if tip and geo[TIP_PRISMATIC] != 0.0:
        serial_tip_prismatic(geo, M, A, V, S, fk, W, w)
        return
    serial_backward_general(geo, M, A, V, S, fk, last, tip, W, w)


@scratch_kernel
def serial_backward_general(geo, M, A, V, S, fk, last, tip, W, w):
    """:func:`serial_backward` for any serial module, with ``M^A`` and the general congruence of
    eq. 52c (the route the structured steps are tested against)."""
    MA, pA, U, X = W[3], w[2], S[PSI], geo[SCREW]
    carry_from_e(geo, M, M[SERIAL_BODY], V[P_BIAS, SERIAL_BODY], W[0], w[1], MA, pA, W[2], tip)    # eqs. 50a-b
    mat6_vec(MA, X, U)                                         # eq. 51
    D = dot(X, U)
    u = fk - dot(X, pA)
    S[ALPHA], S[DELTA] = D, u
    if last:
        return
    c, pa = V[XI_C, SERIAL_BODY], w[3]
    Dinv = 1.0 / D
    for i in range(6):
        for j in range(6):
            MA[i, j] -= U[i] * U[j] * Dinv                   # eq. 52a
    mat6_vec(MA, c, pa)
    for j in range(6):
        pa[j] += pA[j] + U[j] * (u / D)                      # eq. 52b
    for i in range(6):
        for j in range(6):
            W[0, i, j] = 0.0
    congruence_add(A[SERIAL_BODY], MA, W[0], W[2])                     # eqs. 52c-d
    mat6T_vec(A[SERIAL_BODY], pa, w[1])


@scratch_kernel
def fd_recursions(geo, mats, nud0, A, V, S, W, w, f, f_ext, xdd):
    """Backward recursion and second forward recursion of Algorithm 1 (lines 11-32) after
    :func:`first_forward_pass`: ``xdd`` (n,) from ``f`` (n,) and the end-effector wrench
    ``f_ext`` (6,) (eq. 20: ``p_E = -f_ext``, ``M_E = 0``).  Returns (code, module)."""
    n = geo.shape[0]
    for i in range(6):
        for j in range(6):
            W[0, i, j] = 0.0
        w[1, i] = -f_ext[i]
    for k in range(n - 1, -1, -1):
        g = geo[k]
        fk = g[SX] * f[k]
        if g[KIND] == PARALLEL:
            code = parallel_alpha_beta(g, mats[k], A[k], V[k], S[k], W, w, k == n - 1)
            if code != OK:
                return code, k
            if k > 0:
                parallel_base_inertia(g, mats[k], A[k], V[k], S[k], fk, W, w)
        else:
            serial_backward(g, mats[k], A[k], V[k], S[k], fk, k == 0, k == n - 1, W, w)
    nud, acc = w[10], w[11]
    for j in range(6):
        nud[j] = nud0[j]
    for k in range(n):
        g = geo[k]
        if g[KIND] == PARALLEL:
            a = (g[SX] * f[k] - dot(S[k, PSI], nud) - S[k, DELTA]) / S[k, ALPHA]   # eq. 46
            xdd[k] = g[SX] * a
            s = S[k]
            ad_inv_pose_rz_vec(s[COS_Q], s[SIN_Q], g[GEO_L], 0.0, g[GEO_H], nud, acc)   # A1 nud
            for j in range(6):
                acc[j] += V[k, XI_U, B1, j] * a + V[k, XI_C, B1, j]             # eq. 29a
        else:
            mat6_vec(A[k, SERIAL_BODY], nud, acc)
            for j in range(6):
                acc[j] += V[k, XI_C, SERIAL_BODY, j]
            a = (S[k, DELTA] - dot(S[k, PSI], acc)) / S[k, ALPHA]
            xdd[k] = a
            for j in range(6):
                acc[j] += g[SCREW0 + j] * a
        map_e(g, mats[k], acc, nud)                                            # eq. 9b
    return OK, -1


@scratch_kernel
def parallel_body_wrenches(M, acc, ps, F_E, F, tmp):
    """The wrenches ``F`` (3, 6) of the bodies B1, B3, B4 of a parallel module from their
    accelerations ``acc`` (3, 6) and biases ``ps`` (3, 6): ``F_i = M_i nud_i + p_i`` (eq. 11),
    the next module's wrench ``F_E`` carried onto B1 by the map of slot MAP_E (eq. 19);
    ``tmp`` (6,) scratch."""
    for b in range(3):
        mat6_vec(M[b], acc[b], F[b])
        for j in range(6):
            F[b, j] += ps[b, j]
    mat6T_vec(M[MAP_E], F_E, tmp)
    for j in range(6):
        F[B1, j] += tmp[j]


@scratch_kernel
def id_recursions(geo, mats, nud0, A, V, S, W, w, xdd, f_ext, f):
    """Chain inverse dynamics after :func:`first_forward_pass`: forward recursion of the
    accelerations (eqs. 7, 9 / 27, 29), backward recursion of the wrenches: parallel modules
    eqs. 11, 19, 65, 16 and the base wrench eq. 38, serial modules Newton-Euler (eq. 11)
    projected on the screw.  ``f`` (n,) out."""
    n = geo.shape[0]
    nud, F_E, h, tmp = w[10], w[1], w[3], w[4]
    for j in range(6):
        nud[j] = nud0[j]
    for k in range(n):
        g = geo[k]
        acc = V[k, NUD]
        if g[KIND] == PARALLEL:
            a = g[SX] * xdd[k]
            carry_to_bodies(S[k], g[GEO_L], g[GEO_H], nud, acc)
            for b in range(3):
                for j in range(6):
                    acc[b, j] += V[k, XI_U, b, j] * a + V[k, XI_C, b, j]       # eq. 29
        else:
            mat6_vec(A[k, SERIAL_BODY], nud, acc[SERIAL_BODY])
            for j in range(6):
                acc[SERIAL_BODY, j] += V[k, XI_C, SERIAL_BODY, j] + g[SCREW0 + j] * xdd[k]   # eq. 9
        map_e(g, mats[k], acc[0], nud)                                         # nu_E from B1 / B4
    for j in range(6):
        F_E[j] = -f_ext[j]                                                     # eq. 20
    for k in range(n - 1, -1, -1):
        g = geo[k]
        M, acc, ps = mats[k], V[k, NUD], V[k, P_BIAS]
        if g[KIND] == PARALLEL:
            F = W[0, :3]
            parallel_body_wrenches(M, acc, ps, F_E, F, tmp)                    # eqs. 11, 19
            ka, kb, kf = S[k, KA], S[k, KB], S[k, KF]
            f[k] = g[SX] * (F[B1, 2] / kb + kf * F[B3, 2] + kf * F[B4, 2] + F[B4, 3]
                            + ka * kf * F[B4, 4])                              # eqs. 65, 16
            for j in range(6):
                F_E[j] = 0.0
            carry_back_to_base(S[k], g[GEO_L], g[GEO_H], F[B1], F[B3], F[B4], F_E)   # eq. 38
        else:
            mat6_vec(M[SERIAL_BODY], acc[SERIAL_BODY], h)
            mat6T_vec(M[MAP_E], F_E, tmp)
            for j in range(6):
                h[j] += ps[SERIAL_BODY, j] + tmp[j]
            f[k] = dot(g[SCREW], h)
            mat6T_vec(A[k, SERIAL_BODY], h, F_E)
    return OK, -1
