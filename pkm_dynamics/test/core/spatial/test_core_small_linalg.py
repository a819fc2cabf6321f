"""Small dense linear algebra of the compiled kernels (core/spatial/small_linalg.py) against LAPACK
through numpy: the Cholesky test of definiteness (``positive_definite``, which the forward
dynamics' check of ``M_t`` reads) on definite, semidefinite and indefinite matrices.  (The
solvers, condition numbers and eigenvalues: test/core/limb/test_core_compiled_limb.py.)"""
import numpy as np
import pytest

from pkm_dynamics.core.spatial import small_linalg as LA


def _cholesky_or_none(M):
    """LAPACK's Cholesky factor of ``M`` (its lower triangle), or None where it refuses."""
    try:
        return np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        return None


def test_positive_definite_against_lapack():
    """Seeded symmetric matrices of 1..7 rows in the leading block of an 8 x 8 scratch, garbage
    in the strict upper triangle (the lower one is read): definite ones (eigenvalues spread up to
    1e10, scaled 1e-5..1e5) are found definite, their factor ``L`` with ``L L^T = S`` to
    round-off (1e-14 of the largest entry); indefinite ones (one eigenvalue negative, at least
    1e-6 of the largest) are refused, as eigvalsh and LAPACK's Cholesky say."""
    rng = np.random.default_rng(11)
    M, L = np.zeros((8, 8)), np.zeros((8, 8))
    for n in range(1, 8):
        for _ in range(40):
            Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
            lam = np.logspace(0, -rng.uniform(0, 10), n) * 10.0 ** rng.uniform(-5, 5)
            for ev in (lam, np.where(np.arange(n) == n - 1, -lam[0] * 10.0 ** rng.uniform(-6, 0), lam)):
                S = (Q * ev) @ Q.T
                S = 0.5 * (S + S.T)
                M[:] = rng.normal(size=(8, 8))
                M[:n, :n] = np.tril(S) + np.triu(rng.normal(size=(n, n)), 1)
                definite = np.linalg.eigvalsh(S)[0] > 0.0
                ref = _cholesky_or_none(S)
                assert (ref is not None) == definite
                assert LA.positive_definite(M, n, L) == definite
                if definite:                                  # its factor: S to round-off
                    F = np.tril(L[:n, :n])
                    assert np.abs(F @ F.T - S).max() <= 1e-14 * np.abs(S).max()


@pytest.mark.parametrize("S", [
    np.zeros((3, 3)),
    np.ones((2, 2)),                                          # v v^T: the second pivot exactly 0
    np.diag([2.0, 0.0, 5.0]),
    np.outer([1.0, 2.0, -0.5, 4.0], [1.0, 2.0, -0.5, 4.0]),   # rank 1, exact in binary
    np.array([[4.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 3.0]]),
])
def test_positive_semidefinite_is_refused(S):
    """A singular positive semidefinite matrix (a pivot exactly zero) is not definite: LAPACK's
    Cholesky refuses it, eigvalsh finds a zero eigenvalue, and so does the test."""
    assert _cholesky_or_none(S) is None
    assert np.linalg.eigvalsh(S)[0] == pytest.approx(0.0, abs=1e-13 * np.abs(S).max())
    n = len(S)
    assert not LA.positive_definite(S.copy(), n, np.zeros((n, n)))


def test_positive_definite_refuses_nan():
    """A NaN on the diagonal is not a positive pivot: not definite (the check of ``M_t`` then
    falls to the singular values)."""
    S = np.eye(3)
    S[1, 1] = np.nan
    assert not LA.positive_definite(S, 3, np.zeros((3, 3)))
