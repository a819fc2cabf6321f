"""Compiled first derivatives of the module-chain dynamics of paper 000: forward-mode tangents
(first-order dual numbers, written out by hand) of the passes of :mod:`.chain_kernels`.

:func:`id_tangents` differentiates the chain inverse dynamics ``f = ID(x, xd, xdd)`` along all
``D = 3n`` unit directions at once (columns 0..n-1: ``d/dx``, n..2n-1: ``d/dxd``, 2n..3n-1:
``d/dxdd``, the last block being the actuator-space mass matrix ``M``, since ID is linear in
``xdd``) in one sweep: one forward pass carrying the tangents of the twists, wrench biases and
accelerations of every body (eqs. 6, 9, 10, 12, 29, 30 differentiated), one backward pass
carrying the tangents of the body wrenches (eqs. 11, 19, 65, 16, 38; Newton-Euler for serial
modules).  The primal values come from the kernels of :mod:`.chain_kernels`
(:func:`first_forward_pass`, :func:`id_recursions`), which leave them in the scratch.

Each parallel module's closure depends on its own actuator only: its loop angles ``q, q1, q2``
are functions ``theta(d)`` of the pivot distance ``d = x + Lc + Lc0`` alone, with ``k1..k3 =
theta'`` (eq. 5), ``k4..k6 = theta'' xd^2`` (eq. 28), so their tangents need ``theta'''``
(:func:`angle_derivatives`).  A serial module's map ``A = Ad_inv(B exp(X x))`` has the
tangent ``dA/dx = -ad(X) A``.

The twists and biases do not depend on ``xdd``: their tangents are computed along the first
2n directions only (the xdd entries of the scratch stay at their initial zeros).

Scratch ``T`` (:class:`pkm_dynamics.core.derivatives.ChainTangents`): ``dA`` (n, 3, 6, 6)
tangents of the twist maps along their own actuator; ``loc`` (n, 24) local scalar tangents;
``dps``, ``dacc`` (n, 3, D, 6) tangents of the biases and accelerations of B1, B3, B4
(serial: slot 0); ``dnus``, ``dxb``, ``dF`` (3, D, 6); ``dnu``, ``dnud``, ``dFE`` (D, 6);
``J`` (n, D): the tangents of f; ``L`` (n, n) and ``Y`` (n, 3n) for the FD solve.
"""
from __future__ import annotations

import math

from ..numba_support.cache import kernel
from ..module_chain.chain_kernels import check_inputs, id_recursions, row_dynamics, wrench_row
from ..spatial.se3_kernels import bracket_scaled, dot, matTvec, matvec, wrench_bias
from ..status import NONFINITE_RESULT, OK, SINGULAR_ALPHA


@kernel
def angle_derivatives(c, dc, ddc, dddc):
    """``theta', theta'', theta'''`` of ``theta = -acos(c(d))`` (paper 000 eq. 2, branch
    ``theta < 0``) from ``c`` and its first three derivatives in ``d`` (Faa di Bruno with
    ``g = -acos``: ``g' = 1/r``, ``g'' = c/r^3``, ``g''' = (1 + 2c^2)/r^5``, ``r = sqrt(1-c^2)``)."""
    r = math.sqrt(1.0 - c * c)
    g1 = 1.0 / r
    g2 = c * g1 * g1 * g1
    g3 = (1.0 + 2.0 * c * c) * g1 * g1 * g1 * g1 * g1
    return g1 * dc, g2 * dc * dc + g1 * ddc, g3 * dc * dc * dc + 3.0 * g2 * dc * ddc + g1 * dddc


