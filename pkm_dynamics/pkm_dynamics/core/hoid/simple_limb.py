"""Simple limbs of a PKM (paper 002 Sec. II-C, Fig. 2) and their zeroth-order inverse kinematics.

For a non-redundant PKM whose limbs are serial chains from the base to the platform (the
platform hangs from limb ``L`` in the spanning tree, limbs ``1..L-1`` close at the platform
with cut joints):

* :func:`simple_limb_model` recognises the limbs on the spanning tree.  Limb ``l`` has the
  ``n_l`` tree joints of its chain plus, for ``l < L``, the freedoms of its cut joint with the
  platform (``N_l = n_l + dof``).  Those freedoms enter only as platform-fixed screws (a
  spherical joint: three rotations about its centre; revolute: one rotation; prismatic: one
  translation), constant in the platform frame, so their Jacobian columns have zero time
  derivatives and their coordinates are never needed (the rows of ``F_(l)`` that belong to
  them are dropped: ``F_bar``, Sec. II-C).
* :func:`simple_limb_inverse_kinematics` finds the closed configuration ``theta`` that the
  recursion of :mod:`.hoid_recursion` takes as given: the limbs are independent once the
  platform pose is known, so each limb is closed on its own (batched Newton with the
  task-space Jacobian of eq. 22), warm-started from a neighbouring sample.  The general route
  closes the loops on the whole tree instead (:func:`.jet_dynamics.close_loops`),
  independently of this.

These are the names of the simple-limb side; the limbs of paper 001 (chains of loops,
constraint embedding) are :mod:`.limb`'s.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import jet_dynamics as JD
from ..bounds import continuation_steps
from ..description.robot_description import RobotDescription
from ..errors import ConvergenceError, DescriptionError, SingularityError, StateError
from ..spatial.se3 import (exp_se3, exp_se3_batch, exp_unit_screws_batch, hat_batch, log_se3, log_se3_batch,
                           mv_batch, pose_inv, pose_inv_batch)
from ..status import CONTINUATION_STEP
from ..tree.tree_dynamics import forward_kinematics


@dataclass(frozen=True)
class SimpleLimb:
    """One simple limb: ``bodies`` (n_l,) tree joints/bodies from the base to its end,
    ``cut_screws`` (6, N_l - n_l) platform-fixed screws of its cut joint (platform frame)."""

    name: str
    bodies: np.ndarray
    cut_screws: np.ndarray

    @property
    def N(self) -> int:
        return len(self.bodies) + self.cut_screws.shape[1]


@dataclass(frozen=True)
class SimpleLimbModel:
    """Data of paper 002's recursion: limbs, platform frame, task-space selection ``P_t``,
    and the actuators as ``(limb, position in limb)``."""

    desc: RobotDescription
    limbs: tuple
    platform_body: int
    platform_offset: np.ndarray
    Pt: np.ndarray
    actuator_limb: np.ndarray
    actuator_local: np.ndarray
    # limb-batched arrays (L, delta, ...): limb l's tree joints first, then padding slots whose
    # Jacobian columns are its cut-joint screws (N_l = delta for every limb)
    real: np.ndarray = None       # (L, delta) bool: slot holds a tree joint
    index: np.ndarray = None      # (L, delta) tree joint index (0 in padding)
    X: np.ndarray = None          # (L, delta, 6) joint screws (0 in padding)
    M: np.ndarray = None          # (L, delta, 6, 6) body inertias (0 in padding)
    B: np.ndarray = None          # (L, delta, 4, 4) reference poses (identity in padding)
    cut_columns: np.ndarray = None  # (L, 6, delta) cut screws in the padding columns, else 0
    end_to_platform: np.ndarray = None  # (L, 4, 4) limb end body -> platform frame, cut joint at 0
    cut_projector: np.ndarray = None    # (L, 6, 6) projector onto the span of the cut screws
    X_hat: np.ndarray = None      # (L, delta, 3, 3) [e_i]x of the joint screws' angular parts
    X_hat2: np.ndarray = None     # (L, delta, 3, 3) its square (Rodrigues)
    lower_slots: np.ndarray = None  # (delta, delta) 1.0 where j <= i (slot j supports slot i)


def _cut_screws(desc, cut, pb, C0, F0) -> np.ndarray:
    tree = desc.tree
    sides = []
    for link, origin, axis in ((cut.parent_link, cut.parent_origin, cut.parent_axis),
                               (cut.child_link, cut.child_origin, cut.child_axis)):
        b, off = tree.frame(link)
        W = (np.eye(4) if b < 0 else C0[b]) @ off @ origin
        sides.append((b, W, axis))
    Fi = pose_inv(F0)
    plat = [s for s in sides if s[0] == pb]
    W = plat[0][1]
    Wp = Fi @ W                                  # cut frame in the platform frame
    c, R = Wp[:3, 3], Wp[:3, :3]
    pw = sides[0][1][:3, :3] @ cut.parent_axis if cut.parent_axis is not None else None
    if cut.type == "spherical":
        axes = [R[:, k] for k in range(3)]
        return np.array([np.concatenate([e, np.cross(c, e)]) for e in axes]).T
    if cut.type == "revolute":
        e = Fi[:3, :3] @ pw
        return np.concatenate([e, np.cross(c, e)])[:, None]
    if cut.type == "prismatic":
        e = Fi[:3, :3] @ pw
        return np.concatenate([np.zeros(3), e])[:, None]
    if cut.type == "cylindrical":
        e = Fi[:3, :3] @ pw
        return np.array([np.concatenate([e, np.cross(c, e)]), np.concatenate([np.zeros(3), e])]).T
    raise DescriptionError(f"loop closure '{cut.name}' is a {cut.type} joint: paper 002's recursion "
                           "takes spherical, revolute, prismatic or cylindrical platform joints (use the Taylor route)")


def simple_limb_model(desc: RobotDescription) -> SimpleLimbModel:
    """Recognise a PKM with simple limbs on the spanning tree (paper 002 Sec. II-C, Fig. 2).

    Raises :class:`DescriptionError` naming the reason when the robot is not one (no platform,
    a limb with an internal loop, a branching limb, a non-square task-space Jacobian, an
    actuator count different from the platform DOF)."""
    tree = desc.tree
    if desc.platform is None:
        raise DescriptionError(f"robot '{desc.name}' has no <platform>: paper 002's recursion is for PKM")
    pb, off = tree.frame(desc.platform.link)
    off = off @ desc.platform.origin
    if pb < 0:
        raise DescriptionError(f"platform '{desc.platform.link}' is fixed to the base")
    children = {i: [] for i in range(-1, tree.nq)}
    for i in range(tree.nq):
        children[int(tree.parent[i])].append(i)
    C0 = forward_kinematics(tree, np.zeros(tree.nq))
    F0 = C0[pb] @ off
    chains = [(f"limb_{desc.platform.link}", tree.support(pb), np.zeros((6, 0)))]
    for cut in desc.cut_joints:
        bp, _ = tree.frame(cut.parent_link)
        bc, _ = tree.frame(cut.child_link)
        if pb not in (bp, bc) or bp == bc:
            raise DescriptionError(f"loop closure '{cut.name}' does not join a limb to the platform: "
                                   "the limbs are not simple (use the Taylor route)")
        end = bc if bp == pb else bp
        chains.append((cut.name, tree.support(end) if end >= 0 else [], _cut_screws(desc, cut, pb, C0, F0)))
    seen = np.zeros(tree.nq, dtype=int)
    for _, bodies, _ in chains:
        seen[bodies] += 1
        for a in bodies[:-1]:
            if len(children[a]) != 1:
                raise DescriptionError(f"body '{tree.body_names[a]}' branches: the limbs are not serial chains")
    if np.any(seen != 1):
        bad = [tree.joint_names[i] for i in np.flatnonzero(seen != 1)]
        raise DescriptionError(f"joints {bad} do not belong to exactly one limb: the limbs are not simple")
    Pt = np.eye(6)[[JD.TASK_INDEX[c] for c in desc.platform.task_space]]
    delta = Pt.shape[0]
    limbs = []
    for name, bodies, screws in chains:
        lb = SimpleLimb(name, np.array(bodies, dtype=int), screws)
        if lb.N != delta:
            raise DescriptionError(f"limb '{name}' has {lb.N} joint freedoms but the task space has {delta} "
                                   "coordinates: paper 002's recursion needs square (non-redundant) limbs")
        limbs.append(lb)
    act = [tree.joint_index(j) for j in desc.actuated_joints]
    if len(act) != delta:
        raise DescriptionError(f"robot '{desc.name}' has {len(act)} actuators for {delta} task coordinates: "
                               "paper 002's recursion is for non-redundantly actuated PKM")
    al, ai = [], []
    for j in act:
        for li, lb in enumerate(limbs):
            hit = np.flatnonzero(lb.bodies == j)
            if len(hit):
                al.append(li), ai.append(int(hit[0]))
    L = len(limbs)
    real = np.zeros((L, delta), dtype=bool)
    index = np.zeros((L, delta), dtype=int)
    Xb = np.zeros((L, delta, 6))
    Mb = np.zeros((L, delta, 6, 6))
    Bb = np.tile(np.eye(4), (L, delta, 1, 1))
    cols = np.zeros((L, 6, delta))
    T = np.empty((L, 4, 4))
    Pi = np.zeros((L, 6, 6))
    for l, lb in enumerate(limbs):
        n = len(lb.bodies)
        real[l, :n] = True
        index[l, :n] = lb.bodies
        Xb[l, :n] = tree.X[lb.bodies]
        Mb[l, :n] = tree.M[lb.bodies]
        Bb[l, :n] = tree.B[lb.bodies]
        cols[l, :, n:] = lb.cut_screws
        T[l] = (pose_inv(C0[lb.bodies[-1]]) if n else np.eye(4)) @ F0
        if lb.cut_screws.shape[1]:
            Pi[l] = lb.cut_screws @ np.linalg.pinv(lb.cut_screws)
    Xh = hat_batch(Xb[..., :3])
    return SimpleLimbModel(desc, tuple(limbs), pb, off, Pt, np.array(al), np.array(ai),
                           real, index, Xb, Mb, Bb, cols, T, Pi, Xh, Xh @ Xh, np.tril(np.ones((delta, delta))))






def limb_poses(model: SimpleLimbModel, qs) -> tuple:
    """Relative poses ``P_i = B_i exp(X_i theta_i)`` and absolute poses ``C_i = C_{i-1} P_i``
    (L, delta, 4, 4) of every limb's bodies for the slot values ``qs`` (L, delta) (Rodrigues
    for revolute, a translation for prismatic joints; padding slots: identity)."""
    L, D = model.real.shape
    P = model.B @ exp_unit_screws_batch(np.asarray(qs, dtype=float), model.X, model.X_hat, model.X_hat2)
    C = np.empty_like(P)
    C[:, 0] = P[:, 0]
    for i in range(1, D):
        C[:, i] = C[:, i - 1] @ P[:, i]
    return P, C


def _platform_jacobian(model: SimpleLimbModel, Fi, C) -> np.ndarray:
    """Eq. 22: ``J_p(l)`` (L, 6, delta), columns ``Ad(C_p,i) X_i`` (``C_p,i = F^-1 C_i``, ``Fi``
    (L, 4, 4) the inverse platform pose seen from each limb) and the cut screws."""
    H = Fi[:, None] @ C                                           # C_p,i  (L, D, 4, 4)
    R, p = H[..., :3, :3], H[..., :3, 3:]
    w = R @ model.X[..., :3, None]
    v = R @ model.X[..., 3:, None] + hat_batch(p[..., 0]) @ w
    J = np.concatenate([w, v], axis=-2)[..., 0]                   # (L, D, 6)
    return np.where(model.real[:, None, :], np.swapaxes(J, -1, -2), model.cut_columns)


def simple_limb_inverse_kinematics(model: SimpleLimbModel, x, q_guess=None, tol: float = 1e-12,
                            max_iter: int = 50) -> np.ndarray:
    """Zeroth-order inverse kinematics of every limb: the closed tree configuration ``q`` (n,)
    that puts the platform frame at the pose ``x`` (4, 4) (the configuration ``theta`` that
    paper 002's recursion takes as given, Sec. IV-B).

    The limbs are independent once the platform pose is known: limb ``l`` reaches the platform
    through its chain and the freedoms of its cut joint, ``F_l = C_end(theta_l) T_l S_l`` with
    ``T_l`` the limb end -> platform transform at the reference configuration and ``S_l`` in
    the subgroup the cut screws span.  Newton on every limb at once (batched), with the
    task-space Jacobian ``J_t(l) = P_t J_p(l)`` of eq. 22 and the body-fixed error
    ``F_l^-1 x``; ``theta_l <- theta_l + dtheta``, ``S_l <- S_l exp(Y_l dphi)``.

    ``q_guess``: start configuration (n,) (a neighbouring sample's solution); without it the
    solve starts at the zero configuration and follows the straight path to ``x`` in steps of
    at most :data:`..status.CONTINUATION_STEP` (the assembly branch of the zero
    configuration, as the general route :func:`.jet_dynamics.close_loops`)."""
    m = model
    x = np.asarray(x, dtype=float)
    if x.shape != (4, 4):
        raise StateError(f"the platform pose must be a 4x4 homogeneous matrix, got shape {x.shape}")
    L, D = m.real.shape
    if q_guess is None:
        qs = np.zeros((L, D))
        S = np.tile(np.eye(4), (L, 1, 1))
        F0 = limb_poses(m, qs)[1][0, -1] @ m.end_to_platform[0]    # reference platform pose
        xi = log_se3(pose_inv(F0) @ x)
        steps = continuation_steps(np.abs(xi).max(), CONTINUATION_STEP, "the platform pose")
        for k in range(1, steps):
            qs, S = _simple_limb_newton(m, F0 @ exp_se3(xi * k / steps), qs, S, 1e-9, max_iter)
    else:
        q = np.asarray(q_guess, dtype=float)
        if q.shape != (m.desc.tree.nq,):
            raise StateError(f"q_guess has shape {q.shape}, expected ({m.desc.tree.nq},)")
        qs = np.where(m.real, q[m.index], 0.0)
        # the cut joints' freedoms: the subgroup element nearest the remaining displacement
        G = limb_poses(m, qs)[1][:, -1] @ m.end_to_platform
        S = exp_se3_batch(mv_batch(m.cut_projector, log_se3_batch(pose_inv_batch(G) @ x)))
    qs, _ = _simple_limb_newton(m, x, qs, S, tol, max_iter)
    out = np.zeros(m.desc.tree.nq)
    out[m.index[m.real]] = qs[m.real]
    return out


def _simple_limb_newton(m: SimpleLimbModel, x, qs, S, tol, max_iter):
    """Newton iterations of :func:`simple_limb_inverse_kinematics` for the pose ``x``."""
    res = np.inf
    for _ in range(max_iter):
        C = limb_poses(m, qs)[1]
        Fi = pose_inv_batch(C[:, -1] @ m.end_to_platform @ S)          # F_l^-1
        E = Fi @ x
        e = np.concatenate([0.5 * np.stack([E[:, 2, 1] - E[:, 1, 2], E[:, 0, 2] - E[:, 2, 0],
                                            E[:, 1, 0] - E[:, 0, 1]], axis=-1), E[:, :3, 3]], axis=-1)
        res = np.abs(e).max()
        if res < tol:
            return qs, S
        Jt = m.Pt @ _platform_jacobian(m, Fi, C)
        try:
            d = np.linalg.solve(Jt, (e @ m.Pt.T)[..., None])[..., 0]
        except np.linalg.LinAlgError:
            raise SingularityError("a limb's task-space Jacobian J_t is singular on the way to the "
                                   "requested platform pose") from None
        qs = qs + np.where(m.real, d, 0.0)
        S = S @ exp_se3_batch(mv_batch(m.cut_columns, d))
    raise ConvergenceError(f"limb inverse kinematics of robot '{m.desc.name}' did not converge in "
                           f"{max_iter} iterations (residual {res:.3g}); give a closer starting "
                           "configuration (q_guess)")

