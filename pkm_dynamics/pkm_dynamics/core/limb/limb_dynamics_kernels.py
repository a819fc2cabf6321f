"""Compiled rates, accelerations and inverse dynamics of one limb at an IK solution (paper 001
eqs. 27-29 with the refinement of :func:`..ik_refinement.limb_rates`, eq. 37 RNEA of the limb
tree, the limb's share ``K^T Q`` of eq. 45), on the state and Jacobians the IK kernel left in
the scratch ``ld`` (layouts: :mod:`.limb_layout`; the model's inertias ``lm[LM_INERTIA]`` (n,6,6)
and base acceleration ``lm[LM_BASE_ACCELERATION]`` ``(0, -g)`` (6,), the extra scratch ``lx``).

The tree motion is accumulated in the base frame: spatial twists ``Vs_i = Vs_p + Y_i thd_i``
and their derivatives ``As_i = As_p + [Vs_i, Y_i] thd_i + Y_i thdd_i`` (the body-fixed
recursion of :func:`..tree_dynamics.kinematics` carried by ``Ad(C_i)``), body-fixed values
``Ad(C_i)^-1 Vs_i``; the RNEA's generalized forces are ``tau_j = Y_j . sum_(i in subtree j)
Ad(C_i)^-T W_i`` with the body wrenches ``W_i = M_i A_i - ad(V_i)^T M_i V_i``.
"""
from __future__ import annotations

from ..numba_support.cache import kernel
from .limb_kernels import loop_matrix
from ..spatial.small_linalg import householder_least_squares, householder_qr, lu_solve
from ..status import OK, SINGULAR
from .limb_layout import (CUT_K, CUT_NPOS, CUT_NROT, CUT_R, CUT_U_A, CUT_U_B, CUT_U_POS, LD_A, LD_B, LD_C, LD_DX, LD_F,
                          LD_FK, LD_G_JAC, LD_H, LD_J_P, LD_K, LD_L_T, LD_VEC, LD_Y, LM_BASE_ACCELERATION,
                          LM_CUT_BODIES, LM_CUT_COUNTS, LM_CUT_POINTS, LM_CUT_VECTORS, LM_INERTIA, LM_LOOPS,
                          LM_LOOP_DEPENDENT, LM_LOOP_ROWS, LM_PARENT, LM_PLATFORM_OFFSET, LM_SIZES, LM_SUPPORT,
                          LM_TASK_ROWS, LOOP_END_CUT, LOOP_FIRST_CUT, LOOP_SIZE, LX_A, LX_AP, LX_AS, LX_BIAS, LX_QD,
                          LX_QR, LX_RHS, LX_STACKED, LX_TAU, LX_V, LX_VS, LX_ZEROS, SIZE_DELTA, SIZE_DL, SIZE_DP,
                          SIZE_NL, SIZE_PLATFORM_BODY)


@kernel
def spatial_motion(parent, Y, thd, thdd, a0, Vs, As):
    """Spatial twists ``Vs_i = Vs_p + Y_i thd_i`` and accelerations ``As_i = As_p + [Vs_i, Y_i]
    thd_i + Y_i thdd_i`` (n,6) of the tree motion ``(theta, thd, thdd)`` with base acceleration
    ``a0`` (6,) (``thdd`` None-like: pass zeros); ``parent`` (n,) with ``parent[i] < i``."""
    n = len(thd)
    for i in range(n):
        p = parent[i]
        for a in range(6):
            Vs[i, a] = (Vs[p, a] if p >= 0 else 0.0) + Y[i, a] * thd[i]
        w0, w1, w2, v0, v1, v2 = Vs[i, 0], Vs[i, 1], Vs[i, 2], Vs[i, 3], Vs[i, 4], Vs[i, 5]
        y0, y1, y2, y3, y4, y5 = Y[i, 0], Y[i, 1], Y[i, 2], Y[i, 3], Y[i, 4], Y[i, 5]
        q = thd[i]
        br = (w1 * y2 - w2 * y1, w2 * y0 - w0 * y2, w0 * y1 - w1 * y0,
              w1 * y5 - w2 * y4 + v1 * y2 - v2 * y1, w2 * y3 - w0 * y5 + v2 * y0 - v0 * y2,
              w0 * y4 - w1 * y3 + v0 * y1 - v1 * y0)                     # [Vs_i, Y_i]
        for a in range(6):
            As[i, a] = (As[p, a] if p >= 0 else a0[a]) + br[a] * q + Y[i, a] * thdd[i]


