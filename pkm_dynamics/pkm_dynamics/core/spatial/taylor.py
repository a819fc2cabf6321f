"""Truncated Taylor polynomials ("jets") of array-valued functions of time.

A jet of degree ``K`` of ``f(t)`` about ``t0`` is the array ``a`` of shape ``(K+1, *shape)``
holding the normalised Taylor coefficients ``a[k] = f^(k)(t0) / k!``.  Sums, products, matrix
products, ``sin``/``cos`` and the SE(3) operations used by the rigid-body recursions are
propagated exactly (to the degree kept), so that any algorithm written with these operations
returns the exact time derivatives of its output along a motion given by its derivatives.
This is the arithmetic of the *general route* of the higher-order inverse dynamics
(:mod:`.jet_dynamics`); it needs nothing of a robot's structure.

Conventions are those of :mod:`.spatial` (twists ``(omega, v)``, ``Ad``, ``ad``).
"""
from __future__ import annotations

from math import factorial

import numpy as np

#: ``[w]x`` and ``ad_X`` are linear: the jet of each is the batched form of :mod:`.spatial` applied
#: to the coefficients, shapes ``(K+1, 3)`` -> ``(K+1, 3, 3)`` and ``(K+1, 6)`` -> ``(K+1, 6, 6)``
from .se3 import ad_batch as ad  # noqa: F401
from .se3 import hat_batch as hat


def from_derivatives(derivs) -> np.ndarray:
    """Jet from the derivatives ``(f, f', f'', ...)``: ``a[k] = f^(k) / k!``."""
    return np.stack([np.asarray(d, dtype=float) / factorial(k) for k, d in enumerate(derivs)])


def to_derivatives(a: np.ndarray) -> np.ndarray:
    """Derivatives ``f^(k) = k! a[k]`` of a jet (same shape)."""
    f = np.array([factorial(k) for k in range(a.shape[0])], dtype=float)
    return a * f.reshape((-1,) + (1,) * (a.ndim - 1))


def constant(x, degree: int) -> np.ndarray:
    """Jet of a constant."""
    x = np.asarray(x, dtype=float)
    out = np.zeros((degree + 1,) + x.shape)
    out[0] = x
    return out


def deriv(a: np.ndarray) -> np.ndarray:
    """Jet of ``f'`` (degree one less)."""
    k = np.arange(1, a.shape[0], dtype=float).reshape((-1,) + (1,) * (a.ndim - 1))
    return a[1:] * k


def truncate(a: np.ndarray, degree: int) -> np.ndarray:
    return a[: degree + 1]


def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise (broadcasting) product of two jets (Cauchy product, common degree)."""
    K = min(a.shape[0], b.shape[0])
    out = np.zeros((K,) + np.broadcast_shapes(a.shape[1:], b.shape[1:]))
    for k in range(K):
        for j in range(k + 1):
            out[k] += a[j] * b[k - j]
    return out


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Matrix product of two jets (Cauchy product of ``a[j] @ b[k-j]``)."""
    K = min(a.shape[0], b.shape[0])
    first = a[0] @ b[0]
    out = np.empty((K,) + first.shape)
    out[0] = first
    for k in range(1, K):
        acc = a[0] @ b[k]
        for j in range(1, k + 1):
            acc = acc + a[j] @ b[k - j]
        out[k] = acc
    return out


