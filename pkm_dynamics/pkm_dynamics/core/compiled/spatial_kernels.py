"""Scalar-loop forms of the spatial algebra of :mod:`pkm_dynamics.core.spatial` for the compiled
kernels (same conventions: twist ``(omega, v)``, wrench ``(moment, force)``, ``A_C_B`` poses).

Each function writes into a preallocated output (the caller's scratch) and is inlined into the
kernel that calls it; none allocates.  Shapes: vectors (6,), matrices (6, 6), poses (4, 4).
Scalar functions of :mod:`..spatial` that need no output array (:func:`so3_coefficients`,
:func:`exp_se3_rows`) are not written again here: they are compiled from their one definition there.
"""
from __future__ import annotations

import math

from .. import spatial
from .cache import kernel


@kernel
def matvec(A, v, out):
    """``out = A v`` (6,)."""
    for i in range(6):
        s = 0.0
        for j in range(6):
            s += A[i, j] * v[j]
        out[i] = s


@kernel
def matTvec(A, v, out):
    """``out = A^T v`` (6,): a wrench carried back by the transpose of a twist map (Ad*)."""
    for j in range(6):
        s = 0.0
        for i in range(6):
            s += A[i, j] * v[i]
        out[j] = s




@kernel
def dot(a, b) -> float:
    """``a . b`` of two (6,) vectors."""
    s = 0.0
    for i in range(6):
        s += a[i] * b[i]
    return s


@kernel
def congruence_add(A, M, out, tmp):
    """``out += A^T M A`` (6, 6): an inertia carried back by a twist map ``A``, which has the
    shape of an adjoint ``[[R, 0], [P, R]]`` (its upper right block is zero and not read;
    ``tmp``: (6, 6) scratch).  Loops ordered so that the innermost one runs along a row."""
    for i in range(6):                              # tmp = M A
        for j in range(6):
            tmp[i, j] = 0.0
        for k in range(6):
            m = M[i, k]
            for j in range(3):
                tmp[i, j] += m * A[k, j]
        for k in range(3, 6):
            m = M[i, k]
            for j in range(3, 6):
                tmp[i, j] += m * A[k, j]
    for k in range(6):                              # out += A^T tmp
        for i in range(3):
            a = A[k, i]
            for j in range(6):
                out[i, j] += a * tmp[k, j]
    for k in range(3, 6):
        for i in range(3, 6):
            a = A[k, i]
            for j in range(6):
                out[i, j] += a * tmp[k, j]


@kernel
def carry_from_next(M_own, p_own, A, M_next, p_next, M_out, p_out, tmp):
    """The articulated inertia and bias of a body with the next module's carried back by the
    twist map ``A`` (paper 000 eqs. 23-24 and 50): ``M_out = M_own + A^T M_next A``,
    ``p_out = p_own + A^T p_next`` (6, 6) and (6,); ``tmp``: (6, 6) scratch."""
    for i in range(6):
        for j in range(6):
            M_out[i, j] = M_own[i, j]
    congruence_add(A, M_next, M_out, tmp)
    matTvec(A, p_next, p_out)
    for j in range(6):
        p_out[j] += p_own[j]


@kernel
def congruence_rz(M, c, s, out):
    """``out = A^T M A`` (6, 6) for ``A = Ad_inv(Rz(theta))`` (``c, s = cos, sin theta``):
    an inertia carried back over a rotation about z (columns, then rows, mix in pairs)."""
    for i in range(6):
        for j in (0, 3):
            a, b = M[i, j], M[i, j + 1]
            out[i, j] = c * a - s * b
            out[i, j + 1] = s * a + c * b
        out[i, 2] = M[i, 2]
        out[i, 5] = M[i, 5]
    for j in range(6):
        for i in (0, 3):
            a, b = out[i, j], out[i + 1, j]
            out[i, j] = c * a - s * b
            out[i + 1, j] = s * a + c * b