@kernel
def body_motion(parent, C, Y, thd, thdd, a0, V, A, Vs, As):
    """Body-fixed twists ``V`` (n,6) and accelerations ``A`` (n,6) of the tree motion
    (:func:`spatial_motion` into the scratch ``Vs``, ``As``, then ``Ad(C_i)^-1``)."""
    spatial_motion(parent, Y, thd, thdd, a0, Vs, As)
    for i in range(len(thd)):
        to_body(C, i, Vs[i], V[i])
        to_body(C, i, As[i], A[i])


@kernel
def add_joint_accelerations(parent, C, Y, thdd, a0, used, V, A, Vs, As):
    """The body-fixed motion ``V``, ``A`` (n, 6) of bodies ``0..used-1`` (as :func:`body_motion`)
    from the spatial twists ``Vs`` and accelerations ``As`` of the same joint rates at ``thdd = 0``
    and zero base acceleration (:func:`spatial_motion`): the acceleration is linear in ``(a0,
    thdd)``, so ``As_i += D_i`` with ``D_i = D_p + Y_i thdd_i`` (``D`` of the base: ``a0``),
    accumulated in ``A`` first; then ``Ad(C_i)^-1`` of each.  The velocity products of a second
    pass are not computed again."""
    for i in range(used):
        p = parent[i]
        for a in range(6):
            A[i, a] = (A[p, a] if p >= 0 else a0[a]) + Y[i, a] * thdd[i]
    for i in range(used):
        for a in range(6):
            As[i, a] += A[i, a]
        to_body(C, i, Vs[i], V[i])
        to_body(C, i, As[i], A[i])


@kernel
def to_body(C, i, s, out):
    """``out = Ad(C_i)^-1 s`` (6,): a twist from the base frame to body i's."""
    px, py, pz = C[i, 0, 3], C[i, 1, 3], C[i, 2, 3]
    w0, w1, w2 = s[0], s[1], s[2]
    v0 = s[3] - (py * w2 - pz * w1)
    v1 = s[4] - (pz * w0 - px * w2)
    v2 = s[5] - (px * w1 - py * w0)
    for a in range(3):
        out[a] = C[i, 0, a] * w0 + C[i, 1, a] * w1 + C[i, 2, a] * w2
        out[3 + a] = C[i, 0, a] * v0 + C[i, 1, a] * v1 + C[i, 2, a] * v2