@kernel
def parallel_local_tangents(geo, S, loc):
    """Tangents of one parallel module's closure quantities (``S`` of :func:`.closure`,
    :func:`.actuator_force_coefficients`) along its actuator, in tree coordinates (``sx``
    applied), into ``loc``: 0-2 ``dk1..dk3/dx``, 3-5 ``dk4..dk6/dx``, 6-8 ``dk4..dk6/dxd``,
    9-14 ``d(c, s, c1, s1, c2, s2)/dx``, 15 ``dka/dx``, 16 ``dkb/dx``, 17 ``dkf/dx``, 18 ``sx``,
    19-20 ``dk1/dx``, ``dk2/dx`` in the paper's coordinates (for the rate terms ``d(k xd)/dx``).
    ``cos q`` etc. are the cosines of eq. 2 as functions of ``d`` (eq. 2, law of cosines)."""
    L, L1, Lc, Lc0, sx = geo[4], geo[5], geo[6], geo[7], geo[1]
    x, xd = S[0], S[1]
    d = x + Lc + Lc0
    P = L * L1
    a1 = (L * L - L1 * L1) / (2.0 * L)
    a2 = (L1 * L1 - L * L) / (2.0 * L1)
    cq, c1, c2 = S[24], S[26], S[28]
    _, K1, KK1 = angle_derivatives(cq, d / P, 1.0 / P, 0.0)
    d2, d3, d4 = d * d, d * d * d, d * d * d * d
    _, K2, KK2 = angle_derivatives(c1, 1.0 / (2.0 * L) - a1 / d2, 2.0 * a1 / d3, -6.0 * a1 / d4)
    _, K3, KK3 = angle_derivatives(c2, 1.0 / (2.0 * L1) - a2 / d2, 2.0 * a2 / d3, -6.0 * a2 / d4)
    k1, k2, k3 = S[5], S[6], S[7]
    s, s1, s2 = S[25], S[27], S[29]
    loc[0], loc[1], loc[2] = sx * K1, sx * K2, sx * K3
    loc[3], loc[4], loc[5] = sx * KK1 * xd * xd, sx * KK2 * xd * xd, sx * KK3 * xd * xd
    loc[6], loc[7], loc[8] = sx * 2.0 * K1 * xd, sx * 2.0 * K2 * xd, sx * 2.0 * K3 * xd
    loc[9], loc[10] = -sx * s * k1, sx * cq * k1
    loc[11], loc[12] = -sx * s1 * k2, sx * c1 * k2
    dc2, ds2 = -s2 * k3, c2 * k3
    loc[13], loc[14] = sx * dc2, sx * ds2
    kb, ke, kf = S[14], S[15], S[16]
    dkb = -L1 * ds2
    loc[15] = sx
    loc[16] = sx * dkb
    loc[17] = sx * (L1 * dc2 / (kb * ke) - kf * (dkb * ke + kb) / (kb * ke))
    loc[18] = sx
    loc[19], loc[20] = K1, K2


@kernel
def ad_inv_pose_rz_tangent(c, s, px, py, pz, dc, ds, dpx, dpy, dpz, out):
    """Tangent (6, 6) of :func:`.spatial_kernels.ad_inv_pose_rz` (``Ad_inv(T(p) Rz(theta))``,
    ``c, s = cos, sin theta``) for tangents ``dc, ds, dp`` of its arguments (product rule on
    each entry)."""
    for i in range(6):
        for j in range(6):
            out[i, j] = 0.0
    out[0, 0] = dc
    out[0, 1] = ds
    out[1, 0] = -ds
    out[1, 1] = dc
    out[3, 0] = -(ds * pz + s * dpz)
    out[3, 1] = dc * pz + c * dpz
    out[3, 2] = -(dc * py + c * dpy) + ds * px + s * dpx
    out[3, 3] = dc
    out[3, 4] = ds
    out[4, 0] = -(dc * pz + c * dpz)
    out[4, 1] = -(ds * pz + s * dpz)
    out[4, 2] = ds * py + s * dpy + dc * px + c * dpx
    out[4, 3] = -ds
    out[4, 4] = dc
    out[5, 0] = dpy
    out[5, 1] = -dpx


@kernel
def bias_tangent(nu, dnu, M, out, h, dh, t):
    """Tangent of the wrench bias ``p = -ad*(nu) M nu`` (eq. 12) for the twist tangent ``dnu``:
    ``-ad*(dnu) M nu - ad*(nu) M dnu`` into ``out`` (6,); ``h = M nu`` given; ``dh``, ``t`` (6,)
    scratch."""
    matvec(M, dnu, dh)
    wrench_bias(dnu, h, out)
    wrench_bias(nu, dh, t)
    for j in range(6):
        out[j] += t[j]