@kernel
def congruence_translation(M, px, py, pz, out):
    """``out = A^T M A`` (6, 6) for ``A = Ad_inv(T(p)) = [[I, 0], [Q, I]]``, ``Q = -[p]x``:
    an inertia carried back over a translation."""
    q00, q01, q02 = 0.0, pz, -py
    q10, q11, q12 = -pz, 0.0, px
    q20, q21, q22 = py, -px, 0.0
    for i in range(6):                              # out = M A
        m3, m4, m5 = M[i, 3], M[i, 4], M[i, 5]
        out[i, 0] = M[i, 0] + m3 * q00 + m4 * q10 + m5 * q20
        out[i, 1] = M[i, 1] + m3 * q01 + m4 * q11 + m5 * q21
        out[i, 2] = M[i, 2] + m3 * q02 + m4 * q12 + m5 * q22
        out[i, 3], out[i, 4], out[i, 5] = m3, m4, m5
    for j in range(6):                              # out = A^T out (rows 3-5 unchanged)
        r3, r4, r5 = out[3, j], out[4, j], out[5, j]
        out[0, j] += q00 * r3 + q10 * r4 + q20 * r5
        out[1, j] += q01 * r3 + q11 * r4 + q21 * r5
        out[2, j] += q02 * r3 + q12 * r4 + q22 * r5


@kernel
def ad_inv_pose_rz(c, s, px, py, pz, out):
    """``Ad_inv`` (6, 6) of the pose ``T(p) Rz(theta)`` (``c, s = cos, sin theta``), the matrix
    of :func:`pkm_dynamics.core.parallel_module._ad_inv_pose_entries`."""
    for i in range(6):
        for j in range(6):
            out[i, j] = 0.0
    out[0, 0] = c
    out[0, 1] = s
    out[1, 0] = -s
    out[1, 1] = c
    out[2, 2] = 1.0
    out[3, 0] = -s * pz
    out[3, 1] = c * pz
    out[3, 2] = -c * py + s * px
    out[3, 3] = c
    out[3, 4] = s
    out[4, 0] = -c * pz
    out[4, 1] = -s * pz
    out[4, 2] = s * py + c * px
    out[4, 3] = -s
    out[4, 4] = c
    out[5, 0] = py
    out[5, 1] = -px
    out[5, 5] = 1.0


#: ``sin(th)/th, (1 - cos th)/th^2, (th - sin th)/th^3`` of ``th^2``: the function of the numpy
#: layer itself, compiled (one definition of the small-angle series)
so3_coefficients = kernel(spatial.so3_coefficients)


exp_se3_rows = kernel(spatial.exp_se3_rows)


@kernel
def exp_se3(X, q, out):
    """``out = exp(q [X])`` (4, 4) of the screw ``X`` (6,) (:func:`.spatial.exp_se3_rows`)."""
    a, b, c = X[0] * q, X[1] * q, X[2] * q
    th2 = a * a + b * b + c * c
    A, B, Cc = so3_coefficients(th2)
    rows = exp_se3_rows(a, b, c, X[3] * q, X[4] * q, X[5] * q, th2, A, B, Cc)
    for i in range(3):
        r = rows[i]
        for j in range(4):
            out[i, j] = r[j]
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@kernel
def pose_mul(A, B, out):
    """``out = A B`` of two (4, 4) poses."""
    for i in range(3):
        for j in range(4):
            s = A[i, 3] if j == 3 else 0.0
            for k in range(3):
                s += A[i, k] * B[k, j]
            out[i, j] = s
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@kernel
def ad_inv(C, out):
    """``Ad(C)^-1`` (6, 6) of a pose (as :func:`.spatial.Ad_inv`): ``[[R^T, 0], [[u]x R^T, R^T]]``
    with ``u = -R^T p``."""
    u0 = -(C[0, 0] * C[0, 3] + C[1, 0] * C[1, 3] + C[2, 0] * C[2, 3])
    u1 = -(C[0, 1] * C[0, 3] + C[1, 1] * C[1, 3] + C[2, 1] * C[2, 3])
    u2 = -(C[0, 2] * C[0, 3] + C[1, 2] * C[1, 3] + C[2, 2] * C[2, 3])
    for i in range(3):
        for j in range(3):
            out[i, j] = C[j, i]
            out[i + 3, j + 3] = C[j, i]
            out[i, j + 3] = 0.0
    for j in range(3):                       # column j of [u]x R^T is u x (row j of R)
        r0, r1, r2 = C[j, 0], C[j, 1], C[j, 2]
        out[3, j] = u1 * r2 - u2 * r1
        out[4, j] = u2 * r0 - u0 * r2
        out[5, j] = u0 * r1 - u1 * r0


@kernel
def wrench_bias(nu, h, out):
    """``out = -ad*(nu) h`` (6,) (as :func:`.spatial.wrench_bias_list`)."""
    a, b, c, d, e, f = nu[0], nu[1], nu[2], nu[3], nu[4], nu[5]
    out[0] = b * h[2] - c * h[1] + e * h[5] - f * h[4]
    out[1] = c * h[0] - a * h[2] + f * h[3] - d * h[5]
    out[2] = a * h[1] - b * h[0] + d * h[4] - e * h[3]
    out[3] = b * h[5] - c * h[4]
    out[4] = c * h[3] - a * h[5]
    out[5] = a * h[4] - b * h[3]


