"""Compiled kernels of the limb inverse kinematics of paper 001 (Secs. 3-4): forward kinematics
of a limb tree, cut-joint rows (App. A), the constraint resolution ``H`` (eqs. 16-20), the
limb Jacobians (eqs. 22, 25, 27), and the Newton loops of Algorithms 1 + 2 (nested) and 3
(compound) with the round-off refinement of :mod:`..ik_refinement` -- the same steps as
:mod:`..limb_kinematics`, :mod:`..loop_constraints`, :mod:`..limb_ik` (the reference route the
tests compare against), as loops over bodies with scalar arithmetic inside.

Model ``lm`` (a tuple of read-only arrays) and scratch ``ld`` of one limb
(:class:`..pkm.limb_tables.LimbTables`): each entry a named index of :mod:`.limb_layout`
(``lm[LM_LOOPS]``, ``ld[LD_H]``, ...).

Status codes: :mod:`..status`; on any other than OK the Python layer runs the reference route,
which either raises the named exception or takes the path the kernel does not (continuation).
"""
from __future__ import annotations

import math

from ..numba_support.cache import kernel
from ..spatial.small_linalg import (condition, condition_at_most, condition_with_inverse, frobenius2, lu_solve,
                                    lu_solve_pair)
from .limb_layout import (CUT_K, CUT_NPOS, CUT_NROT, CUT_R, CUT_U_A, CUT_U_B, CUT_U_POS, LD_A, LD_B, LD_C, LD_DTHETA,
                          LD_DX, LD_F, LD_FK, LD_G_JAC, LD_G_RES, LD_H, LD_J_P, LD_K, LD_L_T, LD_POSE, LD_VEC, LD_WORK,
                          LD_Y, LM_B, LM_CUT_BODIES, LM_CUT_COUNTS, LM_CUT_POINTS, LM_CUT_VECTORS, LM_D_T, LM_H_COLUMN,
                          LM_INDEPENDENT, LM_LOOPS, LM_LOOP_DEPENDENT, LM_LOOP_INDEPENDENT, LM_LOOP_ROWS, LM_PARENT,
                          LM_PLATFORM_OFFSET, LM_REVOLUTE, LM_SIZES, LM_SUPPORT, LM_TASK_ROWS, LM_W, LM_W2, LM_W2V,
                          LM_WV, LM_X, LOOP_END_CUT, LOOP_FIRST_CUT, LOOP_NDEP, LOOP_NIND, LOOP_SIZE, SIZE_DELTA,
                          SIZE_DL, SIZE_DP, SIZE_NL, SIZE_PLATFORM_BODY, SIZE_SQUARE)
from ..spatial.se3_kernels import log_so3, pose_inv_mul
from ..status import ILL_CONDITIONED, INNER_MAX_ITER, NO_CONVERGENCE, OK, SINGULAR


