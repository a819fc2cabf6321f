"""Gravity at run time: the gravity vector a robot computes with, checked, and the gravity of a
tilted base from its orientation (a crane on a slope, a manipulator on a vehicle).

Gravity enters the dynamics as the base acceleration ``Vdot_0 = (0, -g)`` of the root link
(paper 000 Algorithm 1 line 1, ``nud_0``; paper 001's limb trees and the platform's eq. 38;
paper 002's recursion), ``g`` (3,) in the URDF root link frame.  A robot serves another gravity
through ``robot.with_gravity(g)`` (:class:`~.interface.Robot`): a light copy that shares
every model array but the few gravity enters, without rebuilding the model or compiling a
kernel.  A base whose orientation is measured (an IMU on the base: the orientation of the root
link in a gravity-aligned world frame, z up as in REP 103) has ``g = R^T (0, 0, -|g|)``
(:func:`base_gravity`).
"""
from __future__ import annotations

import numpy as np

from .errors import StateError

#: standard gravity [m/s^2] (the default gravity is (0, 0, -STANDARD_GRAVITY) in the root link)
STANDARD_GRAVITY = 9.80665
#: largest magnitude of a gravity vector [m/s^2] (ten times the Earth's: a typo, not a planet)
MAX_GRAVITY = 100.0
#: a quaternion's norm may differ from 1 by at most this before it is refused (a message's
#: float32-rounded or hand-typed quaternion is normalised, a zero or garbage one is not)
QUATERNION_NORM_TOLERANCE = 1e-2


def check_gravity(gravity, what: str = "gravity") -> np.ndarray:
    """``gravity`` as a fresh read-only float array (3,) [m/s^2]: three finite values of
    magnitude at most ``MAX_GRAVITY``; else :class:`StateError` naming ``what`` and the value."""
    try:
        g = np.array(gravity, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise StateError(f"{what} must hold 3 numbers [m/s^2], got {gravity!r}") from None
    if g.shape != (3,):
        raise StateError(f"{what} must hold 3 numbers [m/s^2], got {g.size}: {g.tolist()}")
    if not np.isfinite(g).all():
        raise StateError(f"{what} holds NaN or Inf: {g.tolist()}")
    if np.linalg.norm(g) > MAX_GRAVITY:
        raise StateError(f"{what} {g.tolist()} has magnitude {np.linalg.norm(g):.6g} m/s^2, beyond "
                         f"the bound {MAX_GRAVITY:g} m/s^2 of this package")
    g.setflags(write=False)
    return g


def quaternion_rotation(quaternion, what: str = "orientation") -> np.ndarray:
    """The rotation matrix (3, 3) of a quaternion ``(x, y, z, w)`` (the order of
    geometry_msgs/Quaternion), normalised; :class:`StateError` naming ``what`` for a quaternion
    with NaN / Inf or a norm off 1 by more than ``QUATERNION_NORM_TOLERANCE`` (a zero
    quaternion is no orientation)."""
    q = np.asarray(quaternion, dtype=float).reshape(-1)
    if q.shape != (4,):
        raise StateError(f"{what} must be a quaternion (x, y, z, w), got {q.size} values")
    if not np.isfinite(q).all():
        raise StateError(f"{what} quaternion holds NaN or Inf: (x, y, z, w) = {q.tolist()}")
    norm = float(np.linalg.norm(q))
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        raise StateError(f"{what} quaternion (x, y, z, w) = {q.tolist()} has norm {norm:.6g}, not 1 "
                         f"(+-{QUATERNION_NORM_TOLERANCE:g}): no rotation")
    x, y, z, w = q / norm
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def base_gravity(orientation, magnitude: float = STANDARD_GRAVITY, what: str = "orientation") -> np.ndarray:
    """Gravity (3,) in the root link frame of a base whose orientation in a gravity-aligned
    world frame (z up) is the quaternion ``orientation`` (x, y, z, w): ``R^T (0, 0, -magnitude)``
    (:func:`quaternion_rotation`, :func:`check_gravity`)."""
    R = quaternion_rotation(orientation, what)
    return check_gravity(R.T @ np.array([0.0, 0.0, -float(magnitude)]), f"gravity of the {what}")
