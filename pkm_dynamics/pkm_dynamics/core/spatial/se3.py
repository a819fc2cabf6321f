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

import math

import numpy as np

from .scalar_forms import (AD_POSE_FLAT, SO3_SERIES_TH2, Ad_inv_rows, ad_inv_pose_entries,  # noqa: F401
                           bracket_list, exp_se3_rows, so3_coefficients, wrench_bias_list)
from .so3 import _left_jacobian_so3, _rotation, exp_so3, hat, log_so3, vee  # noqa: F401 (importable from here)


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
    Rt = C[:3, :3].T
    out = np.zeros((4, 4))
    out[:3, :3] = Rt
    out[:3, 3] = -Rt @ C[:3, 3]
    out[3, 3] = 1.0
    return out


def exp_se3(X: np.ndarray, q: float = 1.0) -> np.ndarray:
    """Closed-form exponential ``exp(q [X])`` (4, 4) of the screw ``X = (omega, v)`` (6,)
    (:func:`exp_se3_rows`)."""
    a, b, c, d, e, f = (np.asarray(X, dtype=float) * q).tolist()
    th2 = a * a + b * b + c * c
    r0, r1, r2 = exp_se3_rows(a, b, c, d, e, f, th2, *so3_coefficients(th2))
    return np.array([r0, r1, r2, (0.0, 0.0, 0.0, 1.0)])


def Ad_inv_exp(X: np.ndarray, q: float) -> np.ndarray:
    """``Ad_inv(exp_se3(X, q))`` (6, 6), written out for a joint screw: a unit rotation
    ``X = (e, 0)`` gives ``blockdiag(R^T, R^T)`` with ``R = exp(e q)``, a unit translation
    ``X = (0, e)`` gives ``[[I, 0], [-[e q]x, I]]``; any other screw takes the generic path."""
    a, b, c, d, e, f = np.asarray(X, dtype=float).tolist()
    out = np.zeros((6, 6))
    if d == e == f == 0.0 and abs(a * a + b * b + c * c - 1.0) < 1e-12:
        Rt = _rotation(a, b, c, -math.sin(q), 1.0 - math.cos(q), 1.0)      # exp(-e q) = R^T
        out[:3, :3] = Rt
        out[3:, 3:] = Rt
    elif a == b == c == 0.0 and abs(d * d + e * e + f * f - 1.0) < 1e-12:
        x, y, z = d * q, e * q, f * q
        out[3:, :3] = [[0.0, z, -y], [-z, 0.0, x], [y, -x, 0.0]]           # -[p]x
        out[0, 0] = out[1, 1] = out[2, 2] = out[3, 3] = out[4, 4] = out[5, 5] = 1.0
    else:
        return Ad_inv(exp_se3(X, q))
    return out


def log_se3(C: np.ndarray) -> np.ndarray:
    """Closed-form logarithm: the twist ``X`` with ``exp_se3(X) = C`` (rotation angle < pi)."""
    w = log_so3(C[:3, :3])
    v = np.linalg.solve(_left_jacobian_so3(w), C[:3, 3])
    return np.concatenate([w, v])


def Ad(C: np.ndarray) -> np.ndarray:
    """Adjoint ``Ad_C = [[R, 0], [[p]x R, R]]``: ``V_A = Ad(A_C_B) V_B`` for twists
    (column ``j`` of ``[p]x R`` is ``p x R e_j``)."""
    (r00, r01, r02, x), (r10, r11, r12, y), (r20, r21, r22, z) = C[:3].tolist()
    return np.array([
        [r00, r01, r02, 0.0, 0.0, 0.0],
        [r10, r11, r12, 0.0, 0.0, 0.0],
        [r20, r21, r22, 0.0, 0.0, 0.0],
        [y * r20 - z * r10, y * r21 - z * r11, y * r22 - z * r12, r00, r01, r02],
        [z * r00 - x * r20, z * r01 - x * r21, z * r02 - x * r22, r10, r11, r12],
        [x * r10 - y * r00, x * r11 - y * r01, x * r12 - y * r02, r20, r21, r22],
    ])


def Ad_inv(C: np.ndarray) -> np.ndarray:
    """``Ad(C)^-1 = Ad(C^-1) = [[R^T, 0], [[u]x R^T, R^T]]`` with ``u = -R^T p`` (the
    translation of ``C^-1``), without inverting a 6x6 matrix (:func:`Ad_inv_rows`)."""
    return np.array(Ad_inv_rows(*C[:3].ravel().tolist()))