@kernel
def limb_fk(lm, theta, C, Y, S):
    """Absolute poses ``C`` (n,4,4) and spatial screws ``Y = Ad(C_i) X_i`` (n,6) of the limb
    tree at ``theta`` (:func:`..limb_kinematics._fk`): ``C_i = C_p B_i exp(X_i theta_i)`` with
    ``exp`` of the unit screw (:func:`..spatial.exp_unit_screws_batch`); ``S`` (16, 4) scratch.
    A prismatic joint (``W = W2 = 0``) takes no sine or cosine: its terms vanish either way."""
    parent, B, X, W, W2, Wv, W2v = lm[LM_PARENT], lm[LM_B], lm[LM_X], lm[LM_W], lm[LM_W2], lm[LM_WV], lm[LM_W2V]
    rev = lm[LM_REVOLUTE]
    for i in range(len(theta)):
        th = theta[i]
        if rev[i]:
            s, c = math.sin(th), math.cos(th)
            oc, ts = 1.0 - c, th - s
        else:
            oc, ts, s = 0.0, th, 0.0
        for a in range(3):                       # E = exp(X th) in rows 0-2
            for b in range(3):
                S[a, b] = s * W[i, a, b] + oc * W2[i, a, b] + (1.0 if a == b else 0.0)
            S[a, 3] = th * X[i, 3 + a] + oc * Wv[i, a] + ts * W2v[i, a]
        for a in range(3):                       # P = B E in rows 3-5
            for b in range(4):
                v = B[i, a, 3] if b == 3 else 0.0
                v += B[i, a, 0] * S[0, b] + B[i, a, 1] * S[1, b] + B[i, a, 2] * S[2, b]
                S[3 + a, b] = v
        p = parent[i]
        for a in range(3):                       # C_i = C_p P
            for b in range(4):
                if p >= 0:
                    v = C[p, a, 3] if b == 3 else 0.0
                    v += C[p, a, 0] * S[3, b] + C[p, a, 1] * S[4, b] + C[p, a, 2] * S[5, b]
                else:
                    v = S[3 + a, b]
                C[i, a, b] = v
        C[i, 3, 0], C[i, 3, 1], C[i, 3, 2], C[i, 3, 3] = 0.0, 0.0, 0.0, 1.0
        w0 = C[i, 0, 0] * X[i, 0] + C[i, 0, 1] * X[i, 1] + C[i, 0, 2] * X[i, 2]
        w1 = C[i, 1, 0] * X[i, 0] + C[i, 1, 1] * X[i, 1] + C[i, 1, 2] * X[i, 2]
        w2 = C[i, 2, 0] * X[i, 0] + C[i, 2, 1] * X[i, 1] + C[i, 2, 2] * X[i, 2]
        px, py, pz = C[i, 0, 3], C[i, 1, 3], C[i, 2, 3]
        Y[i, 0], Y[i, 1], Y[i, 2] = w0, w1, w2
        for a in range(3):
            Y[i, 3 + a] = C[i, a, 0] * X[i, 3] + C[i, a, 1] * X[i, 4] + C[i, a, 2] * X[i, 5]
        Y[i, 3] += py * w2 - pz * w1
        Y[i, 4] += pz * w0 - px * w2
        Y[i, 5] += px * w1 - py * w0


@kernel
def _spatial_row(C, body, ra, rl, sup, Y, G, row):
    """``G[row, j] += (row of B) Ad(C_body)^-1 Y_j`` for the joints j supporting ``body``
    (``sup``: the support table): the body-fixed row ``(ra, rl)`` (3,) each becomes the spatial
    row ``(R ra + p x R rl, R rl)``."""
    if body < 0:
        return
    a0 = C[body, 0, 0] * ra[0] + C[body, 0, 1] * ra[1] + C[body, 0, 2] * ra[2]
    a1 = C[body, 1, 0] * ra[0] + C[body, 1, 1] * ra[1] + C[body, 1, 2] * ra[2]
    a2 = C[body, 2, 0] * ra[0] + C[body, 2, 1] * ra[1] + C[body, 2, 2] * ra[2]
    l0 = C[body, 0, 0] * rl[0] + C[body, 0, 1] * rl[1] + C[body, 0, 2] * rl[2]
    l1 = C[body, 1, 0] * rl[0] + C[body, 1, 1] * rl[1] + C[body, 1, 2] * rl[2]
    l2 = C[body, 2, 0] * rl[0] + C[body, 2, 1] * rl[1] + C[body, 2, 2] * rl[2]
    px, py, pz = C[body, 0, 3], C[body, 1, 3], C[body, 2, 3]
    a0 += py * l2 - pz * l1
    a1 += pz * l0 - px * l2
    a2 += px * l1 - py * l0
    for j in range(Y.shape[0]):
        if sup[body, j]:
            G[row, j] += (a0 * Y[j, 0] + a1 * Y[j, 1] + a2 * Y[j, 2]
                          + l0 * Y[j, 3] + l1 * Y[j, 4] + l2 * Y[j, 5])


@kernel
def _cross(a, b, out, sign):
    """``out = sign * (a x b)`` (3,)."""
    out[0] = sign * (a[1] * b[2] - a[2] * b[1])
    out[1] = sign * (a[2] * b[0] - a[0] * b[2])
    out[2] = sign * (a[0] * b[1] - a[1] * b[0])


