"""Compiled kernels of the module-chain dynamics of paper 000 (Paz & Mattila): the same steps
as :mod:`pkm_dynamics.core.parallel_module` and :mod:`pkm_dynamics.core.module_chain` (which
stay the reference route the tests compare against), written as loops over modules with scalar
arithmetic inside, on the flat model arrays of :class:`.chain_model.ChainModel` and the scratch
of :class:`.chain_model.ChainData`.

Layouts (n modules; see :mod:`.chain_model` for how they are filled):

* ``geo`` (n, 22): 0 kind (0 parallel, 1 serial), 1 sx, 2 lower, 3 upper, 4 L, 5 L1, 6 Lc,
  7 Lc0, 8 h, 9-14 screw X (serial), 15-17 tree joints of link, cylinder, piston (serial: its
  joint in 15), 18-19 signs and 20-21 references of the link and cylinder joints (tree value =
  sign * (paper angle - reference));
* ``mats`` (n, 5, 6, 6): inertias M_B1, M_B3, M_B4 (serial: M_B4 in slot 0 and its joint's
  reference pose B (4, 4) in the corner of slot 1), slot 3 the map ``AE`` of twists to the
  attachment frame E, slot 4 the pose of E (B1_C_E or B4_C_E) in its corner; ``nud0`` (6,):
  -gravity in Bc of module 1; ``root`` (4, 4): Bc of module 1 in the root link;
* scratch ``A`` (n, 3, 6, 6): twist maps Bc -> B1, B3, B4 (serial: slot 0; those of a parallel
  module only for the derivatives, :func:`parallel_maps`: the parallel steps apply the maps of
  eq. 6 without them, from the cosines and sines in ``S``: :func:`carry_to_bodies`,
  :func:`carry_back_to_base`);
  ``V`` (n, 5, 3, 6): twists, wrench biases p (eq. 12), xi_1/4/7 and xi_2/5/8 (eq. 30; serial:
  c of eq. 10 in slot 3), accelerations; ``S`` (n, 30): 0 x, 1 xd (paper sign), 2-4 unused,
  5-10 k1..k6 (eqs. 5, 28), 11 alpha (serial D), 12 delta (serial u), 13-16 ka, kb, ke, kf
  (eqs. 62-64), 18-23 psi (serial U), 24-29 cos and sin of q, q1, q2; ``W`` (6, 6, 6) and
  ``w`` (12, 6): matrices and vectors of one step.  ``geo``, ``mats``, ``nud0`` are views of one
  flat model buffer and ``A``, ``V``, ``S``, ``W``, ``w`` of one flat scratch buffer, in this order
  (:func:`model_arrays`, :func:`scratch_arrays`).

Each driver returns a status code (:mod:`..status`; the closure of a parallel module:
:mod:`.chain_closure`) and writes the culprit into ``status``: (code, row, index).
"""
from __future__ import annotations

import math

from ..numba_support.cache import scratch_kernel
from .chain_closure import (BOUND_ACCELERATION, BOUND_EFFORT, BOUND_POSITION, BOUND_VELOCITY,  # noqa: F401
                            actuator_force_coefficients, carry_back_to_base, carry_to_bodies, check_strokes, closure)
from ..spatial.se3_kernels import (ad_inv, ad_inv_pose_rz, ad_inv_pose_rz_vec, bracket_scaled,
                              carry_from_next, congruence_add, congruence_rz, congruence_translation, dot, exp_se3,
                              matTvec, matvec, pose_mul, wrench_bias)
from ..status import BAD_INPUT, NONFINITE_RESULT, OK, SINGULAR_ALPHA