def ad(X: np.ndarray) -> np.ndarray:
    """Lie bracket matrix ``ad_X = [[[w]x, 0], [[v]x, [w]x]]``, ``[X, Y] = ad(X) Y``."""
    a, b, c, d, e, f = np.asarray(X, dtype=float).tolist()
    return np.array([
        [0.0, -c, b, 0.0, 0.0, 0.0],
        [c, 0.0, -a, 0.0, 0.0, 0.0],
        [-b, a, 0.0, 0.0, 0.0, 0.0],
        [0.0, -f, e, 0.0, -c, b],
        [f, 0.0, -d, c, 0.0, -a],
        [-e, d, 0.0, -b, a, 0.0],
    ])


def bracket(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Lie bracket ``[X, Y] = ad(X) Y = (w x w_Y, v x w_Y + w x v_Y)`` of two twists, without
    forming ``ad(X)``."""
    return np.array(bracket_list(np.asarray(X, dtype=float).tolist(),
                                 np.asarray(Y, dtype=float).tolist()))


def ad_star(X: np.ndarray) -> np.ndarray:
    """Co-adjoint ``ad*_X = ad_X^T`` acting on wrenches."""
    return ad(X).T


def dexp(X: np.ndarray) -> np.ndarray:
    """``dexp_X = sum_k ad_X^k / (k+1)!`` (6, 6), the derivative of the exponential: the
    body-fixed twist of ``exp(X(t))`` is ``dexp_{-X} Xdot``.  The series (an entire function of
    ``ad_X``) is summed until its terms fall below round-off (at most 60 terms: ``|X|`` up to
    ~20, far beyond any task coordinate)."""
    A = ad(X)
    term = np.eye(6)
    out = np.eye(6)
    for k in range(1, 61):
        term = term @ A / (k + 1)
        out += term
        if np.abs(term).max() < 1e-17:
            break
    return out


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


# ---------------------------------------------------------------------------------------
# Batched forms: the same maps over stacks, leading axes (...) broadcast
# ---------------------------------------------------------------------------------------


def hat_batch(w: np.ndarray) -> np.ndarray:
    """:func:`hat` of stacks of 3-vectors (..., 3) -> (..., 3, 3)."""
    out = np.zeros(w.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -w[..., 2], w[..., 1]
    out[..., 1, 0], out[..., 1, 2] = w[..., 2], -w[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -w[..., 1], w[..., 0]
    return out


_CYC1, _CYC2 = np.array([1, 2, 0]), np.array([2, 0, 1])


def cross_batch(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product of stacks of 3-vectors (..., 3), ``a_(i+1) b_(i+2) - a_(i+2) b_(i+1)``,
    without numpy.cross's axis handling."""
    return (a.take(_CYC1, axis=-1) * b.take(_CYC2, axis=-1)
            - a.take(_CYC2, axis=-1) * b.take(_CYC1, axis=-1))


def mv_batch(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Stacked matrix-vector product ``A @ x`` (..., m, n) x (..., n) -> (..., m)."""
    return np.einsum("...ij,...j->...i", A, x)


def ad_batch(X: np.ndarray) -> np.ndarray:
    """:func:`ad` of stacks of twists (..., 6) -> (..., 6, 6)."""
    out = np.zeros(X.shape[:-1] + (6, 6))
    W = hat_batch(X[..., :3])
    out[..., :3, :3] = W
    out[..., 3:, 3:] = W
    out[..., 3:, :3] = hat_batch(X[..., 3:])
    return out


def Ad_batch(C: np.ndarray) -> np.ndarray:
    """:func:`Ad` of stacks of poses (..., 4, 4) -> (..., 6, 6)."""
    R = C[..., :3, :3]
    out = np.zeros(C.shape[:-2] + (6, 6))
    out[..., :3, :3] = R
    out[..., 3:, 3:] = R
    out[..., 3:, :3] = hat_batch(C[..., :3, 3]) @ R
    return out


def Ad_inv_batch(C: np.ndarray) -> np.ndarray:
    """:func:`Ad_inv` of stacks of poses (..., 4, 4) -> (..., 6, 6)."""
    Rt = np.swapaxes(C[..., :3, :3], -1, -2)
    out = np.zeros(C.shape[:-2] + (6, 6))
    out[..., :3, :3] = Rt
    out[..., 3:, 3:] = Rt
    out[..., 3:, :3] = -Rt @ hat_batch(C[..., :3, 3])
    return out


def pose_inv_batch(C: np.ndarray) -> np.ndarray:
    """:func:`pose_inv` of stacks of poses (..., 4, 4)."""
    Rt = np.swapaxes(C[..., :3, :3], -1, -2)
    out = np.zeros(C.shape)
    out[..., :3, :3] = Rt
    out[..., :3, 3] = -mv_batch(Rt, C[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def exp_se3_batch(X: np.ndarray) -> np.ndarray:
    """:func:`exp_se3` of stacks of twists (..., 6) -> (..., 4, 4), with the coefficients and
    the small-angle series of :func:`so3_coefficients` (the same threshold and terms)."""
    w, v = X[..., :3], X[..., 3:]
    th2 = np.einsum("...i,...i->...", w, w)[..., None, None]
    small = th2 < SO3_SERIES_TH2
    t = np.sqrt(np.where(small, 1.0, th2))
    s, h = np.sin(t), np.sin(0.5 * t) / t
    A = np.where(small, 1.0 - th2 / 6.0, s / t)
    B = np.where(small, 0.5 - th2 / 24.0, 2.0 * h * h)
    C = np.where(small, 1.0 / 6.0 - th2 / 120.0, (t - s) / (t * t * t))
    W = hat_batch(w)
    W2 = W @ W
    out = np.zeros(X.shape[:-1] + (4, 4))
    out[..., :3, :3] = A * W + B * W2
    out[..., :3, 3] = v + ((B * W + C * W2) @ v[..., None])[..., 0]
    out[..., 0, 0] += 1.0
    out[..., 1, 1] += 1.0
    out[..., 2, 2] += 1.0
    out[..., 3, 3] = 1.0
    return out


def exp_unit_screws_batch(th: np.ndarray, X: np.ndarray, W: np.ndarray, W2: np.ndarray,
                          Wv: np.ndarray | None = None, W2v: np.ndarray | None = None) -> np.ndarray:
    """``exp([X] th)`` (..., 4, 4) of stacks of joint screws ``X`` (..., 6) with unit rotation
    axis (revolute) or zero rotation (prismatic) at the joint values ``th`` (...):
    ``R = I + sin W + (1 - cos) W^2``, ``p = th v + (1 - cos) W v + (th - sin) W^2 v``, from the
    constant ``W = [w]x`` (..., 3, 3), ``W2 = W W`` and (computed when not given) ``Wv = W v``,
    ``W2v = W2 v`` (..., 3): the joints' data is precomputed once, the inner loops of the IK
    only scale it (|th| <= 1e3 rad: ``th - sin th`` has no cancellation that matters here,
    since it multiplies ``W^2 v`` and its absolute error is eps |th|)."""
    v = X[..., 3:]
    Wv = mv_batch(W, v) if Wv is None else Wv
    W2v = mv_batch(W2, v) if W2v is None else W2v
    s, c = np.sin(th), np.cos(th)
    T = np.zeros(th.shape + (4, 4))
    T[..., :3, :3] = s[..., None, None] * W + (1.0 - c)[..., None, None] * W2
    T[..., 0, 0] += 1.0
    T[..., 1, 1] += 1.0
    T[..., 2, 2] += 1.0
    T[..., :3, 3] = th[..., None] * v + (1.0 - c)[..., None] * Wv + (th - s)[..., None] * W2v
    T[..., 3, 3] = 1.0
    return T


def log_se3_batch(C: np.ndarray) -> np.ndarray:
    """:func:`log_se3` of stacks of poses (..., 4, 4) -> (..., 6): the angle by ``atan2`` as in
    :func:`log_so3`, ``v`` by the inverse left Jacobian
    ``I - W/2 + (1/th^2 - cot(th/2) / (2 th)) W^2``; rotation angles from 2 rad on, where
    ``th / sin th`` amplifies round-off, row by row with :func:`log_se3`."""
    R = C[..., :3, :3]
    s = 0.5 * np.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0],
                        R[..., 1, 0] - R[..., 0, 1]], axis=-1)     # sin(th) axis
    cth = 0.5 * (np.trace(R, axis1=-2, axis2=-1) - 1.0)            # cos(th)
    th = np.arctan2(np.sqrt(np.einsum("...i,...i->...", s, s)), cth)[..., None]
    small = th < 1e-3
    t = np.where(small, 1.0, th)
    w = s * np.where(small, 1.0 + th * th / 6.0, t / np.sin(t))
    k = np.where(small, 1.0 / 12.0 + th * th / 720.0, 1.0 / (t * t) - 1.0 / (2.0 * t * np.tan(0.5 * t)))[..., None]
    W = hat_batch(w)
    p = C[..., :3, 3, None]
    v = (p - 0.5 * (W @ p) + k * (W @ (W @ p)))[..., 0]
    out = np.concatenate([w, v], axis=-1)
    far = th[..., 0] >= 2.0
    if np.any(far):
        out[far] = [log_se3(Ck) for Ck in C[far]]
    return out