@kernel
def parallel_forward_tangents(geo, mats, A, V, S, loc, dA, k, n, nu_Bc, nud, dnu, dnud, dnus, dxb, dps, dacc, w):
    """Forward pass of one parallel module, differentiated: the tangents of its twists (eqs.
    6a-d), biases (eq. 12), xi (eq. 30) and accelerations (eq. 29) along every direction, from
    the tangents ``dnu``, ``dnud`` (D, 6) of the twist and acceleration of its base frame Bc;
    ``dnu``, ``dnud`` are then overwritten with those of its E frame (eqs. 6b, 9b)."""
    D = dnu.shape[0]
    sx = geo[1]
    xd, ka = S[1], S[13]
    k1, k2 = S[5], S[6]
    qd, qd1 = k1 * xd, k2 * xd
    L, h = geo[4], geo[8]
    c, s, c1, s1 = S[24], S[25], S[26], S[27]
    ad_inv_pose_rz_tangent(c, s, L, 0.0, h, loc[9], loc[10], 0.0, 0.0, 0.0, dA[0])
    ad_inv_pose_rz_tangent(c1, s1, 0.0, 0.0, 0.0, loc[11], loc[12], 0.0, 0.0, 0.0, dA[1])
    ad_inv_pose_rz_tangent(c1, s1, c1 * ka, s1 * ka, 0.0, loc[11], loc[12],
                           loc[11] * ka + c1 * loc[15], loc[12] * ka + s1 * loc[15], 0.0, dA[2])
    K1, K2 = loc[19], loc[20]
    # local tangents (tree coordinates) of the rate terms: along x and along xd
    dqd_x, dqd_v = sx * K1 * xd, sx * k1
    dqd1_x, dqd1_v = sx * K2 * xd, sx * k2
    nus = V[0]
    tmp, h0, dh, t = w[0], w[1], w[2], w[3]
    for b in range(3):
        for dd in range(2 * n):
            matvec(A[b], dnu[dd], dnus[b, dd])
        matvec(dA[b], nu_Bc, tmp)
        for j in range(6):
            dnus[b, k, j] += tmp[j]
    # eqs. 6a, 6c, 6d: the joint-rate terms
    dnus[0, k, 2] += dqd_x
    dnus[0, n + k, 2] += dqd_v
    dnus[1, k, 2] += dqd1_x
    dnus[1, n + k, 2] += dqd1_v
    dnus[2, k, 2] += dqd1_x
    dnus[2, n + k, 2] += dqd1_v
    dnus[2, n + k, 3] += sx
    dnus[2, k, 4] += sx * qd1 + ka * dqd1_x
    dnus[2, n + k, 4] += ka * dqd1_v
    for b in range(3):
        matvec(mats[b], nus[b], h0)
        for dd in range(2 * n):
            bias_tangent(nus[b], dnus[b, dd], mats[b], dps[b, dd], h0, dh, t)
    # xi_2, xi_5, xi_8 (eq. 30b, e, h)
    n1, n3, n4 = nus[0], nus[1], nus[2]
    for dd in range(2 * n):
        e1, e3, e4 = dnus[0, dd], dnus[1, dd], dnus[2, dd]
        gq = dqd_x if dd == k else (dqd_v if dd == n + k else 0.0)
        gq1 = dqd1_x if dd == k else (dqd1_v if dd == n + k else 0.0)
        gk4 = loc[3] if dd == k else (loc[6] if dd == n + k else 0.0)
        gk5 = loc[4] if dd == k else (loc[7] if dd == n + k else 0.0)
        gxd = sx if dd == n + k else 0.0
        gka = loc[15] if dd == k else 0.0
        x0 = dxb[0, dd]
        x0[0], x0[1], x0[2] = e1[1] * qd + n1[1] * gq, -(e1[0] * qd + n1[0] * gq), gk4
        x0[3], x0[4], x0[5] = e1[4] * qd + n1[4] * gq, -(e1[3] * qd + n1[3] * gq), 0.0
        w0, w1, w2 = e3[1] * qd1 + n3[1] * gq1, -(e3[0] * qd1 + n3[0] * gq1), gk5
        v0, v1, v2 = e3[4] * qd1 + n3[4] * gq1, -(e3[3] * qd1 + n3[3] * gq1), 0.0
        x1 = dxb[1, dd]
        x1[0], x1[1], x1[2], x1[3], x1[4], x1[5] = w0, w1, w2, v0, v1, v2
        W1, W2 = -n3[0] * qd1, S[9]                            # primal w0, w1, w2
        x2 = dxb[2, dd]
        x2[0], x2[1], x2[2], x2[3] = w0, w1, w2, v0
        x2[4] = v1 + gka * W2 + ka * w2 + e4[2] * xd + n4[2] * gxd
        x2[5] = v2 - gka * W1 - ka * w1 - e4[1] * xd - n4[1] * gxd
    # accelerations (eq. 29): acc_b = A_b nud + xi_b a + xi_b+1 (the xi_b a terms: the caller)
    for b in range(3):
        for dd in range(D):
            matvec(A[b], dnud[dd], dacc[b, dd])
            for j in range(6):
                dacc[b, dd, j] += dxb[b, dd, j]
        matvec(dA[b], nud, tmp)
        for j in range(6):
            dacc[b, k, j] += tmp[j]