@scratch_kernel
def parallel_maps(geo, S, A):
    """The twist maps A1, A3, A4 (eq. 6) of a parallel module as matrices into ``A`` (3, 6, 6),
    from the closure in ``S``: only the derivatives read them (the FD and ID steps apply the maps
    without the matrices, :func:`.chain_closure.carry_to_bodies`)."""
    c, s, c1, s1, ka = S[24], S[25], S[26], S[27], S[13]
    ad_inv_pose_rz(c, s, geo[4], 0.0, geo[8], A[0])          # Bc -> B1: T([L, 0, h]) Rz(q)
    ad_inv_pose_rz(c1, s1, 0.0, 0.0, 0.0, A[1])              # Bc -> B3: Rz(q1)
    ad_inv_pose_rz(c1, s1, c1 * ka, s1 * ka, 0.0, A[2])      # Bc -> B4


@scratch_kernel
def parallel_first_pass(geo, M, V, S, nu_Bc, tmp):
    """Algorithm 1 lines 4-7 for one parallel module: twists (eqs. 6a-d), wrench biases (eq. 12)
    and xi_1..xi_8 (eq. 30) from the closure in ``S``."""
    L, h = geo[4], geo[8]
    k1, k2, k4, k5 = S[5], S[6], S[8], S[9]
    xd, ka = S[1], S[13]
    qd, qd1 = k1 * xd, k2 * xd
    nus, ps, xa, xb = V[0], V[1], V[2], V[3]
    carry_to_bodies(S, L, h, nu_Bc, nus)
    nus[0, 2] += qd                                          # eq. 6a
    nus[1, 2] += qd1                                         # eq. 6c
    nus[2, 2] += qd1                                         # eq. 6d
    nus[2, 3] += xd
    nus[2, 4] += ka * qd1
    for i in range(3):
        matvec(M[i], nus[i], tmp)
        wrench_bias(nus[i], tmp, ps[i])                      # eq. 12
    for i in range(3):
        for j in range(6):
            xa[i, j] = 0.0
    xa[0, 2] = k1                                            # eq. 30a
    xa[1, 2] = k2                                            # eq. 30d
    xa[2, 2] = k2                                            # eq. 30g
    xa[2, 3] = 1.0
    xa[2, 4] = ka * k2
    n1, n3, n4 = nus[0], nus[1], nus[2]
    # xi_2 = s_z k4 + c1 (eq. 30b), xi_5 = s_z k5 + c3 (eq. 30e), c_i = ad(nu_i) s_i qd_i (eq. 10)
    xb[0, 0], xb[0, 1], xb[0, 2] = n1[1] * qd, -n1[0] * qd, k4
    xb[0, 3], xb[0, 4], xb[0, 5] = n1[4] * qd, -n1[3] * qd, 0.0
    w0, w1, w2 = n3[1] * qd1, -n3[0] * qd1, k5
    v0, v1, v2 = n3[4] * qd1, -n3[3] * qd1, 0.0
    xb[1, 0], xb[1, 1], xb[1, 2], xb[1, 3], xb[1, 4], xb[1, 5] = w0, w1, w2, v0, v1, v2
    # xi_8 = Ad xi_5 + c4 (eq. 30h), c4 = ad(nu_B4) s_x xd
    xb[2, 0], xb[2, 1], xb[2, 2], xb[2, 3] = w0, w1, w2, v0
    xb[2, 4] = v1 + ka * w2 + n4[2] * xd
    xb[2, 5] = v2 - ka * w1 - n4[1] * xd


