"""Recursive dynamics of the spanning tree in the Lie-group (POE) notation of papers 001/002.

Body ``i`` moves relative to its predecessor ``p = parent[i]`` by ``P_i = B_i exp(X_i q_i)``.
Body-fixed twists and accelerations follow the forward recursion (paper 001 eqs. 5-10, in
recursive form; paper 002 Sec. V-A)::

    V_i    = Ad(P_i)^-1 V_p + X_i qd_i
    Vdot_i = Ad(P_i)^-1 Vdot_p + ad(V_i) X_i qd_i + X_i qdd_i

and the Newton-Euler backward recursion ``W_i = M_i Vdot_i - ad(V_i)^T M_i V_i - W_ext_i +
sum_c Ad(P_c)^-T W_c``, ``tau_i = X_i^T W_i``.  Gravity enters as the base acceleration
``Vdot_0 = (0, -g)`` (``g`` in root-link coordinates).  External wrenches ``f_ext`` are body-fixed
wrenches (moment, force) acting on each body, expressed in its frame, shape ``(n, 6)``.

All functions take one state (``q`` of shape ``(n,)``); :func:`batched` evaluates a trajectory
(leading axis) with any of them.
"""
from __future__ import annotations

import numpy as np

from ..bounds import check_tree_vector as _check
from ..spatial.se3 import Ad, Ad_inv, ad, bracket, exp_se3
from .tree_model import TreeModel


def relative_poses(model: TreeModel, q) -> np.ndarray:
    """``P_i = B_i exp(X_i q_i)``: pose of each body in its predecessor's frame, ``(n, 4, 4)``."""
    q = _check(model, "q", q)
    return np.array([model.B[i] @ exp_se3(model.X[i], q[i]) for i in range(model.nq)]).reshape(-1, 4, 4)


def forward_kinematics(model: TreeModel, q) -> np.ndarray:
    """Absolute poses ``C_i`` (root-link frame <- body ``i``), shape ``(n, 4, 4)`` (paper 001 eq. 3)."""
    P = relative_poses(model, q)
    C = np.empty_like(P)
    for i in range(model.nq):
        p = model.parent[i]
        C[i] = P[i] if p < 0 else C[p] @ P[i]
    return C


def frame_pose(model: TreeModel, q, link: str) -> np.ndarray:
    """Pose of a URDF link frame in the root-link frame (4x4)."""
    body, offset = model.frame(link)
    if body < 0:
        return offset.copy()
    return forward_kinematics(model, q)[body] @ offset


def relative_adjoints(P: np.ndarray) -> np.ndarray:
    """``Ad(P_i)^-1`` (n, 6, 6) of the relative poses ``P`` (:func:`relative_poses`): the maps
    of twists from each body's predecessor to the body."""
    return np.array([Ad_inv(Pi) for Pi in P]).reshape(-1, 6, 6)


def kinematics(model: TreeModel, q, qd, qdd=None, base_acceleration=None, poses=None):
    """Forward recursion: ``(P, C, V, Vdot)`` with relative poses ``P``, absolute poses ``C``,
    body-fixed twists ``V`` and accelerations ``Vdot`` (``(n, 6)``).  ``base_acceleration`` is
    the 6-vector ``Vdot_0`` (default zero: no gravity).  ``poses``: ``(P, Ad(P)^-1)`` at ``q``
    if already known (:func:`relative_poses`, :func:`relative_adjoints`)."""
    return _kinematics(model, q, qd, qdd, base_acceleration, poses)[:4]


def _kinematics(model: TreeModel, q, qd, qdd=None, base_acceleration=None, poses=None):
    """:func:`kinematics` plus the adjoints ``Ad(P_i)^-1`` (n, 6, 6) the backward passes reuse."""
    q = _check(model, "q", q)
    qd = _check(model, "qd", qd)
    qdd = np.zeros(model.nq) if qdd is None else _check(model, "qdd", qdd)
    a0 = np.zeros(6) if base_acceleration is None else np.asarray(base_acceleration, dtype=float)
    n = model.nq
    if poses is None:
        P = relative_poses(model, q)
        Ad_P = relative_adjoints(P)
    else:
        P, Ad_P = poses
    C = np.empty((n, 4, 4))
    V = np.zeros((n, 6))
    A = np.zeros((n, 6))
    for i in range(n):
        p = model.parent[i]
        Ai = Ad_P[i]
        X = model.X[i]
        if p < 0:
            C[i] = P[i]
            V[i] = X * qd[i]
            A[i] = Ai @ a0 + X * qdd[i]
        else:
            C[i] = C[p] @ P[i]
            V[i] = Ai @ V[p] + X * qd[i]
            A[i] = Ai @ A[p] + bracket(V[i], X) * qd[i] + X * qdd[i]     # ad(V_i) X_i qd_i
    return P, C, V, A, Ad_P


def _gravity_acceleration(model: TreeModel, gravity) -> np.ndarray:
    g = model.gravity if gravity is None else np.asarray(gravity, dtype=float).reshape(3)
    return np.concatenate([np.zeros(3), -g])


def rnea(model: TreeModel, q, qd, qdd, gravity=None, f_ext=None, poses=None) -> np.ndarray:
    """Inverse dynamics (recursive Newton-Euler): generalized forces ``tau`` (n,) for the tree,
    ``tau_i = X_i^T W_i`` with the joint wrenches of :func:`body_wrenches`.  ``poses``: as in
    :func:`kinematics`."""
    W = body_wrenches(model, q, qd, qdd, gravity, f_ext, poses)
    return np.einsum("ni,ni->n", np.asarray(model.X).reshape(-1, 6), W)