@kernel
def cut_rows(lm, c, C, Y, g, G, row0, S):
    """Residual and Jacobian rows of cut joint ``c`` into ``g[row0:]``, ``G[row0:, :]``
    (paper 001 eqs. 50-51, 55-56, 58-59; :func:`..limb_kinematics._cut_eval`); returns the
    number of rows.  ``S`` (16, 4) scratch: rows 0-2 R_kr, 3 dd, 4-8 row vectors."""
    k, r = lm[LM_CUT_BODIES][c, CUT_K], lm[LM_CUT_BODIES][c, CUT_R]
    dk, dr, U = lm[LM_CUT_POINTS][c, CUT_K], lm[LM_CUT_POINTS][c, CUT_R], lm[LM_CUT_VECTORS][c]
    npos, nrot = lm[LM_CUT_COUNTS][c, CUT_NPOS], lm[LM_CUT_COUNTS][c, CUT_NROT]
    for a in range(3):
        for b in range(3):                       # R_kr = R_k^T R_r
            v = 0.0
            for m in range(3):
                v += (C[k, m, a] if k >= 0 else (1.0 if m == a else 0.0)) * \
                     (C[r, m, b] if r >= 0 else (1.0 if m == b else 0.0))
            S[a, b] = v
    for a in range(3):                           # dd = R_k^T (p_r - p_k) + R_kr d_r
        v = S[a, 0] * dr[0] + S[a, 1] * dr[1] + S[a, 2] * dr[2]
        for m in range(3):
            dp = (C[r, m, 3] if r >= 0 else 0.0) - (C[k, m, 3] if k >= 0 else 0.0)
            v += (C[k, m, a] if k >= 0 else (1.0 if m == a else 0.0)) * dp
        S[3, a] = v
    dd, ka, kl, uR, ra, w, zero = S[3], S[4], S[5], S[6], S[7], S[8], S[9]
    zero[0], zero[1], zero[2] = 0.0, 0.0, 0.0
    sup = lm[LM_SUPPORT]
    for i in range(npos + nrot):
        row = row0 + i
        for j in range(Y.shape[0]):
            G[row, j] = 0.0
        if i < npos:
            u = U[CUT_U_POS + i]
            g[row] = u[0] * (dd[0] - dk[0]) + u[1] * (dd[1] - dk[1]) + u[2] * (dd[2] - dk[2])
            _cross(u, dd, ka, 1.0)               # u^T [dd]x
            kl[0], kl[1], kl[2] = -u[0], -u[1], -u[2]
            for b in range(3):
                uR[b] = u[0] * S[0, b] + u[1] * S[1, b] + u[2] * S[2, b]     # R_kr^T u
            _cross(uR, dr, ra, -1.0)             # -u^T R_kr [d_r]x
            _spatial_row(C, k, ka, kl, sup, Y, G, row)
            _spatial_row(C, r, ra, uR, sup, Y, G, row)
        else:
            ua, ub = U[CUT_U_A + i - npos], U[CUT_U_B + i - npos]
            for a in range(3):
                w[a] = S[a, 0] * ub[0] + S[a, 1] * ub[1] + S[a, 2] * ub[2]  # R_kr u_b
            g[row] = ua[0] * w[0] + ua[1] * w[1] + ua[2] * w[2]
            _cross(ua, w, ka, 1.0)               # u_a^T [R_kr u_b]x
            for b in range(3):
                uR[b] = ua[0] * S[0, b] + ua[1] * S[1, b] + ua[2] * S[2, b]
            _cross(uR, ub, ra, -1.0)             # -u_a^T R_kr [u_b]x
            _spatial_row(C, k, ka, zero, sup, Y, G, row)
            _spatial_row(C, r, ra, zero, sup, Y, G, row)
    return npos + nrot


@kernel
def limb_state(lm, ld, theta):
    """Poses, screws and every FC's ``g`` (m,), ``G`` (m, n) at ``theta`` into ``ld``
    (:func:`..limb_kinematics.limb_state`)."""
    C, Y, g, G, S = ld[LD_C], ld[LD_Y], ld[LD_G_RES], ld[LD_G_JAC], ld[LD_FK]
    limb_fk(lm, theta, C, Y, S)
    loops = lm[LM_LOOPS]
    for lp in range(lm[LM_SIZES][SIZE_NL]):
        row = 0
        for c in range(loops[lp, LOOP_FIRST_CUT], loops[lp, LOOP_END_CUT]):
            row += cut_rows(lm, c, C, Y, g[lp], G[lp], row, S)


@kernel
def loop_norm(ld, lm, lp):
    """``|g|`` (2-norm over all rows) of FC ``lp``."""
    s = 0.0
    for i in range(lm[LM_LOOPS][lp, LOOP_SIZE]):
        s += ld[LD_G_RES][lp, i] ** 2
    return math.sqrt(s)