@scratch_kernel
def serial_first_pass(geo, M, A, V, S, nu_Bc, W):
    """Algorithm 1 lines 8-10 for a serial module: ``A = Ad_inv(B exp(X x))``, twist
    ``nu = A nu_Bc + X xd``, bias ``c = ad(nu) X xd`` (eq. 10) and ``p = -ad*(nu) M nu``
    (eq. 12).  ``W`` (3, 6, 6): scratch."""
    X = geo[9:15]
    x, xd = S[0], S[1]
    G, P = W[0, :4, :4], W[1, :4, :4]
    exp_se3(X, x, G)
    pose_mul(M[1, :4, :4], G, P)                             # B exp(X x)
    ad_inv(P, A[0])
    nu = V[0, 0]
    matvec(A[0], nu_Bc, nu)
    for j in range(6):
        nu[j] += X[j] * xd
    bracket_scaled(nu, X, xd, V[3, 0])                       # c (eq. 10)
    h = W[2, 0]
    matvec(M[0], nu, h)
    wrench_bias(nu, h, V[1, 0])                              # p (eq. 12)


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
        sx = g[1]
        if g[0] == 0.0:
            code = closure(g[4], g[5], g[6], g[7], sx * x[k], sx * xd[k], S[k])
            if code == OK:
                code = actuator_force_coefficients(g[5], g[6], g[7], S[k])
            if code != OK:
                return code, k
            if maps:
                parallel_maps(g, S[k], A[k])
            parallel_first_pass(g, mats[k], V[k], S[k], nu, tmp)
            src = V[k, 0, 0]                                 # nu_B1
        else:
            S[k, 0], S[k, 1] = x[k], xd[k]
            serial_first_pass(g, mats[k], A[k], V[k], S[k], nu, W)
            src = V[k, 0, 0]                                 # nu_B4
        matvec(mats[k, 3], src, nu)                          # nu_E, eq. 6b / 9
    return OK, -1


@scratch_kernel
def parallel_alpha_beta(geo, M, AE, A, V, S, W, w):
    """Backward step of a parallel module: ``M~_B1``, ``p~_B1`` (eqs. 23-24) into ``W[1]``,
    ``w[2]`` from ``M_E = W[0]``, ``p_E = w[1]``; then with the rows ``s_x^T K_i`` of eqs. 62-64
    alpha (eqs. 32, 34), delta (eqs. 26, 43, 45) and psi (eqs. 42, 45) into ``S``.  Returns
    SINGULAR_ALPHA (eq. 36) or OK."""
    Mt, pt = W[1], w[2]
    carry_from_next(M[0], V[1, 0], AE, W[0], w[1], Mt, pt, W[2])    # eqs. 23-24
    ka, kb, kf = S[13], S[14], S[16]
    M3, M4, ps, xa, xb = M[1], M[2], V[1], V[2], V[3]
    w1, w3, w4 = w[3], w[4], w[5]
    for j in range(6):                                       # s_x^T K_i M_i
        w1[j] = Mt[2, j] / kb
        w3[j] = kf * M3[2, j]
        w4[j] = kf * M4[2, j] + M4[3, j] + ka * kf * M4[4, j]
    alpha = dot(w1, xa[0]) + dot(w3, xa[1]) + dot(w4, xa[2])
    gamma = pt[2] / kb + kf * ps[1, 2] + kf * ps[2, 2] + ps[2, 3] + ka * kf * ps[2, 4]
    delta = dot(w1, xb[0]) + dot(w3, xb[1]) + dot(w4, xb[2]) + gamma
    psi = S[18:24]
    for j in range(6):
        psi[j] = 0.0
    carry_back_to_base(S, geo[4], geo[8], w1, w3, w4, psi)              # eq. 42
    S[11], S[12] = alpha, delta
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
    alpha, delta = S[11], S[12]
    psi = S[18:24]
    u = (fk - delta) / alpha
    MA, pA, hsum, y1, y3, y4 = W[3], w[1], w[7], w[8], w[9], w[6]
    congruence_rz(W[1], S[24], S[25], W[2])                  # A1^T M~_B1 A1
    congruence_translation(W[2], geo[4], 0.0, geo[8], MA)
    congruence_translation(M[2], S[13], 0.0, 0.0, W[2])      # T^T M_B4 T, then + M_B3
    for i in range(6):
        for j in range(6):
            W[2, i, j] += M[1, i, j]
    congruence_rz(W[2], S[26], S[27], W[4])
    for i in range(6):
        for j in range(6):
            MA[i, j] += W[4, i, j]
    Mt, M3, M4 = W[1], M[1], M[2]
    k1, k2, ka = S[5], S[6], S[13]
    for j in range(6):                                       # M_i xi_i, eq. 30a, d, g
        y1[j] = k1 * Mt[j, 2]
        y3[j] = k2 * M3[j, 2]
        y4[j] = k2 * M4[j, 2] + M4[j, 3] + ka * k2 * M4[j, 4]
        hsum[j] = 0.0
    carry_back_to_base(S, geo[4], geo[8], y1, y3, y4, hsum)
    xb, ps = V[3], V[1]
    matvec(Mt, xb[0], y1)                                    # M_i xi_i+1 + p_i
    matvec(M3, xb[1], y3)
    matvec(M4, xb[2], y4)
    for j in range(6):
        y1[j] += w[2, j]
        y3[j] += ps[1, j]
        y4[j] += ps[2, j]
        pA[j] = u * hsum[j]
    carry_back_to_base(S, geo[4], geo[8], y1, y3, y4, pA)    # eq. 49b
    for i in range(6):
        h = hsum[i] / alpha
        for j in range(6):
            W[0, i, j] = MA[i, j] - h * psi[j]              # eq. 49a


