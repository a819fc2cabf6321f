"""Projected Gauss-Newton on a pose error, the search every inverse kinematics of a chain with
stroke-limited actuators shares (module chains, :mod:`..module_chain.chain_ik`; chains of loops,
:mod:`..loop_chain.loop_chain_ik`): the chain supplies its forward kinematics ``T(x)`` and its
end-effector Jacobian (in one call, which a compiled chain evaluates together), this module the
iteration."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import PkmDynamicsError
from .se3 import log_se3, pose_inv


def bounded_step(J, e, x, lower, upper) -> np.ndarray:
    """Least-squares Gauss-Newton step ``dx`` (n,) for ``J dx = e`` (``J`` (6, n), ``e`` (6,))
    with the actuators that sit on a stroke end and would be pushed beyond it held fixed
    (active set)."""
    dx = np.linalg.lstsq(J, e, rcond=None)[0]
    blocked = ((x <= lower) & (dx < 0)) | ((x >= upper) & (dx > 0))
    if blocked.any():
        dx = np.zeros_like(x)
        dx[~blocked] = np.linalg.lstsq(J[:, ~blocked], e, rcond=None)[0]
    return dx


def pose_newton(pose_and_jacobian, T_star, x, lower, upper, tol: float, max_iter: int,
                infeasible=PkmDynamicsError) -> tuple:
    """Projected Gauss-Newton on the body-frame pose error ``e(x) = log(T(x)^-1 T*)`` (6,) from
    ``x`` (n,): ``pose_and_jacobian(x)`` gives ``T(x)`` (4, 4) and the body-fixed end-effector
    Jacobian ``J`` (6, n) with ``de = J dx``; each step :func:`bounded_step`, the trial clipped to
    the strokes ``lower``, ``upper`` (n,) and halved until the error decreases (a trial where
    ``pose_and_jacobian`` raises ``infeasible``, beyond a loop's feasible range, counts as no
    decrease);
    once the error is below ``tol`` one more step polishes it to round-off.  Returns
    ``(x, residual, iterations)``."""

    def error(xv):
        """The pose error at ``xv`` (6,) and the Jacobian there (6, n)."""
        T, J = pose_and_jacobian(xv)
        return log_se3(pose_inv(T) @ T_star), J

    x = np.array(x, dtype=float)
    e, J = error(x)
    it = 0
    while it < max_iter and np.linalg.norm(e) > 1e-3 * tol:
        polishing = np.linalg.norm(e) <= tol       # converged: one more step to round-off
        it += 1
        dx = bounded_step(J, e, x, lower, upper)
        step = 1.0
        for _ in range(30):
            trial = np.clip(x + step * dx, lower, upper)
            try:
                e_trial, J_trial = error(trial)
            except infeasible:
                e_trial = None
            if e_trial is not None and np.linalg.norm(e_trial) < np.linalg.norm(e):
                break
            step *= 0.5
        else:
            break                                  # no decrease: a local minimum (or done)
        x, e, J = trial, e_trial, J_trial
        if polishing:
            break
    return x, float(np.linalg.norm(e)), it


def box_starts(reference, lower, upper, turns, max_strokes: int) -> list:
    """Start configurations of the IK's solution search: ``reference`` (n,), then the corners of
    the box at 1/4 and 3/4 of every stroke ``lower``..``upper`` (n,) (``2^b`` for ``b <=
    max_strokes`` limited actuators, those not flagged in ``turns`` (n,) bool; a joint without
    limits keeps its reference value)."""
    starts = [np.array(reference, dtype=float)]
    limited = np.flatnonzero(~turns)
    if len(limited) > max_strokes:
        return starts
    for corner in itertools.product((0.25, 0.75), repeat=len(limited)):
        x = starts[0].copy()
        x[limited] = lower[limited] + np.array(corner) * (upper - lower)[limited]
        starts.append(x)
    return starts