@kernel
def loop_matrix(lm, ld, lp):
    """``G_y`` (r, r) of FC ``lp`` into ``ld`` A (selected rows, dependent columns, eq. 16)."""
    A, G = ld[LD_A], ld[LD_G_JAC][lp]
    r = lm[LM_LOOPS][lp, LOOP_NDEP]
    rows, dep = lm[LM_LOOP_ROWS][lp], lm[LM_LOOP_DEPENDENT][lp]
    for i in range(r):
        for j in range(r):
            A[i, j] = G[rows[i], dep[j]]
    return r


@kernel
def platform_pose(lm, ld, out):
    """``C_p = C[pb] @ offset`` (4,4) (eq. 4) into ``out``."""
    C, off, pb = ld[LD_C], lm[LM_PLATFORM_OFFSET], lm[LM_SIZES][SIZE_PLATFORM_BODY]
    for a in range(3):
        for b in range(4):
            v = C[pb, a, 3] if b == 3 else 0.0
            for k in range(3):
                v += C[pb, a, k] * off[k, b]
            out[a, b] = v
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0


@kernel
def pose_error(lm, ld, target):
    """``Delta x_t = P_t (Delta C_p - I)^vee`` rows into ``ld`` dx[:dl] (eq. 31;
    :func:`..limb_ik.pose_error`: the rotation vector of ``Delta C_p = C_p^-1 C_target`` and its
    translation); returns ``|xi| + |eta|`` over the selected rows and, as a
    second value, their largest magnitude."""
    P, dx = ld[LD_POSE], ld[LD_DX]
    platform_pose(lm, ld, P)
    D, e = ld[LD_WORK], ld[LD_VEC]
    pose_inv_mul(P, target, D)                   # Delta C_p = C_p^-1 C_target
    e[0], e[1], e[2], _ = log_so3(D)             # its rotation vector
    e[3], e[4], e[5] = D[0, 3], D[1, 3], D[2, 3]
    rows = lm[LM_TASK_ROWS]
    rot, lin, big = 0.0, 0.0, 0.0
    for i in range(len(rows)):
        v = e[rows[i]]
        dx[i] = v
        if rows[i] < 3:
            rot += v * v
        else:
            lin += v * v
        big = max(big, abs(v))
    return math.sqrt(rot) + math.sqrt(lin), big


@kernel
def limb_jacobians(lm, ld, threshold, want_kappa):
    """:func:`jacobians_and_step` without the Newton step."""
    return jacobians_and_step(lm, ld, threshold, want_kappa, False)