@scratch_kernel
def serial_backward(M, AE, A, V, S, X, fk, last, W, w):
    """Backward step of a serial module (articulated-body step, eqs. 50-52): ``M^A``, ``p^A`` at
    B4, ``U = M^A X``, ``D = X^T U``, ``u = f - X^T p^A`` into ``S``; unless ``last`` (the first
    module: its base is fixed), the module's ``M_E``, ``p_E`` for the previous one."""
    MA, pA, U = W[3], w[2], S[18:24]
    carry_from_next(M[0], V[1, 0], AE, W[0], w[1], MA, pA, W[2])    # eqs. 50a-b
    matvec(MA, X, U)                                         # eq. 51
    D = dot(X, U)
    u = fk - dot(X, pA)
    S[11], S[12] = D, u
    if last:
        return
    c, pa = V[3, 0], w[3]
    Dinv = 1.0 / D
    for i in range(6):
        for j in range(6):
            MA[i, j] -= U[i] * U[j] * Dinv                   # eq. 52a
    matvec(MA, c, pa)
    for j in range(6):
        pa[j] += pA[j] + U[j] * (u / D)                      # eq. 52b
    for i in range(6):
        for j in range(6):
            W[0, i, j] = 0.0
    congruence_add(A[0], MA, W[0], W[2])                     # eqs. 52c-d
    matTvec(A[0], pa, w[1])


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
        fk = g[1] * f[k]
        if g[0] == 0.0:
            code = parallel_alpha_beta(g, mats[k], mats[k, 3], A[k], V[k], S[k], W, w)
            if code != OK:
                return code, k
            if k > 0:
                parallel_base_inertia(g, mats[k], A[k], V[k], S[k], fk, W, w)
        else:
            serial_backward(mats[k], mats[k, 3], A[k], V[k], S[k], g[9:15], fk, k == 0, W, w)
    nud, acc = w[10], w[11]
    for j in range(6):
        nud[j] = nud0[j]
    for k in range(n):
        g = geo[k]
        if g[0] == 0.0:
            a = (g[1] * f[k] - dot(S[k, 18:24], nud) - S[k, 12]) / S[k, 11]    # eq. 46
            xdd[k] = g[1] * a
            s = S[k]
            ad_inv_pose_rz_vec(s[24], s[25], g[4], 0.0, g[8], nud, acc)        # A1 nud
            for j in range(6):
                acc[j] += V[k, 2, 0, j] * a + V[k, 3, 0, j]                    # eq. 29a
        else:
            matvec(A[k, 0], nud, acc)
            for j in range(6):
                acc[j] += V[k, 3, 0, j]
            a = (S[k, 12] - dot(S[k, 18:24], acc)) / S[k, 11]
            xdd[k] = a
            for j in range(6):
                acc[j] += g[9 + j] * a
        matvec(mats[k, 3], acc, nud)                                           # eq. 9b
    return OK, -1


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
        acc = V[k, 4]
        if g[0] == 0.0:
            a = g[1] * xdd[k]
            carry_to_bodies(S[k], g[4], g[8], nud, acc)
            for b in range(3):
                for j in range(6):
                    acc[b, j] += V[k, 2, b, j] * a + V[k, 3, b, j]             # eq. 29
        else:
            matvec(A[k, 0], nud, acc[0])
            for j in range(6):
                acc[0, j] += V[k, 3, 0, j] + g[9 + j] * xdd[k]                 # eq. 9
        matvec(mats[k, 3], acc[0], nud)
    for j in range(6):
        F_E[j] = -f_ext[j]                                                     # eq. 20
    for k in range(n - 1, -1, -1):
        g = geo[k]
        M, acc, ps = mats[k], V[k, 4], V[k, 1]
        if g[0] == 0.0:
            F = W[0, :3]
            for b in range(3):
                matvec(M[b], acc[b], F[b])                                     # eq. 11
                for j in range(6):
                    F[b, j] += ps[b, j]
            matTvec(M[3], F_E, tmp)                                            # eq. 19
            for j in range(6):
                F[0, j] += tmp[j]
            ka, kb, kf = S[k, 13], S[k, 14], S[k, 16]
            f[k] = g[1] * (F[0, 2] / kb + kf * F[1, 2] + kf * F[2, 2] + F[2, 3] + ka * kf * F[2, 4])  # eqs. 65, 16
            for j in range(6):
                F_E[j] = 0.0
            carry_back_to_base(S[k], g[4], g[8], F[0], F[1], F[2], F_E)           # eq. 38
        else:
            matvec(M[0], acc[0], h)
            matTvec(M[3], F_E, tmp)
            for j in range(6):
                h[j] += ps[0, j] + tmp[j]
            f[k] = dot(g[9:15], h)
            matTvec(A[k, 0], h, F_E)
    return OK, -1


