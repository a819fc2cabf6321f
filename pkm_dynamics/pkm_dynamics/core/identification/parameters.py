"""The standard inertial parameters of a body and of a robot.

The ten parameters of a body, in Pinocchio's order (``pin.Inertia.toDynamicParameters``)::

    pi = (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)

with ``c`` the centre of mass and ``I`` the rotational inertia about the *body frame origin*
(``I = I_c - m [c]x [c]x``), all in the axes of the body frame (the frame of tree body ``i``: the
URDF child link of its joint, fixed links merged, :mod:`..tree.tree_model`).  The spatial inertia
about the body frame (:func:`..spatial.se3.spatial_inertia`, twist order (angular, linear)) is
linear in them::

    M(pi) = [[I, m [c]x], [-m [c]x, m 1]] = sum_k pi_k E_k               (:data:`INERTIA_BASIS`)

A robot's parameter vector stacks the tree bodies' in tree order (``tree_joints``), (10 n_b,):
loop bodies, cylinders, pistons and the platform are tree bodies like any other.
"""
from __future__ import annotations

import numpy as np

from ..errors import StateError
from ..friction.friction_kernels import COULOMB, STRIBECK, VISCOUS
from ..friction.friction_model import LINEAR_COEFFICIENTS

#: the names of a body's ten parameters, in their order
PARAMETER_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
#: (row, column) of the rotational inertia entries ``I_xx, I_xy, I_yy, I_xz, I_yz, I_zz``
INERTIA_ENTRIES = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))


def _inertia_basis() -> np.ndarray:
    """``E_k`` (10, 6, 6): ``M(pi) = sum_k pi_k E_k``."""
    E = np.zeros((10, 6, 6))
    E[0, 3:, 3:] = np.eye(3)
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        h = np.array([[0.0, -e[2], e[1]], [e[2], 0.0, -e[0]], [-e[1], e[0], 0.0]])
        E[1 + k, :3, 3:] = h
        E[1 + k, 3:, :3] = -h
    for k, (r, c) in enumerate(INERTIA_ENTRIES):
        E[4 + k, r, c] = E[4 + k, c, r] = 1.0
    return E


#: ``E_k`` (10, 6, 6) of the module docstring (read-only)
INERTIA_BASIS = _inertia_basis()
INERTIA_BASIS.flags.writeable = False


def body_parameters(M) -> np.ndarray:
    """The ten parameters (..., 10) of spatial inertias ``M`` (..., 6, 6) about the body frame."""
    M = np.asarray(M, dtype=float)
    out = np.empty(M.shape[:-2] + (10,))
    out[..., 0] = M[..., 3, 3]
    out[..., 1], out[..., 2], out[..., 3] = M[..., 2, 4], M[..., 0, 5], M[..., 1, 3]
    for k, (r, c) in enumerate(INERTIA_ENTRIES):
        out[..., 4 + k] = M[..., r, c]
    return out


def inertia_of_parameters(pi) -> np.ndarray:
    """Spatial inertias (..., 6, 6) of parameters ``pi`` (..., 10): ``sum_k pi_k E_k``."""
    pi = np.asarray(pi, dtype=float)
    if pi.shape[-1] != 10:
        raise StateError(f"inertial parameters have shape {pi.shape}, expected (..., 10)")
    return np.einsum("...k,kij->...ij", pi, INERTIA_BASIS)


def robot_parameters(robot) -> np.ndarray:
    """The standard parameters ``pi`` (10 n_b,) of a robot's tree bodies (its description's
    inertias, payload included), in the order of :func:`parameter_names`."""
    return body_parameters(robot.description.tree.M).reshape(-1)


def parameter_names(robot) -> tuple:
    """``"<body link>.<parameter>"`` for every entry of :func:`robot_parameters`."""
    return tuple(f"{b}.{p}" for b in robot.description.tree.body_names for p in PARAMETER_NAMES)


def friction_joints(robot) -> tuple:
    """The tree joints (indices into the description's friction rows) whose friction the
    description gives (URDF ``<dynamics>`` or ``<friction>``); () without friction."""
    friction = robot.description.friction
    return () if friction is None else tuple(j for j, src in enumerate(friction.sources) if src)


def friction_parameters(robot) -> np.ndarray:
    """The friction coefficients ``phi`` (3 m,) of :func:`friction_joints`: (F_C, b, F_S) of each
    joint in turn (:func:`..friction.friction_model.friction_basis`), the description's values."""
    friction = robot.description.friction
    rows = [friction.table[j, [COULOMB, VISCOUS, STRIBECK]] for j in friction_joints(robot)]
    return np.concatenate(rows) if rows else np.zeros(0)


def friction_parameter_names(robot) -> tuple:
    """``"<joint>.<coefficient>"`` for every entry of :func:`friction_parameters`."""
    names = robot.description.friction.joint_names if friction_joints(robot) else ()
    return tuple(f"{names[j]}.{c}" for j in friction_joints(robot) for c in LINEAR_COEFFICIENTS)


def transformed_parameters(b_C_L) -> np.ndarray:
    """``T`` (10, 10): the parameters about body frame ``b`` of a body given about frame ``L``
    (pose ``b_C_L`` of L in b): ``pi_b = T pi_L``, from ``M_b = Ad(b_C_L)^-T M_L Ad(b_C_L)^-1``
    (:func:`..spatial.se3.transform_inertia`), linear in ``M_L``."""
    from ..spatial.se3 import transform_inertia
    return np.stack([body_parameters(transform_inertia(E, b_C_L)) for E in INERTIA_BASIS], axis=1)
