"""Cut-joint constraints of loop closures (paper 001, Appendix A, eqs. 50-60).

A cut joint joins body ``k`` (the body carrying its parent link) and body ``r`` (child link).
With ``R_kr = R_k^T R_r`` and the reference points ``d_k`` (on k) and ``d_r`` (on r), the
relative translation in frame k is (eq. 50)::

    d = R_k^T (r_r - r_k) + R_kr d_r - d_k

Elementary constraints (all vectors constant in their body frame):

* position (eq. 51): ``g = u_a^T d`` for every prohibited direction ``u_a`` (on k);
* orientation (eq. 58): ``g = u_a^T R_kr u_b`` for a pair of vectors that stay perpendicular.

R, U and S cut joints prohibit all three translations; P and C (cylindrical: a slide along and a
turn about one axis) the two directions normal to their axis.  R and C add two orientation
constraints (the normals of the axis on k against the axis on r), U one (its two axes stay
perpendicular), P three, S none (App. A.2; C follows its pattern: P's position rows with R's
orientation rows, four constraints).

Velocity and acceleration forms (eqs. 52-57, 59-60) in terms of the body-fixed twists
``V = (omega, v)`` of k and r — ``gdot = B (V_k, V_r)`` with (rows ``u_a^T B``)::

    B_pos = [ [d + d_k]x , -1 , -R_kr [d_r]x , R_kr ]                 (eq. 55)
    B_rot = [ [R_kr u_b]x,  0 , -R_kr [u_b]x ,  0   ]                 (eq. 59)

and ``gddot = B (Vdot_k, Vdot_r) + Bdot (V_k, V_r)``; with tree Jacobians ``J_k, J_r``
(paper 001 eq. 6) this gives the constraint Jacobian ``G = B J`` (eq. 13) and the
acceleration bias ``Gdot qd`` (eq. 14) as ``B Vdot|_{qdd=0} + Bdot V``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..description.robot_description import CutJoint, RobotDescription
from ..spatial.se3 import hat
from .tree_model import TreeModel
from .tree_dynamics import body_jacobian, kinematics, forward_kinematics


def _normals(e: np.ndarray) -> np.ndarray:
    """Two unit vectors completing ``e`` to an orthonormal basis, shape (2, 3)."""
    a = np.eye(3)[int(np.argmin(np.abs(e)))]
    n1 = np.cross(e, a)
    n1 /= np.linalg.norm(n1)
    return np.array([n1, np.cross(e, n1)])


@dataclass(frozen=True)
class CutJointGeometry:
    """Constant data of one cut joint, in the frames of the bodies it joins."""

    name: str
    type: str
    body_k: int          # body carrying the parent link (-1: base)
    body_r: int          # body carrying the child link (-1: base)
    d_k: np.ndarray      # reference point on k, in frame k (3,)
    d_r: np.ndarray      # reference point on r, in frame r (3,)
    u_pos: np.ndarray    # prohibited translation directions in frame k (m_pos, 3)
    u_a: np.ndarray      # orientation pairs: vectors on k (m_rot, 3)
    u_b: np.ndarray      # ... and on r (m_rot, 3)

    @property
    def size(self) -> int:
        """Number of constraints ``m_lambda`` (6 minus the cut joint's DOF)."""
        return len(self.u_pos) + len(self.u_a)


def cut_joint_geometry(tree: TreeModel, cut: CutJoint) -> CutJointGeometry:
    """Constant vectors of a cut joint (reference points, constrained directions)."""
    k, Ok = tree.frame(cut.parent_link)
    r, Or = tree.frame(cut.child_link)
    Tk = Ok @ cut.parent_origin
    Tr = Or @ cut.child_origin
    Rk_cut, Rr_cut = Tk[:3, :3], Tr[:3, :3]
    # rotation of the child cut frame relative to the parent one at the zero configuration
    C0 = forward_kinematics(tree, np.zeros(tree.nq))
    Ck = np.eye(4) if k < 0 else C0[k]
    Cr = np.eye(4) if r < 0 else C0[r]
    R_kr0 = Ck[:3, :3].T @ Cr[:3, :3]
    empty = np.zeros((0, 3))
    if cut.type == "prismatic":
        e = Rk_cut @ cut.parent_axis
        u_pos = _normals(e)
        a = Rk_cut  # columns: cut-frame axes in k
        b = R_kr0.T @ a
        u_a = np.array([a[:, 0], a[:, 1], a[:, 2]])
        u_b = np.array([b[:, 1], b[:, 2], b[:, 0]])
    elif cut.type == "cylindrical":
        e = Rk_cut @ cut.parent_axis
        e_r = Rr_cut @ cut.child_axis if cut.child_axis is not None else R_kr0.T @ e
        u_pos = _normals(e)
        u_a = _normals(e)
        u_b = np.array([e_r, e_r])
    else:
        u_pos = np.array(Rk_cut.T)  # rows: cut-frame axes in frame k
        if cut.type == "revolute":
            e = Rk_cut @ cut.parent_axis
            e_r = Rr_cut @ cut.child_axis if cut.child_axis is not None else R_kr0.T @ e
            u_a = _normals(e)
            u_b = np.array([e_r, e_r])
        elif cut.type == "universal":
            u_a = (Rk_cut @ cut.parent_axis)[None, :]
            u_b = (Rr_cut @ cut.child_axis)[None, :]
        else:
            u_a, u_b = empty, empty
    return CutJointGeometry(cut.name, cut.type, k, r, Tk[:3, 3].copy(), Tr[:3, 3].copy(),
                            np.asarray(u_pos, dtype=float).reshape(-1, 3),
                            np.asarray(u_a, dtype=float).reshape(-1, 3),
                            np.asarray(u_b, dtype=float).reshape(-1, 3))


def _body(arr, i, default):
    return default if i < 0 else arr[i]


def _rate_map(geo: CutJointGeometry, C):
    """``R_kr``, ``d + d_k`` (eq. 50), the rows ``R_kr u_b``, ``B_pos`` (3, 12) of eq. 55 and
    the map ``B`` (m, 12) of eqs. 55, 59 (rows ``u^T B``) at the absolute body poses ``C``."""
    Ck, Cr = _body(C, geo.body_k, np.eye(4)), _body(C, geo.body_r, np.eye(4))
    R_kr = Ck[:3, :3].T @ Cr[:3, :3]
    dd = Ck[:3, :3].T @ (Cr[:3, 3] - Ck[:3, 3]) + R_kr @ geo.d_r      # d + d_k
    w = geo.u_b @ R_kr.T                                               # R_kr u_b, rows
    B_pos = np.hstack([hat(dd), -np.eye(3), -R_kr @ hat(geo.d_r), R_kr])
    rows = [geo.u_pos @ B_pos]
    for ua, ub, wb in zip(geo.u_a, geo.u_b, w):
        rows.append((ua @ np.hstack([hat(wb), np.zeros((3, 3)), -R_kr @ hat(ub), np.zeros((3, 3))]))[None])
    return R_kr, dd, w, B_pos, np.vstack(rows)


def cut_joint_rate_map(geo: CutJointGeometry, C) -> np.ndarray:
    """``B`` (m, 12) with ``gdot = B (V_k, V_r)`` (eqs. 55, 59; body-fixed twists of k and r).
    Its transpose maps the multipliers to the constraint wrenches: ``B^T lambda`` = (wrench on
    k, wrench on r), each (moment, force) about its body frame in that frame."""
    return _rate_map(geo, C)[4]


def cut_joint_constraint(tree: TreeModel, geo: CutJointGeometry, C, V=None, A0=None):
    """Residual, Jacobian and acceleration bias of one cut joint.

    ``C``: absolute body poses (n, 4, 4); ``V``: body-fixed twists (n, 6); ``A0``: body-fixed
    accelerations for ``qdd = 0`` without gravity (n, 6).  Returns ``(g, G, bias)`` with
    ``g`` (m,) (eqs. 51, 58), ``G`` (m, n) with ``gdot = G qd`` (eqs. 56, 59), and ``bias``
    (m,) ``= Gdot qd`` (eqs. 57, 60; zeros when ``V`` is None).
    """
    k, r = geo.body_k, geo.body_r
    R_kr, dd, w, B_pos, Bm = _rate_map(geo, C)
    d = dd - geo.d_k                                             # eq. 50
    g = np.concatenate([geo.u_pos @ d, np.einsum("ij,ij->i", geo.u_a, w)])
    J = np.vstack([body_jacobian(tree, C, k), body_jacobian(tree, C, r)])
    G = Bm @ J
    if V is None:
        return g, G, np.zeros(len(g))
    Vk, Vr = _body(V, k, np.zeros(6)), _body(V, r, np.zeros(6))
    Ak, Ar = _body(A0, k, np.zeros(6)), _body(A0, r, np.zeros(6))
    wk, wr, vr = Vk[:3], Vr[:3], Vr[3:]
    dR_kr = R_kr @ hat(wr) - hat(wk) @ R_kr                      # time derivative of R_kr
    d_dot = B_pos @ np.concatenate([Vk, Vr])
    bdot_pos = np.cross(d_dot, wk) - dR_kr @ hat(geo.d_r) @ wr + dR_kr @ vr
    bias_pos = geo.u_pos @ (B_pos @ np.concatenate([Ak, Ar]) + bdot_pos)
    bias_rot = []
    for ua, ub, wb in zip(geo.u_a, geo.u_b, w):
        wdot = dR_kr @ ub
        rate = np.cross(wdot, wk) - dR_kr @ hat(ub) @ wr        # Bdot_rot (V_k, V_r)
        acc = np.cross(wb, Ak[:3]) - R_kr @ hat(ub) @ Ar[:3]    # B_rot (Vdot_k, Vdot_r)
        bias_rot.append(ua @ (acc + rate))
    return g, G, np.concatenate([bias_pos, np.array(bias_rot)])


class LoopConstraints:
    """All cut-joint constraints of a robot, stacked (paper 001 eqs. 12-14 for every loop)."""

    def __init__(self, desc: RobotDescription):
        self.tree = desc.tree
        self.geometry = tuple(cut_joint_geometry(desc.tree, c) for c in desc.cut_joints)
        self.sizes = tuple(g.size for g in self.geometry)

    @property
    def size(self) -> int:
        return int(sum(self.sizes))

    def evaluate(self, q, qd=None):
        """``(g, G, bias)``: residuals (m,), Jacobian (m, n), ``Gdot qd`` (m,) at ``(q, qd)``."""
        tree = self.tree
        if qd is None:
            C = forward_kinematics(tree, q)
            V = A0 = None
        else:
            _, C, V, A0 = kinematics(tree, q, qd)
        parts = [cut_joint_constraint(tree, geo, C, V, A0) for geo in self.geometry]
        if not parts:
            return np.zeros(0), np.zeros((0, tree.nq)), np.zeros(0)
        return (np.concatenate([p[0] for p in parts]), np.vstack([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]))

    def residual(self, q) -> np.ndarray:
        return self.evaluate(q)[0]
