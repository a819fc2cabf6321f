"""Estimation of a payload (a rigid load at the end effector / platform) from a window of
measured motion and efforts.

The load adds its ten parameters ``pi_L`` (:mod:`.parameters`, about the payload link frame L:
:func:`..description.payload.payload_link`) to the tree body ``b`` L is fixed to, as
``pi_b += T pi_L`` (:func:`.parameters.transformed_parameters` of the pose ``b_C_L``, the
inertia update of :mod:`..description.payload`).  With the robot's own model ``pi`` known, the
efforts the model does not explain are the load's::

    u - Y pi - u_0 = Y_b T pi_L                                   (N, n_act) rows

solved by weighted least squares (:func:`.least_squares.weighted_solve`: per-actuator weights
from the residual unless given), over the parameters the actuators sense at all
(:func:`sensed_parameters`: a planar robot does not sense the centre of mass normal to its
plane, held at zero, std NaN).  The mass and first moment ``(m, m c)`` are always estimated
(a window that does not excite them, a robot at rest, is refused); the rotational inertia is
estimated where the window excites it (``inertia="auto"``: the ten columns, scaled to unit
norm, have a condition number at most :data:`INERTIA_CONDITION`), else held at zero (a point
mass).  ``c = m c / m`` and ``I_c = I_o + m [c]x [c]x``; the standard deviations of ``c`` are
propagated to first order from the covariance of ``(m, m c)``.  Where the inertia is excited, the
centre of mass comes from the ten-parameter fit (a point-mass fit of a load with inertia is
biased); the inertia is applied only where its estimate is physical (positive semi-definite,
triangle inequality), else the payload is the point mass (``PayloadEstimate.inertia`` False).

The estimate is the whole load: a payload the model of ``robot`` already carries (``carried``,
e.g. the run-time payload it was built with) is taken out of ``pi`` first (``pi_b -= T
pi_carried``). Refusals (:class:`.least_squares.IdentificationError`, naming why): fewer than
``min_samples`` samples, efforts not finite, no excitation of ``(m, m c)``, a mass estimate that
is not positive, an inertia asked for (``inertia=True``) but not excited.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..description.payload import Payload, payload_link
from ..errors import DescriptionError

from .base_parameters import COEFFICIENT_ZERO, RANK_TOLERANCE, random_regressor
from .least_squares import IdentificationError, checked_efforts, weighted_solve
from .parameters import PARAMETER_NAMES, body_parameters, robot_parameters, transformed_parameters
from .regressor import regressor

#: fewest samples of a window
MIN_SAMPLES = 10
#: largest condition number of the column-scaled ten load columns for the inertia to count as excited
INERTIA_CONDITION = 1e3


@dataclass(frozen=True)
class PayloadEstimate:
    """``payload`` (:class:`~..description.payload.Payload`: mass, centre of mass, inertia about
    it in the link frame; zero inertia where not estimated), ``mass_std`` (kg), ``com_std`` (3,)
    (m; NaN for a component the robot does not sense, held at zero), ``parameters`` (10,)
    ``pi_L`` about the link frame with ``std`` (10,) (NaN where not estimated), ``estimated``
    (the names of the estimated parameters), ``inertia`` (whether ``payload`` carries the
    estimated inertia: excited and physical), ``link``, ``samples``, ``residual_rms`` (n_act,)
    of the efforts after the estimate, ``condition`` of the weighted rows."""

    payload: Payload
    mass_std: float
    com_std: np.ndarray
    parameters: np.ndarray
    std: np.ndarray
    estimated: tuple
    inertia: bool
    link: str
    samples: int
    residual_rms: np.ndarray
    condition: float


def load_columns(robot, Y) -> np.ndarray:
    """``Y_b T`` (N, n_act, 10): the regressor of a load at the payload link (module docstring)."""
    tree = robot.description.tree
    body, b_C_L = tree.frame(payload_link(robot.description))
    if body < 0:
        raise IdentificationError(f"payload link '{payload_link(robot.description)}' is fixed to the base")
    return Y[..., 10 * body:10 * body + 10] @ transformed_parameters(b_C_L)


def sensed_parameters(robot, samples: int = 12, seed: int = 0) -> np.ndarray:
    """The load parameters (indices into :data:`.parameters.PARAMETER_NAMES`) the robot's
    actuators sense at all: the pivot columns of the QR with column pivoting of the load columns
    at random states (:func:`.base_parameters.random_regressor`, rank decided as there).  A planar
    robot does not sense the centre of mass normal to its plane, nor the inertia about in-plane
    axes: those stay at zero in the estimate."""
    A = load_columns(robot, random_regressor(robot, samples, seed)).reshape(-1, 10)
    norms = np.linalg.norm(A, axis=0)
    live = norms > COEFFICIENT_ZERO * max(norms.max(), 1e-300)
    As = np.where(live, A / np.where(live, norms, 1.0), 0.0)
    _, R, piv = scipy.linalg.qr(As, mode="economic", pivoting=True)
    d = np.abs(np.diag(R)) / max(abs(R[0, 0]), 1e-300)
    return np.sort(piv[:int(np.sum(d > RANK_TOLERANCE))])


def _inertia_excited(A, sigma) -> bool:
    W = (A / np.broadcast_to(sigma, A.shape[:2])[..., None]).reshape(-1, A.shape[-1])
    W = W / np.maximum(np.linalg.norm(W, axis=0), 1e-300)
    sv = np.linalg.svd(W, compute_uv=False)
    return bool(sv[-1] > 0 and sv[0] / sv[-1] <= INERTIA_CONDITION)


def _payload(pi, cov):
    """The payload of ``pi_L`` (10,) with covariance ``cov`` (10, 10) (zero rows for parameters
    not estimated), the standard deviations of its mass and centre of mass, and whether its
    inertia was kept (all six entries estimated and physical)."""
    m, h = pi[0], pi[1:4]
    if not m > 0:
        raise IdentificationError(f"the estimated payload mass {m:.6g} kg (std {np.sqrt(cov[0, 0]):.3g} kg) "
                                  "is not positive: not a physical load; nothing applied")
    c = h / m
    J = np.zeros((3, 10))
    J[:, 0], J[:, 1:4] = -h / m**2, np.eye(3) / m
    com_std = np.sqrt(np.diag(J @ cov @ J.T))
    try:
        point = Payload(m, c)
    except DescriptionError as exc:
        raise IdentificationError(f"the estimate is not a physical load: {exc}; nothing applied") from None
    if not np.all(np.diag(cov)[4:] > 0):
        return point, float(np.sqrt(cov[0, 0])), com_std, False
    xx, xy, yy, xz, yz, zz = pi[4:]
    C = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
    I_c = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) + m * C @ C
    try:
        return Payload(m, c, I_c), float(np.sqrt(cov[0, 0])), com_std, True
    except DescriptionError:        # excited, but not determined well enough to be physical
        return point, float(np.sqrt(cov[0, 0])), com_std, False


def estimate_payload(robot, x, xd, xdd, u, wrench=None, sigma=None, inertia="auto",
                     min_samples: int = MIN_SAMPLES, carried: Payload | None = None) -> PayloadEstimate:
    """The payload at the end effector / platform of ``robot`` from a window of samples
    ``(x, xd, xdd)`` (its state space, leading axis N) and measured efforts ``u`` (N, n_act)
    (module docstring).  ``wrench``: known external wrenches; ``sigma``: effort standard
    deviations (n_act,) (default: estimated); ``inertia``: ``"auto"``, True (estimate it: refused
    when not excited) or False (a point mass); ``carried``: the payload ``robot``'s model
    carries (module docstring)."""
    N = len(np.atleast_2d(np.asarray(u, dtype=float)))
    if N < min_samples:
        raise IdentificationError(f"a window of {N} samples is too short: at least {min_samples} are needed")
    R = regressor(robot, x, xd, xdd, wrench)
    u = checked_efforts(u, R.u0.shape)
    A = load_columns(robot, R.Y)
    d = u - R.Y @ robot_parameters(robot) - R.u0
    if carried is not None:
        d = d + A @ body_parameters(carried.spatial_inertia())
    sensed = sensed_parameters(robot)
    if 0 not in sensed:
        raise IdentificationError(f"robot '{robot.name}': its actuators do not sense a load's mass at "
                                  f"'{payload_link(robot.description)}'")
    first, rotational = sensed[sensed < 4], sensed[sensed >= 4]
    try:
        _, _, sigma, _ = weighted_solve(A[..., first], d, sigma)
    except IdentificationError as exc:
        raise IdentificationError(f"the window does not excite the payload's mass and centre of mass "
                                  f"({exc}): a window with motion in several joints is needed") from None
    with_rotational = len(rotational) and (inertia is True or (
        inertia == "auto" and _inertia_excited(A[..., sensed], sigma)))
    cols = sensed if with_rotational else first
    try:
        pi, cov, sigma, cond = weighted_solve(A[..., cols], d, sigma)
    except IdentificationError as exc:
        raise IdentificationError(f"the window does not excite the payload's inertia ({exc})") from None
    params, full = np.zeros(10), np.zeros((10, 10))
    params[cols], full[np.ix_(cols, cols)] = pi, cov
    payload, mass_std, com_std, with_inertia = _payload(params, full)
    com_std = np.where(np.isin(np.arange(1, 4), cols), com_std, np.nan)       # not sensed: NaN
    std = np.full(10, np.nan)
    std[cols] = np.sqrt(np.diag(cov))
    rms = np.sqrt(((d - A[..., cols] @ pi) ** 2).mean(axis=0))
    return PayloadEstimate(payload, mass_std, com_std, params, std, tuple(PARAMETER_NAMES[c] for c in cols),
                           with_inertia, payload_link(robot.description), N, rms, cond)
