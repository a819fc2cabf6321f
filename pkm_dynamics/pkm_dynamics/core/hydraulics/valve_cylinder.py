"""From cylinder motion and force to chamber pressures, flows and the valve's spool command,
and back from measured pressures to the force (issue 27 item 2; doc/hydraulics.rst).

Conventions (every cylinder of :mod:`~pkm_dynamics.core.description.hydraulic_description`):
chamber A = piston (bore) side, area ``A_A``; chamber B = rod (annulus) side, ``A_B < A_A``;
the joint value ``x`` grows as the rod extends (extending: ``xd > 0``); the cylinder force
``F`` (the actuator force of the inverse dynamics, friction included where the model has
it) is positive when it pushes the rod out.  Flows: ``Q_A`` into chamber A, ``Q_B`` out of
chamber B, so that both are positive when extending.  Pressures are absolute as the supply
``p_S`` and return ``p_T`` are given.

**Force balance** (rod side pressure acts on the annulus)::

    A_A p_A - A_B p_B = F                                                      (H1)

**Chamber continuity** with compressibility (V/beta) dp/dt, the chamber volumes at the
current stroke plus the dead volumes, ``x_r`` the joint value at full retraction::

    Q_A = A_A xd + (V_A / beta) dp_A/dt,     V_A = V_A0 + A_A (x - x_r)         (H2)
    Q_B = A_B xd - (V_B / beta) dp_B/dt,     V_B = V_B0 + A_B (x_r + stroke - x)

**Closure for dp/dt** (the one free choice: (H1) differentiated gives only
``A_A dp_A/dt - A_B dp_B/dt = dF/dt``): both chambers take the compressibility flow of one
common equivalent displacement rate ``e``, the force rate over the cylinder's hydraulic
stiffness ``k_h`` (the oil springs of both chambers in parallel)::

    e = (dF/dt) / k_h,   k_h = beta (A_A^2 / V_A + A_B^2 / V_B),
    dp_A/dt = beta A_A e / V_A,   dp_B/dt = -beta A_B e / V_B,
    so  Q_A = A_A (xd + e),   Q_B = A_B (xd + e)                                      (H4)

which satisfies (H1) differentiated exactly and keeps the flows in the ratio ``A_A / A_B`` of
a steady motion: the meter-in and meter-out edges never ask for opposite directions (a 4/3
valve opens only one), and the pressures are those of the steady state at the same force.
``dF/dt`` is the rate of the inverse dynamics' force (:mod:`.hydraulic_feedforward`: the
higher-order inverse dynamics' ``du``, paper 002); without it the term is left out.

**Critical-centre 4/3 valve**, spool ``s`` in ``[-s_max, s_max]``, one flow coefficient ``K``
on its four metering edges (``K = Q_N / sqrt(dp_N)``)::

    s > 0 (P->A, B->T; meter-in A, meter-out B):  Q_A = K s sqrt(p_S - p_A),
                                                  Q_B = K s sqrt(p_B - p_T)
    s < 0 (P->B, A->T; meter-in B, meter-out A):  Q_A = K s sqrt(p_A - p_T),
                                                  Q_B = K s sqrt(p_S - p_B)          (H3)

**Solution** of (H1), (H3) for ``(s, p_A, p_B)`` given ``F`` and the flows (H4): the spool
direction ``sigma = sign(xd + e)``; with ``w = 1 / (K s)^2`` and ``v = xd + e``::

    sigma = +1:  w = (A_A p_S - A_B p_T - F) / (A_A Q_A^2 + A_B Q_B^2),
                 p_A = p_S - w Q_A^2,  p_B = p_T + w Q_B^2
    sigma = -1:  w = (F - A_A p_T + A_B p_S) / (A_A Q_A^2 + A_B Q_B^2),
                 p_A = p_T + w Q_A^2,  p_B = p_S - w Q_B^2
    s = sigma / (K sqrt(w))                                                          (H5)

With (H4), ``w Q_A^2 = c_A num``, ``w Q_B^2 = c_B num`` (``num`` the numerator of ``w``,
``c_A = A_A^2 / (A_A^3 + A_B^3)``, ``c_B = A_B^2 / (A_A^3 + A_B^3)``) do not depend on ``v``:
the pressures are affine in ``F`` in each direction, with the slopes ``c_A`` and ``-c_B``, and
the spool ``s = v sqrt(A_A^3 + A_B^3) / (K sqrt(num))`` is proportional to ``v``.  At rest
(``v = 0``) the spool is closed and the pressures are those that hold ``F`` halfway between
the two directions' levels: ``p_A = c_A F + (1 + a^2)(p_S + p_T) / (2 (1 + a^3))``,
``a = A_A / A_B``, ``p_B`` by (H1).  At a reversal of ``v`` the pressure level of the steady
state jumps (by ``(p_S - p_T)(a^2 - 1) / (1 + a^3)`` in ``p_A``) while the spool passes through
zero: a real valve moves the level through the chambers' compressibility, which a map of the
present state does not model (doc/hydraulics.rst, what the simulation shows of it).

**Hydraulic power** drawn from the supply: ``P = p_S Q_P - p_T Q_T`` with ``Q_P`` the flow
from the supply line and ``Q_T`` the flow into the return line (``s > 0``: ``Q_A``, ``Q_B``;
``s < 0``: ``-Q_B``, ``-Q_A``) [W].

**Limits** (what the valve cannot deliver): ``w <= 0`` -- the force needs a meter-in chamber
pressure above the supply (extending: ``p_A = (F + A_B p_T) / A_A > p_S``; retracting:
``p_B = (A_A p_T - F) / A_B > p_S``); a chamber pressure of (H5) below the return (the load
pulls the meter-in chamber below it: cavitation); ``|s| > s_max``.  A meter-out chamber above
the supply is not refused: the load, not the valve, makes that pressure (an overrunning load
while retracting; the relief valve and the cylinder's rating are outside this model).
Each is a :class:`HydraulicLimit` (cylinder, quantity, value, limit,
sample); :func:`hydraulic_state` raises :class:`HydraulicLimitError` naming the first unless
``check=False``, which returns them in ``HydraulicState.violations`` (for ``w <= 0``: the
spool at ``sigma s_max`` and the pressures of (H5) continued, which keep the force balance).

**Pressures as they are** (H6): where the chamber pressure ``p_A`` is known (measured, or
carried along a trajectory as a state, :mod:`.hydraulic_trajectory`), ``p_B`` follows from (H1)
and (H2), (H3) with ``A_A dp_A/dt - A_B dp_B/dt = dF/dt`` are linear in ``(s, dp_A/dt)``::

    s = (A_A^2 / V_A + A_B^2 / V_B) v / (K (A_A g_A / V_A + A_B g_B / V_B)),
    dp_A/dt = beta / V_A (K s g_A - A_A xd)                                          (H6)

with ``g_A``, ``g_B`` the square roots of the edges' pressure drops of (H3) in the direction of
``v``.  At the level of (H5) (``g_A / g_B = A_A / A_B``) this is (H5) with (H4); off it, the
level moves back to it (at a rate growing with ``|v|``).

**Reverse map**: measured ``p_A, p_B`` give the force by (H1), :func:`cylinder_force`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import StateError


class HydraulicLimitError(StateError):
    """A motion the valve cannot deliver: names the cylinder, the quantity and the limit."""


@dataclass(frozen=True)
class HydraulicLimit:
    """One quantity of one cylinder beyond what the valve can deliver, at sample ``point``."""

    joint: str
    quantity: str           # "pressure_a" | "pressure_b" | "spool"
    value: float
    limit: float
    point: int

    def __str__(self) -> str:
        unit = "" if self.quantity == "spool" else " Pa"
        side = "below the return" if self.value < self.limit and self.quantity != "spool" else "beyond the limit"
        if self.quantity != "spool" and self.value >= self.limit:
            side = "above the supply"
        return (f"cylinder '{self.joint}': {self.quantity} {self.value:.6g}{unit} is {side} "
                f"{self.limit:.6g}{unit} (point {self.point})")


@dataclass(frozen=True)
class HydraulicModel:
    """The cylinders and valves of a robot as flat read-only arrays (nc,), built once at load.

    ``joints`` the cylinders' joints (order of the robot's ``actuated_joints``), ``index`` their
    positions in the actuator vector ``u``; areas ``area_a``, ``area_b`` [m^2]; ``retracted``,
    ``stroke`` [m]; ``dead_a``, ``dead_b`` [m^3]; ``K`` [m^3/s/sqrt(Pa)]; ``spool_limit``;
    ``p_s``, ``p_t``, ``beta`` [Pa]; ``c_a``, ``c_b`` the pressures' slopes in ``F`` (H5) [1/m^2];
    ``root_d`` = sqrt(A_A^3 + A_B^3); ``p_rest`` the holding level of ``p_A`` at ``F = 0`` [Pa]."""

    joints: tuple
    index: np.ndarray
    area_a: np.ndarray
    area_b: np.ndarray
    retracted: np.ndarray
    stroke: np.ndarray
    dead_a: np.ndarray
    dead_b: np.ndarray
    K: np.ndarray
    spool_limit: np.ndarray
    p_s: float
    p_t: float
    beta: float
    c_a: np.ndarray
    c_b: np.ndarray
    root_d: np.ndarray
    p_rest: np.ndarray

    @property
    def n(self) -> int:
        return len(self.joints)

    @staticmethod
    def build(hydraulics, actuated_joints) -> "HydraulicModel":
        """The model of a :class:`~pkm_dynamics.core.description.hydraulic_description.HydraulicsSpec`
        (None: a robot without hydraulics, zero cylinders) for a robot whose actuator vector is
        ordered as ``actuated_joints``."""
        cyl = () if hydraulics is None else hydraulics.cylinders
        val = () if hydraulics is None else hydraulics.valves
        def arr(vals):
            return np.array(list(vals), dtype=float)
        A_a, A_b = arr(c.area_a for c in cyl), arr(c.area_b for c in cyl)
        den = A_a**3 + A_b**3
        out = HydraulicModel(
            tuple(c.joint for c in cyl), np.array([list(actuated_joints).index(c.joint) for c in cyl], dtype=np.intp),
            A_a, A_b, arr(c.retracted for c in cyl), arr(c.stroke for c in cyl),
            arr(c.dead_volume_a for c in cyl), arr(c.dead_volume_b for c in cyl),
            arr(v.flow_coefficient for v in val), arr(v.spool_limit for v in val),
            *((hydraulics.supply_pressure, hydraulics.return_pressure, hydraulics.bulk_modulus)
              if hydraulics is not None else (np.nan, np.nan, np.nan)),
            A_a**2 / den if len(cyl) else A_a, A_b**2 / den if len(cyl) else A_b, np.sqrt(den),
            np.zeros(0) if not len(cyl) else _holding_level(A_a / A_b, hydraulics))
        for a in (out.index, out.area_a, out.area_b, out.retracted, out.stroke, out.dead_a, out.dead_b,
                  out.K, out.spool_limit, out.c_a, out.c_b, out.root_d, out.p_rest):
            a.flags.writeable = False
        return out


def _holding_level(a, hydraulics):
    """``p_A`` at rest for ``F = 0``, halfway between the two directions' levels of (H5):
    ``(1 + a^2)(p_S + p_T) / (2 (1 + a^3))``, ``a = A_A / A_B``."""
    return (1 + a * a) * (hydraulics.supply_pressure + hydraulics.return_pressure) / (2 * (1 + a**3))


@dataclass
class HydraulicState:
    """The hydraulic side of a motion, per cylinder (nc,) (or (batch, nc)), order ``joints``.

    ``force`` F [N]; ``force_rate`` dF/dt [N/s]; ``pressure_a``, ``pressure_b`` [Pa]; ``flow_a``
    (into A), ``flow_b`` (out of B) [m^3/s]; ``spool`` s [-]; ``hydraulic_power`` drawn from the
    supply [W]; ``volume_a``, ``volume_b`` the chamber volumes [m^3]; ``pressure_rate_a``,
    ``pressure_rate_b`` the pressure rates of (H2) at these flows [Pa/s]; ``violations``: the
    :class:`HydraulicLimit` of every quantity beyond what the valve delivers (empty when none)."""

    joints: tuple
    force: np.ndarray
    force_rate: np.ndarray
    pressure_a: np.ndarray
    pressure_b: np.ndarray
    flow_a: np.ndarray
    flow_b: np.ndarray
    spool: np.ndarray
    hydraulic_power: np.ndarray
    volume_a: np.ndarray
    volume_b: np.ndarray
    pressure_rate_a: np.ndarray
    pressure_rate_b: np.ndarray
    violations: list = field(default_factory=list)


def chamber_volumes(m: HydraulicModel, x) -> tuple:
    """``(V_A, V_B)`` (..., nc) at the cylinder positions ``x`` (..., nc), (H2)."""
    return m.dead_a + m.area_a * (x - m.retracted), m.dead_b + m.area_b * (m.retracted + m.stroke - x)


def cylinder_force(m: HydraulicModel, pressure_a, pressure_b) -> np.ndarray:
    """The cylinder forces (H1) of measured chamber pressures ``p_A``, ``p_B`` (..., nc) [Pa]
    (positive extending) [N].  Raises :class:`StateError` naming a non-finite pressure."""
    pa, pb = np.asarray(pressure_a, dtype=float), np.asarray(pressure_b, dtype=float)
    for name, p in (("pressure_a", pa), ("pressure_b", pb)):
        if p.shape[-1:] != (m.n,):
            raise StateError(f"{name} has shape {p.shape}, expected (..., {m.n}) (cylinders {', '.join(m.joints)})")
        bad = np.argwhere(~np.isfinite(p))
        if len(bad):
            raise StateError(f"{name} of cylinder '{m.joints[bad[0][-1]]}' is {p[tuple(bad[0])]} (not finite)")
    return m.area_a * pa - m.area_b * pb


def hydraulic_state(m: HydraulicModel, x, xd, force, force_rate=None, check: bool = True,
                    pressure_a=None, limits: bool = True) -> HydraulicState:
    """Pressures, flows, spool and power of the cylinders (H1)-(H5) for the actuator motion
    ``x``, ``xd`` and forces ``force`` (..., n_act) (every actuator; the cylinders are picked by
    ``m.index``) and ``force_rate`` dF/dt (..., n_act) (None: 0, no compressibility term).
    ``pressure_a`` (..., nc): the chamber A pressures as they are (measured, or carried along a
    trajectory by :func:`~.hydraulic_trajectory.pressure_trajectory`) instead of the level of
    (H5): the spool then meets (H1)-(H3) at those pressures, (H6), and ``pressure_rate_a`` is
    the rate the level moves at.  ``check``: raise :class:`HydraulicLimitError` naming the
    first limit passed (else they are listed in ``violations``); ``limits`` False: no limit
    check at all (``violations`` empty; an intermediate evaluation)."""
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
    out.violations = hydraulic_limits(m, out, moving & ~reach, sigma) if limits or check else []
    if check and out.violations:
        raise HydraulicLimitError("the valve cannot deliver the motion: " + "; ".join(map(str, out.violations)))
    return out


def hydraulic_limits(m: HydraulicModel, h: HydraulicState, beyond, sigma) -> list:
    """The :class:`HydraulicLimit` of every cylinder and sample of ``h`` (``beyond``: where the
    force needs a pressure above the supply, ``w <= 0`` of (H5); ``sigma`` the spool
    direction): per cylinder, quantity and point, in sample order."""
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
