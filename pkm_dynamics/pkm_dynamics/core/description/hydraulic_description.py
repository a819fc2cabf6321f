"""The hydraulic extension of a robot description: cylinders driving linearly actuated joints,
the proportional 4/3 valves metering them, and the supply they share (issue 27 item 1).

Format (inside ``<pkm_dynamics>``, after the ``<actuator>`` elements; SI units throughout;
the complete example is doc/hydraulics.rst)::

    <hydraulics supply_pressure="190e5" return_pressure="10e5" bulk_modulus="800e6">
      <cylinder joint="lift" bore="0.080" rod="0.045" stroke="0.59"
                dead_volume_a="3e-3" dead_volume_b="3e-3"/>     <!-- or area_a= area_b= -->
      <valve joint="lift" nominal_flow="1.6667e-3" nominal_pressure_drop="70e5"
             spool_limit="1" spool_natural_frequency="188.5" spool_damping="0.707"
             spool_slew_rate="100"/>                              <!-- or flow_coefficient= -->
    </hydraulics>

* ``<hydraulics>``: ``supply_pressure`` p_S [Pa] (required), ``return_pressure`` p_T [Pa]
  (default 0, below p_S), ``bulk_modulus`` beta of the oil [Pa] (required);
* ``<cylinder>``: ``joint`` an actuated prismatic joint whose value grows as the rod extends;
  its piston (chamber A) and annulus (chamber B) areas from ``bore`` and ``rod`` diameters [m]
  (A_A = pi bore^2 / 4, A_B = A_A - pi rod^2 / 4) or given as ``area_a``, ``area_b`` [m^2];
  ``stroke`` [m]; ``retracted``: the joint value at full retraction [m] (default: the joint's
  lower limit; the joint's limits must lie within [retracted, retracted + stroke]);
  ``dead_volume_a``, ``dead_volume_b``: the chambers' volumes at their smallest plus their
  hoses [m^3] (default 0);
* ``<valve>``: ``joint`` the cylinder it meters (one valve per cylinder); the flow coefficient
  K [m^3/s/sqrt(Pa)] of every metering edge, ``flow_coefficient`` or ``nominal_flow`` Q_N
  [m^3/s] at ``nominal_pressure_drop`` dp_N [Pa] per edge (K = Q_N / sqrt(dp_N));
  ``spool_limit`` (default 1: the spool s in [-1, 1]); the spool dynamics, optional and used
  only by simulations (the feedforward neglects them): ``spool_natural_frequency`` [rad/s],
  ``spool_damping`` [-], ``spool_slew_rate`` [1/s].

Every number is checked (finite, positive where it must be, within the bounds below); a bad
one raises :class:`~pkm_dynamics.core.errors.DescriptionError` naming the element, its joint
and the attribute."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import DescriptionError
from .validation import attribute_number

#: Pa (10 kbar: beyond any hydraulic supply)
MAX_PRESSURE = 1e9
#: Pa (oil ~1.5e9, steel 1.6e11)
MAX_BULK_MODULUS = 1e12
#: m (diameters, strokes), m^2 (areas), m^3 (volumes)
MAX_LENGTH, MAX_AREA, MAX_VOLUME = 1e2, 1e2, 1e3
#: m^3/s (flows), m^3/s/sqrt(Pa) (flow coefficients)
MAX_FLOW, MAX_FLOW_COEFFICIENT = 1e2, 1e2
#: spool limit, rad/s, damping ratio, 1/s
MAX_SPOOL, MAX_FREQUENCY, MAX_DAMPING, MAX_SLEW = 1e3, 1e6, 1e3, 1e9
#: m: slack of the joint limits against the cylinder's stroke
STROKE_SLACK = 1e-9


@dataclass(frozen=True)
class CylinderSpec:
    """A double-acting cylinder on an actuated prismatic joint (chamber A = piston side)."""

    joint: str
    area_a: float
    area_b: float
    stroke: float
    retracted: float
    dead_volume_a: float
    dead_volume_b: float


@dataclass(frozen=True)
class ValveSpec:
    """The proportional 4/3 valve of one cylinder: one flow coefficient for its four edges."""

    joint: str
    flow_coefficient: float
    spool_limit: float
    spool_natural_frequency: float | None = None
    spool_damping: float | None = None
    spool_slew_rate: float | None = None


@dataclass(frozen=True)
class HydraulicsSpec:
    """The ``<hydraulics>`` element: supply, oil, and the cylinders with their valves (in the
    order of the description's actuators)."""

    supply_pressure: float
    return_pressure: float
    bulk_modulus: float
    cylinders: tuple
    valves: tuple

    @property
    def joints(self) -> tuple:
        return tuple(c.joint for c in self.cylinders)


def _optional(el, attr, what, bound):
    return None if el.get(attr) is None else attribute_number(el, attr, what, bound)


def _parse_cylinder(el, tree, actuated) -> CylinderSpec:
    joint = el.get("joint")
    what = f"hydraulics <cylinder joint=\"{joint}\">"
    if not joint:
        raise DescriptionError("hydraulics: a <cylinder> element has no joint attribute")
    if joint not in actuated:
        raise DescriptionError(f"{what}: '{joint}' is not an actuated joint (<actuator joint=...>)")
    j = tree.joint_index(joint)
    if tree.joint_types[j] != "prismatic":
        raise DescriptionError(f"{what}: joint '{joint}' is {tree.joint_types[j]}, a cylinder drives a "
                               "prismatic joint")
    if el.get("bore") is not None or el.get("rod") is not None:
        if el.get("area_a") is not None or el.get("area_b") is not None:
            raise DescriptionError(f"{what}: give bore and rod, or area_a and area_b, not both")
        bore = attribute_number(el, "bore", what, MAX_LENGTH)
        rod = attribute_number(el, "rod", what, MAX_LENGTH)
        if rod >= bore:
            raise DescriptionError(f"{what}: rod {rod!r} m must be smaller than bore {bore!r} m")
        area_a = math.pi * bore * bore / 4.0
        area_b = area_a - math.pi * rod * rod / 4.0
    else:
        area_a = attribute_number(el, "area_a", what, MAX_AREA)
        area_b = attribute_number(el, "area_b", what, MAX_AREA)
        if area_b >= area_a:
            raise DescriptionError(f"{what}: area_b {area_b!r} m^2 must be smaller than area_a {area_a!r} m^2")
    stroke = attribute_number(el, "stroke", what, MAX_LENGTH)
    lower, upper = tree.lower[j], tree.upper[j]
    retracted = attribute_number(el, "retracted", what, MAX_LENGTH, sign="signed", default=lower)
    if not (math.isfinite(lower) and math.isfinite(upper)):
        raise DescriptionError(f"{what}: joint '{joint}' needs finite limits (the cylinder's stroke)")
    if lower < retracted - STROKE_SLACK or upper > retracted + stroke + STROKE_SLACK:
        raise DescriptionError(f"{what}: the joint limits [{lower!r}, {upper!r}] m leave the stroke "
                               f"[{retracted!r}, {retracted + stroke!r}] m (retracted, retracted + stroke)")
    dead_a = attribute_number(el, "dead_volume_a", what, MAX_VOLUME, sign="non-negative", default=0.0)
    dead_b = attribute_number(el, "dead_volume_b", what, MAX_VOLUME, sign="non-negative", default=0.0)
    return CylinderSpec(joint, area_a, area_b, stroke, retracted, dead_a, dead_b)


def _parse_valve(el) -> ValveSpec:
    joint = el.get("joint")
    what = f"hydraulics <valve joint=\"{joint}\">"
    if not joint:
        raise DescriptionError("hydraulics: a <valve> element has no joint attribute")
    if el.get("flow_coefficient") is not None:
        if el.get("nominal_flow") is not None or el.get("nominal_pressure_drop") is not None:
            raise DescriptionError(f"{what}: give flow_coefficient, or nominal_flow and nominal_pressure_drop, "
                                   "not both")
        k = attribute_number(el, "flow_coefficient", what, MAX_FLOW_COEFFICIENT)
    else:
        qn = attribute_number(el, "nominal_flow", what, MAX_FLOW)
        dpn = attribute_number(el, "nominal_pressure_drop", what, MAX_PRESSURE)
        k = qn / math.sqrt(dpn)
    return ValveSpec(joint, k, attribute_number(el, "spool_limit", what, MAX_SPOOL, default=1.0),
                     _optional(el, "spool_natural_frequency", what, MAX_FREQUENCY),
                     _optional(el, "spool_damping", what, MAX_DAMPING),
                     _optional(el, "spool_slew_rate", what, MAX_SLEW))


def parse_hydraulics(el, tree, actuated: tuple) -> HydraulicsSpec:
    """The :class:`HydraulicsSpec` of a ``<hydraulics>`` element (see the module doc) of the
    tree ``tree`` whose actuated joints are ``actuated``; cylinders and valves in the order of
    ``actuated``.  Raises :class:`DescriptionError` naming the element and attribute."""
    what = "<hydraulics>"
    p_s = attribute_number(el, "supply_pressure", what, MAX_PRESSURE)
    p_t = attribute_number(el, "return_pressure", what, MAX_PRESSURE, sign="non-negative", default=0.0)
    if p_t >= p_s:
        raise DescriptionError(f"{what}: return_pressure {p_t!r} Pa must be below supply_pressure {p_s!r} Pa")
    beta = attribute_number(el, "bulk_modulus", what, MAX_BULK_MODULUS)
    cylinders, valves = {}, {}
    for child in el:
        if child.tag == "cylinder":
            c = _parse_cylinder(child, tree, actuated)
            if c.joint in cylinders:
                raise DescriptionError(f"hydraulics <cylinder joint=\"{c.joint}\"> is declared twice")
            cylinders[c.joint] = c
        elif child.tag == "valve":
            v = _parse_valve(child)
            if v.joint in valves:
                raise DescriptionError(f"hydraulics <valve joint=\"{v.joint}\"> is declared twice")
            valves[v.joint] = v
        else:
            raise DescriptionError(f"unknown element <{child.tag}> in <hydraulics>")
    if not cylinders:
        raise DescriptionError(f"{what} declares no <cylinder>")
    for joint in valves:
        if joint not in cylinders:
            raise DescriptionError(f"hydraulics <valve joint=\"{joint}\">: no <cylinder> on joint '{joint}'")
    for joint in cylinders:
        if joint not in valves:
            raise DescriptionError(f"hydraulics <cylinder joint=\"{joint}\">: no <valve> meters it "
                                   f"(<valve joint=\"{joint}\" .../>)")
    order = [j for j in actuated if j in cylinders]
    return HydraulicsSpec(p_s, p_t, beta, tuple(cylinders[j] for j in order), tuple(valves[j] for j in order))