@kernel
def jacobians_and_step(lm, ld, threshold, want_kappa, step):
    """``H`` (eqs. 16-18, 20), ``J_p`` (eq. 5), ``L_t = P_t J_p H`` (eq. 22), ``F = L_t^-1
    D_t`` (eq. 27), ``K = H F`` (eq. 28) into ``ld`` (:func:`..limb_ik.limb_jacobians`).
    Returns ``(status, kappa(F))`` (a square limb with an orthogonal ``D_t``: from ``F`` and
    ``L_t``, :func:`..spatial.small_linalg.condition_with_inverse`, else the Jacobi
    :func:`..spatial.small_linalg.condition`; -1 unless ``want_kappa``: the check against
    ``threshold`` then needs no singular values where a bound decides): SINGULAR for a singular
    ``G_y`` or ``L_t``; ILL_CONDITIONED when ``kappa(F)`` exceeds ``threshold`` (< 0: never).
    ``step``: also the outer Newton step of Algorithm 1, ``Delta q = L_t^-1 Delta x_t`` from ``ld``
    dx into ``ld`` b[:dl, 0], from the same elimination of ``L_t`` as ``F``."""
    Y, G, J, H, Lt, F, K = ld[LD_Y], ld[LD_G_JAC], ld[LD_J_P], ld[LD_H], ld[LD_L_T], ld[LD_F], ld[LD_K]
    A, b = ld[LD_A], ld[LD_B]
    sizes = lm[LM_SIZES]
    pb, dl, dp, delta, nl = (sizes[SIZE_PLATFORM_BODY], sizes[SIZE_DL], sizes[SIZE_DP],
                             sizes[SIZE_DELTA], sizes[SIZE_NL])
    n = len(lm[LM_PARENT])
    hcol = lm[LM_H_COLUMN]
    for i in range(n):
        for c in range(delta):
            H[i, c] = 0.0
        if hcol[i] >= 0:
            H[i, hcol[i]] = 1.0
    for lp in range(nl):                         # rows y of H: -G_y^-1 G_q (eq. 18)
        r = loop_matrix(lm, ld, lp)
        ni = lm[LM_LOOPS][lp, LOOP_NIND]
        rows, ind = lm[LM_LOOP_ROWS][lp], lm[LM_LOOP_INDEPENDENT][lp]
        for i in range(r):
            for j in range(ni):
                b[i, j] = -G[lp, rows[i], ind[j]]
        if not lu_solve(A, r, b, ni):
            return SINGULAR, math.inf
        for i in range(r):
            for j in range(ni):
                H[lm[LM_LOOP_DEPENDENT][lp, i], hcol[ind[j]]] = b[i, j]
    P = ld[LD_POSE]                                   # J_p = Ad(C_p)^-1 Y_S (body-fixed)
    platform_pose(lm, ld, P)
    sup = lm[LM_SUPPORT]
    for j in range(n):
        if not sup[pb, j]:
            for a in range(6):
                J[a, j] = 0.0
            continue
        w0, w1, w2 = Y[j, 0], Y[j, 1], Y[j, 2]
        v0 = Y[j, 3] - (P[1, 3] * w2 - P[2, 3] * w1)
        v1 = Y[j, 4] - (P[2, 3] * w0 - P[0, 3] * w2)
        v2 = Y[j, 5] - (P[0, 3] * w1 - P[1, 3] * w0)
        for a in range(3):
            J[a, j] = P[0, a] * w0 + P[1, a] * w1 + P[2, a] * w2
            J[3 + a, j] = P[0, a] * v0 + P[1, a] * v1 + P[2, a] * v2
    rows = lm[LM_TASK_ROWS]
    for i in range(dl):                          # L_t = P_t J_p H (H_jc: 1 for j = independent c,
        for c in range(delta):                   # 0 for the other independent j): each sum over j
            Lt[i, c] = 0.0                       # in order without the zero terms, one pass over
        for j in range(n):                       # the joints
            v = J[rows[i], j]
            if hcol[j] < 0:
                for c in range(delta):
                    Lt[i, c] += v * H[j, c]
            else:
                Lt[i, hcol[j]] += v
        for c in range(delta):
            A[i, c] = Lt[i, c]
        for c in range(dp):
            F[i, c] = lm[LM_D_T][i, c]
        if step:
            b[i, 0] = ld[LD_DX][i]
    if not lu_solve_pair(A, dl, F, dp, b, 1 if step else 0):
        return SINGULAR, math.inf
    for i in range(n):                           # K = H F: the row F[c] of an independent joint
        for c in range(dp):
            if hcol[i] >= 0:
                K[i, c] = F[hcol[i], c]
                continue
            s = 0.0
            for j in range(delta):
                s += H[i, j] * F[j, c]
            K[i, c] = s
    if want_kappa:                               # square F with an orthogonal D_t: F^-1 = D_t^T L_t
        if lm[LM_SIZES][SIZE_SQUARE]:
            kappa = condition_with_inverse(F, Lt, delta, ld[LD_WORK])
        else:
            kappa = condition(F, delta, dp, ld[LD_WORK])
        if threshold >= 0.0 and not kappa <= threshold:
            return ILL_CONDITIONED, kappa
        return OK, kappa
    # square F with an orthogonal D_t: F^-1 = D_t^T L_t, so kappa(F)^2 <= tr(F^T F) tr((F^T F)^-1)
    # = |F|_F^2 |L_t|_F^2 decides without the Gram matrix's inverse where the bound is enough
    square = lm[LM_SIZES][SIZE_SQUARE]
    if threshold >= 0.0 and square and frobenius2(F, delta, dp) * frobenius2(Lt, dl, delta) <= threshold * threshold:
        return OK, -1.0
    if threshold >= 0.0 and not condition_at_most(F, delta, dp, ld[LD_WORK], threshold):
        return ILL_CONDITIONED, -1.0
    return OK, -1.0


@kernel
def loop_correction(lm, ld, theta_out, scale):
    """``theta_out[y] += scale * G_y^-1 g`` for every FC (eq. 33 with the selected rows);
    False for a singular ``G_y``."""
    b = ld[LD_B]
    for lp in range(lm[LM_SIZES][SIZE_NL]):
        r = loop_matrix(lm, ld, lp)
        rows = lm[LM_LOOP_ROWS][lp]
        for i in range(r):
            b[i, 0] = ld[LD_G_RES][lp, rows[i]]
        if not lu_solve(ld[LD_A], r, b, 1):
            return False
        for i in range(r):
            theta_out[lm[LM_LOOP_DEPENDENT][lp, i]] += scale * b[i, 0]
    return True