@scratch_kernel
def check_inputs(inverse, geo, X, XD, T, FE, status):
    """The four inputs (``status`` index 0-3: x, xd, third = xdd (``inverse``) or f, f_ext) over
    the whole batch finite and within their bounds (:mod:`..bounds`), then the strokes of every
    row (index: module), in the order of the reference route (``_as_state`` then
    ``_check_actuators``).  Returns the code."""
    B, n = X.shape
    third = BOUND_ACCELERATION if inverse else BOUND_EFFORT
    for r in range(B):
        for k in range(n):
            for which in range(3):
                v = X[r, k] if which == 0 else (XD[r, k] if which == 1 else T[r, k])
                bound = BOUND_POSITION if which == 0 else (BOUND_VELOCITY if which == 1 else third)
                if not abs(v) <= bound:                   # NaN fails too
                    status[0], status[1], status[2] = BAD_INPUT, r, which
                    return BAD_INPUT
    for r in range(FE.shape[0]):
        for j in range(6):
            if not abs(FE[r, j]) <= BOUND_EFFORT:
                status[0], status[1], status[2] = BAD_INPUT, r, 3
                return BAD_INPUT
    return check_strokes(geo, X, status)


@scratch_kernel
def wrench_row(FE, r):
    """The row of ``FE`` holding the end-effector wrench of state ``r``: ``FE`` (B, 6) has one
    per state, (1, 6) one for all."""
    return r if FE.shape[0] > 1 else 0


@scratch_kernel
def row_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, x, xd, t, fe, out, maps=True):
    """One state of a batched call: :func:`first_forward_pass`, then :func:`id_recursions`
    (``inverse``: ``t`` = xdd, ``out`` = f) or :func:`fd_recursions` (``t`` = f, ``out`` = xdd),
    each (n,).  ``maps``: leave the parallel modules' twist maps in ``A`` (the derivatives read
    them; :func:`chain_dynamics` does not ask).  Returns (code, module)."""
    code, k = first_forward_pass(geo, mats, A, V, S, W, w, x, xd, maps)
    if code != OK:
        return code, k
    if inverse:
        return id_recursions(geo, mats, nud0, A, V, S, W, w, t, fe, out)
    return fd_recursions(geo, mats, nud0, A, V, S, W, w, t, fe, out)


