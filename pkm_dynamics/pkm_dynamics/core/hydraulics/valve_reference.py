"""The valve-cylinder map in numpy (the reference route of :mod:`.valve_kernels`, which the API of
:mod:`.valve_cylinder` calls): (H1)-(H6) on whole arrays, the carried pressures' Heun step, and
the limits as masks.  Equations and conventions: :mod:`.valve_cylinder`."""
from __future__ import annotations

import numpy as np

from .valve_cylinder import HydraulicLimit, HydraulicLimitError, HydraulicModel, HydraulicState


def chamber_volumes(m: HydraulicModel, x) -> tuple:
    """``(V_A, V_B)`` (..., nc) at the cylinder positions ``x`` (..., nc), (H2)."""
    return m.dead_a + m.area_a * (x - m.retracted), m.dead_b + m.area_b * (m.retracted + m.stroke - x)


def reference_state(m: HydraulicModel, x, xd, force, force_rate=None, check: bool = True,
                    pressure_a=None, limits: bool = True) -> HydraulicState:
    """:func:`~.valve_cylinder.hydraulic_state` in numpy (same arguments and answer)."""
    idx = m.index
    x, xd, F = (np.asarray(a, dtype=float)[..., idx] for a in (x, xd, force))
    Fd = np.zeros_like(F) if force_rate is None else np.asarray(force_rate, dtype=float)[..., idx]
    A_a, A_b, p_s, p_t = m.area_a, m.area_b, m.p_s, m.p_t
    V_a, V_b = chamber_volumes(m, x)
    stiffness = A_a**2 / V_a + A_b**2 / V_b                         # k_h / beta
    v = xd + Fd / (m.beta * stiffness)                               # xd + e, (H4)
    sigma = np.sign(v)
    extending, moving = v > 0, v != 0
    if pressure_a is None:
        # (H5) in closed form: w Q_A^2 = c_A num, w Q_B^2 = c_B num, s = v sqrt(A_A^3 + A_B^3) / (K sqrt(num))
        num = np.where(v >= 0, A_a * p_s - A_b * p_t - F, F - A_a * p_t + A_b * p_s)
        reach = num > 0
        pa = np.where(extending, p_s - m.c_a * num, p_t + m.c_a * num)
        pa = np.where(moving, pa, m.c_a * F + m.p_rest)                  # at rest: the holding level
        pb = np.where(moving, np.where(extending, p_t + m.c_b * num, p_s - m.c_b * num), (A_a * pa - F) / A_b)
        spool = np.where(reach, v * m.root_d / (m.K * np.sqrt(np.where(reach, num, 1.0))), sigma * m.spool_limit)
        flow_a, flow_b = A_a * v, A_b * v
    else:
        # (H6): the pressures as given, p_B by (H1); the edges' pressure drops then fix the spool
        pa = np.broadcast_to(np.asarray(pressure_a, dtype=float), F.shape)
        pb = (A_a * pa - F) / A_b
        drop_a = np.where(extending, p_s - pa, pa - p_t)
        drop_b = np.where(extending, pb - p_t, p_s - pb)
        reach = np.where(extending, drop_a > 0, drop_b > 0)             # the meter-in edge passes
        g_a, g_b = np.sqrt(np.maximum(drop_a, 0.0)), np.sqrt(np.maximum(drop_b, 0.0))
        den = A_a * g_a / V_a + A_b * g_b / V_b
        spool = np.where(reach & (den > 0), stiffness * v / (m.K * np.where(den > 0, den, 1.0)),
                         sigma * m.spool_limit)
        flow_a, flow_b = m.K * spool * g_a, m.K * spool * g_b
    power = np.where(sigma > 0, p_s * flow_a - p_t * flow_b, p_t * flow_a - p_s * flow_b)
    out = HydraulicState(m.joints, F, Fd, pa, pb, flow_a, flow_b, spool, power, V_a, V_b,
                         m.beta / V_a * (flow_a - A_a * xd), m.beta / V_b * (A_b * xd - flow_b))
    out.violations = reference_limits(m, out, moving & ~reach, sigma) if limits or check else []
    if check and out.violations:
        raise HydraulicLimitError("the valve cannot deliver the motion: " + "; ".join(map(str, out.violations)))
    return out


def reference_step(m: HydraulicModel, previous: HydraulicState, dt: float, x, xd, force,
                   force_rate=None) -> HydraulicState:
    """:func:`~.hydraulic_trajectory.pressure_step` in numpy (without ``restart``): Heun's
    method on ``p_A`` with the rate (H6)."""
    pa, rate = previous.pressure_a, previous.pressure_rate_a
    guess = reference_state(m, x, xd, force, force_rate, check=False, pressure_a=pa + dt * rate, limits=False)
    return reference_state(m, x, xd, force, force_rate, check=False,
                           pressure_a=pa + 0.5 * dt * (rate + guess.pressure_rate_a))


def reference_limits(m: HydraulicModel, h: HydraulicState, beyond, sigma) -> list:
    """The :class:`~.valve_cylinder.HydraulicLimit` of every cylinder and sample of ``h``
    (``beyond``: where the force needs a pressure above the supply, ``w <= 0`` of (H5);
    ``sigma`` the spool direction): per cylinder, quantity and point, in sample order."""
    masks = np.stack(np.broadcast_arrays(beyond & (sigma > 0), beyond & (sigma < 0), h.pressure_a < m.p_t,
                                         h.pressure_b < m.p_t, ~beyond & (np.abs(h.spool) > m.spool_limit)))
    if not masks.any():
        return []
    values = np.stack(np.broadcast_arrays(h.pressure_a, h.pressure_b, h.pressure_a, h.pressure_b, h.spool))
    masks, values = masks.reshape(5, -1, m.n), values.reshape(5, -1, m.n)
    names = ("pressure_a", "pressure_b", "pressure_a", "pressure_b", "spool")
    bounds = (m.p_s, m.p_s, m.p_t, m.p_t, None)
    found = []
    for q, point, c in np.argwhere(masks):
        value = float(values[q, point, c])
        lim = float(np.copysign(m.spool_limit[c], value)) if bounds[q] is None else float(bounds[q])
        found.append(HydraulicLimit(m.joints[c], names[q], value, lim, int(point)))
    return sorted(found, key=lambda v: (v.point, m.joints.index(v.joint)))