@kernel
def cut_bias(lm, c, C, V, A0, out, row0, S):
    """``Gdot thetad`` rows of cut joint ``c`` into ``out[row0:]`` (paper 001 eqs. 53-55, 57,
    60; :func:`..loop_constraints._cut_bias`) from body-fixed twists ``V`` and accelerations
    ``A0`` (thdd = 0, no gravity); ``S`` (16, 4) scratch.  Returns the number of rows."""
    k, r = lm[LM_CUT_BODIES][c, CUT_K], lm[LM_CUT_BODIES][c, CUT_R]
    dr, U = lm[LM_CUT_POINTS][c, CUT_R], lm[LM_CUT_VECTORS][c]
    npos, nrot = lm[LM_CUT_COUNTS][c, CUT_NPOS], lm[LM_CUT_COUNTS][c, CUT_NROT]
    for a in range(3):
        for b in range(3):                       # R_kr (rows 0-2)
            v = 0.0
            for m in range(3):
                v += (C[k, m, a] if k >= 0 else (1.0 if m == a else 0.0)) * \
                     (C[r, m, b] if r >= 0 else (1.0 if m == b else 0.0))
            S[a, b] = v
    for a in range(3):                           # dd (row 3)
        v = S[a, 0] * dr[0] + S[a, 1] * dr[1] + S[a, 2] * dr[2]
        for m in range(3):
            dp = (C[r, m, 3] if r >= 0 else 0.0) - (C[k, m, 3] if k >= 0 else 0.0)
            v += (C[k, m, a] if k >= 0 else (1.0 if m == a else 0.0)) * dp
        S[3, a] = v
    wk, vk, wr, vr = S[4], S[5], S[6], S[7]
    ak, lk, ar, lr = S[8], S[9], S[10], S[11]
    for a in range(3):
        wk[a] = V[k, a] if k >= 0 else 0.0
        vk[a] = V[k, 3 + a] if k >= 0 else 0.0
        wr[a] = V[r, a] if r >= 0 else 0.0
        vr[a] = V[r, 3 + a] if r >= 0 else 0.0
        ak[a] = A0[k, a] if k >= 0 else 0.0
        lk[a] = A0[k, 3 + a] if k >= 0 else 0.0
        ar[a] = A0[r, a] if r >= 0 else 0.0
        lr[a] = A0[r, 3 + a] if r >= 0 else 0.0
    dR = S[12:15, :3]                            # R_kr [wr]x - [wk]x R_kr
    for a in range(3):
        for b in range(3):
            # (R_kr [wr]x)[a, b] = sum_m R[a, m] [wr]x[m, b]
            x1 = S[a, (b + 1) % 3] * wr[(b + 2) % 3] - S[a, (b + 2) % 3] * wr[(b + 1) % 3]
            # ([wk]x R_kr)[a, b] = (wk x R[:, b])[a]
            x2 = wk[(a + 1) % 3] * S[(a + 2) % 3, b] - wk[(a + 2) % 3] * S[(a + 1) % 3, b]
            dR[a, b] = x1 - x2
    dd = S[3]
    t = S[15]
    for i in range(npos + nrot):
        if i < npos:
            u = U[CUT_U_POS + i]
            # d_dot = dd x wk - vk - R_kr (d_r x wr) + R_kr vr
            c0 = dr[1] * wr[2] - dr[2] * wr[1]
            c1 = dr[2] * wr[0] - dr[0] * wr[2]
            c2 = dr[0] * wr[1] - dr[1] * wr[0]
            e0 = dr[1] * ar[2] - dr[2] * ar[1]
            e1 = dr[2] * ar[0] - dr[0] * ar[2]
            e2 = dr[0] * ar[1] - dr[1] * ar[0]
            s = 0.0
            for a in range(3):
                a1, a2 = (a + 1) % 3, (a + 2) % 3
                ddot = (dd[a1] * wk[a2] - dd[a2] * wk[a1] - vk[a]
                        - (S[a, 0] * c0 + S[a, 1] * c1 + S[a, 2] * c2)
                        + S[a, 0] * vr[0] + S[a, 1] * vr[1] + S[a, 2] * vr[2])
                t[a] = ddot
            for a in range(3):
                a1, a2 = (a + 1) % 3, (a + 2) % 3
                acc = (dd[a1] * ak[a2] - dd[a2] * ak[a1] - lk[a]
                       - (S[a, 0] * e0 + S[a, 1] * e1 + S[a, 2] * e2)
                       + S[a, 0] * lr[0] + S[a, 1] * lr[1] + S[a, 2] * lr[2])
                bd = (t[a1] * wk[a2] - t[a2] * wk[a1]
                      - (dR[a, 0] * c0 + dR[a, 1] * c1 + dR[a, 2] * c2)
                      + dR[a, 0] * vr[0] + dR[a, 1] * vr[1] + dR[a, 2] * vr[2])
                s += u[a] * (acc + bd)
            out[row0 + i] = s
        else:
            ua, ub = U[CUT_U_A + i - npos], U[CUT_U_B + i - npos]
            f0 = ub[1] * ar[2] - ub[2] * ar[1]
            f1 = ub[2] * ar[0] - ub[0] * ar[2]
            f2 = ub[0] * ar[1] - ub[1] * ar[0]
            h0 = ub[1] * wr[2] - ub[2] * wr[1]
            h1 = ub[2] * wr[0] - ub[0] * wr[2]
            h2 = ub[0] * wr[1] - ub[1] * wr[0]
            w = (S[0, 0] * ub[0] + S[0, 1] * ub[1] + S[0, 2] * ub[2],
                 S[1, 0] * ub[0] + S[1, 1] * ub[1] + S[1, 2] * ub[2],
                 S[2, 0] * ub[0] + S[2, 1] * ub[1] + S[2, 2] * ub[2])
            wd = (dR[0, 0] * ub[0] + dR[0, 1] * ub[1] + dR[0, 2] * ub[2],
                  dR[1, 0] * ub[0] + dR[1, 1] * ub[1] + dR[1, 2] * ub[2],
                  dR[2, 0] * ub[0] + dR[2, 1] * ub[1] + dR[2, 2] * ub[2])
            s = 0.0
            for a in range(3):
                a1, a2 = (a + 1) % 3, (a + 2) % 3
                rot = (w[a1] * ak[a2] - w[a2] * ak[a1] - (S[a, 0] * f0 + S[a, 1] * f1 + S[a, 2] * f2)
                       + wd[a1] * wk[a2] - wd[a2] * wk[a1] - (dR[a, 0] * h0 + dR[a, 1] * h1 + dR[a, 2] * h2))
                s += ua[a] * rot
            out[row0 + i] = s
    return npos + nrot