@scratch_kernel
def chain_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, X, XD, T, FE, out, status):
    """One public call over a batch (B rows): forward dynamics (``inverse`` False: ``T`` are the
    forces, ``out`` the accelerations) or inverse dynamics (``T`` the accelerations, ``out`` the
    forces), each (B, n), with the end-effector wrenches ``FE`` (B, 6), or (1, 6) for all rows.  Checks first
    (:func:`check_inputs`); a failing row stops the call with ``status = (code, row, module)``;
    a non-finite result is NONFINITE_RESULT.  Returns the code."""
    status[0], status[1], status[2] = OK, -1, -1
    code = check_inputs(inverse, geo, X, XD, T, FE, status)
    if code != OK:
        return code
    B, n = X.shape
    for r in range(B):
        fe = FE[wrench_row(FE, r)]
        code, k = row_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, X[r], XD[r], T[r], fe, out[r], False)
        if code == OK:
            for j in range(n):
                if not math.isfinite(out[r, j]):
                    code, k = NONFINITE_RESULT, j
                    break
        if code != OK:
            status[0], status[1], status[2] = code, r, k
            return code
    return OK


#: entries per module of ``geo``, ``mats`` (the model) and ``A``, ``V``, ``S`` (the scratch), and
#: of ``W``, ``w``: each set of arrays is one flat buffer in this order (:func:`model_arrays`,
#: :func:`scratch_arrays`), so that one state's call passes 2 arrays, not 8
GEO_SIZE, MATS_SIZE, A_SIZE, V_SIZE, S_SIZE, W_SIZE, w_SIZE = 22, 180, 108, 90, 30, 216, 72


@scratch_kernel
def model_arrays(model, n):
    """``geo`` (n, 22), ``mats`` (n, 5, 6, 6), ``nud0`` (6,): views of the flat model buffer."""
    a, b = GEO_SIZE * n, (GEO_SIZE + MATS_SIZE) * n
    return model[:a].reshape((n, 22)), model[a:b].reshape((n, 5, 6, 6)), model[b:b + 6]


@scratch_kernel
def scratch_arrays(data, n):
    """``A`` (n, 3, 6, 6), ``V`` (n, 5, 3, 6), ``S`` (n, 30), ``W`` (6, 6, 6), ``w`` (12, 6): views
    of the flat scratch buffer."""
    a, b, c = A_SIZE * n, (A_SIZE + V_SIZE) * n, (A_SIZE + V_SIZE + S_SIZE) * n
    return (data[:a].reshape((n, 3, 6, 6)), data[a:b].reshape((n, 5, 3, 6)), data[b:c].reshape((n, 30)),
            data[c:c + W_SIZE].reshape((6, 6, 6)), data[c + W_SIZE:c + W_SIZE + w_SIZE].reshape((12, 6)))


@scratch_kernel
def chain_dynamics_one(inverse, model, data, x, xd, t, fe, out, status):
    """:func:`chain_dynamics` for one state: ``x``, ``xd``, ``t``, ``out`` (n,), ``fe`` (1, 6), the
    model and the scratch as their flat buffers (:func:`model_arrays`, :func:`scratch_arrays`):
    spares the public call six array arguments and the (1, n) views of its inputs and output."""
    n = x.shape[0]
    geo, mats, nud0 = model_arrays(model, n)
    A, V, S, W, w = scratch_arrays(data, n)
    return chain_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, x.reshape((1, n)), xd.reshape((1, n)),
                          t.reshape((1, n)), fe, out.reshape((1, n)), status)
