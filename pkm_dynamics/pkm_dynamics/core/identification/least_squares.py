"""Identification from data: weighted least squares of the regressor's rows (Gautier and
Khalil's scheme), the parameters' standard deviations and residual, and the excitation score of
a motion.

Given samples ``(x, xd, xdd)`` with measured efforts ``u`` (N, n_act), the rows
``u - u_0 = Y pi`` (:mod:`.regressor`) are stacked and each actuator's rows divided by its
effort standard deviation ``sigma_j`` (given, or estimated from the residual of an unweighted
first solve: ``sigma_j^2 = |r_j|^2 / (N - p / n_act)``), so the weighted rows ``W`` have unit
noise.  On the base parameters ``beta = K pi`` (:mod:`.base_parameters`; ``Y pi = Y_b beta``,
``Y_b`` the independent columns) the solution is ``beta = argmin |W_b beta - w|`` with
covariance ``s^2 (W_b^T W_b)^-1``, ``s^2 = |W_b beta - w|^2 / (m - b)`` (``m`` rows, ``b``
parameters), so the standard deviations hold whether or not ``sigma`` was right in scale.

Bounds (``consistent=True``): the standard parameters are solved instead, by bounded least
squares (``scipy.optimize.lsq_linear``), with every body's mass and the diagonal of its
rotational inertia about the body origin non-negative (necessary conditions of physical
consistency: ``I_o`` is positive semi-definite; the full condition, a positive semi-definite
pseudo-inertia, is not enforced), and ``beta = K pi`` of that solution returned.

Excitation: :func:`excitation_score` is the condition number of the column-scaled base
regressor of a motion (lower is better; Gautier and Khalil 1992 minimise it).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import StateError
from .base_parameters import BaseParameters, base_parameters
from .regressor import regressor


class IdentificationError(StateError):
    """The data cannot determine the parameters asked for (too few samples, no excitation,
    efforts not finite, an estimate that is not physical)."""


@dataclass(frozen=True)
class Identification:
    """The result of :func:`identify`: ``parameters`` (b,) the base parameters ``beta`` (names
    ``names``), ``std`` (b,) their standard deviations, ``standard`` (p,) one standard parameter
    vector with ``K standard = parameters`` (the least-norm one, or the bounded solve's),
    ``residual`` (N, n_act) ``u - Y pi - u_0``, ``sigma`` (n_act,) the effort standard
    deviations used as weights, ``condition`` the condition number of the weighted rows."""

    parameters: np.ndarray
    std: np.ndarray
    names: tuple
    standard: np.ndarray
    residual: np.ndarray
    sigma: np.ndarray
    condition: float


def checked_efforts(u, shape) -> np.ndarray:
    """Measured efforts ``u`` as (N, n_act), finite; else :class:`IdentificationError` naming
    the first sample and actuator that is not."""
    u = np.asarray(u, dtype=float).reshape(shape)
    bad = np.argwhere(~np.isfinite(u))
    if len(bad):
        raise IdentificationError(f"efforts are not finite: sample {bad[0][0]}, actuator {bad[0][1]} "
                                  f"is {u[tuple(bad[0])]}")
    return u


def weighted_solve(A, b, sigma=None):
    """Weighted least squares of rows ``A (N, n_act, k) x = b (N, n_act)`` (module docstring):
    ``(x, covariance (k, k), sigma (n_act,), condition)``; ``sigma`` (n_act,) or (N, n_act) given, or
    estimated from an unweighted first solve."""
    N, n, k = A.shape
    if N * n <= k:
        raise IdentificationError(f"{N} samples of {n} efforts give {N * n} equations for {k} "
                                  "parameters: more samples are needed")
    if sigma is None:
        x0 = np.linalg.lstsq(A.reshape(-1, k), b.reshape(-1), rcond=None)[0]
        r = b - A @ x0
        dof = max(N - k / n, 1.0)
        sigma = np.sqrt((r ** 2).sum(axis=0) / dof)
        sigma = np.where(sigma > 0, sigma, max(sigma.max(), 1e-300))
    s = np.broadcast_to(np.asarray(sigma, dtype=float), (N, n))
    W, w = (A / s[..., None]).reshape(-1, k), (b / s).reshape(-1)
    U, sv, Vt = np.linalg.svd(W, full_matrices=False)
    if sv[-1] <= 1e-12 * sv[0]:
        raise IdentificationError(f"the samples do not excite every parameter (smallest singular value "
                                  f"{sv[-1]:.3g} of {sv[0]:.3g}): a richer motion is needed")
    x = Vt.T @ ((U.T @ w) / sv)
    res = W @ x - w
    s2 = res @ res / (len(w) - k)
    cov = s2 * (Vt.T / sv ** 2) @ Vt
    return x, cov, np.asarray(sigma, dtype=float), float(sv[0] / sv[-1])


def _bounded_standard(Ys, b, sigma, p, inertial):
    """Standard parameters (p,) with non-negative masses and inertia diagonals (module docstring)
    among the first ``inertial`` (the bodies' ten each; any appended columns unbounded)."""
    from scipy.optimize import lsq_linear
    N, n, _ = Ys.shape
    s = np.broadcast_to(sigma, (N, n))
    lb = np.full(p, -np.inf)
    for off in range(0, inertial, 10):
        lb[off + np.array([0, 4, 6, 9])] = 0.0          # m, I_xx, I_yy, I_zz
    sol = lsq_linear((Ys / s[..., None]).reshape(-1, p), (b / s).reshape(-1), bounds=(lb, np.inf),
                     lsmr_tol="auto", method="bvls")
    return sol.x


def identify(robot, x, xd, xdd, u, wrench=None, sigma=None, base: BaseParameters | None = None,
             consistent: bool = False, rows=None) -> Identification:
    """Identify ``robot``'s base parameters from samples ``(x, xd, xdd)`` (its state space, a
    leading axis N) and measured efforts ``u`` (N, n_act) (module docstring).  ``wrench``: the
    known external wrench of each sample (in ``u_0``); ``sigma``: effort standard deviations
    (n_act,) or (N, n_act) (default: estimated); ``base``: the base parameters to identify
    (default :func:`.base_parameters.base_parameters` of the robot); ``consistent``: bounds on
    the standard parameters (module docstring); ``rows``: the :class:`.regressor.Regressor` of
    these samples if already made, possibly with further linear parameters appended as columns
    of ``Y`` (friction coefficients: give ``base`` of the same columns, e.g.
    ``base_parameters(robot, rows=..., names=...)``; the bounds concern the inertial columns)."""
    R = regressor(robot, x, xd, xdd, wrench) if rows is None else rows
    u = checked_efforts(u, R.u0.shape)
    base = base_parameters(robot) if base is None else base
    rhs = u - R.u0
    Yb = R.Y[..., base.independent]
    beta, cov, sigma, cond = weighted_solve(Yb, rhs, sigma)
    std = np.sqrt(np.diag(cov))
    p = R.Y.shape[-1]
    if consistent:
        standard = _bounded_standard(R.Y, rhs, sigma, p, 10 * robot.description.tree.nq)
        beta = base.K @ standard
    else:
        standard = np.linalg.lstsq(base.K, beta, rcond=None)[0]
    residual = rhs - Yb @ beta
    return Identification(beta, std, base.names, standard, residual, sigma, cond)


def excitation_score(robot, x, xd, xdd, base: BaseParameters | None = None) -> float:
    """Condition number of the base regressor of the motion ``(x, xd, xdd)`` (N samples), its
    columns scaled to unit norm (units do not count): the lower, the better the motion
    excites the base parameters (``inf``: some are not excited at all)."""
    base = base_parameters(robot) if base is None else base
    Y = regressor(robot, x, xd, xdd).Y[..., base.independent]
    A = Y.reshape(-1, Y.shape[-1])
    norms = np.linalg.norm(A, axis=0)
    if not (norms > 0).all():
        return float("inf")
    sv = np.linalg.svd(A / norms, compute_uv=False)
    return float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf")
