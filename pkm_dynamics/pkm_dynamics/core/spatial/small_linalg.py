"""Small dense linear algebra for the compiled limb kernels, in scalar loops that allocate
nothing: LU solves with partial pivoting (the
``numpy.linalg.solve`` of the numpy route), condition numbers from one-sided Jacobi singular
values (its ``numpy.linalg.svd``) or, for a square matrix whose inverse is at hand, from the
largest eigenvalues of two Gram matrices (Householder tridiagonal + Laguerre), Householder least
squares (its ``numpy.linalg.qr`` + triangular solve), a Cholesky test of definiteness.

Matrices are the leading ``m x k`` block of a larger scratch array, so one preallocated array
serves every size of a limb.
"""
from __future__ import annotations

import math

from ..numba_support.cache import kernel


@kernel
def lu_solve(A, m, B, k):
    """``B[:m, :k] <- A[:m, :m]^-1 B[:m, :k]`` by Gaussian elimination with partial pivoting;
    ``A`` is overwritten.  Returns False when a pivot is zero or not finite (a singular
    matrix: where ``numpy.linalg.solve`` raises ``LinAlgError``)."""
    return lu_solve_pair(A, m, B, k, B, 0)


@kernel
def lu_solve_pair(A, m, B, k, B2, k2):
    """:func:`lu_solve` with two right-hand sides, ``B[:m, :k]`` and ``B2[:m, :k2]``, from one
    elimination of ``A``: each column comes out bitwise as from its own :func:`lu_solve` (the
    pivots and multipliers depend on ``A`` alone)."""
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
            for j in range(k2):
                B2[c, j], B2[p, j] = B2[p, j], B2[c, j]
        inv = 1.0 / A[c, c]
        for i in range(c + 1, m):
            f = A[i, c] * inv
            if f != 0.0:
                for j in range(c + 1, m):
                    A[i, j] -= f * A[c, j]
                for j in range(k):
                    B[i, j] -= f * B[c, j]
                for j in range(k2):
                    B2[i, j] -= f * B2[c, j]
    for c in range(m - 1, -1, -1):
        inv = 1.0 / A[c, c]
        for j in range(k):
            s = B[c, j]
            for i in range(c + 1, m):
                s -= A[c, i] * B[i, j]
            B[c, j] = s * inv
        for j in range(k2):
            s = B2[c, j]
            for i in range(c + 1, m):
                s -= A[c, i] * B2[i, j]
            B2[c, j] = s * inv
    return True


