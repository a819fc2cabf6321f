"""The friction law of one joint, compiled: the torque (force) ``tau_f(v)`` a joint's friction
opposes its rate ``v`` with, and its first two derivatives in ``v`` (the derivatives of the
dynamics, and ``u-dot``, ``u-ddot`` of the higher-order inverse dynamics, need them).

Law (smooth through ``v = 0``; one row of a robot's friction table, columns named below)::

    tau_f(v) = (F_C + F_S exp(-(v / v_S)^2)) tanh(v / v_eps) + b v

``F_C`` Coulomb level, ``F_S`` the Stribeck excess at rest over it, ``v_S`` the Stribeck
velocity, ``b`` the viscous coefficient, ``v_eps`` the smoothing velocity (``tanh`` replaces
``sign``: at ``|v| = 2 v_eps`` the Coulomb part is at 96 %).  A row of zeros is no friction (the
torque is exactly 0).  SI: N or N m, N s/m or N m s/rad, m/s or rad/s.
"""
from __future__ import annotations

import math

from ..numba_support.cache import scratch_kernel

#: columns of a friction table row: Coulomb level, viscous coefficient, Stribeck excess,
#: Stribeck velocity, smoothing velocity
COULOMB, VISCOUS, STRIBECK, STRIBECK_VELOCITY, SMOOTHING_VELOCITY = 0, 1, 2, 3, 4
FRICTION_COLUMNS = 5


@scratch_kernel
def friction_law(c, v):
    """``(tau_f, d tau_f / dv, d^2 tau_f / dv^2)`` of the table row ``c`` (5,) at the rate ``v``
    (module docstring)."""
    fc, b, fs, vs, ve = c[COULOMB], c[VISCOUS], c[STRIBECK], c[STRIBECK_VELOCITY], c[SMOOTHING_VELOCITY]
    if fc == 0.0 and fs == 0.0:                   # viscous alone (a damping, or no friction): the
        return b * v, b, 0.0                      # terms below are exact zeros, tanh not needed
    s = math.tanh(v / ve)
    s1 = (1.0 - s * s) / ve                       # d tanh / dv
    s2 = -2.0 * s * s1 / ve
    a, a1, a2 = fc, 0.0, 0.0                      # the level F_C + F_S exp(-(v / v_S)^2)
    if fs != 0.0:
        r = v / vs
        e = math.exp(-r * r)
        a += fs * e
        a1 = -2.0 * fs * e * r / vs
        a2 = fs * e * (4.0 * r * r - 2.0) / (vs * vs)
    return a * s + b * v, a1 * s + a * s1 + b, a2 * s + 2.0 * a1 * s1 + a * s2


@scratch_kernel
def joint_friction(table, qd, tau):
    """``tau`` (nq,) = the friction torques of every tree joint at the joint rates ``qd`` (nq,),
    law :func:`friction_law` with the rows of ``table`` (nq, 5)."""
    for j in range(qd.shape[0]):
        tau[j] = friction_law(table[j], qd[j])[0]
