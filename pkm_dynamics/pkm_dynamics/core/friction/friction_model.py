"""Friction parameters of every tree joint, read from a robot description, and the numpy form
of the friction law (the reference route of :mod:`.friction_kernels`, and the jets of the
higher-order inverse dynamics).

Two sources, one table row per moving tree joint (columns :data:`.friction_kernels.COULOMB` ..
:data:`.friction_kernels.SMOOTHING_VELOCITY`):

* URDF ``<joint><dynamics damping="b" friction="F_C"/></joint>`` on any moving joint, passive
  ones too: viscous ``b`` and Coulomb level ``F_C`` (smoothing velocity
  :data:`DEFAULT_SMOOTHING_VELOCITY`, no Stribeck term);
* the extension element ``<friction joint="..." coulomb="F_C" viscous="b" stribeck="F_S"
  stribeck_velocity="v_S" smoothing_velocity="v_eps"/>`` inside ``<pkm_dynamics>`` (every
  attribute but ``joint`` optional, SI), meant for an actuator's friction (e.g. a hydraulic
  cylinder's seal friction curve) but allowed on any moving joint.

A joint takes one source: ``<dynamics>`` with a non-zero value and a ``<friction>`` element on
the same joint are refused, as is every negative, non-finite or out-of-bound value (the
message names the element and the attribute).  A description without any friction gives no
table (None): every call then runs the frictionless code unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DescriptionError
from ..description.validation import MAX_EFFORT, MAX_VELOCITY, attribute_number
from .friction_kernels import (COULOMB, FRICTION_COLUMNS, SMOOTHING_VELOCITY, STRIBECK, STRIBECK_VELOCITY,
                               VISCOUS)

#: smoothing velocity (m/s or rad/s) of a Coulomb level given without one (URDF ``<dynamics>``)
DEFAULT_SMOOTHING_VELOCITY = 0.01
#: Stribeck velocity (m/s or rad/s) of a ``<friction>`` element that gives none
DEFAULT_STRIBECK_VELOCITY = 0.1
#: the friction rows of a robot without friction, for a kernel that takes them: (0, 5), read-only
#: like a robot's table (one compiled signature for both)
NO_FRICTION = np.zeros((0, FRICTION_COLUMNS))
NO_FRICTION.setflags(write=False)
#: the attributes of ``<friction>`` and their table columns
FRICTION_ATTRIBUTES = {"coulomb": COULOMB, "viscous": VISCOUS, "stribeck": STRIBECK,
                       "stribeck_velocity": STRIBECK_VELOCITY, "smoothing_velocity": SMOOTHING_VELOCITY}


@dataclass(frozen=True)
class JointFriction:
    """The friction of every moving tree joint: ``table`` (nq, 5) read-only, one row per joint
    in the order of ``joint_names`` (a row of zeros but the velocities: no friction);
    ``sources`` (nq,): ``"dynamics"`` (URDF), ``"friction"`` (the extension element) or ``""``."""

    joint_names: tuple
    table: np.ndarray
    sources: tuple

    def row(self, joint: str) -> np.ndarray:
        return self.table[self.joint_names.index(joint)]


def _element_row(el, tree) -> tuple:
    """``(joint index, row (5,))`` of one ``<friction>`` element, every value checked."""
    joint = el.get("joint")
    if not joint:
        raise DescriptionError("a <friction> element has no joint attribute")
    what = f"<friction joint=\"{joint}\">"
    if joint not in tree.joint_names:
        raise DescriptionError(f"{what}: '{joint}' is not a moving joint of the tree "
                               f"(moving joints: {', '.join(tree.joint_names)})")
    unknown = sorted(set(el.attrib) - set(FRICTION_ATTRIBUTES) - {"joint"})
    if unknown:
        raise DescriptionError(f"{what}: unknown attribute(s) {', '.join(unknown)} (known: "
                               f"{', '.join(FRICTION_ATTRIBUTES)})")
    row = np.zeros(FRICTION_COLUMNS)
    row[STRIBECK_VELOCITY], row[SMOOTHING_VELOCITY] = DEFAULT_STRIBECK_VELOCITY, DEFAULT_SMOOTHING_VELOCITY
    for attr, col in FRICTION_ATTRIBUTES.items():
        if el.get(attr) is not None:
            velocity = col in (STRIBECK_VELOCITY, SMOOTHING_VELOCITY)
            row[col] = attribute_number(el, attr, what, MAX_VELOCITY if velocity else MAX_EFFORT,
                                        sign="positive" if velocity else "non-negative")
    return tree.joint_names.index(joint), row


def _dynamics_row(joint, what) -> np.ndarray | None:
    """The row of a URDF joint's ``<dynamics>`` (None without one or with zeros only)."""
    dyn = getattr(joint, "dynamics", None)
    if dyn is None:
        return None
    row = np.zeros(FRICTION_COLUMNS)
    row[STRIBECK_VELOCITY], row[SMOOTHING_VELOCITY] = DEFAULT_STRIBECK_VELOCITY, DEFAULT_SMOOTHING_VELOCITY
    for attr, col in (("damping", VISCOUS), ("friction", COULOMB)):
        v = getattr(dyn, attr, None)
        if v is None:
            continue
        try:
            v = float(v)
        except (TypeError, ValueError):
            raise DescriptionError(f"{what} <dynamics>: {attr}=\"{v!s:.40}\" is not a number") from None
        if not (np.isfinite(v) and 0 <= v <= MAX_EFFORT):
            raise DescriptionError(f"{what} <dynamics>: {attr}=\"{v}\" must be non-negative and at most "
                                   f"{MAX_EFFORT:g}")
        row[col] = v
    return row if row[COULOMB] or row[VISCOUS] else None


