"""Compiled first derivatives of the module-chain dynamics of paper 000: forward-mode tangents
(first-order dual numbers, written out by hand) of the passes of :mod:`.chain_recursions`
(scratch layout: :mod:`..module_chain.chain_layout`).

:func:`id_tangents` differentiates the chain inverse dynamics ``f = ID(x, xd, xdd)`` along all
``D = 3n`` unit directions at once (columns 0..n-1: ``d/dx``, n..2n-1: ``d/dxd``, 2n..3n-1:
``d/dxdd``, the last block being the actuator-space mass matrix ``M``, since ID is linear in
``xdd``) in one sweep: one forward pass carrying the tangents of the twists, wrench biases and
accelerations of every body (eqs. 6, 9, 10, 12, 29, 30 differentiated), one backward pass
carrying the tangents of the body wrenches (eqs. 11, 19, 65, 16, 38; Newton-Euler for serial
modules).  The primal values come from the kernels of :mod:`.chain_recursions`
(:func:`first_forward_pass`, :func:`id_recursions`), which leave them in the scratch.

Each parallel module's closure depends on its own actuator only: its loop angles ``q, q1, q2``
are functions ``theta(d)`` of the pivot distance ``d = x + Lc + Lc0`` alone, with ``k1..k3 =
theta'`` (eq. 5), ``k4..k6 = theta'' xd^2`` (eq. 28), so their tangents need ``theta'''``
(:func:`angle_derivatives`).  A serial module's map ``A = Ad_inv(B exp(X x))`` has the
tangent ``dA/dx = -ad(X) A``.

The twists and biases do not depend on ``xdd``: their tangents are computed along the first
2n directions only (the xdd entries of the scratch stay at their initial zeros).

Scratch ``T`` (:class:`pkm_dynamics.core.derivatives.ChainTangents`): ``dA`` (n, 3, 6, 6)
tangents of the twist maps along their own actuator; ``loc`` (n, 24) local scalar tangents
(columns named in :mod:`..module_chain.chain_layout`: ``loc[k, DKA_DX]``, ...);
``dps``, ``dacc`` (n, 3, D, 6) tangents of the biases and accelerations of B1, B3, B4
(serial: slot 0); ``dnus``, ``dxb``, ``dF`` (3, D, 6); ``dnu``, ``dnud``, ``dFE`` (D, 6);
``J`` (n, D): the tangents of f; ``L`` (n, n) and ``Y`` (n, 3n) for the FD solve.
"""
from __future__ import annotations

import math

