"""Input bounds: the largest magnitudes the core computes with (documented in doc/services.rst).

The robots served (hydraulic cranes, parallel manipulators) move at most a few metres or
radians per second.  Values far beyond that are not a motion to compute: squared velocities
of 1e155 overflow to Inf inside the dynamics, a platform pose 1e10 m away sends the loop-closure
continuation on an endless walk.  Such input is refused up front with a
:class:`~.errors.StateError` naming the field, the entry and the bound.  The bounds are generous
(two to three orders of magnitude above any real machine) and in SI units; one bound per
quantity holds for linear (m, m/s, N) and angular (rad, rad/s, N m) components alike.
"""
from __future__ import annotations

import numpy as np

from .errors import ConvergenceError, StateError
from .status import LIMIT_SLACK

#: largest magnitude of the k-th time derivative (k = 1..4: velocity, acceleration, jerk, snap)
#: of an actuator coordinate or a task-space component [m/s^k or rad/s^k]
MAX_RATE = {1: 1e2, 2: 1e4, 3: 1e6, 4: 1e8}
#: name of the k-th derivative in messages
RATE_NAMES = {1: "velocity", 2: "acceleration", 3: "jerk", 4: "snap"}
#: largest magnitude of an actuator effort or of a wrench component [N or N m]
MAX_EFFORT = 1e10
#: largest magnitude of a position component of a pose (platform, end effector) [m], and of
#: the position of a joint without limits (a continuous joint) [rad]
MAX_POSITION = 1e3
#: largest number of points of one trajectory request (inverse dynamics)
MAX_POINTS = 1000
#: largest number of continuation steps from the zero configuration (higher-order route) or
#: from the IK's start configuration (PKM inverse kinematics on a working mode) to a requested
#: pose or actuator state (each of at most ``status.CONTINUATION_STEP``); beyond: out of
#: reach
MAX_CONTINUATION_STEPS = 400


def check_bound(values, bound: float, what: str, unit: str = "") -> np.ndarray:
    """``values`` as a float array after checking every entry finite and of magnitude at most
    ``bound``; else :class:`StateError` naming ``what``, the entry and the bound."""
    a = np.asarray(values, dtype=float)
    if not np.isfinite(a).all():
        raise StateError(f"{what} holds NaN or Inf: {a.tolist()}")
    big = np.flatnonzero(np.abs(a) > bound)
    if big.size:
        k = int(big[0])
        where = f"{what}[{k}]" if a.ndim else what
        raise StateError(f"{where} = {a.ravel()[k]:.6g} is beyond the bound +-{bound:g}"
                         f"{' ' + unit if unit else ''} of this package")
    return a


def check_rate(values, what: str, order: int) -> np.ndarray:
    """:func:`check_bound` of the ``order``-th derivative (1..4) against ``MAX_RATE[order]``."""
    return check_bound(values, MAX_RATE[order], what, f"(m or rad)/s^{order}")


def check_effort(values, what: str) -> np.ndarray:
    """:func:`check_bound` of actuator efforts or wrench components against ``MAX_EFFORT``."""
    return check_bound(values, MAX_EFFORT, what, "(N or N m)")


def check_position(values, what: str, unit: str = "m") -> np.ndarray:
    """:func:`check_bound` of a pose's position components (or of the positions of joints
    without limits, ``unit`` "m or rad") against ``MAX_POSITION``."""
    return check_bound(values, MAX_POSITION, what, unit)


def check_limits(tree, joints, values, what: str = "x") -> np.ndarray:
    """``values`` (n,) of the tree joints ``joints`` (indices) within their URDF limits (an
    actuator's stroke); else :class:`StateError` naming the joint, the value and the limits."""
    a = np.asarray(values, dtype=float)
    for k, (j, v) in enumerate(zip(joints, a)):
        lo, hi = tree.lower[j], tree.upper[j]
        if v < lo - LIMIT_SLACK or v > hi + LIMIT_SLACK:
            raise StateError(f"{what}[{k}] = {v:.6g} is beyond the limits [{lo:.6g}, {hi:.6g}] of "
                             f"joint '{tree.joint_names[j]}' (its stroke)")
    return a


def continuation_steps(distance: float, step: float, what: str,
                       start: str = "the zero configuration") -> int:
    """Number of continuation steps of at most ``step`` over ``distance`` (from ``start``); a
    :class:`~.errors.ConvergenceError` when that exceeds ``MAX_CONTINUATION_STEPS`` (the target
    is out of reach: no assembly is followed that far)."""
    if not np.isfinite(distance) or distance > MAX_CONTINUATION_STEPS * step:
        raise ConvergenceError(f"{what} is {distance:.3g} from {start}, beyond the "
                               f"{MAX_CONTINUATION_STEPS * step:g} that the continuation follows: "
                               f"out of reach")
    return int(np.ceil(distance / step))


__all__ = ["MAX_CONTINUATION_STEPS", "MAX_EFFORT", "MAX_POINTS", "MAX_POSITION", "MAX_RATE",
           "RATE_NAMES", "check_bound", "check_effort", "check_limits", "check_position",
           "check_rate", "continuation_steps"]


def check_tree_vector(model, name: str, v, n=None) -> np.ndarray:
    """A state vector ``v`` (n,) of a tree ``model`` (default ``n = model.nq``) as floats: a wrong
    shape or a non-finite entry (named by its joint) is a :class:`~.errors.StateError`."""
    v = np.asarray(v, dtype=float)
    n = model.nq if n is None else n
    if v.shape != (n,):
        raise StateError(f"{name} has shape {v.shape}, expected ({n},) for robot '{model.name}'")
    if not np.isfinite(v).all():
        bad = [model.joint_names[k] for k in np.flatnonzero(~np.isfinite(v))] if n == model.nq else []
        raise StateError(f"{name} is not finite" + (f" at joint(s) {', '.join(bad)}" if bad else ""))
    return v
