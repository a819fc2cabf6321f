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

**Routes**: the map is compiled (:mod:`.valve_kernels`, every cylinder of every sample in one
call, loaded when a robot with cylinders is built); :mod:`.valve_reference` is the same in numpy,
the independent check.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math

import numpy as np

from ..errors import StateError
from . import valve_kernels as V
from .valve_kernels import CYLINDER_ROWS, LIMIT_BITS, STATE_ROWS, cylinder_forces, hydraulic_states


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
    ``root_d`` = sqrt(A_A^3 + A_B^3); ``p_rest`` the holding level of ``p_A`` at ``F = 0`` [Pa];
    ``actuators`` the length of the actuator vector; ``table`` (CYLINDER_ROWS, nc) and ``fluid``
    (3,): the same for the kernels (:mod:`.valve_kernels`, rows named there)."""

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
    actuators: int
    table: np.ndarray
    fluid: np.ndarray

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
            np.zeros(0) if not len(cyl) else _holding_level(A_a / A_b, hydraulics), len(actuated_joints),
            np.empty((CYLINDER_ROWS, len(cyl))), np.empty(3))
        rows = {V.AREA_A: out.area_a, V.AREA_B: out.area_b, V.RETRACTED: out.retracted, V.STROKE: out.stroke,
                V.DEAD_A: out.dead_a, V.DEAD_B: out.dead_b, V.FLOW_COEFFICIENT: out.K,
                V.SPOOL_LIMIT: out.spool_limit, V.SLOPE_A: out.c_a, V.SLOPE_B: out.c_b, V.ROOT_D: out.root_d,
                V.REST_LEVEL: out.p_rest}
        for row, values in rows.items():
            out.table[row] = values
        out.fluid[[V.SUPPLY, V.RETURN, V.BULK_MODULUS]] = out.p_s, out.p_t, out.beta
        for a in (out.index, out.area_a, out.area_b, out.retracted, out.stroke, out.dead_a, out.dead_b,
                  out.K, out.spool_limit, out.c_a, out.c_b, out.root_d, out.p_rest, out.table, out.fluid):
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


#: the quantity named by each flag of :data:`~.valve_kernels.LIMIT_BITS`, in its order
LIMIT_QUANTITIES = ("pressure_a", "pressure_b", "pressure_a", "pressure_b", "spool")


def actuator_samples(m: HydraulicModel, *arrays) -> tuple:
    """``(lead, rows)``: the leading shape of the actuator arrays ``arrays`` (..., n_act) (None:
    zeros; broadcast together) and each as a C-contiguous (B, n_act) float array for the kernels.
    Raises :class:`StateError` for arrays that are not of the robot's actuators."""
    given = [None if a is None else np.asarray(a, dtype=float) for a in arrays]
    shapes = [a.shape for a in given if a is not None]
    shape = shapes[0]
    if any(s != shape for s in shapes):
        shape = np.broadcast_shapes(*shapes)
        given = [None if a is None else np.broadcast_to(a, shape) for a in given]
    if shape[-1:] != (m.actuators,):
        raise StateError(f"the actuator arrays have shape {shape}, expected (..., {m.actuators}) "
                         f"(one value per actuator)")
    count = math.prod(shape[:-1])
    rows = [np.zeros((count, m.actuators)) if a is None else np.ascontiguousarray(a.reshape(count, m.actuators))
            for a in given]
    return shape[:-1], rows


def cylinder_samples(m: HydraulicModel, values, lead: tuple) -> np.ndarray:
    """``values`` (..., nc) broadcast to ``lead + (nc,)``, as a C-contiguous (B, nc) float array."""
    values, shape = np.asarray(values, dtype=float), lead + (m.n,)
    if values.shape != shape:
        values = np.broadcast_to(values, shape)
    return np.ascontiguousarray(values.reshape(-1, m.n))


def new_answer(samples: int, m: HydraulicModel) -> tuple:
    """The kernels' answer and limit flags for ``samples`` samples (:mod:`.valve_kernels`)."""
    return np.empty((STATE_ROWS, samples, m.n)), np.zeros((samples, m.n), dtype=np.int64)


