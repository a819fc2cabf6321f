"""Example motions of paper 002 (Sec. VI), given analytically up to the 4th derivative so that
the higher-order inverse dynamics can be fed and checked along them.

Each function returns ``(pose, Vt)`` at time ``t``: the 4x4 pose of the platform frame and
the task twist derivatives ``Vt`` (4, delta) = ``(V_t, Vdot_t, Vddot_t, Vdddot_t)`` in the
order of the robot's ``<task_space>``.
"""
from __future__ import annotations

import numpy as np

from ..spatial.se3 import pose, rpy_matrix


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


#: signs of the four jerk pulses of :func:`sin2_jerk_step` (accelerate, ease, brake, ease)
SIN2_JERK_SIGNS = (1.0, -1.0, -1.0, 1.0)
_OMEGA = 8.0 * np.pi                 # sin^2(4 pi tau) = (1 - cos(8 pi tau)) / 2


def _sin2_jerk_quarter(sign: float, start, u: float) -> np.ndarray:
    """One jerk pulse ``j = sign (1 - cos(w u)) / 2`` (unit gain) integrated from ``start`` =
    (s, ds, dds) over ``u`` in [0, 1/4]: s and its derivatives 1..4 (5,)."""
    s0, v0, a0 = start
    w = _OMEGA
    sw, cw = np.sin(w * u), np.cos(w * u)
    h = 0.5 * sign
    return np.array([s0 + v0 * u + a0 * u * u / 2 + h * (u ** 3 / 6 + sw / w ** 3 - u / w ** 2),
                     v0 + a0 * u + h * (u * u / 2 + (cw - 1.0) / w ** 2),
                     a0 + h * (u - sw / w),
                     h * (1.0 - cw),
                     h * w * sw])


def _sin2_jerk_unscaled(tau: float) -> np.ndarray:
    """:func:`sin2_jerk_step` with unit jerk gain (s(1) != 1)."""
    k = min(int(tau * 4.0), 3)
    start = (0.0, 0.0, 0.0)
    for i in range(k):
        start = _sin2_jerk_quarter(SIN2_JERK_SIGNS[i], start, 0.25)[:3]
    return _sin2_jerk_quarter(SIN2_JERK_SIGNS[k], start, tau - 0.25 * k)


_SIN2_GAIN = 1.0 / _sin2_jerk_unscaled(1.0)[0]


def sin2_jerk_step(tau: float) -> np.ndarray:
    """Rest-to-rest step ``s(tau)`` on [0, 1] from 0 to 1 whose jerk has a sin^2 time profile
    (paper 002 Sec. VI-B: "the EE trajectory follows a sin^2 time profile of the jerk"), and its
    derivatives 1..4: (5,).  The paper gives no more detail; here the jerk is four sin^2 pulses
    of equal length and height, ``d3s = c sigma_k sin^2(4 pi tau)`` on quarter ``k`` with signs
    ``sigma = (+, -, -, +)`` (:data:`SIN2_JERK_SIGNS`) and ``c`` such that ``s(1) = 1``.
    Velocity, acceleration and jerk are zero at both ends and the jerk is C^1, so the snap is
    continuous and zero at both ends too (only the 5th derivative jumps): u, u-dot and u-ddot
    of the higher-order inverse dynamics are continuous across the move ends and dwells."""
    if tau <= 0.0 or tau >= 1.0:              # at rest before and after (exactly, no sin(2 pi))
        return np.array([0.0 if tau <= 0.0 else 1.0, 0.0, 0.0, 0.0, 0.0])
    return _SIN2_GAIN * _sin2_jerk_unscaled(float(tau))


PICK = np.array([-0.04, -0.03])
PLACE = np.array([0.05, 0.04])


def pick_and_place(t: float, move: float = 0.4, dwell: float = 0.1, a=PICK, b=PLACE) -> tuple:
    """Planar pick-and-place cycle of the 3RRR (paper 002 Sec. VI-B): the platform centre moves
    from ``a`` to ``b`` in ``move`` seconds with the snap-continuous :func:`sin2_jerk_step`, dwells,
    moves back and dwells (period ``2 (move + dwell)``); constant orientation.  Task space
    ``vx vy wz``."""
    period = 2.0 * (move + dwell)
    tc = t % period
    if tc < move + dwell:
        s, start, end = sin2_jerk_step(tc / move), a, b
    else:
        s, start, end = sin2_jerk_step((tc - move - dwell) / move), b, a
    d = np.asarray(end, dtype=float) - np.asarray(start, dtype=float)
    p = start + s[0] * d
    C = pose(None, [p[0], p[1], 0.0])
    Vt = np.zeros((4, 3))
    for k in range(4):
        Vt[k, :2] = s[k + 1] * d / move ** (k + 1)
    return C, Vt