@kernel
def stacked_rows(lm, ld, Sm):
    """``S = [G; J_p]`` (all cut-joint rows of every FC, then the platform Jacobian) into ``Sm``;
    returns its number of rows."""
    n = len(lm[LM_PARENT])
    loops = lm[LM_LOOPS]
    m = 0
    for lp in range(lm[LM_SIZES][SIZE_NL]):
        for i in range(loops[lp, LOOP_SIZE]):
            for j in range(n):
                Sm[m, j] = ld[LD_G_JAC][lp, i, j]
            m += 1
    for a in range(6):
        for j in range(n):
            Sm[m, j] = ld[LD_J_P][a, j]
        m += 1
    return m


@kernel
def refine_rates(Sm, m, n, x, rhs, QR, tau, factor):
    """``x += argmin |S z - (rhs - S x)|`` (:func:`..ik_refinement.refine_rates`); ``rhs`` (m,)
    is overwritten.  ``factor``: the QR of ``S`` into ``QR``, ``tau``
    (:func:`..spatial.small_linalg.householder_qr`) first; else they hold it (the accelerations
    refined on the rows the rates were: the numpy route's one QR).  False for a rank-deficient
    ``S``."""
    if factor and not householder_qr(Sm, m, n, QR, tau):
        return False
    for i in range(m):
        s = rhs[i]
        for j in range(n):
            s -= Sm[i, j] * x[j]
        rhs[i] = s
    householder_least_squares(QR, m, n, tau, rhs)
    for j in range(n):
        x[j] += rhs[j]
    return True


@kernel
def loop_acceleration_bias(lm, ld, C, V, A0, rhs, bias, n):
    """``Hdot qd`` (n,) into ``bias`` (eq. 20): zero at the independent joints, the rows
    ``-G_y^-1 (Gdot thd)`` at the dependent joints of every loop
    (:func:`..limb.loop_constraints.loop_acceleration_bias`), ``Gdot thd`` stacked into ``rhs``
    by :func:`cut_bias` of every cut joint from the body motion ``V``, ``A0`` of the limb tree at
    ``thdd = 0`` without gravity and the frames ``C``; ``G_y`` of each loop factored in ``ld``
    (:func:`..limb.limb_kernels.loop_matrix`).  Returns False where a ``G_y`` is singular."""
    loops, S = lm[LM_LOOPS], ld[LD_FK]
    nl = lm[LM_SIZES][SIZE_NL]
    row = 0
    for lp in range(nl):                         # Gdot thd of every cut joint
        for c in range(loops[lp, LOOP_FIRST_CUT], loops[lp, LOOP_END_CUT]):
            row += cut_bias(lm, c, C, V, A0, rhs, row, S)
    for i in range(n):
        bias[i] = 0.0
    b = ld[LD_B]
    row = 0
    for lp in range(nl):                         # rows y: -G_y^-1 (Gdot thd)
        r = loop_matrix(lm, ld, lp)
        for i in range(r):
            b[i, 0] = rhs[row + lm[LM_LOOP_ROWS][lp, i]]
        if not lu_solve(ld[LD_A], r, b, 1):
            return False
        for i in range(r):
            bias[lm[LM_LOOP_DEPENDENT][lp, i]] = -b[i, 0]
        row += loops[lp, LOOP_SIZE]
    return True


