"""Example motions of paper 002 (Sec. VI), given analytically up to the 4th derivative so that
the higher-order inverse dynamics can be fed and checked along them.

Each function returns ``(pose, Vt)`` at time ``t``: the 4x4 pose of the platform frame and
the task twist derivatives ``Vt`` (4, delta) = ``(V_t, Vdot_t, Vddot_t, Vdddot_t)`` in the
order of the robot's ``<task_space>``.
"""
from __future__ import annotations

import numpy as np

from .spatial import pose, rpy_matrix


def roll_angle(t: float, theta_min: float = -0.5, theta_max: float = 0.5, period: float = 1.0) -> np.ndarray:
    """``theta(t) = -A cos(w t) + A + theta_min`` and its derivatives 1..4 (5,), with
    ``A = (theta_max - theta_min) / 2`` and ``w = 2 pi / T`` (paper 002 Sec. VI-A; the paper
    prints ``A = (theta_min - theta_max) / 2``, which would not stay in [theta_min, theta_max])."""
    A = 0.5 * (theta_max - theta_min)
    w = 2.0 * np.pi / period
    out = np.array([-A * w**k * np.cos(w * t + k * np.pi / 2) for k in range(5)])
    out[0] += A + theta_min
    return out


def gough_stewart_roll(t: float, height: float = 0.22, **kw) -> tuple:
    """Pure roll of the platform about its own x axis through its centre (paper 002 Sec. VI-A),
    task space ``wx wy wz vx vy vz``: ``V_t^(k) = (theta^(k+1), 0, 0, 0, 0, 0)``."""
    th = roll_angle(t, **kw)
    C = pose(rpy_matrix([th[0], 0.0, 0.0]), [0.0, 0.0, height])
    Vt = np.zeros((4, 6))
    Vt[:, 0] = th[1:]
    return C, Vt


def smooth_step(tau: float) -> np.ndarray:
    """``s(tau) = 35 tau^4 - 84 tau^5 + 70 tau^6 - 20 tau^7`` on [0, 1] and its derivatives
    1..4 (5,): rest-to-rest with velocity, acceleration and jerk zero at both ends (jerk
    continuous; the snap jumps at the ends)."""
    tau = float(np.clip(tau, 0.0, 1.0))
    c = np.array([0, 0, 0, 0, 35.0, -84.0, 70.0, -20.0])
    out = []
    for _ in range(5):
        out.append(np.polyval(c[::-1], tau))
        c = np.array([k * c[k] for k in range(1, len(c))])
    return np.array(out)


PICK = np.array([-0.04, -0.03])
PLACE = np.array([0.05, 0.04])


def pick_and_place(t: float, move: float = 0.4, dwell: float = 0.1, a=PICK, b=PLACE) -> tuple:
    """Planar pick-and-place cycle of the 3RRR (paper 002 Sec. VI-B): the platform centre moves
    from ``a`` to ``b`` in ``move`` seconds with the jerk-continuous :func:`smooth_step`, dwells,
    moves back and dwells (period ``2 (move + dwell)``); constant orientation.  Task space
    ``vx vy wz``."""
    period = 2.0 * (move + dwell)
    tc = t % period
    if tc < move + dwell:
        s, start, end = smooth_step(tc / move), a, b
    else:
        s, start, end = smooth_step((tc - move - dwell) / move), b, a
    d = np.asarray(end, dtype=float) - np.asarray(start, dtype=float)
    p = start + s[0] * d
    C = pose(None, [p[0], p[1], 0.0])
    Vt = np.zeros((4, 3))
    for k in range(4):
        Vt[k, :2] = s[k + 1] * d / move ** (k + 1)
    return C, Vt
