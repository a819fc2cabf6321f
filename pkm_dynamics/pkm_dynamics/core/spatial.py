"""Spatial algebra on SE(3): the conventions every algorithm of the core uses.

Conventions (written down once, used everywhere; they are those of papers 001 and 002):

* A pose ``C`` is a 4x4 homogeneous matrix ``[[R, p], [0, 1]]`` that maps coordinates in a
  body frame to coordinates in a reference frame (``A_C_B`` maps frame B to frame A).
* A twist is a 6-vector ``V = (omega, v)``: angular part first, then linear part.  Body-fixed
  twists ``V = (C^-1 Cdot)^vee`` are used throughout: ``omega`` is the angular velocity and
  ``v`` the velocity of the body frame's origin, both in body-frame coordinates.
* A screw coordinate vector ``X = (e, p x e)`` (revolute, unit axis ``e`` through point ``p``)
  or ``X = (0, e)`` (prismatic) has the same layout.
* A wrench is a 6-vector ``W = (m, f)``: moment first, then force, the dual of a twist.
* ``Ad(C)`` maps twists of frame B to frame A: ``V_A = Ad(A_C_B) V_B``; wrenches transform with
  ``Ad(C)^-T``.  ``ad(X)`` is the Lie bracket ``[X, Y] = ad(X) Y``; ``ad(X).T`` is ``ad*``.
* The spatial inertia of a body about its frame is
  ``M = [[I_O, m [c]x], [-m [c]x, m 1]]`` with ``I_O = I_c - m [c]x [c]x``; the body-fixed
  Newton-Euler equations are ``W = M Vdot - ad(V)^T M V``.

Every function takes and returns plain numpy arrays.
"""
from __future__ import annotations

import numpy as np

_EPS = 1e-9


def hat(w: np.ndarray) -> np.ndarray:
    """Skew-symmetric 3x3 matrix ``[w]x`` with ``[w]x u = w x u``."""
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def vee(W: np.ndarray) -> np.ndarray:
    """Inverse of :func:`hat`."""
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


def rpy_matrix(rpy) -> np.ndarray:
    """URDF roll-pitch-yaw (fixed axes x, y, z): ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def pose(R: np.ndarray | None = None, p=None) -> np.ndarray:
    """4x4 pose from a rotation ``R`` (default identity) and a translation ``p`` (default 0)."""
    C = np.eye(4)
    if R is not None:
        C[:3, :3] = R
    if p is not None:
        C[:3, 3] = p
    return C


def pose_inv(C: np.ndarray) -> np.ndarray:
    """Inverse of a pose: ``B_C_A`` from ``A_C_B``."""
    R, p = C[:3, :3], C[:3, 3]
    out = np.eye(4)
    out[:3, :3] = R.T
    out[:3, 3] = -R.T @ p
    return out


def exp_so3(w: np.ndarray) -> np.ndarray:
    """Rodrigues' formula: rotation matrix of the rotation vector ``w``."""
    th = np.linalg.norm(w)
    W = hat(w)
    if th < _EPS:
        return np.eye(3) + W + 0.5 * W @ W
    return np.eye(3) + np.sin(th) / th * W + (1.0 - np.cos(th)) / th**2 * W @ W


def log_so3(R: np.ndarray) -> np.ndarray:
    """Rotation vector of ``R`` (inverse of :func:`exp_so3`), angle in [0, pi]."""
    c = np.clip(0.5 * (np.trace(R) - 1.0), -1.0, 1.0)
    th = np.arccos(c)
    if th < 1e-6:
        return vee(R - R.T) * 0.5 * (1.0 + th**2 / 6.0)
    if np.pi - th < 1e-6:
        # near pi: axis from the symmetric part, sign from the skew part
        B = 0.5 * (R + np.eye(3))
        k = int(np.argmax(np.diag(B)))
        axis = B[:, k] / np.sqrt(max(B[k, k], 1e-300))
        s = vee(R - R.T)
        if axis @ s < 0:
            axis = -axis
        return th * axis / np.linalg.norm(axis)
    return th / (2.0 * np.sin(th)) * vee(R - R.T)