@kernel
def chain_id_tangents(geo, mats, nud0, A, V, S, xdd, fe, loc, dA, dnus, dxb, dps, dacc, dF, dnu, dnud, dFE,
                      W, w, J):
    """Tangents ``J`` (n, 3n) of ``f = ID(x, xd, xdd)`` after :func:`first_forward_pass` and
    :func:`id_recursions` (whose values it reads from the scratch ``A``, ``V``, ``S``): forward
    pass of the twist/bias/acceleration tangents, backward pass of the wrench tangents."""
    n = geo.shape[0]
    D = 3 * n
    nu, nud, tmp, h, dh, t = w[0], w[1], w[2], w[3], w[4], w[5]
    for dd in range(D):
        for j in range(6):
            dnu[dd, j] = 0.0
            dnud[dd, j] = 0.0
            dFE[dd, j] = 0.0
    for j in range(6):
        nu[j] = 0.0
        nud[j] = nud0[j]
    for k in range(n):
        g = geo[k]
        Vk, Sk = V[k], S[k]
        if g[0] == 0.0:
            parallel_local_tangents(g, Sk, loc[k])
            parallel_forward_tangents(g, mats[k], A[k], Vk, Sk, loc[k], dA[k], k, n, nu, nud, dnu, dnud,
                                      dnus, dxb, dps[k], dacc[k], w[6:12])
            xa = Vk[2]
            a = g[1] * xdd[k]
            for b in range(3):                                 # d(xi_b a): along x (xi) and xdd (a)
                dacc[k, b, k, 2] += (loc[k, 0] if b == 0 else loc[k, 1]) * a
                if b == 2:
                    dacc[k, b, k, 4] += (loc[k, 15] * Sk[6] + Sk[13] * loc[k, 1]) * a
                for j in range(6):
                    dacc[k, b, 2 * n + k, j] += xa[b, j] * g[1]
        else:
            X = g[9:15]
            Ak = A[k, 0]
            nuk, acc = Vk[0, 0], Vk[4, 0]
            xd = Sk[1]
            matvec(Ak, nu, tmp)                                # A nu_Bc
            for dd in range(2 * n):
                matvec(Ak, dnu[dd], dnus[0, dd])
            bracket_scaled(tmp, X, 1.0, h)                     # dA/dx nu_Bc = [A nu_Bc, X]
            for j in range(6):
                dnus[0, k, j] += h[j]
                dnus[0, n + k, j] += X[j]
            matvec(mats[k, 0], nuk, h)                         # M nu
            for dd in range(2 * n):
                bias_tangent(nuk, dnus[0, dd], mats[k, 0], dps[k, 0, dd], h, dh, t)
            matvec(Ak, nud, tmp)                               # A nud
            for dd in range(D):
                e = dacc[k, 0, dd]
                matvec(Ak, dnud[dd], e)
                bracket_scaled(dnus[0, dd], X, xd, t)          # dc = [dnu, X xd] + [nu, X dxd]
                for j in range(6):
                    e[j] += t[j]
            bracket_scaled(tmp, X, 1.0, t)
            bracket_scaled(nuk, X, 1.0, dh)
            for j in range(6):
                dacc[k, 0, k, j] += t[j]
                dacc[k, 0, n + k, j] += dh[j]
                dacc[k, 0, 2 * n + k, j] += X[j]
        AE = mats[k, 3]
        for dd in range(2 * n):                                # twists do not depend on xdd
            matvec(AE, dnus[0, dd], dnu[dd])
        for dd in range(D):
            matvec(AE, dacc[k, 0, dd], dnud[dd])
        matvec(AE, Vk[0, 0], nu)
        matvec(AE, Vk[4, 0], nud)
    FE = w[6]
    for j in range(6):
        FE[j] = -fe[j]                                         # eq. 20
    for k in range(n - 1, -1, -1):
        g = geo[k]
        M, acc, ps = mats[k], V[k, 4], V[k, 1]
        AE = M[3]
        if g[0] == 0.0:
            F = W[1, :3]
            for b in range(3):
                matvec(M[b], acc[b], F[b])                     # eq. 11
                for j in range(6):
                    F[b, j] += ps[b, j]
            matTvec(AE, FE, tmp)                               # eq. 19
            for j in range(6):
                F[0, j] += tmp[j]
            for b in range(3):
                for dd in range(D):
                    e = dF[b, dd]
                    matvec(M[b], dacc[k, b, dd], e)
                    for j in range(6):
                        e[j] += dps[k, b, dd, j]
            for dd in range(D):
                matTvec(AE, dFE[dd], tmp)
                for j in range(6):
                    dF[0, dd, j] += tmp[j]
            sx = g[1]
            ka, kb, kf = S[k, 13], S[k, 14], S[k, 16]
            for dd in range(D):                                # eqs. 65, 16
                e0, e1, e2 = dF[0, dd], dF[1, dd], dF[2, dd]
                J[k, dd] = sx * (e0[2] / kb + kf * (e1[2] + e2[2] + ka * e2[4]) + e2[3])
            lc = loc[k]
            J[k, k] += sx * (-F[0, 2] * lc[16] / (kb * kb) + lc[17] * (F[1, 2] + F[2, 2] + ka * F[2, 4])
                             + kf * lc[15] * F[2, 4])
            for j in range(6):                                 # eq. 38
                FE[j] = 0.0
            for b in range(3):
                matTvec(A[k, b], F[b], tmp)
                for j in range(6):
                    FE[j] += tmp[j]
            for dd in range(D):
                e = dFE[dd]
                for j in range(6):
                    e[j] = 0.0
                for b in range(3):
                    matTvec(A[k, b], dF[b, dd], tmp)
                    for j in range(6):
                        e[j] += tmp[j]
            for b in range(3):
                matTvec(dA[k, b], F[b], tmp)
                for j in range(6):
                    dFE[k, j] += tmp[j]
        else:
            X = g[9:15]
            hk = W[1, 0]
            matvec(M[0], acc[0], hk)
            matTvec(AE, FE, tmp)
            for j in range(6):
                hk[j] += ps[0, j] + tmp[j]
            for dd in range(D):
                e = dF[0, dd]
                matvec(M[0], dacc[k, 0, dd], e)
                matTvec(AE, dFE[dd], tmp)
                for j in range(6):
                    e[j] += dps[k, 0, dd, j] + tmp[j]
                J[k, dd] = dot(X, e)
                matTvec(A[k, 0], e, dFE[dd])
            wrench_bias(X, hk, t)                              # dA^T h = A^T (-ad(X)^T h)
            matTvec(A[k, 0], t, tmp)
            for j in range(6):
                dFE[k, j] += tmp[j]
            matTvec(A[k, 0], hk, FE)
    return OK


