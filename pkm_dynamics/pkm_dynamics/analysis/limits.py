"""The force limits of a robot's actuators: one place to read them from, for every map.

Today the limits are the URDF ``effort`` limits of the actuated joints (N for a prismatic
actuator, N m for a revolute one; ``effort="0"`` or none: no limit), symmetric about zero, with
per-actuator values a caller gives taking precedence (a hydraulic cylinder's push and pull limits
differ: supply pressure times the piston area, times the annulus area).
"""
from __future__ import annotations

import numpy as np


class LimitError(ValueError):
    """A force limit that cannot be used: the message names the actuator and the value."""


def actuator_force_limits(robot, overrides: dict | None = None) -> tuple:
    """``(lower, upper)`` (n_act,) each, N or N m, order ``robot.actuated_joints``: the force
    every actuator may exert, ``lower <= u <= upper`` (inf: no limit).

    From the robot's limits table (``robot.limits.force_max``, :class:`~pkm_dynamics.core.limits.
    ActuatorLimits`: the URDF ``effort`` limit ``e`` of each actuated joint, tightened where a
    hydraulic cylinder bounds it: ``(-e, e)``), replaced where ``overrides`` names the actuator:
    ``{name: e}`` (symmetric) or
    ``{name: (lower, upper)}``.  Raises :class:`LimitError` for an unknown actuator name, a value
    that is not a number, ``lower > 0``, ``upper < 0`` or ``lower >= upper``."""
    names = tuple(robot.actuated_joints)
    table = robot.limits
    effort = np.array([table.force_max[table.joints.index(j)] for j in names], dtype=float)
    lower, upper = -effort, effort.copy()
    for name, value in (overrides or {}).items():
        if name not in names:
            raise LimitError(f"force limit for '{name}': not an actuator of '{robot.name}' "
                             f"(actuators: {', '.join(names)})")
        try:
            lo, hi = (-float(value), float(value)) if np.ndim(value) == 0 else (float(value[0]), float(value[1]))
        except (TypeError, ValueError, IndexError):
            raise LimitError(f"force limit for '{name}': {value!r} is not a number or a (lower, upper) "
                             "pair") from None
        if not (lo <= 0 <= hi) or lo >= hi or np.isnan(lo) or np.isnan(hi):
            raise LimitError(f"force limit for '{name}': ({lo:g}, {hi:g}) must hold zero inside "
                             "(lower <= 0 <= upper, lower < upper)")
        k = names.index(name)
        lower[k], upper[k] = lo, hi
    return lower, upper


def parse_force_limits(items) -> dict:
    """``{name: e}`` or ``{name: (lower, upper)}`` from command-line items ``NAME=E`` or
    ``NAME=LOWER:UPPER`` (N or N m); :class:`LimitError` naming a malformed item."""
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            out[name] = tuple(float(v) for v in value.split(":")) if ":" in value else float(value)
        except ValueError:
            raise LimitError(f"force limit '{item}' is not NAME=VALUE or NAME=LOWER:UPPER") from None
    return out
