"""Spatial algebra on SO(3), the rotation part of :mod:`.se3` (whose conventions hold here):
``hat`` / ``vee``, the coefficients of Rodrigues' formula and their small-angle series, ``exp``
and ``log`` (names importable from :mod:`.se3` as well).  Every function takes and returns plain
numpy arrays."""
from __future__ import annotations

import math

import numpy as np

from .scalar_forms import SO3_SERIES_TH2, so3_coefficients  # noqa: F401 (importable from here)


def hat(w: np.ndarray) -> np.ndarray:
    """Skew-symmetric 3x3 matrix ``[w]x`` with ``[w]x u = w x u``."""
    out = np.zeros((3, 3))
    out[0, 1], out[0, 2] = -w[2], w[1]
    out[1, 0], out[1, 2] = w[2], -w[0]
    out[2, 0], out[2, 1] = -w[1], w[0]
    return out


def vee(W: np.ndarray) -> np.ndarray:
    """Inverse of :func:`hat`."""
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


def _rotation(a: float, b: float, c: float, A: float, B: float, th2: float) -> np.ndarray:
    """``I + A [w]x + B [w]x^2`` for ``w = (a, b, c)`` (``[w]x^2 = w w^T - th^2 I``)."""
    return np.array([
        [1.0 + B * (a * a - th2), B * a * b - A * c, B * a * c + A * b],
        [B * a * b + A * c, 1.0 + B * (b * b - th2), B * b * c - A * a],
        [B * a * c - A * b, B * b * c + A * a, 1.0 + B * (c * c - th2)],
    ])


def exp_so3(w: np.ndarray) -> np.ndarray:
    """Rodrigues' formula: rotation matrix of the rotation vector ``w``."""
    a, b, c = np.asarray(w, dtype=float).tolist()
    th2 = a * a + b * b + c * c
    A, B, _ = so3_coefficients(th2)
    return _rotation(a, b, c, A, B, th2)


def log_so3(R: np.ndarray) -> np.ndarray:
    """Rotation vector of ``R`` (inverse of :func:`exp_so3`), angle in [0, pi].

    With ``s = vee(R - R^T) / 2 = sin(th) n`` and ``cos th = (tr R - 1) / 2``, the angle is
    ``th = atan2(|s|, cos th)`` (accurate at every angle, unlike ``arccos`` near 0 and pi).
    Up to ``th = 2`` the vector is ``s th / sin th`` (its series below ``th = 1e-4``); beyond,
    where ``1 / sin th`` would amplify the round-off of ``s``, the axis ``n`` comes from the
    symmetric part ``(R + R^T) / 2 - cos(th) I = (1 - cos th) n n^T`` (its largest column),
    its sign from ``s``."""
    s = 0.5 * vee(R - R.T)
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    sn = math.sqrt(float(s @ s))
    th = math.atan2(sn, c)
    if th < 1e-4:
        return s * (1.0 + th * th / 6.0)            # th / sin th; next term 7 th^4 / 360
    if th < 2.0:
        return s * (th / sn)
    B = 0.5 * (R + R.T) - c * np.eye(3)
    k = int(np.argmax(np.diag(B)))
    axis = B[:, k] / np.linalg.norm(B[:, k])
    if axis @ s < 0.0:
        axis = -axis
    return th * axis


def _left_jacobian_so3(w: np.ndarray) -> np.ndarray:
    a, b, c = np.asarray(w, dtype=float).tolist()
    th2 = a * a + b * b + c * c
    _, B, C = so3_coefficients(th2)
    return _rotation(a, b, c, B, C, th2)
