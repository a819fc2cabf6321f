"""The valve-cylinder map of :mod:`.valve_cylinder`, compiled: the steady state of the 4/3 valve
(H1)-(H5) with the compressibility term (H4), the pressures as they are (H6), the chamber
pressures carried from sample to sample by Heun's method (:mod:`.hydraulic_trajectory`), and the
reverse map (H1) from pressures to force; every cylinder of every sample in one call.  The same
arithmetic, in the same order, as the numpy route (:mod:`.valve_reference`), so both agree to
round-off.

Layouts (rows named below): the model ``cyl`` (CYLINDER_ROWS, nc) and ``supply`` (3,) of
:class:`~.valve_cylinder.HydraulicModel` (``table``, ``fluid``); the answer ``out``
(STATE_ROWS, B, nc), the fields of :class:`~.valve_cylinder.HydraulicState`; the limit ``flags``
(B, nc), one bit per limit passed (:data:`LIMIT_BITS`: the quantity, and whether its bound is the
supply, the return or the spool's).  The actuator arrays ``x``, ``xd``, ``F``, ``Fd`` (B, n_act)
hold every actuator; ``index`` (nc,) picks the cylinders'.
"""
from __future__ import annotations

import math

from ..numba_support.cache import scratch_kernel

#: rows of the model table ``cyl``: areas A_A, A_B [m^2], the joint value at full retraction and
#: the stroke [m], dead volumes [m^3], flow coefficient K, spool limit s_max, the pressures'
#: slopes c_A, c_B of (H5) [1/m^2], sqrt(A_A^3 + A_B^3), the holding level of p_A at F = 0 [Pa]
(AREA_A, AREA_B, RETRACTED, STROKE, DEAD_A, DEAD_B, FLOW_COEFFICIENT, SPOOL_LIMIT, SLOPE_A, SLOPE_B,
 ROOT_D, REST_LEVEL) = range(12)
CYLINDER_ROWS = 12
#: entries of ``supply``: supply and return pressure p_S, p_T, bulk modulus beta [Pa]
SUPPLY, RETURN, BULK_MODULUS = range(3)
#: rows of the answer ``out``: the fields of HydraulicState in its order
(FORCE, FORCE_RATE, PRESSURE_A, PRESSURE_B, FLOW_A, FLOW_B, SPOOL, POWER, VOLUME_A, VOLUME_B,
 RATE_A, RATE_B) = range(12)
STATE_ROWS = 12
#: limit flags: the force needs p_A (extending) or p_B (retracting) above the supply (w <= 0 of
#: (H5)); p_A or p_B below the return; the spool beyond s_max (where the pressures are reached)
ABOVE_SUPPLY_A, ABOVE_SUPPLY_B, BELOW_RETURN_A, BELOW_RETURN_B, SPOOL_BEYOND = 1, 2, 4, 8, 16
#: the flags in the order a cylinder's limits are listed
LIMIT_BITS = (ABOVE_SUPPLY_A, ABOVE_SUPPLY_B, BELOW_RETURN_A, BELOW_RETURN_B, SPOOL_BEYOND)
#: the flags of a pressure the valve does not hold (all but the spool's)
PRESSURE_FLAGS = ABOVE_SUPPLY_A | ABOVE_SUPPLY_B | BELOW_RETURN_A | BELOW_RETURN_B


@scratch_kernel
def cylinder_state(cyl, c, supply, x, xd, F, Fd, pa, carried, out, b):
    """Cylinder ``c`` at its position ``x``, rate ``xd``, force ``F`` and force rate ``Fd``:
    pressures, flows, spool, power, chamber volumes and pressure rates into ``out[:, b, c]``;
    returns its limit flags.  ``carried`` False: the steady level of (H5) with the flows of
    (H4); True: ``p_A = pa`` as it is, the spool of (H6).  Volumes (H2), ``v = xd + e`` (H4)."""
    A_a, A_b, K, s_max = cyl[AREA_A, c], cyl[AREA_B, c], cyl[FLOW_COEFFICIENT, c], cyl[SPOOL_LIMIT, c]
    p_s, p_t, beta = supply[SUPPLY], supply[RETURN], supply[BULK_MODULUS]
    V_a = cyl[DEAD_A, c] + A_a * (x - cyl[RETRACTED, c])
    V_b = cyl[DEAD_B, c] + A_b * (cyl[RETRACTED, c] + cyl[STROKE, c] - x)
    stiffness = A_a**2 / V_a + A_b**2 / V_b                         # k_h / beta
    v = xd + Fd / (beta * stiffness)                                 # xd + e, (H4)
    sigma = 1.0 if v > 0 else (-1.0 if v < 0 else v * 0.0)           # sign(v) (NaN stays NaN)
    extending, moving = v > 0, v != 0
    if not carried:
        # (H5) in closed form: w Q_A^2 = c_A num, w Q_B^2 = c_B num
        num = A_a * p_s - A_b * p_t - F if v >= 0 else F - A_a * p_t + A_b * p_s
        reach = num > 0
        if not moving:                                               # at rest: the holding level
            p_a = cyl[SLOPE_A, c] * F + cyl[REST_LEVEL, c]
            p_b = (A_a * p_a - F) / A_b
        elif extending:
            p_a, p_b = p_s - cyl[SLOPE_A, c] * num, p_t + cyl[SLOPE_B, c] * num
        else:
            p_a, p_b = p_t + cyl[SLOPE_A, c] * num, p_s - cyl[SLOPE_B, c] * num
        spool = v * cyl[ROOT_D, c] / (K * math.sqrt(num)) if reach else sigma * s_max
        q_a, q_b = A_a * v, A_b * v
    else:
        # (H6): p_B by (H1); the edges' pressure drops then fix the spool
        p_a = pa
        p_b = (A_a * p_a - F) / A_b
        drop_a = p_s - p_a if extending else p_a - p_t
        drop_b = p_b - p_t if extending else p_s - p_b
        reach = drop_a > 0 if extending else drop_b > 0              # the meter-in edge passes
        g_a, g_b = math.sqrt(max(drop_a, 0.0)), math.sqrt(max(drop_b, 0.0))
        den = A_a * g_a / V_a + A_b * g_b / V_b
        spool = stiffness * v / (K * den) if reach and den > 0 else sigma * s_max
        q_a, q_b = K * spool * g_a, K * spool * g_b
    out[FORCE, b, c], out[FORCE_RATE, b, c] = F, Fd
    out[PRESSURE_A, b, c], out[PRESSURE_B, b, c] = p_a, p_b
    out[FLOW_A, b, c], out[FLOW_B, b, c], out[SPOOL, b, c] = q_a, q_b, spool
    out[POWER, b, c] = p_s * q_a - p_t * q_b if sigma > 0 else p_t * q_a - p_s * q_b
    out[VOLUME_A, b, c], out[VOLUME_B, b, c] = V_a, V_b
    out[RATE_A, b, c] = beta / V_a * (q_a - A_a * xd)
    out[RATE_B, b, c] = beta / V_b * (A_b * xd - q_b)
    beyond = moving and not reach
    flags = 0
    if beyond and sigma > 0:
        flags |= ABOVE_SUPPLY_A
    if beyond and sigma < 0:
        flags |= ABOVE_SUPPLY_B
    if p_a < p_t:
        flags |= BELOW_RETURN_A
    if p_b < p_t:
        flags |= BELOW_RETURN_B
    if not beyond and abs(spool) > s_max:
        flags |= SPOOL_BEYOND
    return flags


