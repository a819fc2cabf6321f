"""Small dense linear algebra for the compiled kernels: LU factorisation with partial pivoting
of an (n, n) matrix in place, solves with it, and the 1-norm (for the condition number
``kappa_1 = |A|_1 |A^-1|_1`` that the numpy route estimates from the inverse it forms).

Written for the 3x3 to 6x6 task-space Jacobians of paper 002's recursion (LAPACK ``getrf`` /
``getrs`` in scalar loops, no allocation); each function is inlined into the kernel calling it.
"""
from __future__ import annotations

from .cache import kernel


@kernel
def lu_factor(A, piv) -> bool:
    """``A`` (n, n) overwritten by ``L`` (unit lower, below the diagonal) and ``U``, ``piv`` (n,)
    the row swapped with row ``k`` at step ``k`` (``getrf``).  False when a pivot is exactly zero
    (``A`` singular), as ``numpy.linalg.inv`` raises ``LinAlgError``."""
    n = A.shape[0]
    for k in range(n):
        p = k
        big = abs(A[k, k])
        for i in range(k + 1, n):
            if abs(A[i, k]) > big:
                big, p = abs(A[i, k]), i
        piv[k] = p
        if big == 0.0:
            return False
        if p != k:
            for j in range(n):
                A[k, j], A[p, j] = A[p, j], A[k, j]
        d = 1.0 / A[k, k]
        for i in range(k + 1, n):
            f = A[i, k] * d
            A[i, k] = f
            for j in range(k + 1, n):
                A[i, j] -= f * A[k, j]
    return True


@kernel
def lu_solve(LU, piv, b):
    """``b`` (n,) overwritten by ``A^-1 b`` with the factors of :func:`lu_factor` (``getrs``)."""
    n = LU.shape[0]
    for k in range(n):
        p = piv[k]
        if p != k:
            b[k], b[p] = b[p], b[k]
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= LU[i, j] * b[j]
        b[i] = s
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= LU[i, j] * b[j]
        b[i] = s / LU[i, i]


@kernel
def lu_inverse(LU, piv, out, col):
    """``out`` (n, n) = ``A^-1`` from the factors of :func:`lu_factor`, column by column
    (``col``: (n,) scratch)."""
    n = LU.shape[0]
    for j in range(n):
        for i in range(n):
            col[i] = 0.0
        col[j] = 1.0
        lu_solve(LU, piv, col)
        for i in range(n):
            out[i, j] = col[i]


@kernel
def norm1(A) -> float:
    """``|A|_1`` of an (n, n) matrix: the largest column sum of absolute values."""
    n = A.shape[0]
    best = 0.0
    for j in range(n):
        s = 0.0
        for i in range(n):
            s += abs(A[i, j])
        if s > best:
            best = s
    return best


@kernel
def mat_vec(A, v, out):
    """``out = A v`` of an (n, m) matrix and an (m,) vector."""
    n, m = A.shape
    for i in range(n):
        s = 0.0
        for j in range(m):
            s += A[i, j] * v[j]
        out[i] = s


@kernel
def matT_vec(A, v, out):
    """``out = A^T v`` of an (n, m) matrix and an (n,) vector."""
    n, m = A.shape
    for j in range(m):
        s = 0.0
        for i in range(n):
            s += A[i, j] * v[i]
        out[j] = s
