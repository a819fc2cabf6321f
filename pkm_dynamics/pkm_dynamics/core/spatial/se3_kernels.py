"""Scalar-loop forms of the spatial algebra of :mod:`pkm_dynamics.core.spatial` for the compiled
kernels (same conventions: twist ``(omega, v)``, wrench ``(moment, force)``, ``A_C_B`` poses).

Each function writes into a preallocated output (the caller's scratch) and is inlined into the
kernel that calls it; none allocates.  Shapes: vectors (6,), matrices (6, 6), poses (4, 4).
Formulas that the numpy layer also needs are not written again here: the plain scalar functions
of :mod:`.scalar_forms` (which the numpy forms call) are compiled from their one definition, and
the kernels below write their results into the outputs.
"""
from __future__ import annotations

import math

from ..numba_support.cache import kernel
from . import scalar_forms as SF
from .scalar_forms import AD_POSE_FLAT
from .small_linalg import mat_vec, matT_vec


@kernel
def matvec(A, v, out):
    """``out = A v`` (6,) (:func:`.small_linalg.mat_vec` of a (6, 6) matrix)."""
    mat_vec(A, 6, 6, v, out)


@kernel
def matTvec(A, v, out):
    """``out = A^T v`` (6,): a wrench carried back by the transpose of a twist map (Ad*)
    (:func:`.small_linalg.matT_vec` of a (6, 6) matrix)."""
    matT_vec(A, 6, 6, v, out)


@kernel
def mat6_vec(A, v, out):
    """``out = A v`` (6,) of a (6, 6) matrix with the entries of ``v`` read once: the numbers of
    :func:`matvec` (each row summed in the same order), the six rows' sums independent of one
    another instead of one loop's running sum (about 2/3 of its time in the chain kernels)."""
    v0, v1, v2, v3, v4, v5 = v[0], v[1], v[2], v[3], v[4], v[5]
    for i in range(6):
        out[i] = A[i, 0] * v0 + A[i, 1] * v1 + A[i, 2] * v2 + A[i, 3] * v3 + A[i, 4] * v4 + A[i, 5] * v5


