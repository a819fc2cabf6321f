"""Actuator limits: the per-actuator table every answer is checked against, and the
utilisations of a motion.

Strokes (URDF ``<limit lower upper>`` of an actuated joint) are checked by every call: a
position beyond a stroke is refused (:class:`~.errors.StateError`).  Force and velocity limits
are not a refusal: a planner's inverse dynamics beyond them is still answered, and this module
says which actuator exceeds which limit by how much (:meth:`ActuatorLimits.violations`), and
how close each actuator comes (:meth:`ActuatorLimits.utilisation`: ``|u| / u_max`` and
``|xd| / xd_max``, 1 = at the limit).

The table (:class:`ActuatorLimits`, a robot's ``limits`` attribute, built at load) holds per
actuator, in the order of ``actuated_joints``: ``force_max`` [N | N m] from the URDF ``effort``
of the joint, ``velocity_max`` [m/s | rad/s] from its ``velocity`` (0 or absent: no limit,
``inf``), and where each came from.

Hydraulic actuators: a cylinder tightens its actuator's entries where that is tighter than the
URDF's, through :meth:`ActuatorLimits.with_bounds` (a new table, the tighter of both limits
kept, the source named), at the robot's build:
:func:`~pkm_dynamics.core.hydraulics.hydraulic_feedforward.cylinder_limits` (the stall force at
full supply, the no-load rate at full spool opening).  Everything downstream -- the services'
``limit_*`` fields and messages, the feedforward's diagnostics -- reads the table.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .errors import StateError

#: the limited quantities, as named in answers (``limit_quantities`` of the services)
EFFORT, VELOCITY = "effort", "velocity"


@dataclass(frozen=True)
class LimitViolation:
    """One actuator beyond one limit: ``joint``, ``quantity`` (``"effort"`` | ``"velocity"``),
    the worst ``value`` (signed) beyond ``bound`` (positive), at ``point`` (row of a batch)."""

    joint: str
    quantity: str
    value: float
    bound: float
    point: int = 0

    def __str__(self) -> str:
        unit = "N or N m" if self.quantity == EFFORT else "m/s or rad/s"
        return (f"joint '{self.joint}' {self.quantity} {self.value:.6g} beyond its limit {self.bound:.6g} "
                f"({unit}; {abs(self.value) / self.bound:.0%}) at point {self.point}")


def _read_only(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class ActuatorLimits:
    """Per-actuator limits (module doc), order ``joints`` (the actuated joints): ``force_max``,
    ``velocity_max`` (n,) (``inf``: none), ``lower``, ``upper`` (n,) the strokes, and per actuator
    ``force_source``, ``velocity_source`` (what the limit comes from).  ``inverse_force``,
    ``inverse_velocity`` (n,): ``1 / limit``, 0 without one (the utilisations are products)."""

    joints: tuple
    force_max: np.ndarray
    velocity_max: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    force_source: tuple
    velocity_source: tuple

    def __post_init__(self):
        for name in ("force_max", "velocity_max", "lower", "upper"):
            object.__setattr__(self, name, _read_only(getattr(self, name)))
        for name in ("force_max", "velocity_max"):
            bad = [j for j, v in zip(self.joints, getattr(self, name)) if not v > 0]
            if bad:
                raise StateError(f"{name} of joint(s) {', '.join(bad)} must be positive (inf: no limit)")
        object.__setattr__(self, "inverse_force", _read_only(1.0 / self.force_max))
        object.__setattr__(self, "inverse_velocity", _read_only(1.0 / self.velocity_max))

    @classmethod
    def from_description(cls, desc, joints=None) -> "ActuatorLimits":
        """The URDF limits of ``desc``'s actuated joints, in the order ``joints`` (default: the
        description's) (``<limit effort velocity lower upper>``; effort / velocity 0 or absent:
        no limit)."""
        tree = desc.tree
        joints = tuple(desc.actuated_joints if joints is None else joints)
        idx = [tree.joint_index(j) for j in joints]
        force, velocity = tree.effort_limit[idx], tree.velocity_limit[idx]
        return cls(joints, force, velocity, tree.lower[idx], tree.upper[idx],
                   tuple("URDF effort" if np.isfinite(f) else "none" for f in force),
                   tuple("URDF velocity" if np.isfinite(v) else "none" for v in velocity))

    def with_bounds(self, joint: str, force_max: float | None = None, velocity_max: float | None = None,
                    source: str = "") -> "ActuatorLimits":
        """A new table with ``joint``'s force / velocity limit lowered to ``force_max`` /
        ``velocity_max`` where that is tighter (the hook of hydraulic cylinders: supply pressure
        x area, valve flow at full opening / area), ``source`` naming it."""
        if joint not in self.joints:
            raise StateError(f"'{joint}' is not an actuated joint ({', '.join(self.joints)})")
        k = self.joints.index(joint)
        fields = {}
        for name, value in (("force", force_max), ("velocity", velocity_max)):
            limits, sources = getattr(self, f"{name}_max").copy(), list(getattr(self, f"{name}_source"))
            if value is not None and value < limits[k]:
                limits[k], sources[k] = value, source or name
            fields[f"{name}_max"], fields[f"{name}_source"] = limits, tuple(sources)
        return replace(self, **fields)

    def utilisation(self, u, xd) -> tuple:
        """``(|u| / force_max, |xd| / velocity_max)`` (..., n) each of efforts ``u`` and
        actuator velocities ``xd`` (..., n) (``xd`` None: zero): 1 at a limit, 0 without one."""
        u = np.asarray(u, dtype=float)
        force = np.abs(u) * self.inverse_force
        velocity = np.zeros_like(force) if xd is None else np.abs(np.asarray(xd, dtype=float)) * self.inverse_velocity
        return force, velocity

    def violations(self, u, xd) -> list:
        """Every actuator and quantity beyond its limit (utilisation > 1) somewhere in ``u``,
        ``xd`` (n,) or (B, n): one :class:`LimitViolation` each, with its worst value and the
        row where it occurs; order: effort before velocity, then the joints' order."""
        u = np.atleast_2d(np.asarray(u, dtype=float))
        xd = np.zeros_like(u) if xd is None else np.atleast_2d(np.asarray(xd, dtype=float))
        out = []
        for quantity, values, bounds, util in ((EFFORT, u, self.force_max, self.utilisation(u, None)[0]),
                                               (VELOCITY, xd, self.velocity_max, self.utilisation(u, xd)[1])):
            rows = np.argmax(util, axis=0)
            for k in np.flatnonzero(util.max(axis=0) > 1.0):
                row = int(rows[k])
                out.append(LimitViolation(self.joints[k], quantity, float(values[row, k]), float(bounds[k]), row))
        return out


def violations_message(violations) -> str:
    """The violations as one sentence for an answer's message ('' for none)."""
    if not violations:
        return ""
    return "beyond actuator limits: " + "; ".join(str(v) for v in violations)
