"""Small dense linear algebra for the compiled limb kernels, in scalar loops that allocate
nothing: LU solves with partial pivoting (the ``numpy.linalg.solve`` of the numpy route),
condition numbers from one-sided Jacobi singular values (its ``numpy.linalg.svd``),
Householder least squares (its ``numpy.linalg.qr`` + triangular solve) and the rotation
logarithm of :func:`..spatial.log_so3`.

Matrices are the leading ``m x k`` block of a larger scratch array, so one preallocated array
serves every size of a limb.
"""
from __future__ import annotations

import math

from .cache import kernel


@kernel
def lu_solve(A, m, B, k):
    """``B[:m, :k] <- A[:m, :m]^-1 B[:m, :k]`` by Gaussian elimination with partial pivoting;
    ``A`` is overwritten.  Returns False when a pivot is zero or not finite (a singular
    matrix: where ``numpy.linalg.solve`` raises ``LinAlgError``)."""
    for c in range(m):
        p, best = c, abs(A[c, c])
        for i in range(c + 1, m):
            if abs(A[i, c]) > best:
                p, best = i, abs(A[i, c])
        if not best > 0.0 or not math.isfinite(best):
            return False
        if p != c:
            for j in range(m):
                A[c, j], A[p, j] = A[p, j], A[c, j]
            for j in range(k):
                B[c, j], B[p, j] = B[p, j], B[c, j]
        inv = 1.0 / A[c, c]
        for i in range(c + 1, m):
            f = A[i, c] * inv
            if f != 0.0:
                for j in range(c + 1, m):
                    A[i, j] -= f * A[c, j]
                for j in range(k):
                    B[i, j] -= f * B[c, j]
    for c in range(m - 1, -1, -1):
        inv = 1.0 / A[c, c]
        for j in range(k):
            s = B[c, j]
            for i in range(c + 1, m):
                s -= A[c, i] * B[i, j]
            B[c, j] = s * inv
    return True


@kernel
def condition(A, m, k, W):
    """``kappa(A[:m, :k])`` = largest / smallest of its ``min(m, k)`` singular values (inf
    when the smallest is 0, 1 for an empty matrix), as ``s[0] / s[-1]`` of
    ``numpy.linalg.svd``: one-sided Jacobi rotations on the columns of a copy in ``W`` (at
    least ``max(m, k) x min(m, k)``) until they are orthogonal; the singular values are then
    the column norms (to high relative accuracy)."""
    if m == 0 or k == 0:
        return 1.0
    p, q = (m, k) if m >= k else (k, m)
    for i in range(p):
        for j in range(q):
            W[i, j] = A[i, j] if m >= k else A[j, i]
    for _ in range(60):
        off = 0.0
        for a in range(q - 1):
            for b in range(a + 1, q):
                alpha, beta, gamma = 0.0, 0.0, 0.0
                for i in range(p):
                    alpha += W[i, a] * W[i, a]
                    beta += W[i, b] * W[i, b]
                    gamma += W[i, a] * W[i, b]
                if gamma == 0.0 or abs(gamma) <= 1e-15 * math.sqrt(alpha * beta):
                    continue
                off = max(off, abs(gamma) / math.sqrt(alpha * beta))
                zeta = (beta - alpha) / (2.0 * gamma)
                t = math.copysign(1.0, zeta) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                for i in range(p):
                    wa, wb = W[i, a], W[i, b]
                    W[i, a] = c * wa - s * wb
                    W[i, b] = s * wa + c * wb
        if off <= 1e-15:
            break
    smax, smin = 0.0, math.inf
    for j in range(q):
        s = 0.0
        for i in range(p):
            s += W[i, j] * W[i, j]
        s = math.sqrt(s)
        smax, smin = max(smax, s), min(smin, s)
    if not math.isfinite(smax) or not math.isfinite(smin):
        return math.inf
    return smax / smin if smin > 0.0 else math.inf


@kernel
def least_squares_step(S, m, k, r, QR, tau):
    """``r[:k] <- argmin |S[:m, :k] z - r[:m]|`` for a full-column-rank ``S`` (m >= k):
    Householder QR of a copy in ``QR`` (``tau`` (k,) scratch), ``Q^T r``, back substitution
    (the correction ``R^-1 Q^T (rhs - S x)`` of :func:`..ik_refinement.refine_rates`).
    Returns False for a zero diagonal of ``R``."""
    for i in range(m):
        for j in range(k):
            QR[i, j] = S[i, j]
    for c in range(k):
        nrm = 0.0
        for i in range(c, m):
            nrm += QR[i, c] * QR[i, c]
        nrm = math.sqrt(nrm)
        if nrm == 0.0:
            return False
        alpha = -nrm if QR[c, c] >= 0.0 else nrm
        v0 = QR[c, c] - alpha
        QR[c, c] = v0                                   # v = (v0, QR[c+1:, c])
        vv = v0 * v0
        for i in range(c + 1, m):
            vv += QR[i, c] * QR[i, c]
        tau[c] = 2.0 / vv if vv > 0.0 else 0.0
        for j in range(c + 1, k):
            s = 0.0
            for i in range(c, m):
                s += QR[i, c] * QR[i, j]
            s *= tau[c]
            for i in range(c, m):
                QR[i, j] -= s * QR[i, c]
        s = 0.0
        for i in range(c, m):
            s += QR[i, c] * r[i]
        s *= tau[c]
        for i in range(c, m):
            r[i] -= s * QR[i, c]
        QR[c, c] = alpha                                # R's diagonal; v0 is not needed again
    for c in range(k - 1, -1, -1):
        s = r[c]
        for j in range(c + 1, k):
            s -= QR[c, j] * r[j]
        r[c] = s / QR[c, c]
    return True


@kernel
def log_so3(R, out):
    """Rotation vector (3,) of the rotation ``R`` (the leading 3 x 3 block) into ``out``, the
    same branches as :func:`..spatial.log_so3` (series below 1e-4 rad, ``s th / sin th`` up to
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
