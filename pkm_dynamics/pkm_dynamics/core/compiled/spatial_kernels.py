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
def pose_inv(C, out):
    """``out = C^-1`` (4, 4) of a pose (as :func:`.spatial.pose_inv`): ``[R^T, -R^T p]``."""
    for i in range(3):
        s = 0.0
        for j in range(3):
            out[i, j] = C[j, i]
            s -= C[j, i] * C[j, 3]
        out[i, 3] = s
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@kernel
def log_se3(C, out):
    """``out`` (6,): the twist with ``exp(out) = C`` (as :func:`.spatial.log_se3_batch`): the
    angle by ``atan2``, ``omega = s th / sin th`` (``s = vee(R - R^T) / 2``; series below
    1e-3), from 2 rad on the axis from the symmetric part (as :func:`.spatial.log_so3`);
    ``v`` by the inverse left Jacobian ``I - W/2 + (1/th^2 - cot(th/2) / (2 th)) W^2``."""
    s0 = 0.5 * (C[2, 1] - C[1, 2])
    s1 = 0.5 * (C[0, 2] - C[2, 0])
    s2 = 0.5 * (C[1, 0] - C[0, 1])
    c = 0.5 * (C[0, 0] + C[1, 1] + C[2, 2] - 1.0)
    sn = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    th = math.atan2(sn, c)
    if th < 1e-3:
        f = 1.0 + th * th / 6.0
        k = 1.0 / 12.0 + th * th / 720.0
        w0, w1, w2 = s0 * f, s1 * f, s2 * f
    else:
        k = 1.0 / (th * th) - 1.0 / (2.0 * th * math.tan(0.5 * th))
        if th < 2.0:
            f = th / sn
            w0, w1, w2 = s0 * f, s1 * f, s2 * f
        else:                                  # axis from (R + R^T)/2 - cos(th) I, its largest column
            m = 0
            for i in range(1, 3):
                if C[i, i] > C[m, m]:
                    m = i
            a0 = 0.5 * (C[0, m] + C[m, 0]) - (c if m == 0 else 0.0)
            a1 = 0.5 * (C[1, m] + C[m, 1]) - (c if m == 1 else 0.0)
            a2 = 0.5 * (C[2, m] + C[m, 2]) - (c if m == 2 else 0.0)
            na = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
            if a0 * s0 + a1 * s1 + a2 * s2 < 0.0:
                na = -na
            w0, w1, w2 = th * a0 / na, th * a1 / na, th * a2 / na
    p0, p1, p2 = C[0, 3], C[1, 3], C[2, 3]
    x0, x1, x2 = w1 * p2 - w2 * p1, w2 * p0 - w0 * p2, w0 * p1 - w1 * p0        # W p
    y0, y1, y2 = w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0        # W W p
    out[0], out[1], out[2] = w0, w1, w2
    out[3] = p0 - 0.5 * x0 + k * y0
    out[4] = p1 - 0.5 * x1 + k * y1
    out[5] = p2 - 0.5 * x2 + k * y2


@kernel
def ad_apply(C, v, out):
    """``out = Ad(C) v`` (6,) of a twist ``v`` (as ``spatial.Ad(C) @ v``): ``(R w, R v + p x R w)``."""
    for i in range(3):
        out[i] = C[i, 0] * v[0] + C[i, 1] * v[1] + C[i, 2] * v[2]
    a, b, c = out[0], out[1], out[2]
    for i in range(3):
        out[3 + i] = C[i, 0] * v[3] + C[i, 1] * v[4] + C[i, 2] * v[5]
    out[3] += C[1, 3] * c - C[2, 3] * b
    out[4] += C[2, 3] * a - C[0, 3] * c
    out[5] += C[0, 3] * b - C[1, 3] * a


@kernel
def ad_inv_apply(C, v, out):
    """``out = Ad(C)^-1 v`` (6,) of a twist ``v``: ``(R^T w, R^T (v - p x w))``."""
    w0, w1, w2 = v[0], v[1], v[2]
    a0 = v[3] - (C[1, 3] * w2 - C[2, 3] * w1)
    a1 = v[4] - (C[2, 3] * w0 - C[0, 3] * w2)
    a2 = v[5] - (C[0, 3] * w1 - C[1, 3] * w0)
    for i in range(3):
        out[i] = C[0, i] * w0 + C[1, i] * w1 + C[2, i] * w2
        out[3 + i] = C[0, i] * a0 + C[1, i] * a1 + C[2, i] * a2


@kernel
def ad_inv_T_apply(C, h, out):
    """``out = Ad(C)^-T h`` (6,) of a wrench ``h = (m, f)`` (a wrench carried from the frame of
    ``C`` back to the frame ``C`` is given in): ``(R m + p x R f, R f)``."""
    for i in range(3):
        out[3 + i] = C[i, 0] * h[3] + C[i, 1] * h[4] + C[i, 2] * h[5]
        out[i] = C[i, 0] * h[0] + C[i, 1] * h[1] + C[i, 2] * h[2]
    f0, f1, f2 = out[3], out[4], out[5]
    out[0] += C[1, 3] * f2 - C[2, 3] * f1
    out[1] += C[2, 3] * f0 - C[0, 3] * f2
    out[2] += C[0, 3] * f1 - C[1, 3] * f0