@kernel
def limb_rates_rnea(lm, ld, lx, Vt, At, Vp, Ap, with_acc, thd, thdd, Wl):
    """At the IK solution in ``ld``: ``thd`` (n,) (eqs. 27-28) and ``thdd`` (n,) (eq. 29), each
    refined on ``[G; J_p]``, and the limb's share ``Wl = K^T tau`` (dp,) of eq. 45 with the RNEA
    ``tau`` of the limb tree at ``(theta, thd, thdd)`` and gravity (``with_acc`` False: only
    ``thd``).  ``Vt``, ``At`` (dp,) task twist and acceleration; ``Vp``, ``Ap`` (6,) the
    platform's (``P_p Vt``, ``P_p At``).  ``lx``: the extra scratch ``(Sm, QR, rhs, tau, V, A,
    Vs, As, bias, qd, zeros)``.  Returns a status."""
    Sm, QR, rhs, tq = lx[LX_STACKED], lx[LX_QR], lx[LX_RHS], lx[LX_TAU]
    V, A, Vs, As, bias = lx[LX_V], lx[LX_A], lx[LX_VS], lx[LX_AS], lx[LX_BIAS]
    qd, zeros, ap = lx[LX_QD], lx[LX_ZEROS], lx[LX_AP]
    C, Y, H, F, K, Lt = ld[LD_C], ld[LD_Y], ld[LD_H], ld[LD_F], ld[LD_K], ld[LD_L_T]
    sizes = lm[LM_SIZES]
    pb, dl, dp, delta = sizes[SIZE_PLATFORM_BODY], sizes[SIZE_DL], sizes[SIZE_DP], sizes[SIZE_DELTA]
    n = len(thd)
    for j in range(delta):                       # qd = F V_t, thd = H qd (eqs. 27-28)
        s = 0.0
        for c in range(dp):
            s += F[j, c] * Vt[c]
        qd[j] = s
    for i in range(n):
        s = 0.0
        for j in range(delta):
            s += H[i, j] * qd[j]
        thd[i] = s
    m = stacked_rows(lm, ld, Sm)
    for i in range(m - 6):
        rhs[i] = 0.0
    for a in range(6):
        rhs[m - 6 + a] = Vp[a]
    if not refine_rates(Sm, m, n, thd, rhs, QR, tq, True):
        return SINGULAR
    if not with_acc:
        return OK
    body_motion(lm[LM_PARENT], C, Y, thd, zeros, zeros, V, A, Vs, As)     # A0: thdd = 0, no gravity
    if not loop_acceleration_bias(lm, ld, C, V, A, rhs, bias, n):      # Hdot qd (eq. 20)
        return SINGULAR
    b = ld[LD_B]
    a6 = ld[LD_DX]
    # A_p = Ad(C_p)^-1 As0_pb + J_p (Hdot qd): the platform frame's acceleration (eq. 29)
    _frame_acceleration(C, pb, lm[LM_PLATFORM_OFFSET], As, a6, ld[LD_VEC])
    for a in range(6):
        s = a6[a]
        for j in range(n):
            s += ld[LD_J_P][a, j] * bias[j]
        ap[a] = s
    rows = lm[LM_TASK_ROWS]
    for i in range(dl):                          # qdd = F At - L_t^-1 P_t A_p
        b[i, 0] = ap[rows[i]]
        for j in range(delta):
            ld[LD_A][i, j] = Lt[i, j]
    if not lu_solve(ld[LD_A], dl, b, 1):
        return SINGULAR
    for j in range(delta):
        s = -b[j, 0]
        for c in range(dp):
            s += F[j, c] * At[c]
        qd[j] = s
    for i in range(n):
        s = bias[i]
        for j in range(delta):
            s += H[i, j] * qd[j]
        thdd[i] = s
    for i in range(m - 6):                       # rhs = [-Gdot thd; Vdot_p - A0_p]
        rhs[i] = -rhs[i]
    for a in range(6):
        rhs[m - 6 + a] = Ap[a] - a6[a]
    if not refine_rates(Sm, m, n, thdd, rhs, QR, tq, False):     # S, its QR: those of the rates
        return SINGULAR
    body_motion(lm[LM_PARENT], C, Y, thd, thdd, lm[LM_BASE_ACCELERATION], V, A, Vs, As)     # RNEA with gravity
    rnea_spatial(lm[LM_SUPPORT], lm[LM_INERTIA], C, Y, V, A, Vs, tq)
    for c in range(dp):                          # Wl = K^T tau
        s = 0.0
        for i in range(n):
            s += K[i, c] * tq[i]
        Wl[c] = s
    return OK


