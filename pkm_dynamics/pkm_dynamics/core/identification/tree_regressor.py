"""The regressor of the spanning tree: ``tau = Y_tree(q, qd, qdd) pi`` (Atkeson, An and
Hollerbach 1986; Featherstone, *Rigid Body Dynamics Algorithms*, Sec. 9.7), batched over
samples, in the notation of :mod:`..tree.tree_dynamics`.

Forward pass (as :func:`..tree.tree_dynamics.kinematics`, gravity as the base acceleration
``Vdot_0 = (0, -g)``)::

    V_i    = Ad(P_i)^-1 V_p + X_i qd_i
    Vdot_i = Ad(P_i)^-1 Vdot_p + ad(V_i) X_i qd_i + X_i qdd_i

Body regressor: the Newton-Euler wrench of body ``i`` is linear in its parameters ``pi_i``
(:mod:`.parameters`, ``M_i = sum_k pi_ik E_k``)::

    W_i = M_i Vdot_i - ad(V_i)^T M_i V_i = A_i pi_i,
    A_i = K(Vdot_i) - ad(V_i)^T K(V_i)      (6, 10),    K(a) pi = M(pi) a

with, for ``a = (alpha, beta)`` (angular, linear), ``K(a) = [[0, -[beta]x, L(alpha)],
[beta, [alpha]x, 0]]`` and ``L(alpha) pi_I = I alpha`` (:func:`body_regressor`).

Backward pass: joint ``j`` carries the wrenches of every body ``i`` of its subtree, carried to
its frame by ``Ad(P)^-T`` along the path (as :func:`..tree.tree_dynamics.body_wrenches`)::

    Y_tree[j, 10 i : 10 i + 10] = X_j^T (Ad(P_j)^-T ... Ad(P_c)^-T) A_i    (i in subtree(j))

and zero elsewhere.  :func:`tree_regressor` runs the compiled kernel
(:mod:`.regressor_kernels`), :func:`reference_tree_regressor` the numpy route (its check).
"""
from __future__ import annotations

import numpy as np

from ..spatial.se3 import Ad_inv_batch, ad_batch, exp_se3_batch, hat_batch


def motion_regressor(a: np.ndarray) -> np.ndarray:
    """``K(a)`` (..., 6, 10) of twists / accelerations ``a`` (..., 6): ``M(pi) a = K(a) pi``."""
    al, be = a[..., :3], a[..., 3:]
    K = np.zeros(a.shape[:-1] + (6, 10))
    K[..., :3, 1:4] = -hat_batch(be)
    K[..., 3:, 0] = be
    K[..., 3:, 1:4] = hat_batch(al)
    x, y, z = al[..., 0], al[..., 1], al[..., 2]
    K[..., 0, 4], K[..., 0, 5], K[..., 0, 7] = x, y, z          # I_xx, I_xy, I_xz
    K[..., 1, 5], K[..., 1, 6], K[..., 1, 8] = x, y, z          # I_xy, I_yy, I_yz
    K[..., 2, 7], K[..., 2, 8], K[..., 2, 9] = x, y, z          # I_xz, I_yz, I_zz
    return K


def body_regressor(V: np.ndarray, A: np.ndarray) -> np.ndarray:
    """``A_i = K(Vdot) - ad(V)^T K(V)`` (..., 6, 10) (module docstring) of body twists ``V`` and
    accelerations ``A`` (..., 6)."""
    return motion_regressor(A) - np.swapaxes(ad_batch(V), -1, -2) @ motion_regressor(V)


def tree_kinematics(tree, q, qd, qdd, gravity=None):
    """Batched forward pass: ``(Ad(P)^-1 (N, n, 6, 6), V (N, n, 6), Vdot (N, n, 6))`` of the
    tree motion ``q, qd, qdd`` (N, n), gravity in ``Vdot_0`` (module docstring)."""
    N, n = q.shape
    g = tree.gravity if gravity is None else np.asarray(gravity, dtype=float)
    AdP = Ad_inv_batch(tree.B[None] @ exp_se3_batch(tree.X[None] * q[..., None]))
    V, A = np.zeros((N, n, 6)), np.zeros((N, n, 6))
    a0 = np.broadcast_to(np.concatenate([np.zeros(3), -g]), (N, 6))
    for i in range(n):
        p, X = int(tree.parent[i]), tree.X[i]
        Vp, Ap = (np.zeros((N, 6)), a0) if p < 0 else (V[:, p], A[:, p])
        V[:, i] = np.einsum("nij,nj->ni", AdP[:, i], Vp) + X * qd[:, i, None]
        adX = np.einsum("nij,j->ni", ad_batch(V[:, i]), X)
        A[:, i] = np.einsum("nij,nj->ni", AdP[:, i], Ap) + adX * qd[:, i, None] + X * qdd[:, i, None]
    return AdP, V, A


def tree_regressor(tree, q, qd, qdd, gravity=None) -> np.ndarray:
    """``Y_tree`` (N, n, 10 n) with ``rnea(q, qd, qdd) = Y_tree pi`` (module docstring) for a
    batch of tree motions ``q, qd, qdd`` (N, n) (one motion (n,): (n, 10 n)); ``pi`` as in
    :func:`.parameters.robot_parameters`; ``gravity`` (3,) default the tree's.  One call of the
    compiled kernel :func:`.regressor_kernels.tree_regressor_rows` for the whole batch."""
    from ..tree.compiled_tree import gravity_acceleration
    from .regressor_kernels import tree_regressor_rows
    q, qd, qdd = (np.ascontiguousarray(a, dtype=float) for a in (q, qd, qdd))
    single = q.ndim == 1
    q, qd, qdd = (np.atleast_2d(a) for a in (q, qd, qdd))
    ct = tree.compiled
    a0 = ct.a0 if gravity is None else gravity_acceleration(gravity)
    N, n = q.shape
    Y = np.empty((N, n, 10 * n))
    tree_regressor_rows(ct.model, ct.data(), q, qd, qdd, a0, Y, np.empty((6, 10)), np.empty((6, 10)),
                        np.empty((6, 10)))
    return Y[0] if single else Y


def reference_tree_regressor(tree, q, qd, qdd, gravity=None) -> np.ndarray:
    """:func:`tree_regressor` by numpy (batched over samples, loops over bodies): the
    independent route of the compiled kernel."""
    q, qd, qdd = (np.asarray(a, dtype=float) for a in (q, qd, qdd))
    single = q.ndim == 1
    q, qd, qdd = (np.atleast_2d(a) for a in (q, qd, qdd))
    N, n = q.shape
    AdP, V, A = tree_kinematics(tree, q, qd, qdd, gravity)
    Ab = body_regressor(V, A)                                            # (N, n, 6, 10)
    Y = np.zeros((N, n, 10 * n))
    for i in range(n):
        F, j = Ab[:, i], i
        while j >= 0:
            Y[:, j, 10 * i:10 * i + 10] = np.einsum("k,nkc->nc", tree.X[j], F)
            F = np.swapaxes(AdP[:, j], -1, -2) @ F                       # wrench to the parent
            j = int(tree.parent[j])
    return Y[0] if single else Y