def parse_friction(urdf_robot, elements, tree) -> JointFriction | None:
    """The :class:`JointFriction` of a description: the URDF joints' ``<dynamics>``
    (``urdf_robot``, the ``urdf_parser_py`` model) and the ``<friction>`` elements ``elements``
    of ``<pkm_dynamics>``, on the moving joints of ``tree``; None when no joint has friction.
    Raises :class:`DescriptionError` naming the element and the value."""
    nq = tree.nq
    table = np.zeros((nq, FRICTION_COLUMNS))
    table[:, STRIBECK_VELOCITY], table[:, SMOOTHING_VELOCITY] = DEFAULT_STRIBECK_VELOCITY, DEFAULT_SMOOTHING_VELOCITY
    sources = [""] * nq
    for joint in urdf_robot.joints:
        if joint.name in tree.joint_names:
            row = _dynamics_row(joint, f"joint '{joint.name}'")
            if row is not None:
                i = tree.joint_names.index(joint.name)
                table[i], sources[i] = row, "dynamics"
    for el in elements:
        i, row = _element_row(el, tree)
        if sources[i] == "friction":
            raise DescriptionError(f"<friction joint=\"{tree.joint_names[i]}\"> is given twice")
        if sources[i] == "dynamics":
            raise DescriptionError(f"<friction joint=\"{tree.joint_names[i]}\">: the joint has a URDF <dynamics> "
                                   "damping/friction as well; give one of the two")
        table[i], sources[i] = row, "friction"
    if not any(sources):
        return None
    table.setflags(write=False)
    return JointFriction(tuple(tree.joint_names), table, tuple(sources))


def friction_torques(table, qd) -> tuple:
    """The friction law of :mod:`.friction_kernels` in numpy (the reference route): ``(tau_f,
    d tau_f / d qd, d^2 tau_f / d qd^2)`` (..., nq) each, for joint rates ``qd`` (..., nq) and
    the rows of ``table`` (nq, 5) (each joint's torque depends on its own rate only)."""
    qd = np.asarray(qd, dtype=float)
    fc, b, fs = table[:, COULOMB], table[:, VISCOUS], table[:, STRIBECK]
    vs, ve = table[:, STRIBECK_VELOCITY], table[:, SMOOTHING_VELOCITY]
    s = np.tanh(qd / ve)
    ds = (1.0 - s ** 2) / ve
    dds = -2.0 * s * ds / ve
    e = np.exp(-(qd / vs) ** 2)
    level = fc + fs * e
    dlevel = fs * e * (-2.0 * qd / vs ** 2)
    ddlevel = fs * e * (4.0 * qd ** 2 / vs ** 4 - 2.0 / vs ** 2)
    return level * s + b * qd, dlevel * s + level * ds + b, ddlevel * s + 2.0 * dlevel * ds + level * dds


#: the coefficients in which the friction law is linear (its velocities v_S, v_eps held fixed)
LINEAR_COEFFICIENTS = ("coulomb", "viscous", "stribeck")


def friction_basis(table, qd, joints) -> np.ndarray:
    """The law of :func:`friction_torques` as linear in the coefficients
    :data:`LINEAR_COEFFICIENTS` of the joints ``joints`` (indices into the rows of ``table``):
    ``tau_f(qd) = B(qd) phi`` with ``phi`` (3 m,) = (F_C, b, F_S) of each joint in turn and ``B``
    (..., nq, 3 m): ``tanh(v / v_eps)``, ``v``, ``exp(-(v / v_S)^2) tanh(v / v_eps)`` in joint
    ``j``'s row (``v = qd_j``; ``v_S``, ``v_eps`` from ``table``)."""
    qd = np.asarray(qd, dtype=float)
    B = np.zeros(qd.shape + (3 * len(joints),))
    for k, j in enumerate(joints):
        v = qd[..., j]
        s = np.tanh(v / table[j, SMOOTHING_VELOCITY])
        B[..., j, 3 * k] = s
        B[..., j, 3 * k + 1] = v
        B[..., j, 3 * k + 2] = np.exp(-(v / table[j, STRIBECK_VELOCITY]) ** 2) * s
    return B


def friction_jet(table, qdj: np.ndarray) -> np.ndarray:
    """The Taylor jet (degree ``min(len(qdj) - 1, 2)``; coefficients ``c_k = d^k/dt^k / k!`` as
    :mod:`..spatial.taylor`) of the joint friction torques along the jet ``qdj`` (>= 2, nq) of
    the joint rates: ``tau(v0) + tau' v1 t + (tau' v2 + tau'' v1^2 / 2) t^2``.  Returns (2, nq)
    for a first-order jet (the dynamics derivatives' dual numbers), else (3, nq)."""
    tau, d1, d2 = friction_torques(table, qdj[0])
    if len(qdj) == 2:
        return np.stack([tau, d1 * qdj[1]])
    return np.stack([tau, d1 * qdj[1], d1 * qdj[2] + 0.5 * d2 * qdj[1] ** 2])