@scratch_kernel
def hydraulic_states(cyl, supply, index, x, xd, F, Fd, pa, carried, out, flags):
    """:func:`cylinder_state` of every sample ``b`` of ``x``, ``xd``, ``F``, ``Fd`` (B, n_act)
    and every cylinder ``c``: at the steady level (``carried`` False), or at the pressures ``pa``
    (B, nc) as they are.  Returns how many (b, c) pass a limit (their ``flags`` nonzero)."""
    count = 0
    for b in range(x.shape[0]):
        for c in range(index.shape[0]):
            j = index[c]
            p = pa[b, c] if carried else 0.0
            f = cylinder_state(cyl, c, supply, x[b, j], xd[b, j], F[b, j], Fd[b, j], p, carried, out, b)
            flags[b, c] = f
            count += f != 0
    return count


@scratch_kernel
def pressure_step_state(cyl, supply, index, x, xd, F, Fd, b, pa, rate, dt, restart, out, flags):
    """Sample ``b`` ``dt`` [s] after one whose ``p_A`` and rate ``dp_A/dt`` (nc,) are ``pa``,
    ``rate``: ``p_A`` carried by Heun's method, ``pa + dt/2 (rate + r(pa + dt rate))`` with ``r``
    the rate (H6) at the sample, and the spool and flows of (H6) there.  ``restart``: where a
    carried pressure is not finite or beyond what the valve holds (:data:`PRESSURE_FLAGS`), the
    whole sample at the steady level of (H5) instead.  Returns the count of
    :func:`hydraulic_states`."""
    count = 0
    leaves = False
    for c in range(index.shape[0]):
        j = index[c]
        cylinder_state(cyl, c, supply, x[b, j], xd[b, j], F[b, j], Fd[b, j], pa[c] + dt * rate[c], True, out, b)
        guess = out[RATE_A, b, c]
        f = cylinder_state(cyl, c, supply, x[b, j], xd[b, j], F[b, j], Fd[b, j],
                           pa[c] + 0.5 * dt * (rate[c] + guess), True, out, b)
        flags[b, c] = f
        count += f != 0
        leaves = leaves or (f & PRESSURE_FLAGS) != 0 or not math.isfinite(out[PRESSURE_A, b, c])
    if restart and leaves:
        count = 0
        for c in range(index.shape[0]):
            j = index[c]
            f = cylinder_state(cyl, c, supply, x[b, j], xd[b, j], F[b, j], Fd[b, j], 0.0, False, out, b)
            flags[b, c] = f
            count += f != 0
    return count


@scratch_kernel
def pressure_steps(cyl, supply, index, times, x, xd, F, Fd, pa, carried, out, flags):
    """The samples at ``times`` (B,) of a trajectory with ``p_A`` carried as a state: the first
    at the steady level (``carried`` False) or at ``pa`` (1, nc), then
    :func:`pressure_step_state` from sample to sample.  Returns the count of
    :func:`hydraulic_states`."""
    count = hydraulic_states(cyl, supply, index, x[:1], xd[:1], F[:1], Fd[:1], pa, carried, out, flags)
    for b in range(1, x.shape[0]):
        count += pressure_step_state(cyl, supply, index, x, xd, F, Fd, b, out[PRESSURE_A, b - 1],
                                     out[RATE_A, b - 1], times[b] - times[b - 1], False, out, flags)
    return count


@scratch_kernel
def cylinder_forces(cyl, pa, pb, force):
    """``force`` (B, nc) = ``A_A p_A - A_B p_B`` (H1) of the chamber pressures ``pa``, ``pb``
    (B, nc)."""
    for b in range(pa.shape[0]):
        for c in range(pa.shape[1]):
            force[b, c] = cyl[AREA_A, c] * pa[b, c] - cyl[AREA_B, c] * pb[b, c]