@kernel
def bracket_scaled(X, Y, s, out):
    """``out = [X, s Y] = ad(X) Y s`` (6,) (as :func:`.spatial.bracket_list`)."""
    a, b, c, d, e, f = X[0], X[1], X[2], X[3], X[4], X[5]
    p, q, r, t, u, w = Y[0] * s, Y[1] * s, Y[2] * s, Y[3] * s, Y[4] * s, Y[5] * s
    out[0] = b * r - c * q
    out[1] = c * p - a * r
    out[2] = a * q - b * p
    out[3] = e * r - f * q + b * w - c * u
    out[4] = f * p - d * r + c * t - a * w
    out[5] = d * q - e * p + a * u - b * t


@kernel
def log_so3(R, out):
    """Rotation vector (3,) of the rotation ``R`` (the leading 3 x 3 block) into ``out``, the
    same branches as :func:`.spatial.log_so3` (series below 1e-4 rad, ``s th / sin th`` up to
    2 rad, the axis of the symmetric part beyond)."""
    s0 = 0.5 * (R[2, 1] - R[1, 2])
    s1 = 0.5 * (R[0, 2] - R[2, 0])
    s2 = 0.5 * (R[1, 0] - R[0, 1])
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    sn = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    th = math.atan2(sn, c)
    if th < 1e-4:
        f = 1.0 + th * th / 6.0
        out[0], out[1], out[2] = s0 * f, s1 * f, s2 * f
        return
    if th < 2.0:
        f = th / sn
        out[0], out[1], out[2] = s0 * f, s1 * f, s2 * f
        return
    kk, best = 0, R[0, 0] - c
    for i in range(1, 3):
        if R[i, i] - c > best:
            kk, best = i, R[i, i] - c
    a0 = R[0, kk] + R[kk, 0] - (2.0 * c if kk == 0 else 0.0)
    a1 = R[1, kk] + R[kk, 1] - (2.0 * c if kk == 1 else 0.0)
    a2 = R[2, kk] + R[kk, 2] - (2.0 * c if kk == 2 else 0.0)
    nrm = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    sign = -1.0 if a0 * s0 + a1 * s1 + a2 * s2 < 0.0 else 1.0
    f = sign * th / nrm
    out[0], out[1], out[2] = a0 * f, a1 * f, a2 * f


@kernel
def log_se3(C, out):
    """``out = log(C)`` (6,) of a pose (as :func:`.spatial.log_se3`): the rotation vector ``w``
    (:func:`log_so3`) and ``v = J_l(w)^-1 p`` with the left Jacobian ``I + B W + Cc W^2``
    (:func:`so3_coefficients`), solved by Cramer's rule (its determinant ``2 (1 - cos th) / th^2``
    is at least ``4 / pi^2`` for angles up to pi)."""
    log_so3(C, out)
    w0, w1, w2 = out[0], out[1], out[2]
    th2 = w0 * w0 + w1 * w1 + w2 * w2
    _, B, Cc = so3_coefficients(th2)
    # J = I + B [w]x + Cc (w w^T - th2 I)
    d = 1.0 - Cc * th2
    j00, j01, j02 = d + Cc * w0 * w0, -B * w2 + Cc * w0 * w1, B * w1 + Cc * w0 * w2
    j10, j11, j12 = B * w2 + Cc * w1 * w0, d + Cc * w1 * w1, -B * w0 + Cc * w1 * w2
    j20, j21, j22 = -B * w1 + Cc * w2 * w0, B * w0 + Cc * w2 * w1, d + Cc * w2 * w2
    det = j00 * (j11 * j22 - j12 * j21) - j01 * (j10 * j22 - j12 * j20) + j02 * (j10 * j21 - j11 * j20)
    p0, p1, p2 = C[0, 3], C[1, 3], C[2, 3]
    out[3] = (p0 * (j11 * j22 - j12 * j21) - j01 * (p1 * j22 - j12 * p2) + j02 * (p1 * j21 - j11 * p2)) / det
    out[4] = (j00 * (p1 * j22 - j12 * p2) - p0 * (j10 * j22 - j12 * j20) + j02 * (j10 * p2 - p1 * j20)) / det
    out[5] = (j00 * (j11 * p2 - p1 * j21) - j01 * (j10 * p2 - p1 * j20) + p0 * (j10 * j21 - j11 * j20)) / det