@kernel
def condition(A, m, k, W):
    """``kappa(A[:m, :k])`` = largest / smallest of its ``min(m, k)`` singular values (inf
    when the smallest is 0, 1 for an empty matrix), as ``s[0] / s[-1]`` of
    ``numpy.linalg.svd``: one-sided Jacobi rotations on the columns of a copy in ``W`` (at
    least ``max(m, k) x min(m, k)``) until they are orthogonal; the singular values are then
    the column norms (to high relative accuracy).  The pairs of a sweep come in round-robin
    order, ``q/2`` disjoint pairs at a time (their rotations are independent: the processor
    overlaps them; the plain cyclic order chains every pair on the last).  No allocation: it is
    called from kernels compiled without numba's runtime (:func:`..numba_support.cache.scratch_kernel`)."""
    if m == 0 or k == 0:
        return 1.0
    p, q = (m, k) if m >= k else (k, m)
    for i in range(p):
        for j in range(q):
            W[i, j] = A[i, j] if m >= k else A[j, i]
    Q = q + q % 2                                       # round-robin: Q - 1 rounds of disjoint pairs
    for _ in range(60):
        rotated = False
        for r in range(Q - 1):
            for h in range(Q // 2):
                a, b = (r, Q - 1) if h == 0 else ((r + h) % (Q - 1), (r - h) % (Q - 1))
                if a > b:
                    a, b = b, a
                if b >= q:
                    continue
                alpha, beta, gamma = 0.0, 0.0, 0.0
                for i in range(p):
                    wa, wb = W[i, a], W[i, b]
                    alpha += wa * wa
                    beta += wb * wb
                    gamma += wa * wb
                if gamma == 0.0 or abs(gamma) <= 1e-15 * math.sqrt(alpha * beta):
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                t = math.copysign(1.0, zeta) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                for i in range(p):
                    wa, wb = W[i, a], W[i, b]
                    W[i, a] = c * wa - s * wb
                    W[i, b] = s * wa + c * wb
        if not rotated:
            break
    smax, smin = 0.0, math.inf
    for j in range(q):
        s = math.sqrt(column_norm2(W, p, j))
        smax, smin = max(smax, s), min(smin, s)
    if not math.isfinite(smax) or not math.isfinite(smin):
        return math.inf
    return smax / smin if smin > 0.0 else math.inf


@kernel
def column_norm2(W, p, j):
    """``|W[:p, j]|^2``."""
    s = 0.0
    for i in range(p):
        s += W[i, j] * W[i, j]
    return s


@kernel
def least_squares_step(S, m, k, r, QR, tau):
    """``r[:k] <- argmin |S[:m, :k] z - r[:m]|`` for a full-column-rank ``S`` (m >= k):
    :func:`householder_qr` of a copy in ``QR`` (``tau`` (k,) scratch), then
    :func:`householder_least_squares` (the correction ``R^-1 Q^T (rhs - S x)`` of
    :func:`..ik_refinement.refine_rates`).  Returns False for a zero diagonal of ``R``."""
    if not householder_qr(S, m, k, QR, tau):
        return False
    householder_least_squares(QR, m, k, tau, r)
    return True


@kernel
def householder_qr(S, m, k, QR, tau):
    """Householder QR of ``S[:m, :k]`` (m >= k) into ``QR``: ``R`` above the diagonal, the
    reflectors ``v`` (``v[0]`` on the diagonal) on and below it, ``R``'s diagonal in ``tau``
    (k,) (``numpy.linalg.qr``'s factors, for :func:`householder_least_squares` on any number of
    right-hand sides).  Returns False for a zero diagonal of ``R``."""
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
        QR[c, c] -= alpha                               # v = (v0, QR[c+1:, c])
        t = reflector_scale(QR, m, c)
        for j in range(c + 1, k):
            s = 0.0
            for i in range(c, m):
                s += QR[i, c] * QR[i, j]
            s *= t
            for i in range(c, m):
                QR[i, j] -= s * QR[i, c]
        tau[c] = alpha
    return True


@kernel
def reflector_scale(QR, m, c):
    """``2 / |v|^2`` of the reflector ``v = QR[c:m, c]`` (0 for a zero ``v``)."""
    vv = QR[c, c] * QR[c, c]
    for i in range(c + 1, m):
        vv += QR[i, c] * QR[i, c]
    return 2.0 / vv if vv > 0.0 else 0.0


@kernel
def householder_least_squares(QR, m, k, tau, r):
    """``r[:k] <- R^-1 (Q^T r)[:k]`` (the least-squares solution of ``S z = r[:m]``) from the
    factors of :func:`householder_qr` (``R``'s diagonal in ``tau``)."""
    for c in range(k):
        t = reflector_scale(QR, m, c)
        s = 0.0
        for i in range(c, m):
            s += QR[i, c] * r[i]
        s *= t
        for i in range(c, m):
            r[i] -= s * QR[i, c]
    for c in range(k - 1, -1, -1):
        s = r[c]
        for j in range(c + 1, k):
            s -= QR[c, j] * r[j]
        r[c] = s / tau[c]


@kernel
def condition_at_most(A, m, k, W, threshold):
    """Whether ``kappa(A[:m, :k]) <= threshold``, without singular values where a bound decides:
    with the Gram matrix ``G`` of the smaller side (``A^T A`` or ``A A^T``, eigenvalues the
    squared singular values) ``kappa^2 <= tr(G) tr(G^-1)``; only above ``threshold`` does
    :func:`condition` decide.  ``W``: scratch of at least ``2 max(m, k)`` rows and
    ``max(m, k)`` columns."""
    if m == 0 or k == 0:
        return 1.0 <= threshold
    q = min(m, k)
    for a in range(q):
        for b in range(q):
            s = 0.0
            if m >= k:
                for i in range(m):
                    s += A[i, a] * A[i, b]
            else:
                for i in range(k):
                    s += A[a, i] * A[b, i]
            W[a, b] = s
            W[q + a, b] = 1.0 if a == b else 0.0
    tr = 0.0
    for a in range(q):
        tr += W[a, a]
    G, X = W[:q], W[q:2 * q]
    if lu_solve(G, q, X, q):
        tri = 0.0
        for a in range(q):
            tri += X[a, a]
        # tri <= 0: G^-1 is round-off (kappa(G) = kappa(A)^2 beyond 1/eps): only the SVD decides
        if tri > 0.0 and tr * tri <= threshold * threshold:
            return True
    return condition(A, m, k, W) <= threshold


@kernel
def frobenius2(A, m, k) -> float:
    """``|A[:m, :k]|_F^2``, the sum of the squared entries."""
    s = 0.0
    for i in range(m):
        for j in range(k):
            s += A[i, j] * A[i, j]
    return s


@kernel
def lu_inverse(A, m, out) -> bool:
    """``out[:m, :m] <- A[:m, :m]^-1`` by :func:`lu_solve` on the identity (``A`` is
    overwritten): the ``numpy.linalg.inv`` of the numpy route.  False for a singular ``A``."""
    for i in range(m):
        for j in range(m):
            out[i, j] = 1.0 if i == j else 0.0
    return lu_solve(A, m, out, m)


@kernel
def norm1(A, m) -> float:
    """``|A[:m, :m]|_1``: the largest column sum of absolute values (with :func:`lu_inverse`
    the condition number ``kappa_1 = |A|_1 |A^-1|_1``)."""
    best = 0.0
    for j in range(m):
        s = 0.0
        for i in range(m):
            s += abs(A[i, j])
        best = max(best, s)
    return best


@kernel
def mat_vec(A, m, k, v, out):
    """``out[:m] = A[:m, :k] v[:k]``."""
    for i in range(m):
        s = 0.0
        for j in range(k):
            s += A[i, j] * v[j]
        out[i] = s


@kernel
def matT_vec(A, m, k, v, out):
    """``out[:k] = A[:m, :k]^T v[:m]``."""
    for j in range(k):
        s = 0.0
        for i in range(m):
            s += A[i, j] * v[i]
        out[j] = s


@kernel
def gram_tridiagonal(A, m, k, W) -> None:
    """The Gram matrix ``A[:m, :k]^T A[:m, :k]`` (k, k) reduced to a symmetric tridiagonal
    in ``W`` (at least k x k) by :func:`symmetric_tridiagonal`."""
    for a in range(k):
        for b in range(a + 1):
            s = 0.0
            for i in range(m):
                s += A[i, a] * A[i, b]
            W[a, b] = s
            W[b, a] = s
    symmetric_tridiagonal(W, k)


@kernel
def symmetric_tridiagonal(W, k) -> None:
    """The symmetric ``W[:k, :k]`` reduced in place to a tridiagonal ``T = Q^T W Q``:
    Householder reflections (Golub & Van Loan Alg. 8.3.1), ``T``'s diagonal on ``W``'s diagonal,
    its subdiagonal in ``W[i + 1, i]``; the rest of ``W`` is scratch (the reflector of column j
    in row j, ``p`` in column j)."""
    for j in range(k - 2):
        sig = 0.0
        for i in range(j + 2, k):
            sig += W[i, j] * W[i, j]
        if sig == 0.0:                              # column already reduced
            continue
        x0 = W[j + 1, j]
        alpha = -math.copysign(math.sqrt(x0 * x0 + sig), x0)
        W[j, j + 1] = x0 - alpha                    # v = (x0 - alpha, W[j+2:, j]) in row j
        for i in range(j + 2, k):
            W[j, i] = W[i, j]
        vv = W[j, j + 1] * W[j, j + 1] + sig
        beta = 2.0 / vv
        pv = 0.0
        for i in range(j + 1, k):                   # p = beta A22 v in column j
            s = 0.0
            for c in range(j + 1, k):
                s += W[i, c] * W[j, c]
            W[i, j] = beta * s
            pv += W[i, j] * W[j, i]
        h = 0.5 * beta * pv
        for i in range(j + 1, k):                   # w = p - (beta p.v / 2) v
            W[i, j] -= h * W[j, i]
        for i in range(j + 1, k):                   # A22 -= v w^T + w v^T
            for c in range(j + 1, i + 1):
                u = W[i, c] - W[j, i] * W[c, j] - W[i, j] * W[j, c]
                W[i, c] = u
                W[c, i] = u
        W[j + 1, j] = alpha


@kernel
def tridiagonal_top_eigenvalue(W, k) -> float:
    """The largest eigenvalue of the symmetric tridiagonal ``T`` (k, k) of
    :func:`gram_tridiagonal` (diagonal ``W[i, i]``, subdiagonal ``W[i + 1, i]``): ``T`` split
    where a subdiagonal entry is negligible (``e_i^2 <= eps^2 |d_i d_i+1|``, LAPACK ``dsterf``'s
    test: an eigenvalue moves by at most ``eps |T|``), the largest of the blocks'
    :func:`block_top_eigenvalue`.  0 for an empty or zero ``T``."""
    top, lo = 0.0, 0
    for i in range(k):
        if i + 1 == k or W[i + 1, i] ** 2 <= 1.2e-32 * abs(W[i, i] * W[i + 1, i + 1]):
            top = max(top, block_top_eigenvalue(W, lo, i + 1))
            lo = i + 1
    return top


@kernel
def block_top_eigenvalue(W, lo, hi) -> float:
    """The largest eigenvalue of the block ``lo:hi`` of the tridiagonal of
    :func:`tridiagonal_top_eigenvalue` by Laguerre's iteration on ``det(x I - T)`` (its
    three-term recurrence with the first and second derivatives) from the Gershgorin bound
    above: for a polynomial with real roots it decreases monotonically to the largest root,
    cubically near a simple one (an unreduced tridiagonal has simple eigenvalues; Parlett 1964,
    Math. Comp. 18); it stops where the recurrence's round-off stops the decrease (the
    eigenvalue to ``eps |T|``)."""
    n = hi - lo
    top = 0.0
    for i in range(lo, hi):
        r = W[i, i] + (abs(W[i, i - 1]) if i > lo else 0.0) + (abs(W[i + 1, i]) if i + 1 < hi else 0.0)
        top = max(top, r)
    if not top > 0.0:
        return 0.0
    s = 1.0 / top                                   # in units of the bound: x in (0, 1]
    x = 1.0
    for _ in range(100):
        p0, d0, e0 = 1.0, 0.0, 0.0                  # p_{i-1}, p'_{i-1}, p''_{i-1}
        p1, d1, e1 = 0.0, 0.0, 0.0                  # p_{i-2}, ...
        for i in range(lo, hi):
            t = x - W[i, i] * s
            b2 = (W[i, i - 1] * s) ** 2 if i > lo else 0.0
            p, d, e = t * p0 - b2 * p1, p0 + t * d0 - b2 * d1, 2.0 * d0 + t * e0 - b2 * e1
            p1, d1, e1 = p0, d0, e0
            p0, d0, e0 = p, d, e
        if not p0 > 0.0:                            # at the root to round-off
            break
        g = d0 / p0
        h = g * g - e0 / p0
        disc = (n - 1) * (n * h - g * g)
        step = n / (g + math.sqrt(max(disc, 0.0)))
        if not (step > 0.0 and x - step < x):
            break
        x -= step
    return x * top


@kernel
def condition_with_inverse(A, B, k, W) -> float:
    """``kappa(A)`` of a square ``A[:k, :k]`` given ``B`` (k, k) with the singular values of
    ``A^-1`` (``A^-1`` itself or an orthogonal multiple: ``F^-1 = D_t^T L_t`` of a limb with an
    orthogonal ``D_t``): ``sigma_max(A) sigma_max(A^-1) = sqrt(lambda_max(A^T A)
    lambda_max(B^T B))``, each largest eigenvalue exact to round-off (:func:`gram_tridiagonal`,
    :func:`tridiagonal_top_eigenvalue`).  The numbers of :func:`condition` (``s[0] / s[-1]`` of
    ``numpy.linalg.svd``) to round-off relative to their own accuracy (the smallest singular
    value to ``eps kappa``), without the Jacobi sweeps; inf where an entry is not finite.
    ``W``: scratch of at least k x k."""
    if k == 0:
        return 1.0
    for i in range(k):
        for j in range(k):
            if not (math.isfinite(A[i, j]) and math.isfinite(B[i, j])):
                return math.inf
    gram_tridiagonal(A, k, k, W)
    la = tridiagonal_top_eigenvalue(W, k)
    gram_tridiagonal(B, k, k, W)
    lb = tridiagonal_top_eigenvalue(W, k)
    v = math.sqrt(la) * math.sqrt(lb)
    return v if v > 0.0 and math.isfinite(v) else math.inf


@kernel
def largest_eigenvalue(M, W) -> float:
    """``lambda_max`` of the symmetric positive semidefinite ``M`` (m, m) (as
    ``numpy.linalg.eigvalsh(M)[-1]``, to round-off: the largest eigenvalue of a symmetric matrix
    moves by at most ``eps |M|`` under the reduction): ``M`` copied into ``W`` (at least m x m),
    :func:`symmetric_tridiagonal`, :func:`tridiagonal_top_eigenvalue`."""
    m = M.shape[0]
    for a in range(m):
        for b in range(m):
            W[a, b] = M[a, b]
    symmetric_tridiagonal(W, m)
    return tridiagonal_top_eigenvalue(W, m)


@kernel
def positive_definite(M, n, L):
    """Whether the symmetric ``M[:n, :n]`` (its lower triangle read) is positive definite: its
    Cholesky factor, into ``L`` (n, n) scratch, has positive pivots."""
    for j in range(n):
        s = M[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        L[j, j] = d = math.sqrt(s)
        for i in range(j + 1, n):
            t = M[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / d
    return True