@kernel
def mat6T_vec(A, v, out):
    """``out = A^T v`` (6,): :func:`matTvec` as :func:`mat6_vec` is :func:`matvec` (the same
    numbers)."""
    v0, v1, v2, v3, v4, v5 = v[0], v[1], v[2], v[3], v[4], v[5]
    for j in range(6):
        out[j] = A[0, j] * v0 + A[1, j] * v1 + A[2, j] * v2 + A[3, j] * v3 + A[4, j] * v4 + A[5, j] * v5


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
    ``tmp``: (6, 6) scratch).  Each entry is summed in a local and stored once."""
    for i in range(6):                              # tmp = M A
        for j in range(3):
            s = 0.0
            for k in range(6):
                s += M[i, k] * A[k, j]
            tmp[i, j] = s
        for j in range(3, 6):
            s = 0.0
            for k in range(3, 6):
                s += M[i, k] * A[k, j]
            tmp[i, j] = s
    for i in range(3):                              # out += A^T tmp
        for j in range(6):
            s = 0.0
            for k in range(6):
                s += A[k, i] * tmp[k, j]
            out[i, j] += s
    for i in range(3, 6):
        for j in range(6):
            s = 0.0
            for k in range(3, 6):
                s += A[k, i] * tmp[k, j]
            out[i, j] += s


@kernel
def carry_from_next(M_own, p_own, A, M_next, p_next, M_out, p_out, tmp, tip):
    """The articulated inertia and bias of a body with the next module's carried back by the
    twist map ``A`` (paper 000 eqs. 23-24 and 50): ``M_out = M_own + A^T M_next A``,
    ``p_out = p_own + A^T p_next`` (6, 6) and (6,); ``tmp``: (6, 6) scratch.  ``tip``: the
    chain's last module, whose ``M_next`` is zero (eq. 20: ``M_E = 0``), so ``M_out = M_own``
    without the congruence."""
    for i in range(6):
        for j in range(6):
            M_out[i, j] = M_own[i, j]
    if not tip:
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
    """``Ad_inv`` (6, 6) of the pose ``T(p) Rz(theta)`` (``c, s = cos, sin theta``): the entries
    of :func:`.scalar_forms.ad_inv_pose_entries` (compiled), the rest 0 and 1."""
    e = ad_inv_pose_entries(c, s, px, py, pz)
    for i in range(6):
        for j in range(6):
            out[i, j] = 0.0
    for k in range(16):
        f = AD_POSE_FLAT[k]
        out[f // 6, f % 6] = e[k]
    out[2, 2] = 1.0
    out[5, 5] = 1.0


@kernel
def ad_inv_pose_rz_vec(c, s, px, py, pz, v, out):
    """``out = A v`` (6,) for ``A = Ad_inv(T(p) Rz(theta))`` (:func:`ad_inv_pose_rz`) without the
    matrix: a twist ``v = (omega, v)`` seen from the moved frame, ``(R^T omega, R^T (v - p x
    omega))``."""
    w0, w1, w2 = v[0], v[1], v[2]
    u0 = v[3] - py * w2 + pz * w1
    u1 = v[4] - pz * w0 + px * w2
    u2 = v[5] - px * w1 + py * w0
    out[0], out[1], out[2] = c * w0 + s * w1, c * w1 - s * w0, w2
    out[3], out[4], out[5] = c * u0 + s * u1, c * u1 - s * u0, u2


@kernel
def ad_inv_pose_rz_T_add(c, s, px, py, pz, y, out):
    """``out += A^T y`` (6,) for ``A = Ad_inv(T(p) Rz(theta))`` (:func:`ad_inv_pose_rz`) without
    the matrix: a wrench ``y = (m, f)`` carried back over the pose, ``(R m + p x R f, R f)``."""
    f0, f1, f2 = c * y[3] - s * y[4], s * y[3] + c * y[4], y[5]
    out[0] += c * y[0] - s * y[1] + py * f2 - pz * f1
    out[1] += s * y[0] + c * y[1] + pz * f0 - px * f2
    out[2] += y[2] + px * f1 - py * f0
    out[3] += f0
    out[4] += f1
    out[5] += f2


#: ``sin(th)/th, (1 - cos th)/th^2, (th - sin th)/th^3`` of ``th^2``: the function of the numpy
#: layer itself, compiled (one definition of the small-angle series)
so3_coefficients = kernel(SF.so3_coefficients)
exp_se3_rows = kernel(SF.exp_se3_rows)
Ad_inv_rows = kernel(SF.Ad_inv_rows)
wrench_bias_entries = kernel(SF.wrench_bias_list)
bracket_entries = kernel(SF.bracket_list)
ad_inv_pose_entries = kernel(SF.ad_inv_pose_entries)


@kernel
def pose_bottom_row(out):
    """The last row ``(0, 0, 0, 1)`` of a pose (4, 4) written by the functions below."""
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0


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
    pose_bottom_row(out)


@kernel
def pose_mul(A, B, out):
    """``out = A B`` of two (4, 4) poses."""
    for i in range(3):
        for j in range(4):
            s = A[i, 3] if j == 3 else 0.0
            for k in range(3):
                s += A[i, k] * B[k, j]
            out[i, j] = s
    pose_bottom_row(out)


@kernel
def ad_inv(C, out):
    """``Ad(C)^-1`` (6, 6) of a pose (:func:`.spatial.Ad_inv_rows`, compiled)."""
    rows = Ad_inv_rows(C[0, 0], C[0, 1], C[0, 2], C[0, 3], C[1, 0], C[1, 1], C[1, 2], C[1, 3],
                       C[2, 0], C[2, 1], C[2, 2], C[2, 3])
    for i in range(6):
        r = rows[i]
        for j in range(6):
            out[i, j] = r[j]


@kernel
def ad_apply(C, X, out):
    """``out = Ad(C) X`` (6,) of a pose (4, 4) and a twist (6,) (as ``spatial.Ad(C) @ X``):
    ``(R w, p x R w + R v)``."""
    w0 = C[0, 0] * X[0] + C[0, 1] * X[1] + C[0, 2] * X[2]
    w1 = C[1, 0] * X[0] + C[1, 1] * X[1] + C[1, 2] * X[2]
    w2 = C[2, 0] * X[0] + C[2, 1] * X[1] + C[2, 2] * X[2]
    x, y, z = C[0, 3], C[1, 3], C[2, 3]
    out[3] = C[0, 0] * X[3] + C[0, 1] * X[4] + C[0, 2] * X[5] + y * w2 - z * w1
    out[4] = C[1, 0] * X[3] + C[1, 1] * X[4] + C[1, 2] * X[5] + z * w0 - x * w2
    out[5] = C[2, 0] * X[3] + C[2, 1] * X[4] + C[2, 2] * X[5] + x * w1 - y * w0
    out[0], out[1], out[2] = w0, w1, w2


@kernel
def wrench_bias(nu, h, out):
    """``out = -ad*(nu) h`` (6,) (:func:`.spatial.wrench_bias_list`, compiled)."""
    out[0], out[1], out[2], out[3], out[4], out[5] = wrench_bias_entries(nu, h)


@kernel
def bracket_scaled(X, Y, s, out):
    """``out = [X, s Y] = ad(X) Y s`` (6,) (:func:`.spatial.bracket_list`, compiled)."""
    out[0], out[1], out[2], out[3], out[4], out[5] = bracket_entries(
        X, (Y[0] * s, Y[1] * s, Y[2] * s, Y[3] * s, Y[4] * s, Y[5] * s))


@kernel
def pose_inv(C, out):
    """``out = C^-1`` (4, 4) of a pose (as :func:`.spatial.pose_inv`): ``[R^T, -R^T p]``."""
    for i in range(3):
        s = 0.0
        for j in range(3):
            out[i, j] = C[j, i]
            s -= C[j, i] * C[j, 3]
        out[i, 3] = s
    pose_bottom_row(out)


@kernel
def log_so3(C):
    """``(omega (3 floats), th)``: the rotation vector of a pose's rotation (4, 4 or 3, 3), angle
    ``th`` in [0, pi]: ``s = vee(R - R^T) / 2``, ``th = atan2(|s|, (tr R - 1) / 2)``; ``omega = s
    th / sin th`` below 2 rad (its series below 1e-3 rad), beyond the axis from the symmetric
    part ``(R + R^T) / 2 - cos(th) I`` (its largest column, its sign from ``s``).  The first
    half of :func:`log_se3`, for callers that need the rotation only (a limb's pose error)."""
    s0 = 0.5 * (C[2, 1] - C[1, 2])
    s1 = 0.5 * (C[0, 2] - C[2, 0])
    s2 = 0.5 * (C[1, 0] - C[0, 1])
    c = 0.5 * (C[0, 0] + C[1, 1] + C[2, 2] - 1.0)
    sn = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    th = math.atan2(sn, c)
    if th < 1e-3:
        f = 1.0 + th * th / 6.0
        return s0 * f, s1 * f, s2 * f, th
    if th < 2.0:
        f = th / sn
        return s0 * f, s1 * f, s2 * f, th
    k, best = 0, C[0, 0] - c
    for j in range(1, 3):
        if C[j, j] - c > best:
            k, best = j, C[j, j] - c
    a0 = 0.5 * (C[0, k] + C[k, 0]) - (c if k == 0 else 0.0)
    a1 = 0.5 * (C[1, k] + C[k, 1]) - (c if k == 1 else 0.0)
    a2 = 0.5 * (C[2, k] + C[k, 2]) - (c if k == 2 else 0.0)
    f = th / math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    if a0 * s0 + a1 * s1 + a2 * s2 < 0.0:
        f = -f
    return a0 * f, a1 * f, a2 * f, th


@kernel
def log_se3(C, out):
    """``out = log(C)`` (6,) of a pose (4, 4), rotation angle in [0, pi] (as
    :func:`.spatial.log_se3` and :func:`.spatial.log_se3_batch`): ``omega`` of
    :func:`log_so3`, ``v = (I - W/2 + k W^2) p`` with the inverse left Jacobian's
    ``k = 1/th^2 - cot(th/2) / (2 th)`` (series ``1/12 + th^2/720``)."""
    w0, w1, w2, th = log_so3(C)
    if th < 1e-3:
        kk = 1.0 / 12.0 + th * th / 720.0
    else:
        kk = 1.0 / (th * th) - 1.0 / (2.0 * th * math.tan(0.5 * th))
    p0, p1, p2 = C[0, 3], C[1, 3], C[2, 3]
    x0, x1, x2 = w1 * p2 - w2 * p1, w2 * p0 - w0 * p2, w0 * p1 - w1 * p0          # W p
    y0, y1, y2 = w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0          # W W p
    out[0], out[1], out[2] = w0, w1, w2
    out[3] = p0 - 0.5 * x0 + kk * y0
    out[4] = p1 - 0.5 * x1 + kk * y1
    out[5] = p2 - 0.5 * x2 + kk * y2


@kernel
def pose_inv_mul(A, B, out):
    """``out = A^-1 B`` (4, 4) of two poses: ``[[R_A^T R_B, R_A^T (p_B - p_A)], [0, 1]]``."""
    for i in range(3):
        for j in range(4):
            s = 0.0
            for k in range(3):
                s += A[k, i] * (B[k, j] - (A[k, 3] if j == 3 else 0.0))
            out[i, j] = s
    pose_bottom_row(out)


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
