"""Position-level kinematics of a limb tree, fast (the inner loops of Algorithms 1-3 of paper
001), and the time derivative of its body Jacobians (paper 002 eq. 23).

:class:`LimbScrews` holds the constant per-joint data of the closed-form exponentials of the
limb tree's unit joint screws; :func:`limb_state` gives ``(C, Y, [(g, G) per FC])`` at
``theta`` -- the absolute poses, the spatial screws and each loop's cut-joint residuals and
Jacobians (eqs. 12-13, App. A), the position-level data of one Newton step;
:func:`limb_platform_pose` the platform pose ``psi_p(theta)`` (eq. 4).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..tree.cut_joints import CutJointGeometry
from ..errors import DescriptionError
from ..spatial.se3 import Ad, Ad_inv, ad, cross_batch, exp_unit_screws_batch, hat, pose_inv
from ..tree.tree_model import TreeModel
from ..tree.tree_dynamics import body_jacobian, forward_kinematics, kinematics
from .limb_types import LimbScrews

if TYPE_CHECKING:
    from .limb_types import Limb


def limb_screws(tree: TreeModel) -> LimbScrews:
    X = tree.X
    w = X[:, :3]
    rev = np.linalg.norm(w, axis=1) > 0.5
    if np.any(np.abs(np.linalg.norm(w[rev], axis=1) - 1.0) > 1e-9):
        raise DescriptionError(f"{tree.name}: joint screws must have unit rotation axes")
    W = np.array([hat(x) for x in w]).reshape(-1, 3, 3)
    W2 = W @ W
    v = X[:, 3:]
    supports = tuple(np.array(tree.support(i), dtype=int) for i in range(tree.nq))
    mask = np.zeros((tree.nq, tree.nq))
    for i, S in enumerate(supports):
        mask[i, S] = 1.0
    return LimbScrews(tuple(int(p) for p in tree.parent), tree.B.copy(), X.copy(), W, W2,
                           np.einsum("nij,nj->ni", W, v), np.einsum("nij,nj->ni", W2, v), rev,
                           supports, mask)


_I4 = np.eye(4)     # pose of the fixed base (read only)
_I4.setflags(write=False)


def _fk(kin: LimbScrews, theta) -> tuple:
    """Absolute poses ``C`` (n, 4, 4) and spatial screws ``Y = Ad(C_i) X_i`` (n, 6)."""
    th = np.asarray(theta, dtype=float)
    P = kin.B @ exp_unit_screws_batch(th, kin.X, kin.W, kin.W2, kin.Wv, kin.W2v)
    C = np.empty_like(P)
    for i, p in enumerate(kin.parent):
        C[i] = P[i] if p < 0 else C[p] @ P[i]
    R = C[:, :3, :3]
    ws = np.einsum("nij,nj->ni", R, kin.X[:, :3])
    vs = np.einsum("nij,nj->ni", R, kin.X[:, 3:]) + cross_batch(C[:, :3, 3], ws)
    return C, np.concatenate([ws, vs], axis=1)


def _spatial_to_body(C, Y, kin, body, offset=None):
    """Body-fixed Jacobian (6, n) of ``C[body] @ offset`` from spatial screws ``Y``."""
    J = np.zeros((6, len(Y)))
    if body < 0:
        return J
    F = C[body] if offset is None else C[body] @ offset
    S = kin.supports[body]
    J[:, S] = Ad_inv(F) @ Y[S].T
    return J


def _cut_eval(geo: CutJointGeometry, C, Y, kin):
    """Residual (m,) and Jacobian (m, n) of one cut joint (paper 001 eqs. 50-51, 55-56, 58-59),
    from the spatial screws: ``G = B (Ad(C_k)^-1 Y_Sk ; Ad(C_r)^-1 Y_Sr)``."""
    k, r = geo.body_k, geo.body_r
    Ck = _I4 if k < 0 else C[k]
    Cr = _I4 if r < 0 else C[r]
    Rk, Rr = Ck[:3, :3], Cr[:3, :3]
    R_kr = Rk.T @ Rr
    dd = Rk.T @ (Cr[:3, 3] - Ck[:3, 3]) + R_kr @ geo.d_r
    w = geo.u_b @ R_kr.T
    g = np.concatenate([geo.u_pos @ (dd - geo.d_k), np.einsum("ij,ij->i", geo.u_a, w)])
    m = len(g)
    Bk = np.zeros((m, 6))
    Br = np.zeros((m, 6))
    npos = len(geo.u_pos)
    if npos:
        Bk[:npos, :3] = geo.u_pos @ hat(dd)
        Bk[:npos, 3:] = -geo.u_pos
        uR = geo.u_pos @ R_kr
        Br[:npos, :3] = -uR @ hat(geo.d_r)
        Br[:npos, 3:] = uR
    if len(geo.u_a):
        Bk[npos:, :3] = cross_batch(geo.u_a, w)                  # u_a^T [R_kr u_b]x
        Br[npos:, :3] = -cross_batch(geo.u_a @ R_kr, geo.u_b)     # -u_a^T R_kr [u_b]x
    # columns of the joints supporting body k (r): Ad(C_k)^-1 Y_Sk, zero elsewhere
    G = (Bk @ Ad_inv(Ck)) @ (Y.T * kin.support_mask[k]) if k >= 0 else np.zeros((m, len(Y)))
    if r >= 0:
        G += (Br @ Ad_inv(Cr)) @ (Y.T * kin.support_mask[r])
    return g, G


def limb_state(limb: Limb, theta):
    """``(C, Y, [(g, G) per FC])`` at ``theta``: the position-level data of one Newton step."""
    kin = limb.kin if limb.kin is not None else limb_screws(limb.tree)
    C, Y = _fk(kin, theta)
    cons = []
    for lp in limb.loops:
        parts = [_cut_eval(geo, C, Y, kin) for geo in lp.cuts]
        if len(parts) == 1:
            cons.append((parts[0][0], parts[0][1], None))
        else:
            cons.append((np.concatenate([p[0] for p in parts]), np.vstack([p[1] for p in parts]), None))
    return C, Y, cons



def limb_platform_pose(limb: Limb, theta, C=None) -> np.ndarray:
    """``C_p = psi_p(theta)`` (4x4), pose of the platform frame (eq. 4)."""
    if C is None:
        C = _fk(limb.kin, theta)[0] if limb.kin is not None else forward_kinematics(limb.tree, theta)
    return C[limb.platform_body] @ limb.platform_offset



def body_jacobian_derivative(tree: TreeModel, C, V, body: int) -> np.ndarray:
    """``Jdot`` (6, n) of the body-fixed Jacobian of ``body``: column ``j`` is
    ``-ad(V_k - Ad(C_kj) V_j) Ad(C_kj) X_j`` (paper 002 Lemma 1, eq. 23, body-fixed form)."""
    Jd = np.zeros((6, tree.nq))
    if body < 0:
        return Jd
    Ck_inv = pose_inv(C[body])
    for j in tree.support(body):
        A = Ad(Ck_inv @ C[j])
        Jd[:, j] = -ad(V[body] - A @ V[j]) @ (A @ tree.X[j])
    return Jd



def tree_coriolis_matrix(tree: TreeModel, theta, thetad) -> np.ndarray:
    """Coriolis/centrifugal matrix ``C`` (n, n) of a tree with ``C thetad`` the velocity terms
    of the RNEA: ``C = sum_i J_i^T (M_i Jdot_i - ad(V_i)^T M_i J_i)`` (Lie-group closed form,
    paper 001 ref. [24]; ``Jdot_i`` from paper 002 eq. 23)."""
    _, C, V, _ = kinematics(tree, theta, thetad)
    out = np.zeros((tree.nq, tree.nq))
    for i in range(tree.nq):
        if not np.any(tree.M[i]):
            continue
        J = body_jacobian(tree, C, i)
        Jd = body_jacobian_derivative(tree, C, V, i)
        out += J.T @ (tree.M[i] @ Jd - ad(V[i]).T @ tree.M[i] @ J)
    return out
