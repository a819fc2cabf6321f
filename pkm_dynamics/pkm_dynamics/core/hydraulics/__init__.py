"""Hydraulic actuation (issue 27): cylinders metered by proportional 4/3 valves.

:mod:`.valve_cylinder`: the model (flat arrays of the description's ``<hydraulics>``), the map
from cylinder motion, force and force rate to chamber pressures, flows, spool command and
hydraulic power (with the named refusal of what the valve cannot deliver), and the reverse map
from measured pressures to force; :mod:`.hydraulic_feedforward`: the robot call
``robot.hydraulics(x, xd, xdd, xddd=None)`` on the inverse dynamics (u) or the higher-order
inverse dynamics (u, du) of either robot kind.  Equations and sign conventions:
doc/hydraulics.rst."""
