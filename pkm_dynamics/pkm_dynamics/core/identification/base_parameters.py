"""The base parameters: the linear combinations of the standard parameters that the efforts
determine (Gautier 1991, numerical route; Khalil and Dombre, *Modeling, Identification and
Control of Robots*, Sec. 12.4).

The regressor rows ``Y`` of random states (:func:`random_regressor`, N samples stacked to ``A``
(N n_act, p), each column scaled to unit norm so that units do not decide) are factored by QR
with column pivoting, ``A Pi = Q R``.  The rank ``b`` is the number of ``|R_kk| > tolerance
|R_00|`` (default ``tolerance`` :data:`RANK_TOLERANCE` = 1e-11: the structural dependencies show
at round-off, below 1e-13 in every example robot, the weakest identifiable combination above
1e-9: IRSBot-2's at 5.5e-9 in poses +-0.1 m about the reference; how well a motion excites them is
:func:`.least_squares.excitation_score`'s and the standard deviations' business).  The
``b`` pivot columns ``I`` are independent, the others ``D`` follow from them,
``A_D = A_I C`` (``C`` by least squares, entries below 1e-10 zeroed), so::

    Y pi = Y_I pi_I + Y_D pi_D = Y_I (pi_I + C pi_D) = Y_I beta,    beta = K pi

``K`` (b, p) with ``K[:, I] = 1``, ``K[:, D] = C``: the base parameters ``beta`` are what
:func:`.least_squares.identify` estimates.  Standard parameters with no effect at all (zero
columns: e.g. the inertia of a body that only translates) enter no combination.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..errors import StateError
from .parameters import parameter_names
from .regressor import regressor

#: relative threshold on |R_kk| / |R_00| of the pivoted QR (module docstring)
RANK_TOLERANCE = 1e-11
#: coefficients of a combination below this are round-off
COEFFICIENT_ZERO = 1e-10


@dataclass(frozen=True)
class BaseParameters:
    """``independent`` (b,) the standard parameters kept (indices into ``pi``), ``K`` (b, p)
    with ``beta = K pi``, ``names`` (b,) each combination in words, ``rank`` b, ``tolerance``
    of the rank decision, ``diagonal`` the sorted ``|R_kk| / |R_00|`` (the gap at ``b``)."""

    independent: np.ndarray
    K: np.ndarray
    names: tuple
    rank: int
    tolerance: float
    diagonal: np.ndarray

    def of(self, pi) -> np.ndarray:
        """The base parameters ``K pi`` (b,) of standard parameters ``pi`` (p,)."""
        return self.K @ np.asarray(pi, dtype=float)


def random_states(robot, count: int, rng, size: float = 0.1):
    """``count`` random states ``(x, xd, xdd)`` of ``robot`` in its state space (a list of
    tuples): actuator positions inside 5..95 % of their strokes (an unlimited joint in
    [-pi, pi]), task poses within +-``size`` (m, rad) of the reference pose; rates and accelerations
    standard normal."""
    n = len(robot.actuated_joints) if robot.state_space == "actuator" else robot.dof
    tree = robot.description.tree
    out = []
    for _ in range(count):
        if robot.state_space == "actuator":
            idx = [tree.joint_index(j) for j in robot.actuated_joints]
            lo, hi = tree.lower[idx], tree.upper[idx]
            lo, hi = np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)
            x = lo + (hi - lo) * rng.uniform(0.05, 0.95, n)
        else:
            x = robot.task_pose(rng.uniform(-size, size, n))
        out.append((x, rng.normal(size=n), rng.normal(size=n)))
    return out


def default_samples(robot) -> int:
    """How many random states :func:`base_parameters` takes: three times the states whose
    rows could just determine every standard parameter, at least 40."""
    p = 10 * robot.description.tree.nq
    return max(40, 3 * -(-p // len(robot.actuated_joints)))


def random_regressor(robot, samples: int | None = None, seed: int = 0) -> np.ndarray:
    """Regressor rows (N, n_act, p) of ``samples`` (default :func:`default_samples`) random
    states (:func:`random_states`); a state the robot refuses (a singular or unreachable one) is
    left out, and twice the shortfall drawn again (up to eight rounds) until ``samples`` are
    admissible."""
    samples = default_samples(robot) if samples is None else int(samples)
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(8):
        for x, xd, xdd in random_states(robot, 2 * (samples - len(rows)), rng):
            try:
                rows.append(regressor(robot, x, xd, xdd).Y[0])
            except StateError:
                continue
        if len(rows) >= samples:
            return np.stack(rows[:samples])
    raise StateError(f"robot '{robot.name}': only {len(rows)} of the {samples} random states wanted were "
                     "admissible for the base parameters")


def combination_names(names, independent, K) -> tuple:
    """Each row of ``K`` in words: ``"a + 0.5 b - 2 c"`` with the standard parameters' names."""
    out = []
    for row, i in zip(K, independent):
        terms = [names[i]] + [f"{'+' if c > 0 else '-'} {abs(c):.6g} {names[j]}"
                              for j, c in enumerate(row) if j != i and c != 0.0]
        out.append(" ".join(terms))
    return tuple(out)


def base_parameters(robot, samples: int | None = None, seed: int = 0, tolerance: float = RANK_TOLERANCE,
                    rows: np.ndarray | None = None, names=None) -> BaseParameters:
    """The base parameters of ``robot`` (module docstring) from the regressor of ``samples``
    random states (seeded; default :func:`default_samples`), or of the given regressor ``rows``
    (N, n_act, p) (further parameters appended as columns, e.g. friction coefficients, with
    their ``names`` (p,); default :func:`.parameters.parameter_names`)."""
    Y = random_regressor(robot, samples, seed) if rows is None else np.asarray(rows, dtype=float)
    A = Y.reshape(-1, Y.shape[-1])
    p = A.shape[1]
    norms = np.linalg.norm(A, axis=0)
    live = norms > COEFFICIENT_ZERO * max(norms.max(), 1e-300)
    As = np.where(live, A / np.where(live, norms, 1.0), 0.0)
    _, R, piv = scipy.linalg.qr(As, mode="economic", pivoting=True)
    d = np.abs(np.diag(R)) / abs(R[0, 0])
    b = int(np.sum(d > tolerance))
    independent = np.sort(piv[:b])
    dependent = np.setdiff1d(np.arange(p), independent)
    C = np.linalg.lstsq(A[:, independent], A[:, dependent], rcond=None)[0]
    C[np.abs(C) < COEFFICIENT_ZERO * max(1.0, np.abs(C).max())] = 0.0
    K = np.zeros((b, p))
    K[np.arange(b), independent] = 1.0
    K[:, dependent] = C
    names = parameter_names(robot) if names is None else tuple(names)
    return BaseParameters(independent, K, combination_names(names, independent, K), b, tolerance, d)