def hydraulic_answer(m: HydraulicModel, out, flags, count: int, lead: tuple, check: bool,
                     limits: bool = True) -> HydraulicState:
    """The :class:`HydraulicState` of the kernels' answer ``out`` (STATE_ROWS, B, nc), each field
    shaped ``lead + (nc,)``, with its ``violations`` (:func:`hydraulic_limits`; ``count``: how
    many cylinders and samples the ``flags`` mark) where ``limits`` or ``check``; ``check``:
    raise :class:`HydraulicLimitError` naming them instead."""
    h = HydraulicState(m.joints, *out.reshape((STATE_ROWS,) + lead + (m.n,)))
    if count and (limits or check):
        h.violations = hydraulic_limits(m, out, flags)
        if check:
            raise HydraulicLimitError("the valve cannot deliver the motion: " + "; ".join(map(str, h.violations)))
    return h


def hydraulic_limits(m: HydraulicModel, out, flags) -> list:
    """The :class:`HydraulicLimit` of every flag (:data:`~.valve_kernels.LIMIT_BITS`) of the
    kernels' ``flags`` (B, nc) on their answer ``out``: in sample order, then cylinder, then
    quantity (as listed in :data:`LIMIT_QUANTITIES`)."""
    points, cylinders = np.nonzero(flags)
    rows = (V.PRESSURE_A, V.PRESSURE_B, V.PRESSURE_A, V.PRESSURE_B, V.SPOOL)
    values = out[:, points, cylinders].tolist()
    bounds = (m.p_s, m.p_s, m.p_t, m.p_t)
    found = []
    for k, (point, c, f) in enumerate(zip(points.tolist(), cylinders.tolist(), flags[points, cylinders].tolist())):
        for q, bit in enumerate(LIMIT_BITS):
            if f & bit:
                value = values[rows[q]][k]
                limit = math.copysign(m.spool_limit[c], value) if bit == V.SPOOL_BEYOND else bounds[q]
                found.append(HydraulicLimit(m.joints[c], LIMIT_QUANTITIES[q], value, float(limit), point))
    return found


def cylinder_force(m: HydraulicModel, pressure_a, pressure_b) -> np.ndarray:
    """The cylinder forces (H1) of measured chamber pressures ``p_A``, ``p_B`` (..., nc) [Pa]
    (positive extending) [N]; compiled (:func:`~.valve_kernels.cylinder_forces`).  Raises
    :class:`StateError` naming a non-finite pressure."""
    pa, pb = np.asarray(pressure_a, dtype=float), np.asarray(pressure_b, dtype=float)
    for name, p in (("pressure_a", pa), ("pressure_b", pb)):
        if p.shape[-1:] != (m.n,):
            raise StateError(f"{name} has shape {p.shape}, expected (..., {m.n}) (cylinders {', '.join(m.joints)})")
        bad = np.argwhere(~np.isfinite(p))
        if len(bad):
            raise StateError(f"{name} of cylinder '{m.joints[bad[0][-1]]}' is {p[tuple(bad[0])]} (not finite)")
    lead = np.broadcast_shapes(pa.shape, pb.shape)[:-1]
    pa, pb = cylinder_samples(m, pa, lead), cylinder_samples(m, pb, lead)
    force = np.empty(pa.shape)
    cylinder_forces(m.table, pa, pb, force)
    return force.reshape(lead + (m.n,))


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
    check at all (``violations`` empty; an intermediate evaluation).  One compiled call for
    every cylinder and sample (:func:`~.valve_kernels.hydraulic_states`)."""
    lead, (x, xd, F, Fd) = actuator_samples(m, x, xd, force, force_rate)
    out, flags = new_answer(x.shape[0], m)
    carried = pressure_a is not None
    pa = cylinder_samples(m, pressure_a, lead) if carried else np.empty((0, 0))
    count = hydraulic_states(m.table, m.fluid, m.index, x, xd, F, Fd, pa, carried, out, flags)
    return hydraulic_answer(m, out, flags, count, lead, check, limits)