@kernel
def _frame_acceleration(C, body, offset, As, out, tmp):
    """``out = Ad(C_body offset)^-1 As_body`` (6,): the acceleration of a frame fixed on
    ``body``; ``tmp`` (>= 6,) scratch."""
    to_body(C, body, As[body], tmp)
    # Ad(offset)^-1 tmp
    px, py, pz = offset[0, 3], offset[1, 3], offset[2, 3]
    w0, w1, w2 = tmp[0], tmp[1], tmp[2]
    v0 = tmp[3] - (py * w2 - pz * w1)
    v1 = tmp[4] - (pz * w0 - px * w2)
    v2 = tmp[5] - (px * w1 - py * w0)
    for a in range(3):
        out[a] = offset[0, a] * w0 + offset[1, a] * w1 + offset[2, a] * w2
        out[3 + a] = offset[0, a] * v0 + offset[1, a] * v1 + offset[2, a] * v2


@kernel
def rnea_spatial(sup, M, C, Y, V, A, Ws, tau):
    """Generalized forces ``tau`` (n,) of the limb tree (:func:`..tree_dynamics.rnea`) from the
    body-fixed motion ``V``, ``A`` (gravity in ``A``): body wrenches ``W_i = M_i A_i -
    ad(V_i)^T M_i V_i`` (``M`` (n,6,6)) carried to the base frame (``Ws`` (n,6), overwritten)
    and summed over each joint's subtree (``sup`` (n, n) the support table), ``tau_j = Y_j .
    sum Ws_i`` (``tau``: at least n entries)."""
    n = Y.shape[0]
    for i in range(n):
        Mi = M[i]
        if Mi[3, 3] == 0.0 and Mi[0, 0] == 0.0:      # massless: no wrench (the platform in a limb tree)
            for a in range(6):
                Ws[i, a] = 0.0
            continue
        hv0 = (Mi[0, 0] * V[i, 0] + Mi[0, 1] * V[i, 1] + Mi[0, 2] * V[i, 2]
               + Mi[0, 3] * V[i, 3] + Mi[0, 4] * V[i, 4] + Mi[0, 5] * V[i, 5])
        hv1 = (Mi[1, 0] * V[i, 0] + Mi[1, 1] * V[i, 1] + Mi[1, 2] * V[i, 2]
               + Mi[1, 3] * V[i, 3] + Mi[1, 4] * V[i, 4] + Mi[1, 5] * V[i, 5])
        hv2 = (Mi[2, 0] * V[i, 0] + Mi[2, 1] * V[i, 1] + Mi[2, 2] * V[i, 2]
               + Mi[2, 3] * V[i, 3] + Mi[2, 4] * V[i, 4] + Mi[2, 5] * V[i, 5])
        hv3 = (Mi[3, 0] * V[i, 0] + Mi[3, 1] * V[i, 1] + Mi[3, 2] * V[i, 2]
               + Mi[3, 3] * V[i, 3] + Mi[3, 4] * V[i, 4] + Mi[3, 5] * V[i, 5])
        hv4 = (Mi[4, 0] * V[i, 0] + Mi[4, 1] * V[i, 1] + Mi[4, 2] * V[i, 2]
               + Mi[4, 3] * V[i, 3] + Mi[4, 4] * V[i, 4] + Mi[4, 5] * V[i, 5])
        hv5 = (Mi[5, 0] * V[i, 0] + Mi[5, 1] * V[i, 1] + Mi[5, 2] * V[i, 2]
               + Mi[5, 3] * V[i, 3] + Mi[5, 4] * V[i, 4] + Mi[5, 5] * V[i, 5])
        a, b, c, d, e, f = V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5]
        # -ad(V)^T h = -ad*(V) h (spatial.wrench_bias): moment w x hm + v x hf, force w x hf
        m0 = b * hv2 - c * hv1 + e * hv5 - f * hv4
        m1 = c * hv0 - a * hv2 + f * hv3 - d * hv5
        m2 = a * hv1 - b * hv0 + d * hv4 - e * hv3
        m3 = b * hv5 - c * hv4
        m4 = c * hv3 - a * hv5
        m5 = a * hv4 - b * hv3
        w_ = (m0, m1, m2, m3, m4, m5)
        wb = (w_[0] + Mi[0, 0] * A[i, 0] + Mi[0, 1] * A[i, 1] + Mi[0, 2] * A[i, 2]
              + Mi[0, 3] * A[i, 3] + Mi[0, 4] * A[i, 4] + Mi[0, 5] * A[i, 5],
              w_[1] + Mi[1, 0] * A[i, 0] + Mi[1, 1] * A[i, 1] + Mi[1, 2] * A[i, 2]
                    + Mi[1, 3] * A[i, 3] + Mi[1, 4] * A[i, 4] + Mi[1, 5] * A[i, 5],
              w_[2] + Mi[2, 0] * A[i, 0] + Mi[2, 1] * A[i, 1] + Mi[2, 2] * A[i, 2]
                    + Mi[2, 3] * A[i, 3] + Mi[2, 4] * A[i, 4] + Mi[2, 5] * A[i, 5],
              w_[3] + Mi[3, 0] * A[i, 0] + Mi[3, 1] * A[i, 1] + Mi[3, 2] * A[i, 2]
                    + Mi[3, 3] * A[i, 3] + Mi[3, 4] * A[i, 4] + Mi[3, 5] * A[i, 5],
              w_[4] + Mi[4, 0] * A[i, 0] + Mi[4, 1] * A[i, 1] + Mi[4, 2] * A[i, 2]
                    + Mi[4, 3] * A[i, 3] + Mi[4, 4] * A[i, 4] + Mi[4, 5] * A[i, 5],
              w_[5] + Mi[5, 0] * A[i, 0] + Mi[5, 1] * A[i, 1] + Mi[5, 2] * A[i, 2]
                    + Mi[5, 3] * A[i, 3] + Mi[5, 4] * A[i, 4] + Mi[5, 5] * A[i, 5])
        # to the base frame: (R m + p x R f, R f)
        px, py, pz = C[i, 0, 3], C[i, 1, 3], C[i, 2, 3]
        f0 = C[i, 0, 0] * wb[3] + C[i, 0, 1] * wb[4] + C[i, 0, 2] * wb[5]
        f1 = C[i, 1, 0] * wb[3] + C[i, 1, 1] * wb[4] + C[i, 1, 2] * wb[5]
        f2 = C[i, 2, 0] * wb[3] + C[i, 2, 1] * wb[4] + C[i, 2, 2] * wb[5]
        Ws[i, 0] = C[i, 0, 0] * wb[0] + C[i, 0, 1] * wb[1] + C[i, 0, 2] * wb[2] + py * f2 - pz * f1
        Ws[i, 1] = C[i, 1, 0] * wb[0] + C[i, 1, 1] * wb[1] + C[i, 1, 2] * wb[2] + pz * f0 - px * f2
        Ws[i, 2] = C[i, 2, 0] * wb[0] + C[i, 2, 1] * wb[1] + C[i, 2, 2] * wb[2] + px * f1 - py * f0
        Ws[i, 3], Ws[i, 4], Ws[i, 5] = f0, f1, f2
    for j in range(n):
        s = 0.0
        for i in range(n):
            if sup[i, j]:
                s += (Y[j, 0] * Ws[i, 0] + Y[j, 1] * Ws[i, 1] + Y[j, 2] * Ws[i, 2]
                      + Y[j, 3] * Ws[i, 3] + Y[j, 4] * Ws[i, 4] + Y[j, 5] * Ws[i, 5])
        tau[j] = s
