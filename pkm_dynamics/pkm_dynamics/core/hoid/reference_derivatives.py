"""Jerk and snap of a reference that carries only position, velocity and acceleration
(trajectory_msgs), for the series-elastic motor feedforward: eqs. 1-2 of paper 002 need
``u-ddot``, hence the 3rd and 4th derivatives of the motion.

The one estimate is the two-point Hermite polynomial (:func:`hermite_rates`) through the
values and derivatives that two points of the reference give:

* actuator space (JointTrajectory): the quintic through position, velocity, acceleration at
  both points -- the spline that ros2_control's joint trajectory controller interpolates
  between such points.  Its 3rd and 4th derivatives are the jerk and snap;
* task space (MultiDOFJointTrajectory of PKM): the cubic through the task twist ``V_t`` and its
  derivative ``Vdot_t`` (a pose difference is not the integral of the body twist, so the poses
  are left out).  Its 2nd and 3rd derivatives are ``Vddot_t`` and ``Vdddot_t``.

Two sources of the second point:

* a reference of two or more points with increasing ``time_from_start``: its next point; the
  polynomial is evaluated at the first point (the derivatives of the reference's own spline);
* a stream of single-point references (:class:`StreamRates`): the previous reference of the
  stream, at the reference times ``header.stamp + time_from_start`` (integer nanoseconds: the
  spacing exact); the polynomial is evaluated at the newer point (causal, no delay).  Errors
  for a smooth motion, spacing ``h``:
  ``O(h^3)`` jerk and ``O(h^2)`` snap (quintic), ``O(h^2)`` and ``O(h)`` (cubic).  An optional
  first-order low-pass of time constant ``tau`` follows (for references with noise or jitter:
  a backward difference amplifies it by ``h^-3`` or ``h^-4``); it delays the estimate by about
  ``tau``.  The stream restarts (jerk = snap = 0 for that reference, the filter emptied) when a
  reference is not after the previous one, comes more than :data:`MAX_GAP` later, or has other
  dimensions; unstamped references (time 0) give zero.
"""
from __future__ import annotations

from math import exp, factorial

import numpy as np

#: largest spacing (s) of two stream references differenced for jerk and snap (a slower or
#: interrupted stream restarts the estimate)
MAX_GAP = 0.05


def _hermite_weights(m: int, at_end: bool) -> np.ndarray:
    """(2, 2m) weights of derivatives ``m`` and ``m+1`` at ``s = 1`` (``at_end``) or ``s = 0`` of
    the polynomial of degree ``2m-1`` on ``s`` in [0, 1] whose derivatives ``0..m-1`` are
    ``d[0..m-1]`` at ``s = 0`` and ``d[m..2m-1]`` at ``s = 1``."""
    n = 2 * m

    def row(order, s):      # derivative `order` at s of the monomials s^0 .. s^(n-1)
        return np.array([factorial(i) / factorial(i - order) * s ** (i - order) if i >= order else 0.0
                         for i in range(n)])

    conditions = np.array([row(k, 0.0) for k in range(m)] + [row(k, 1.0) for k in range(m)])
    s = 1.0 if at_end else 0.0
    weights = np.array([row(m, s), row(m + 1, s)]) @ np.linalg.inv(conditions)
    weights.flags.writeable = False
    return weights


#: the weights of :func:`_hermite_weights` for m = 2 (cubic), 3 (quintic), at start and end
_WEIGHTS = {(m, end): _hermite_weights(m, end) for m in (2, 3) for end in (False, True)}
#: per m: the power of ``h`` of each weight (2, 2m): datum order k, derivative m + j: k - m - j
_POWERS = {m: np.tile(np.arange(m), 2)[None, :] - m - np.arange(2)[:, None] for m in (2, 3)}


def hermite_rates(h: float, first, second, at_end: bool = False) -> np.ndarray:
    """Derivatives ``m`` and ``m+1`` (2, n) of the two-point Hermite polynomial of degree
    ``2m-1`` (module doc) at the first point (``at_end`` False) or the second.

    ``first``, ``second`` (m, n): the value and its derivatives ``0..m-1`` at times ``t`` and
    ``t + h`` (``h > 0``); m = 3 (position, velocity, acceleration: jerk, snap of the quintic)
    or m = 2 (twist and its derivative: its 2nd and 3rd derivatives, of the cubic).  Exact for
    polynomials of degree ``2m-1``.  In the unit time ``s = (t' - t) / h`` the k-th derivative
    scales by ``h^k``: datum ``k`` enters as ``d_k h^k`` and derivative ``j`` leaves divided by
    ``h^j``, so each weight of :func:`_hermite_weights` takes ``h^(k-j)``."""
    m = len(first)
    w = _WEIGHTS[m, bool(at_end)] * float(h) ** _POWERS[m]
    return w[:, :m] @ first + w[:, m:] @ second


class StreamRates:
    """The causal estimate of jerk and snap of a stream of single-point references (module
    doc): :meth:`update` with each reference's time and data, in arrival order.  One per
    stream (its state: the previous reference and the filter's output)."""

    def __init__(self, time_constant: float = 0.0, max_gap: float = MAX_GAP):
        self.time_constant = float(time_constant)
        self.max_gap = float(max_gap)
        self._time = None
        self._data = None
        self._rates = None

    def update(self, t: int, data) -> np.ndarray:
        """Jerk and snap (2, n) at the reference of time ``t`` with ``data`` (m, n): the Hermite
        polynomial through the previous reference and this one at this one, low-passed; zeros
        when the stream (re)starts here.

        ``t``: integer nanoseconds (the spacing of two references exact: seconds since 1970 as
        a float are 2.4e-7 s coarse, which the differences amplify by ``h^-3``, ``h^-4``);
        ``data``: m = 3 rows (position, velocity, acceleration) or m = 2 (twist and its
        derivative), an array kept until the next reference (not to be changed meanwhile)."""
        previous, t0 = self._data, self._time
        self._time, self._data = t, data
        h = None if previous is None else (t - t0) * 1e-9
        if t <= 0 or h is None or not 0.0 < h <= self.max_gap or previous.shape != data.shape:
            self._rates = None
            return np.zeros((2, data.shape[1]))
        rates = hermite_rates(h, previous, data, at_end=True)
        if self._rates is not None and self.time_constant > 0.0:
            rates = self._rates + (1.0 - exp(-h / self.time_constant)) * (rates - self._rates)
        self._rates = rates
        return rates.copy()