from ..numba_support.cache import kernel
from ..module_chain.chain_kernels import check_inputs, row_dynamics, wrench_row
from ..module_chain.chain_recursions import id_recursions, parallel_body_wrenches
from ..spatial.se3_kernels import bracket_scaled, dot, matTvec, matvec, wrench_bias
from ..module_chain.chain_layout import (B1, B3, B4, COS_Q, COS_Q1, COS_Q2, DCOS_Q, DCOS_Q1, DCOS_Q2, DK1_DX, DK1_PAPER,
                                         DK2_DX, DK2_PAPER, DK3_DX, DK4_DX, DK4_DXD, DK5_DX, DK5_DXD, DK6_DX, DK6_DXD,
                                         DKA_DX, DKB_DX, DKF_DX, DSIN_Q, DSIN_Q1, DSIN_Q2, GEO_H, GEO_L, GEO_L1, GEO_LC,
                                         GEO_LC0, K1, K2, K3, K5, KA, KB, KE, KF, KIND, LOC_SX, MAP_E, NU, NUD,
                                         PARALLEL, P_BIAS, SCREW, SERIAL_BODY, SIN_Q, SIN_Q1, SIN_Q2, SX, XD_ACT, XI_U,
                                         X_ACT)
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
    L, L1, Lc, Lc0, sx = geo[GEO_L], geo[GEO_L1], geo[GEO_LC], geo[GEO_LC0], geo[SX]
    x, xd = S[X_ACT], S[XD_ACT]
    d = x + Lc + Lc0
    P = L * L1
    a1 = (L * L - L1 * L1) / (2.0 * L)
    a2 = (L1 * L1 - L * L) / (2.0 * L1)
    cq, c1, c2 = S[COS_Q], S[COS_Q1], S[COS_Q2]
    _, dk1, ddk1 = angle_derivatives(cq, d / P, 1.0 / P, 0.0)
    d2, d3, d4 = d * d, d * d * d, d * d * d * d
    _, dk2, ddk2 = angle_derivatives(c1, 1.0 / (2.0 * L) - a1 / d2, 2.0 * a1 / d3, -6.0 * a1 / d4)
    _, dk3, ddk3 = angle_derivatives(c2, 1.0 / (2.0 * L1) - a2 / d2, 2.0 * a2 / d3, -6.0 * a2 / d4)
    k1, k2, k3 = S[K1], S[K2], S[K3]
    s, s1, s2 = S[SIN_Q], S[SIN_Q1], S[SIN_Q2]
    loc[DK1_DX], loc[DK2_DX], loc[DK3_DX] = sx * dk1, sx * dk2, sx * dk3
    loc[DK4_DX], loc[DK5_DX], loc[DK6_DX] = sx * ddk1 * xd * xd, sx * ddk2 * xd * xd, sx * ddk3 * xd * xd
    loc[DK4_DXD], loc[DK5_DXD], loc[DK6_DXD] = sx * 2.0 * dk1 * xd, sx * 2.0 * dk2 * xd, sx * 2.0 * dk3 * xd
    loc[DCOS_Q], loc[DSIN_Q] = -sx * s * k1, sx * cq * k1
    loc[DCOS_Q1], loc[DSIN_Q1] = -sx * s1 * k2, sx * c1 * k2
    dc2, ds2 = -s2 * k3, c2 * k3
    loc[DCOS_Q2], loc[DSIN_Q2] = sx * dc2, sx * ds2
    kb, ke, kf = S[KB], S[KE], S[KF]
    dkb = -L1 * ds2
    loc[DKA_DX] = sx
    loc[DKB_DX] = sx * dkb
    loc[DKF_DX] = sx * (L1 * dc2 / (kb * ke) - kf * (dkb * ke + kb) / (kb * ke))
    loc[LOC_SX] = sx
    loc[DK1_PAPER], loc[DK2_PAPER] = dk1, dk2


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
    sx = geo[SX]
    xd, ka = S[XD_ACT], S[KA]
    k1, k2 = S[K1], S[K2]
    qd, qd1 = k1 * xd, k2 * xd
    L, h = geo[GEO_L], geo[GEO_H]
    c, s, c1, s1 = S[COS_Q], S[SIN_Q], S[COS_Q1], S[SIN_Q1]
    dc, ds, dc1, ds1, dka = loc[DCOS_Q], loc[DSIN_Q], loc[DCOS_Q1], loc[DSIN_Q1], loc[DKA_DX]
    ad_inv_pose_rz_tangent(c, s, L, 0.0, h, dc, ds, 0.0, 0.0, 0.0, dA[B1])
    ad_inv_pose_rz_tangent(c1, s1, 0.0, 0.0, 0.0, dc1, ds1, 0.0, 0.0, 0.0, dA[B3])
    ad_inv_pose_rz_tangent(c1, s1, c1 * ka, s1 * ka, 0.0, dc1, ds1, dc1 * ka + c1 * dka, ds1 * ka + s1 * dka, 0.0,
                           dA[B4])
    dk1, dk2 = loc[DK1_PAPER], loc[DK2_PAPER]
    # local tangents (tree coordinates) of the rate terms: along x and along xd
    dqd_x, dqd_v = sx * dk1 * xd, sx * k1
    dqd1_x, dqd1_v = sx * dk2 * xd, sx * k2
    nus = V[NU]
    tmp, h0, dh, t = w[0], w[1], w[2], w[3]
    for b in range(3):
        for dd in range(2 * n):
            matvec(A[b], dnu[dd], dnus[b, dd])
        matvec(dA[b], nu_Bc, tmp)
        for j in range(6):
            dnus[b, k, j] += tmp[j]
    # eqs. 6a, 6c, 6d: the joint-rate terms
    dnus[B1, k, 2] += dqd_x
    dnus[B1, n + k, 2] += dqd_v
    dnus[B3, k, 2] += dqd1_x
    dnus[B3, n + k, 2] += dqd1_v
    dnus[B4, k, 2] += dqd1_x
    dnus[B4, n + k, 2] += dqd1_v
    dnus[B4, n + k, 3] += sx
    dnus[B4, k, 4] += sx * qd1 + ka * dqd1_x
    dnus[B4, n + k, 4] += ka * dqd1_v
    for b in range(3):
        matvec(mats[b], nus[b], h0)
        for dd in range(2 * n):
            bias_tangent(nus[b], dnus[b, dd], mats[b], dps[b, dd], h0, dh, t)
    # xi_2, xi_5, xi_8 (eq. 30b, e, h)
    n1, n3, n4 = nus[B1], nus[B3], nus[B4]
    for dd in range(2 * n):
        e1, e3, e4 = dnus[B1, dd], dnus[B3, dd], dnus[B4, dd]
        gq = dqd_x if dd == k else (dqd_v if dd == n + k else 0.0)
        gq1 = dqd1_x if dd == k else (dqd1_v if dd == n + k else 0.0)
        gk4 = loc[DK4_DX] if dd == k else (loc[DK4_DXD] if dd == n + k else 0.0)
        gk5 = loc[DK5_DX] if dd == k else (loc[DK5_DXD] if dd == n + k else 0.0)
        gxd = sx if dd == n + k else 0.0
        gka = loc[DKA_DX] if dd == k else 0.0
        x0 = dxb[B1, dd]
        x0[0], x0[1], x0[2] = e1[1] * qd + n1[1] * gq, -(e1[0] * qd + n1[0] * gq), gk4
        x0[3], x0[4], x0[5] = e1[4] * qd + n1[4] * gq, -(e1[3] * qd + n1[3] * gq), 0.0
        w0, w1, w2 = e3[1] * qd1 + n3[1] * gq1, -(e3[0] * qd1 + n3[0] * gq1), gk5
        v0, v1, v2 = e3[4] * qd1 + n3[4] * gq1, -(e3[3] * qd1 + n3[3] * gq1), 0.0
        x1 = dxb[B3, dd]
        x1[0], x1[1], x1[2], x1[3], x1[4], x1[5] = w0, w1, w2, v0, v1, v2
        W1, W2 = -n3[0] * qd1, S[K5]                           # primal w0, w1, w2
        x2 = dxb[B4, dd]
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
        if g[KIND] == PARALLEL:
            parallel_local_tangents(g, Sk, loc[k])
            parallel_forward_tangents(g, mats[k], A[k], Vk, Sk, loc[k], dA[k], k, n, nu, nud, dnu, dnud,
                                      dnus, dxb, dps[k], dacc[k], w[6:12])
            xa = Vk[XI_U]
            a = g[SX] * xdd[k]
            for b in range(3):                                 # d(xi_b a): along x (xi) and xdd (a)
                dacc[k, b, k, 2] += (loc[k, DK1_DX] if b == B1 else loc[k, DK2_DX]) * a
                if b == B4:
                    dacc[k, b, k, 4] += (loc[k, DKA_DX] * Sk[K2] + Sk[KA] * loc[k, DK2_DX]) * a
                for j in range(6):
                    dacc[k, b, 2 * n + k, j] += xa[b, j] * g[SX]
        else:
            X = g[SCREW]
            Ak = A[k, SERIAL_BODY]
            nuk, acc = Vk[NU, SERIAL_BODY], Vk[NUD, SERIAL_BODY]
            xd = Sk[XD_ACT]
            matvec(Ak, nu, tmp)                                # A nu_Bc
            for dd in range(2 * n):
                matvec(Ak, dnu[dd], dnus[SERIAL_BODY, dd])
            bracket_scaled(tmp, X, 1.0, h)                     # dA/dx nu_Bc = [A nu_Bc, X]
            for j in range(6):
                dnus[SERIAL_BODY, k, j] += h[j]
                dnus[SERIAL_BODY, n + k, j] += X[j]
            matvec(mats[k, SERIAL_BODY], nuk, h)               # M nu
            for dd in range(2 * n):
                bias_tangent(nuk, dnus[SERIAL_BODY, dd], mats[k, SERIAL_BODY], dps[k, SERIAL_BODY, dd], h, dh, t)
            matvec(Ak, nud, tmp)                               # A nud
            for dd in range(D):
                e = dacc[k, SERIAL_BODY, dd]
                matvec(Ak, dnud[dd], e)
                bracket_scaled(dnus[SERIAL_BODY, dd], X, xd, t)          # dc = [dnu, X xd] + [nu, X dxd]
                for j in range(6):
                    e[j] += t[j]
            bracket_scaled(tmp, X, 1.0, t)
            bracket_scaled(nuk, X, 1.0, dh)
            for j in range(6):
                dacc[k, SERIAL_BODY, k, j] += t[j]
                dacc[k, SERIAL_BODY, n + k, j] += dh[j]
                dacc[k, SERIAL_BODY, 2 * n + k, j] += X[j]
        AE = mats[k, MAP_E]                                    # from B1 (parallel) or B4 (serial)
        for dd in range(2 * n):                                # twists do not depend on xdd
            matvec(AE, dnus[0, dd], dnu[dd])
        for dd in range(D):
            matvec(AE, dacc[k, 0, dd], dnud[dd])
        matvec(AE, Vk[NU, 0], nu)
        matvec(AE, Vk[NUD, 0], nud)
    FE = w[6]
    for j in range(6):
        FE[j] = -fe[j]                                         # eq. 20
    for k in range(n - 1, -1, -1):
        g = geo[k]
        M, acc, ps = mats[k], V[k, NUD], V[k, P_BIAS]
        AE = M[MAP_E]
        if g[KIND] == PARALLEL:
            F = W[1, :3]
            parallel_body_wrenches(M, acc, ps, FE, F, tmp)     # eqs. 11, 19
            for b in range(3):
                for dd in range(D):
                    e = dF[b, dd]
                    matvec(M[b], dacc[k, b, dd], e)
                    for j in range(6):
                        e[j] += dps[k, b, dd, j]
            for dd in range(D):
                matTvec(AE, dFE[dd], tmp)
                for j in range(6):
                    dF[B1, dd, j] += tmp[j]
            sx = g[SX]
            ka, kb, kf = S[k, KA], S[k, KB], S[k, KF]
            for dd in range(D):                                # eqs. 65, 16
                e0, e1, e2 = dF[B1, dd], dF[B3, dd], dF[B4, dd]
                J[k, dd] = sx * (e0[2] / kb + kf * (e1[2] + e2[2] + ka * e2[4]) + e2[3])
            lc = loc[k]
            J[k, k] += sx * (-F[B1, 2] * lc[DKB_DX] / (kb * kb) + lc[DKF_DX] * (F[B3, 2] + F[B4, 2] + ka * F[B4, 4])
                             + kf * lc[DKA_DX] * F[B4, 4])
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
            X = g[SCREW]
            hk = W[1, 0]
            matvec(M[SERIAL_BODY], acc[SERIAL_BODY], hk)
            matTvec(AE, FE, tmp)
            for j in range(6):
                hk[j] += ps[SERIAL_BODY, j] + tmp[j]
            for dd in range(D):
                e = dF[SERIAL_BODY, dd]
                matvec(M[SERIAL_BODY], dacc[k, SERIAL_BODY, dd], e)
                matTvec(AE, dFE[dd], tmp)
                for j in range(6):
                    e[j] += dps[k, SERIAL_BODY, dd, j] + tmp[j]
                J[k, dd] = dot(X, e)
                matTvec(A[k, SERIAL_BODY], e, dFE[dd])
            wrench_bias(X, hk, t)                              # dA^T h = A^T (-ad(X)^T h)
            matTvec(A[k, SERIAL_BODY], t, tmp)
            for j in range(6):
                dFE[k, j] += tmp[j]
            matTvec(A[k, SERIAL_BODY], hk, FE)
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