@kernel
def compound_step(lm, ld, theta):
    """``theta += H Delta q + c`` with ``c_y = -G_y^-1 g`` and ``Delta q = L_t^-1 (Delta x_t -
    P_t J_p c)`` (Algorithm 3; :func:`..limb_ik.compound_newton_step`), from the Jacobians and
    ``dx`` in ``ld``; False when a solve is singular."""
    n = len(theta)
    c = ld[LD_DTHETA]
    for i in range(n):
        c[i] = 0.0
    if not loop_correction(lm, ld, c, -1.0):
        return False
    J, H, Lt, A, b, dx = ld[LD_J_P], ld[LD_H], ld[LD_L_T], ld[LD_A], ld[LD_B], ld[LD_DX]
    rows = lm[LM_TASK_ROWS]
    dl, delta = lm[LM_SIZES][SIZE_DL], lm[LM_SIZES][SIZE_DELTA]
    for i in range(dl):
        s = dx[i]
        for j in range(n):
            s -= J[rows[i], j] * c[j]
        b[i, 0] = s
        for j in range(delta):
            A[i, j] = Lt[i, j]
    if not lu_solve(A, dl, b, 1):
        return False
    hcol = lm[LM_H_COLUMN]
    for i in range(n):                           # (H Delta q)_i = Delta q_c for independent i
        if hcol[i] >= 0:
            theta[i] += c[i] + b[hcol[i], 0]
            continue
        s = c[i]
        for j in range(delta):
            s += H[i, j] * b[j, 0]
        theta[i] += s
    return True


@kernel
def solve_loops(lm, ld, theta, tol, its):
    """Algorithm 2 after an outer step of Algorithm 1: the predictor (eq. 33) at the state in
    ``ld`` for the independent coordinates moved by ``ld`` b[:delta, 0] (``Delta q``), then
    Newton steps per FC until ``|g| <= tol`` (:func:`..loop_constraints.solve_loop_constraints`).
    ``its`` (nl,): iterations of each FC.  Returns a status."""
    nl, delta = lm[LM_SIZES][SIZE_NL], lm[LM_SIZES][SIZE_DELTA]
    ind_all = lm[LM_INDEPENDENT]
    dq = ld[LD_VEC]
    b = ld[LD_B]
    dth = ld[LD_DTHETA]
    n = len(theta)
    for i in range(n):
        dth[i] = 0.0
    for j in range(delta):
        dq[j] = b[j, 0]
        dth[ind_all[j]] = b[j, 0]
    for lp in range(nl):                         # predictor: -G_y^-1 (g + G_q dtheta_q)
        r = loop_matrix(lm, ld, lp)
        rows, ind = lm[LM_LOOP_ROWS][lp], lm[LM_LOOP_INDEPENDENT][lp]
        for i in range(r):
            s = ld[LD_G_RES][lp, rows[i]]
            for j in range(lm[LM_LOOPS][lp, LOOP_NIND]):
                s += ld[LD_G_JAC][lp, rows[i], ind[j]] * dth[ind[j]]
            b[i, 0] = s
        if not lu_solve(ld[LD_A], r, b, 1):
            return SINGULAR
        for i in range(r):
            theta[lm[LM_LOOP_DEPENDENT][lp, i]] -= b[i, 0]
        its[lp] = 1
    for j in range(delta):
        theta[ind_all[j]] += dq[j]
    while True:
        limb_state(lm, ld, theta)
        active = False
        for lp in range(nl):
            if its[lp] < 0:
                continue
            if loop_norm(ld, lm, lp) <= tol:
                its[lp] = -its[lp]               # done (sign restored below)
                continue
            if its[lp] >= INNER_MAX_ITER:
                return NO_CONVERGENCE
            r = loop_matrix(lm, ld, lp)
            rows = lm[LM_LOOP_ROWS][lp]
            for i in range(r):
                b[i, 0] = ld[LD_G_RES][lp, rows[i]]
            if not lu_solve(ld[LD_A], r, b, 1):
                return SINGULAR
            for i in range(r):
                theta[lm[LM_LOOP_DEPENDENT][lp, i]] -= b[i, 0]
            its[lp] += 1
            active = True
        if not active:
            for lp in range(nl):
                its[lp] = -its[lp]
            return OK