def cmatmul(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Constant matrix times a jet: ``A @ b[k]`` for every coefficient."""
    return np.stack([A @ bk for bk in b])


def sincos(a: np.ndarray) -> tuple:
    """Jets of ``sin(a)`` and ``cos(a)`` (elementwise), from ``s' = c a'``, ``c' = -s a'``."""
    K = a.shape[0]
    s = np.zeros_like(a)
    c = np.zeros_like(a)
    s[0], c[0] = np.sin(a[0]), np.cos(a[0])
    for k in range(1, K):
        for j in range(1, k + 1):
            s[k] += j * a[j] * c[k - j]
            c[k] -= j * a[j] * s[k - j]
        s[k] /= k
        c[k] /= k
    return s, c


def vee(W: np.ndarray) -> np.ndarray:
    return np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], axis=-1)


def exp_joint(X: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jet of ``exp([X] q(t))`` (4x4) for a constant screw ``X`` (unit rotation axis or pure
    translation) and a scalar jet ``q`` of shape ``(K+1,)``."""
    K1 = q.shape[0]
    w, v = np.asarray(X[:3], dtype=float), np.asarray(X[3:], dtype=float)
    out = np.zeros((K1, 4, 4))
    if np.linalg.norm(w) < 1e-12:
        out[0, :3, :3] = np.eye(3)
        out[0, 3, 3] = 1.0
        out[:, :3, 3] = q[:, None] * v[None, :]
        return out
    s, c = sincos(q)
    Wm = hat(w[None])[0]
    W2 = Wm @ Wm
    one_minus_c = -c
    one_minus_c[0] += 1.0
    R = s[:, None, None] * Wm + one_minus_c[:, None, None] * W2
    R[0] += np.eye(3)
    out[:, :3, :3] = R
    wxv = np.cross(w, v)
    I_minus_R = -R
    I_minus_R[0] += np.eye(3)
    out[:, :3, 3] = I_minus_R @ wxv + q[:, None] * (w * (w @ v))[None, :]
    out[0, 3, 3] = 1.0
    return out


def pose_inv(C: np.ndarray) -> np.ndarray:
    """Jet of ``C^-1`` for a jet of poses."""
    Rt = np.swapaxes(C[:, :3, :3], -1, -2)
    out = np.zeros_like(C)
    out[:, :3, :3] = Rt
    out[:, :3, 3] = -matmul(Rt, C[:, :3, 3:4])[..., 0]
    out[0, 3, 3] = 1.0
    return out


def Ad(C: np.ndarray) -> np.ndarray:
    """Jet of ``Ad_C`` (6x6) for a jet of poses."""
    R, p = C[:, :3, :3], C[:, :3, 3]
    out = np.zeros(C.shape[:1] + (6, 6))
    out[:, :3, :3] = R
    out[:, 3:, 3:] = R
    out[:, 3:, :3] = matmul(hat(p), R)
    return out


def Ad_inv(C: np.ndarray) -> np.ndarray:
    """Jet of ``Ad_C^-1 = Ad_{C^-1}``."""
    Rt = np.swapaxes(C[:, :3, :3], -1, -2)
    p = C[:, :3, 3]
    out = np.zeros(C.shape[:1] + (6, 6))
    out[:, :3, :3] = Rt
    out[:, 3:, 3:] = Rt
    out[:, 3:, :3] = -matmul(Rt, hat(p))
    return out


def body_twist(C: np.ndarray) -> np.ndarray:
    """Jet (one degree lower) of the body-fixed twist ``(C^-1 Cdot)^vee`` of a pose jet."""
    Ci = pose_inv(C)[:-1]
    T = matmul(Ci, deriv(C))
    return np.concatenate([vee(T[:, :3, :3]), T[:, :3, 3]], axis=-1)


def solve(A: np.ndarray, b: np.ndarray, A0_pinv: np.ndarray | None = None) -> np.ndarray:
    """Jet of ``y`` with ``A(t) y(t) = b(t)`` for a consistent system whose ``A(t0)`` has full
    column rank (``b`` a vector or matrix jet).  Order by order,
    ``y_k = A_0^+ (b_k - sum_{j>=1} A_j y_{k-j})``, one pseudo-inverse for all orders."""
    K = min(A.shape[0], b.shape[0])
    P = np.linalg.pinv(A[0]) if A0_pinv is None else A0_pinv
    y = [P @ b[0]]
    for k in range(1, K):
        r = b[k].copy()
        for j in range(1, k + 1):
            r = r - A[j] @ y[k - j]
        y.append(P @ r)
    return np.stack(y)
