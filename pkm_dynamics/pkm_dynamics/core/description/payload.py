"""A run-time payload: a rigid load carried by the end effector (module chains) or the
platform (parallel manipulators), added to the inertia of the body that carries it.

The payload is given in the frame of the *payload link* (:func:`payload_link`: the platform
link of a PKM, the end-effector link of a module chain): mass ``m`` (kg), centre of mass
``c`` (3,) (m) and rotational inertia ``I_c`` (3, 3) about the centre of mass (kg m^2, axes of
the link frame).  Its spatial inertia about the link frame is ``M_L = spatial_inertia(m, c,
I_c)`` (:mod:`.spatial` conventions), and about the frame of the tree body ``b`` the link is
fixed to (pose ``b_C_L`` of the link in that body)::

    M_b <- M_b + Ad(b_C_L)^-T M_L Ad(b_C_L)^-1

which is exactly what a URDF link with this ``<inertial>``, fixed to the payload link, adds to
the body (:func:`.tree.build_tree` merges fixed links so).  A loaded robot never changes: the
payload gives a new description and a new robot built from it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .robot_description import RobotDescription
from ..errors import DescriptionError
from ..spatial.se3 import spatial_inertia, transform_inertia
from .validation import check_payload


@dataclass(frozen=True)
class Payload:
    """A load at the payload link: ``mass`` (kg), ``com`` (3,) (m, link frame), ``inertia``
    (3, 3) about the centre of mass (kg m^2, link axes).  Checked on creation
    (:func:`.validation.check_payload`); :meth:`from_urdf_inertia` takes the six URDF numbers."""

    mass: float = 0.0
    com: np.ndarray = None
    inertia: np.ndarray = None

    def __post_init__(self):
        com = np.zeros(3) if self.com is None else self.com
        inertia = np.zeros((3, 3)) if self.inertia is None else self.inertia
        m, c, I = check_payload(self.mass, com, inertia)
        object.__setattr__(self, "mass", m)
        object.__setattr__(self, "com", c)
        object.__setattr__(self, "inertia", I)

    @classmethod
    def from_urdf_inertia(cls, mass, com, ixx_ixy_ixz_iyy_iyz_izz) -> "Payload":
        """A payload whose inertia is given as URDF does: (ixx, ixy, ixz, iyy, iyz, izz)."""
        v = np.asarray(ixx_ixy_ixz_iyy_iyz_izz, dtype=float).reshape(-1)
        if v.shape != (6,):
            raise DescriptionError(f"payload: the inertia must hold 6 numbers (ixx ixy ixz iyy "
                                   f"iyz izz), got {v.size}")
        xx, xy, xz, yy, yz, zz = v
        return cls(mass, com, np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))

    @property
    def empty(self) -> bool:
        """True when the payload adds nothing (zero mass and zero inertia)."""
        return self.mass == 0.0 and not np.any(self.inertia)

    def spatial_inertia(self) -> np.ndarray:
        """Spatial inertia (6, 6) about the payload link frame."""
        return spatial_inertia(self.mass, self.com, self.inertia)


def payload_link(desc: RobotDescription) -> str:
    """The link that carries a payload: the platform link of a parallel manipulator, else the
    end-effector link (the ``<end_effector>`` element, or the output body of the last module)."""
    if desc.platform is not None:
        return desc.platform.link
    if desc.end_effector is not None:
        return desc.end_effector
    from ..module_chain.module_chain import recognise_modules
    return recognise_modules(desc).end_effector


def description_with_payload(desc: RobotDescription, payload: Payload) -> RobotDescription:
    """A new description whose tree carries ``payload`` at :func:`payload_link` (see the module
    docstring for the inertia update); ``desc`` is left unchanged.  An empty payload returns
    ``desc`` itself."""
    if payload.empty:
        return desc
    link = payload_link(desc)
    body, b_C_L = desc.tree.frame(link)
    if body < 0:
        raise DescriptionError(f"payload link '{link}' is fixed to the base: a payload there "
                               "moves nothing")
    M = desc.tree.M.copy()
    M[body] = M[body] + transform_inertia(payload.spatial_inertia(), b_C_L)
    return replace(desc, tree=replace(desc.tree, M=M))


def robot_with_payload(robot, payload: Payload):
    """A new robot of the same kind and solver options as ``robot`` (built by
    :func:`.robot.robot_from_description` or a robot class) carrying ``payload`` (added to
    whatever ``robot`` already carries)."""
    from ..robot import robot_from_description
    return robot_from_description(description_with_payload(robot.description, payload), robot.options)