def body_wrenches(model: TreeModel, q, qd, qdd, gravity=None, f_ext=None, poses=None) -> np.ndarray:
    """Wrench each body receives through its joint from its predecessor (body frame), ``(n, 6)``:
    the backward recursion of :func:`rnea` before projection on the joint screws.  ``poses``: as
    in :func:`kinematics`."""
    _, _, V, A, Ad_P = _kinematics(model, q, qd, qdd, _gravity_acceleration(model, gravity), poses)
    n = model.nq
    W = np.einsum("nij,nj->ni", model.M, A)
    for i in range(n):
        W[i] -= ad(V[i]).T @ (model.M[i] @ V[i])
    if f_ext is not None:
        W -= np.asarray(f_ext, dtype=float).reshape(n, 6)
    for i in range(n - 1, -1, -1):
        p = model.parent[i]
        if p >= 0:
            W[p] += Ad_P[i].T @ W[i]
    return W


def crba(model: TreeModel, q, poses=None) -> np.ndarray:
    """Joint-space mass matrix (composite rigid-body algorithm), ``(n, n)``.  ``poses``: as in
    :func:`kinematics`."""
    n = model.nq
    Ad_P = relative_adjoints(relative_poses(model, q)) if poses is None else poses[1]
    Ic = model.M.copy()
    H = np.zeros((n, n))
    for i in range(n - 1, -1, -1):
        p = model.parent[i]
        Ai = Ad_P[i]
        if p >= 0:
            Ic[p] += Ai.T @ Ic[i] @ Ai
        F = Ic[i] @ model.X[i]
        H[i, i] = model.X[i] @ F
        j = i
        while model.parent[j] >= 0:
            F = Ad_P[j].T @ F
            j = model.parent[j]
            H[i, j] = H[j, i] = model.X[j] @ F
    return H


def aba(model: TreeModel, q, qd, tau, gravity=None, f_ext=None) -> np.ndarray:
    """Forward dynamics (articulated-body algorithm): ``qdd`` (n,) for generalized forces ``tau``."""
    _, _, V, _, Ad_P = _kinematics(model, q, qd)
    qd = np.asarray(qd, dtype=float)
    tau = _check(model, "tau", tau)
    n = model.nq
    X = model.X
    IA = model.M.copy()
    pA = np.empty((n, 6))
    c = np.empty((n, 6))
    for i in range(n):
        pA[i] = -ad(V[i]).T @ (model.M[i] @ V[i])
        c[i] = bracket(V[i], X[i]) * qd[i]                    # ad(V_i) X_i qd_i
    if f_ext is not None:
        pA -= np.asarray(f_ext, dtype=float).reshape(n, 6)
    U = np.empty((n, 6))
    D = np.empty(n)
    u = np.empty(n)
    for i in range(n - 1, -1, -1):
        U[i] = IA[i] @ X[i]
        D[i] = X[i] @ U[i]
        u[i] = tau[i] - X[i] @ pA[i]
        p = model.parent[i]
        if p >= 0:
            Ia = IA[i] - np.outer(U[i], U[i]) / D[i]
            pa = pA[i] + Ia @ c[i] + U[i] * (u[i] / D[i])
            Ai = Ad_P[i]
            IA[p] += Ai.T @ Ia @ Ai
            pA[p] += Ai.T @ pa
    a0 = _gravity_acceleration(model, gravity)
    A = np.empty((n, 6))
    qdd = np.empty(n)
    for i in range(n):
        p = model.parent[i]
        a = Ad_P[i] @ (a0 if p < 0 else A[p]) + c[i]
        qdd[i] = (u[i] - U[i] @ a) / D[i]
        A[i] = a + X[i] * qdd[i]
    return qdd


def frame_jacobian(model: TreeModel, q, link: str, offset=None) -> np.ndarray:
    """Body-fixed geometric Jacobian ``J`` (6, n) of a frame: ``V_F = J qd`` (paper 001 eq. 5).

    The frame is the URDF link ``link`` (times the optional 4x4 ``offset`` in that link)."""
    body, O = model.frame(link)
    if offset is not None:
        O = O @ offset
    return body_jacobian(model, forward_kinematics(model, q), body, O)


def body_jacobian(model: TreeModel, C: np.ndarray, body: int, offset=None) -> np.ndarray:
    """Jacobian (6, n) of the frame ``C[body] @ offset`` from absolute poses ``C``."""
    J = np.zeros((6, model.nq))
    if body < 0:
        return J
    F = C[body] if offset is None else C[body] @ offset
    AF = Ad_inv(F)
    for j in model.support(body):
        J[:, j] = AF @ (Ad(C[j]) @ model.X[j])
    return J


def batched(fn, model: TreeModel, *arrays, **kwargs) -> np.ndarray:
    """Evaluate ``fn(model, *state)`` for one state or for each row of a batch.

    ``arrays`` are per-state arrays; when the first has one more axis than a single state of
    ``fn`` expects (a leading time/batch axis), ``fn`` runs once per row and the results are
    stacked."""
    first = np.asarray(arrays[0])
    if first.ndim <= 1:
        return fn(model, *arrays, **kwargs)
    return np.stack([fn(model, *row, **kwargs) for row in zip(*arrays)])