def _left_jacobian_so3(w: np.ndarray) -> np.ndarray:
    th = np.linalg.norm(w)
    W = hat(w)
    if th < _EPS:
        return np.eye(3) + 0.5 * W + W @ W / 6.0
    return (np.eye(3) + (1.0 - np.cos(th)) / th**2 * W
            + (th - np.sin(th)) / th**3 * W @ W)


def exp_se3(X: np.ndarray, q: float = 1.0) -> np.ndarray:
    """Closed-form exponential ``exp(q [X])`` of the screw ``X = (omega, v)``."""
    X = np.asarray(X, dtype=float) * q
    w, v = X[:3], X[3:]
    C = np.eye(4)
    C[:3, :3] = exp_so3(w)
    C[:3, 3] = _left_jacobian_so3(w) @ v
    return C


def log_se3(C: np.ndarray) -> np.ndarray:
    """Closed-form logarithm: the twist ``X`` with ``exp_se3(X) = C`` (rotation angle < pi)."""
    w = log_so3(C[:3, :3])
    v = np.linalg.solve(_left_jacobian_so3(w), C[:3, 3])
    return np.concatenate([w, v])


def Ad(C: np.ndarray) -> np.ndarray:
    """Adjoint ``Ad_C = [[R, 0], [[p]x R, R]]``: ``V_A = Ad(A_C_B) V_B`` for twists."""
    R, p = C[:3, :3], C[:3, 3]
    out = np.zeros((6, 6))
    out[:3, :3] = R
    out[3:, 3:] = R
    out[3:, :3] = hat(p) @ R
    return out


def Ad_inv(C: np.ndarray) -> np.ndarray:
    """``Ad(C)^-1 = Ad(C^-1)`` without inverting a 6x6 matrix."""
    R, p = C[:3, :3], C[:3, 3]
    out = np.zeros((6, 6))
    out[:3, :3] = R.T
    out[3:, 3:] = R.T
    out[3:, :3] = -R.T @ hat(p)
    return out


def ad(X: np.ndarray) -> np.ndarray:
    """Lie bracket matrix ``ad_X = [[[w]x, 0], [[v]x, [w]x]]``, ``[X, Y] = ad(X) Y``."""
    out = np.zeros((6, 6))
    W = hat(X[:3])
    out[:3, :3] = W
    out[3:, 3:] = W
    out[3:, :3] = hat(X[3:])
    return out


def ad_star(X: np.ndarray) -> np.ndarray:
    """Co-adjoint ``ad*_X = ad_X^T`` acting on wrenches."""
    return ad(X).T


def spatial_inertia(mass: float, com, inertia_com) -> np.ndarray:
    """6x6 spatial inertia about the body frame from mass, centre of mass ``com`` and the
    3x3 rotational inertia ``inertia_com`` about the COM (both in body-frame axes)."""
    c = hat(np.asarray(com, dtype=float))
    M = np.zeros((6, 6))
    M[:3, :3] = np.asarray(inertia_com, dtype=float) - mass * c @ c
    M[:3, 3:] = mass * c
    M[3:, :3] = -mass * c
    M[3:, 3:] = mass * np.eye(3)
    return M


def transform_inertia(M: np.ndarray, B_C_A: np.ndarray) -> np.ndarray:
    """Express the spatial inertia ``M`` given about frame A about frame B:
    ``Ad(A_C_B)^T M Ad(A_C_B)`` with ``A_C_B = B_C_A^-1``."""
    A = Ad_inv(B_C_A)
    return A.T @ M @ A


def inertia_parameters(M: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Inverse of :func:`spatial_inertia`: ``(mass, com, inertia about the COM)``."""
    m = M[3, 3]
    c = vee(M[:3, 3:]) / m if m > 0 else np.zeros(3)
    C = hat(c)
    return m, c, M[:3, :3] + m * C @ C