@kernel
def cholesky_solve(Mm, Lw, Y):
    """``Y <- Mm^-1 Y`` (Mm (n, n) symmetric positive definite, Y (n, m)) by Cholesky
    (``Lw`` (n, n) scratch).  Returns False if ``Mm`` is not positive definite."""
    n = Mm.shape[0]
    for i in range(n):
        for j in range(i + 1):
            s = Mm[i, j]
            for p in range(j):
                s -= Lw[i, p] * Lw[j, p]
            if i == j:
                if not s > 0.0:
                    return False
                Lw[i, i] = math.sqrt(s)
            else:
                Lw[i, j] = s / Lw[j, j]
    m = Y.shape[1]
    for c in range(m):
        for i in range(n):                                     # L z = y
            s = Y[i, c]
            for p in range(i):
                s -= Lw[i, p] * Y[p, c]
            Y[i, c] = s / Lw[i, i]
        for i in range(n - 1, -1, -1):                         # L^T y = z
            s = Y[i, c]
            for p in range(i + 1, n):
                s -= Lw[p, i] * Y[p, c]
            Y[i, c] = s / Lw[i, i]
    return True


@kernel
def chain_dynamics_derivatives(inverse, geo, mats, nud0, A, V, S, W, w, loc, dA, dnus, dxb, dps, dacc, dF,
                               dnu, dnud, dFE, J, Lw, fbuf, X, XD, T, FE, value, DX, DXD, DU, status):
    """One public call over a batch (B rows): ``inverse`` True: ``value = ID(x, xd, xdd)``
    (``T`` = xdd) and ``DX, DXD, DU`` (B, n, n) = dID/dx, dID/dxd, dID/dxdd (= M); ``inverse``
    False: ``value = FD(x, xd, f)`` (``T`` = f) and ``DX = -M^-1 dID/dx``, ``DXD = -M^-1
    dID/dxd``, ``DU = M^-1`` at ``(x, xd, FD(x, xd, f))``.  ``fbuf`` (n,): scratch.  Inputs
    checked as :func:`.chain_kernels.chain_dynamics`; returns the status code with ``status =
    (code, row, module)`` (SINGULAR_ALPHA at module 0 if M is not positive definite)."""
    status[0], status[1], status[2] = OK, -1, -1
    code = check_inputs(inverse, geo, X, XD, T, FE, status)
    if code != OK:
        return code
    B, n = X.shape
    for r in range(B):
        fe = FE[wrench_row(FE, r)]
        xdd = T[r] if inverse else value[r]
        code, k = row_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, X[r], XD[r], T[r], fe, value[r])
        if code == OK and not inverse:                         # the ID's intermediates at the FD's xdd
            code, k = id_recursions(geo, mats, nud0, A, V, S, W, w, xdd, fe, fbuf)
        if code == OK:
            chain_id_tangents(geo, mats, nud0, A, V, S, xdd, fe, loc, dA, dnus, dxb, dps, dacc, dF, dnu, dnud,
                              dFE, W, w, J)
            if inverse:
                for i in range(n):
                    for j in range(n):
                        DX[r, i, j] = J[i, j]
                        DXD[r, i, j] = J[i, n + j]
                        DU[r, i, j] = J[i, 2 * n + j]
            else:
                Mm, Y = J[:, 2 * n:], J[:, :2 * n]             # -M^-1 [dID/dx, dID/dxd], M^-1
                for i in range(n):
                    for j in range(n):
                        DU[r, i, j] = 1.0 if i == j else 0.0
                if not cholesky_solve(Mm, Lw, Y):
                    code, k = SINGULAR_ALPHA, 0
                else:
                    cholesky_solve(Mm, Lw, DU[r])
                    for i in range(n):
                        for j in range(n):
                            DX[r, i, j] = -Y[i, j]
                            DXD[r, i, j] = -Y[i, n + j]
        if code == OK:
            for i in range(n):
                ok = math.isfinite(value[r, i])
                for j in range(n):
                    ok = ok and math.isfinite(DX[r, i, j]) and math.isfinite(DXD[r, i, j]) \
                        and math.isfinite(DU[r, i, j])
                if not ok:
                    code, k = NONFINITE_RESULT, i
                    break
        if code != OK:
            status[0], status[1], status[2] = code, r, k
            return code
    return OK

