"""Higher-order inverse dynamics of PKM with simple limbs (paper 002, Mueller, Kumar, Kordik)
and the public entry point :func:`higher_order_inverse_dynamics` for every robot kind.

Paper 002's recursive route (this module), for a non-redundant PKM whose limbs are serial
chains from the base to the platform (paper 002 Sec. II, Fig. 2: the platform hangs from
limb ``L`` in the spanning tree, limbs ``1..L-1`` close at the platform with cut joints):

* :func:`simple_limb_model` recognises the limbs on the spanning tree.  Limb ``l`` has the
  ``n_l`` tree joints of its chain plus, for ``l < L``, the freedoms of its cut joint with the
  platform (``N_l = n_l + dof``).  Those freedoms enter only as platform-fixed screws (a
  spherical joint: three rotations about its centre; revolute: one rotation; prismatic: one
  translation), constant in the platform frame, so their Jacobian columns have zero time
  derivatives and their coordinates are never needed (the rows of ``F_(l)`` that belong to
  them are dropped: ``F_bar``, Sec. II-C).
* :func:`limb_inverse_kinematics` finds the closed configuration ``theta`` the recursion takes
  as given: the limbs are independent once the platform pose is known, so each limb is closed
  on its own (batched Newton with the task-space Jacobian of eq. 22), warm-started from a
  neighbouring sample.  The general route closes the loops on the whole tree instead
  (:func:`.jet_dynamics.close_loops`), independently of this.
* :func:`fourth_order_kinematics` is the four-pass recursion of Sec. IV-B: pass ``nu`` solves
  the ``nu``-th order limb inverse kinematics (eqs. 15-18, ``(*)``) with the closed-form
  Jacobian derivatives of Lemma 1 (eqs. 22-28) and runs the ``(nu-1)``-th order forward
  kinematics of the limb's bodies; one LU factorisation of each task-space Jacobian
  ``J_t(l) = P_t J_p(l)`` serves the four solves (Sec. IV-C).
* :func:`second_order_inverse_dynamics` is the backward recursion of Sec. V-C
  (``W_bar, Wdot_bar, Wddot_bar -> Q_bar, Qdot_bar, Qddot_bar``) and eqs. 14, 19, 20 with
  ``Fdot``, ``Fddot`` (Sec. V-A) and ``J_IK`` and its derivatives as rows of ``F`` (Sec. V-B).

Corrections to the printed formulas (each checked against finite differences and against
the Taylor route in the tests): eq. 18 reads ``c^4 = J''' thd + 3 J'' thdd + 3 J' thddd``
(binomial coefficients of eq. 16; printed ``2 J''``); eq. 25 reads
``J''' = (-ad^3 + 2 ad_dV' ad_dV + ad_dV ad_dV' - ad_dV'') J``, i.e. ``3 ad_dV' ad_dV +
ad_{ad_dV dV'}`` (printed ``2 ad_dV' ad_dV + ad_{ad_dV dV'}``); eq. 28 reads
``dV'' = Vddot_p - Ad Vddot_i + ad_dV (Ad Vdot_i + Vdot_p) + ad_dV' V_p`` (the derivative of
eq. 27 with ``d/dt Ad_{C_p,i} = -ad_dV Ad_{C_p,i}``; the printed form drops terms and the
proof has a sign slip); ``Fddot = 2 F Jdot F Jdot F - F Jddot F`` (printed
``2 Fdot Jdot Fdot``).  Gravity is carried as the body-fixed acceleration
``g_i = Ad(C_i)^-1 (0, -g)`` with ``gdot_i = -ad(V_i) g_i`` added to ``Vdot_i`` only where
the Newton-Euler equations take the acceleration (``M_i (Vdot_i + g_i)``); the ``ad`` terms of
the differentiated Newton-Euler equations use the kinematic ``Vdot_i``.

The *general route* (:mod:`.jet_dynamics`, Taylor polynomials) covers every robot kind:
module chains (heavy-duty manipulators, actuator-space motion) and PKM with hybrid limbs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from . import jet_dynamics as JD
from . import taylor as T
from .bounds import check_bound, check_limits, check_position, check_rate, continuation_steps
from .description import RobotDescription
from .errors import ConvergenceError, DescriptionError, SingularityError, StateError
from .sea import sea_feedforward, sea_parameters
from .spatial import (Ad_batch, Ad_inv_batch, ad_batch, exp_se3, exp_se3_batch, exp_unit_screws_batch, hat_batch,
                      log_se3, log_se3_batch, mv_batch, pose_inv, pose_inv_batch)
from .tree_dynamics import forward_kinematics

# ---------------------------------------------------------------------------------------
# model: limbs of a PKM with simple limbs, recognised on the spanning tree
# ---------------------------------------------------------------------------------------


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
    raise DescriptionError(f"loop closure '{cut.name}' is a {cut.type} joint: paper 002's recursion "
                           "takes spherical, revolute or prismatic platform joints (use the Taylor route)")


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


# ---------------------------------------------------------------------------------------
# Sec. IV-B: fourth-order forward/inverse kinematics
# ---------------------------------------------------------------------------------------


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


def limb_inverse_kinematics(model: SimpleLimbModel, x, q_guess=None, tol: float = 1e-12,
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
    at most :data:`.jet_dynamics.CONTINUATION_STEP` (the assembly branch of the zero
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
        steps = continuation_steps(np.abs(xi).max(), JD.CONTINUATION_STEP, "the platform pose")
        for k in range(1, steps):
            qs, S = _limb_newton(m, F0 @ exp_se3(xi * k / steps), qs, S, 1e-9, max_iter)
    else:
        q = np.asarray(q_guess, dtype=float)
        if q.shape != (m.desc.tree.nq,):
            raise StateError(f"q_guess has shape {q.shape}, expected ({m.desc.tree.nq},)")
        qs = np.where(m.real, q[m.index], 0.0)
        # the cut joints' freedoms: the subgroup element nearest the remaining displacement
        G = limb_poses(m, qs)[1][:, -1] @ m.end_to_platform
        S = exp_se3_batch(mv_batch(m.cut_projector, log_se3_batch(pose_inv_batch(G) @ x)))
    qs, _ = _limb_newton(m, x, qs, S, tol, max_iter)
    out = np.zeros(m.desc.tree.nq)
    out[m.index[m.real]] = qs[m.real]
    return out


def _limb_newton(m: SimpleLimbModel, x, qs, S, tol, max_iter):
    """Newton iterations of :func:`limb_inverse_kinematics` for the pose ``x``."""
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


@dataclass
class LimbKinematics:
    """Output of :func:`fourth_order_kinematics`, limb-batched (``L`` limbs, ``delta`` slots):
    ``th`` (5, L, delta) joint derivatives of orders 0..4 (cut-joint slots: quasi-velocities,
    order 0 unused), relative poses ``P`` and absolute poses ``C`` (L, delta, 4, 4), body
    twists ``V`` (4, L, delta, 6) (``V, Vdot, Vddot, Vdddot``), platform Jacobian ``Jp``
    (4, L, 6, delta) and its derivatives (eqs. 22-25), ``F`` (L, delta, delta) the inverse of
    ``J_t`` (from one LU factorisation per limb) and ``Jt`` (3, L, delta, delta)."""

    th: np.ndarray
    P: np.ndarray
    C: np.ndarray
    V: np.ndarray
    Jp: np.ndarray
    Jt: np.ndarray
    F: np.ndarray
    Tr: np.ndarray | None = None     # (L, delta, delta, 6, 6) Ad(C_i^-1 C_j) for j <= i, else 0


def _transfer(model: SimpleLimbModel, C) -> np.ndarray:
    """``Ad(C_i^-1 C_j)`` (L, delta, delta, 6, 6) for ``j <= i`` (zero above the diagonal): the
    products of the ``Ad(C_k,k-1)`` of a limb's forward recursions from slot ``j`` to ``i``."""
    T = Ad_inv_batch(C)[:, :, None] @ Ad_batch(C)[:, None, :]               # Ad(C_i)^-1 Ad(C_j)
    return T * model.lower_slots[None, :, :, None, None]


def fourth_order_kinematics(model: SimpleLimbModel, q, Vt) -> LimbKinematics:
    """Paper 002 Sec. IV-B: ``theta^(1..4)`` of every limb from the closed configuration ``q``
    (tree coordinates, (n,)) and the task twist derivatives ``Vt`` (4, delta)
    (``V_t, Vdot_t, Vddot_t, Vdddot_t``), with the body twists and their first three
    derivatives: four passes (eqs. 15-18 with Lemma 1, eqs. 22-28), every limb at once (the
    limbs are independent, "possible in parallel"; here as one batched array operation)."""
    m = model
    Pt, real, X = m.Pt, m.real, m.X
    L, D = real.shape
    Vt = np.asarray(Vt, dtype=float)
    # pass 0: poses.  P_i = B_i exp(X_i theta_i) (R: Rodrigues, P: translation), C_i = C_{i-1} P_i
    qs = np.where(real, np.asarray(q, dtype=float)[m.index], 0.0)
    P, C = limb_poses(m, qs)
    F = C[0, len(m.limbs[0].bodies) - 1] @ m.platform_offset      # limb 0 carries the platform
    Fi = pose_inv(F)
    AdP = Ad_batch(Fi @ C)                                              # Ad(C_p,i)  (L, D, 6, 6)
    # forward recursions V_i = Ad(C_i,i-1) V_{i-1} + b_i of every order, unrolled:
    # V_i = sum_{j <= i} Ad(C_i^-1 C_j) b_j
    Tr = _transfer(m, C)

    def propagate(b):
        return np.einsum("lijab,ljb->lia", Tr, b)

    aX = ad_batch(X)
    mask = real[:, None, :]
    J = np.zeros((4, L, 6, D))
    J[0] = np.where(mask, np.einsum("ldij,ldj->lid", AdP, X), m.cut_columns)    # eq. 22
    Jt0 = Pt @ J[0]
    try:
        Finv = np.linalg.inv(Jt0)                                  # one LU per limb (getrf/getri)
    except np.linalg.LinAlgError:
        raise SingularityError("a limb's task-space Jacobian J_t is singular at this configuration") from None
    # condition number kappa_1 = |J_t|_1 |J_t^-1|_1 from the inverse at hand (no SVD)
    cond = np.abs(Jt0).sum(axis=-2).max(axis=-1) * np.abs(Finv).sum(axis=-2).max(axis=-1)
    if np.any(cond > 1e12):
        l = int(np.argmax(cond))
        raise SingularityError(f"limb '{m.limbs[l].name}': task-space Jacobian J_t is singular "
                               f"(condition number {cond[l]:.3g})")
    th = np.zeros((5, L, D))
    V = np.zeros((4, L, D, 6))
    c2 = c3 = None
    # pass 1: 1st-order IK (*)
    th[1] = Finv @ Vt[0]
    Vp0 = mv_batch(J[0], th[1])                                          # (L, 6), equal for all limbs
    # pass 2: twists, Delta V (eq. 26), Jdot (eq. 23), c^2 (eq. 17), 2nd-order IK (*)
    V[0] = propagate(X * th[1, ..., None])
    dV0 = Vp0[:, None] - mv_batch(AdP, V[0])
    A = ad_batch(dV0)
    J[1] = np.where(mask, -np.einsum("ldij,ljd->lid", A, J[0]), 0.0)
    c2 = mv_batch(J[1], th[1])
    th[2] = mv_batch(Finv, Vt[1] - c2 @ Pt.T)
    Vp1 = mv_batch(J[0], th[2]) + c2
    # pass 3: accelerations, Delta Vdot (eq. 27), Jddot (eq. 24), c^3, 3rd-order IK
    aXV0 = mv_batch(aX, V[0])
    V[1] = propagate(X * th[2, ..., None] - th[1, ..., None] * aXV0)
    AdV1 = mv_batch(AdP, V[1])
    dV1 = Vp1[:, None] - AdV1 + mv_batch(A, Vp0[:, None])
    Bm = ad_batch(dV1)
    AJ = np.einsum("ldij,ljd->lid", A, J[0])                       # ad_dV J_i
    J[2] = np.where(mask, np.einsum("ldij,ljd->lid", A, AJ) - np.einsum("ldij,ljd->lid", Bm, J[0]), 0.0)
    c3 = mv_batch(J[2], th[1]) + 2.0 * mv_batch(J[1], th[2])
    th[3] = mv_batch(Finv, Vt[2] - c3 @ Pt.T)
    Vp2 = mv_batch(J[0], th[3]) + c3
    # pass 4: 2nd derivatives of twists, Delta Vddot (eq. 28), Jdddot (eq. 25), c^4, 4th-order IK
    t1, t2, t3 = th[1, ..., None], th[2, ..., None], th[3, ..., None]
    V[2] = propagate(X * t3 - mv_batch(aX, t2 * V[0] + 2.0 * t1 * V[1]) - t1 ** 2 * mv_batch(aX, aXV0))
    dV2 = (Vp2[:, None] - mv_batch(AdP, V[2]) + mv_batch(A, AdV1 + Vp1[:, None]) + mv_batch(Bm, Vp0[:, None]))
    Cm = ad_batch(dV2)
    AAJ = np.einsum("ldij,ljd->lid", A, AJ)
    BJ = np.einsum("ldij,ljd->lid", Bm, J[0])
    J[3] = np.where(mask, -np.einsum("ldij,ljd->lid", A, AAJ) + 2.0 * np.einsum("ldij,ljd->lid", Bm, AJ)
                    + np.einsum("ldij,ljd->lid", A, BJ) - np.einsum("ldij,ljd->lid", Cm, J[0]), 0.0)
    c4 = mv_batch(J[3], th[1]) + 3.0 * mv_batch(J[2], th[2]) + 3.0 * mv_batch(J[1], th[3])
    th[4] = mv_batch(Finv, Vt[3] - c4 @ Pt.T)
    # 3rd-order forward kinematics
    V[3] = propagate(X * th[4, ..., None]
                     - mv_batch(aX, t3 * V[0] + 3.0 * t2 * V[1] + 3.0 * t1 * V[2])
                     - 3.0 * t1 * mv_batch(aX, mv_batch(aX, t2 * V[0] + t1 * V[1]))
                     - t1 ** 3 * mv_batch(aX, mv_batch(aX, aXV0)))
    th[0] = qs
    return LimbKinematics(th, P, C, V, J, np.einsum("ij,kljd->klid", Pt, J[:3]), Finv, Tr)


def limb_second_order_forces(model: SimpleLimbModel, kin: LimbKinematics, gravity) -> np.ndarray:
    """Sec. V-C backward recursion over the limbs' bodies (leaf to base):
    ``W_bar, Wdot_bar, Wddot_bar`` and ``Q_bar, Qdot_bar, Qddot_bar`` (3, L, delta)."""
    X, M = model.X, model.M
    L, D = model.real.shape
    V, th = kin.V, kin.th
    a0 = np.concatenate([np.zeros(3), -np.asarray(gravity, dtype=float)])
    g0 = mv_batch(Ad_inv_batch(kin.C), a0)                       # gravity as a body acceleration (L, D, 6)
    g1 = -mv_batch(ad_batch(V[0]), g0)
    g2 = -mv_batch(ad_batch(V[1]), g0) - mv_batch(ad_batch(V[0]), g1)
    aT = np.swapaxes(ad_batch(V[:3]), -1, -2)               # (3, L, D, 6, 6)
    MV = mv_batch(M[None], V[:3])                           # (3, L, D, 6)
    Wb = np.empty((3, L, D, 6))                        # body terms of W, Wdot, Wddot
    Wb[0] = mv_batch(M, V[1] + g0) - mv_batch(aT[0], MV[0])
    Wb[1] = mv_batch(M, V[2] + g1) - mv_batch(aT[0], MV[1]) - mv_batch(aT[1], MV[0])
    Wb[2] = mv_batch(M, V[3] + g2) - mv_batch(aT[0], MV[2]) - mv_batch(aT[2], MV[0]) - 2.0 * mv_batch(aT[1], MV[1])
    # backward recursions W_i = Wb_i + Ad(C_i+1,i)^T (W_{i+1} + corr_{i+1}) of every order, with
    # the corrections corr_j = -t1 x W0, -2 t1 x W1 + t1^2 x x W0 - t2 x W0 (x = ad(X_j)^T),
    # unrolled: W_i + corr_i = sum_{j >= i} Ad(C_j^-1 C_i)^T (Wb_j + corr_j)
    Tr = _transfer(model, kin.C) if kin.Tr is None else kin.Tr

    def propagate_back(b):
        return np.einsum("ljiac,lja->lic", Tr, b)

    xT = np.swapaxes(ad_batch(X), -1, -2)
    t1, t2 = th[1, ..., None], th[2, ..., None]
    W = np.empty((3, L, D, 6))
    W[0] = propagate_back(Wb[0])
    xW0 = mv_batch(xT, W[0])
    corr = -t1 * xW0
    W[1] = propagate_back(Wb[1] + corr) - corr
    corr = -2.0 * t1 * mv_batch(xT, W[1]) + t1 * t1 * mv_batch(xT, xW0) - t2 * xW0
    W[2] = propagate_back(Wb[2] + corr) - corr
    return np.einsum("klia,lia->kli", W, X)


def second_order_inverse_dynamics(model: SimpleLimbModel, kin: LimbKinematics, gravity=None) -> np.ndarray:
    """Eqs. 14, 19, 20: ``(u, udot, uddot)`` (3, na) from the limb kinematics of
    :func:`fourth_order_kinematics`, with ``Fdot = -F Jdot_t F``,
    ``Fddot = 2 F Jdot_t F Jdot_t F - F Jddot_t F`` and ``J_IK`` the actuated rows of ``F``
    (Sec. V-B).  The rows of the cut-joint slots of ``F`` meet ``Q_bar = 0`` there (``F_bar``)."""
    tree = model.desc.tree
    g = tree.gravity if gravity is None else np.asarray(gravity, dtype=float)
    F0 = kin.F
    J1, J2 = kin.Jt[1], kin.Jt[2]
    F1 = -F0 @ J1 @ F0
    FJ = F0 @ J1
    F2 = 2.0 * FJ @ FJ @ F0 - F0 @ J2 @ F0
    Q = limb_second_order_forces(model, kin, g)       # zero in the cut-joint slots
    tr = lambda A: np.swapaxes(A, -1, -2)  # noqa: E731
    s0 = mv_batch(tr(F0), Q[0]).sum(axis=0)
    s1 = (mv_batch(tr(F0), Q[1]) + mv_batch(tr(F1), Q[0])).sum(axis=0)
    s2 = (mv_batch(tr(F0), Q[2]) + 2.0 * mv_batch(tr(F1), Q[1]) + mv_batch(tr(F2), Q[0])).sum(axis=0)
    al, ai = model.actuator_limb, model.actuator_local
    JIK = (F0[al, ai], F1[al, ai], F2[al, ai])
    lu = scipy.linalg.lu_factor(JIK[0].T, check_finite=False)
    u0 = scipy.linalg.lu_solve(lu, s0, check_finite=False)
    u1 = scipy.linalg.lu_solve(lu, s1 - JIK[1].T @ u0, check_finite=False)
    u2 = scipy.linalg.lu_solve(lu, s2 - JIK[2].T @ u0 - 2.0 * JIK[1].T @ u1, check_finite=False)
    return np.array([u0, u1, u2])


def tree_motion_from_limbs(model: SimpleLimbModel, kin: LimbKinematics) -> np.ndarray:
    """Derivatives (5, n) of every tree joint (orders 0..4) from the limbs' solutions."""
    out = np.zeros((5, model.desc.tree.nq))
    out[:, model.index[model.real]] = kin.th[:, model.real]
    return out


# ---------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------


@dataclass
class HigherOrderResult:
    """Result of :func:`higher_order_inverse_dynamics` (attribute or key access).

    ``u, du, ddu``: actuator forces and their first two time derivatives (na,) (or
    (batch, na)); ``tree_motion``: derivatives of every tree joint, orders 0..4, (5, n)
    (or (batch, 5, n)); ``actuator_motion``: the actuated joints' rows of it; ``method``:
    ``"recursive"`` (paper 002) or ``"taylor"``; with series-elastic actuators also
    ``motor_position, motor_velocity, motor_acceleration, motor_torque`` (eqs. 1-2)."""

    u: np.ndarray
    du: np.ndarray
    ddu: np.ndarray
    tree_motion: np.ndarray
    actuator_motion: np.ndarray
    method: str
    motor_position: np.ndarray | None = None
    motor_velocity: np.ndarray | None = None
    motor_acceleration: np.ndarray | None = None
    motor_torque: np.ndarray | None = None

    def __getitem__(self, key):
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)

    def keys(self):
        return [k for k in self.__dataclass_fields__ if getattr(self, k) is not None]


@dataclass
class HoidModel:
    """Constant data of both routes for one robot description."""

    desc: RobotDescription
    jets: JD.JetModel
    limbs: SimpleLimbModel | None
    limb_reason: str
    K: np.ndarray
    Mm: np.ndarray
    elastic: np.ndarray


_CACHE: dict = {}


def hoid_model(robot_or_desc) -> HoidModel:
    """The (cached) :class:`HoidModel` of a robot object or a :class:`RobotDescription`."""
    desc = getattr(robot_or_desc, "description", robot_or_desc)
    if not isinstance(desc, RobotDescription):
        raise StateError(f"expected a robot or a RobotDescription, got {type(robot_or_desc).__name__}")
    hit = _CACHE.get(id(desc))
    if hit is not None and hit.desc is desc:
        return hit
    limbs, reason = None, ""
    if desc.platform is not None:
        try:
            limbs = simple_limb_model(desc)
        except DescriptionError as exc:
            reason = str(exc)
    else:
        reason = "a module chain (no platform): the recursion of paper 002 is for PKM"
    K, Mm, elastic = sea_parameters(desc)
    m = HoidModel(desc, JD.jet_model(desc), limbs, reason, K, Mm, elastic)
    if len(_CACHE) > 32:
        _CACHE.clear()
    _CACHE[id(desc)] = m
    return m


def _one(m: HoidModel, x, derivs, method, q_guess, gravity):
    jm = m.jets
    if method == "recursive":
        q0 = limb_inverse_kinematics(m.limbs, x, q_guess)
    else:
        q0 = JD.close_loops(jm, x, q_guess)
    if jm.is_pkm:                       # a pose the actuators reach only beyond a stroke
        check_limits(m.desc.tree, jm.actuated, q0[jm.actuated], "actuator position")
    if method == "recursive":
        kin = fourth_order_kinematics(m.limbs, q0, np.asarray(derivs, dtype=float))
        U = second_order_inverse_dynamics(m.limbs, kin, gravity)
        qder = tree_motion_from_limbs(m.limbs, kin)
    else:
        if jm.is_pkm:
            xj = T.from_derivatives(derivs)                    # jet of V_t, degree 3
        else:
            xj = T.from_derivatives([x] + list(derivs))       # jet of x, degree 4
        qj = JD.tree_motion_jet(jm, q0, xj)
        U = T.to_derivatives(JD.actuator_force_jet(jm, qj, gravity))
        qder = T.to_derivatives(qj)
    return U, qder


def higher_order_inverse_dynamics(robot, x, xd, xdd, xddd, xdddd, method: str = "auto",
                                  q_guess=None, gravity=None) -> HigherOrderResult:
    """Actuator forces ``u`` and their derivatives ``du, ddu`` for a motion given up to its
    4th derivative, plus the series-elastic motor feedforward (paper 002 eqs. 1-2, 19-20).

    Module chains (actuator space): ``x, xd, xdd, xddd, xdddd`` are the actuator coordinates
    and their derivatives, each (na,) or (batch, na).  PKM (task space): ``x`` is the pose of
    the platform frame (4, 4) (or (batch, 4, 4)) and ``xd, xdd, xddd, xdddd`` are the task
    twist ``V_t`` (body-fixed components named in ``<task_space>``) and its first three
    derivatives, each (delta,) or (batch, delta).

    ``method``: ``"recursive"`` (paper 002, PKM with simple limbs), ``"taylor"`` (general
    route, every robot), ``"auto"`` (recursive where it applies).  ``q_guess``: tree
    configuration to start the loop closure from (default: the zero configuration; batch
    rows start from the previous row's solution).  ``gravity``: override (3,)."""
    m = hoid_model(robot)
    if method == "auto":
        method = "recursive" if m.limbs is not None else "taylor"
    if method == "recursive" and m.limbs is None:
        raise DescriptionError(f"robot '{m.desc.name}': paper 002's recursion does not apply ({m.limb_reason})")
    if method not in ("recursive", "taylor"):
        raise StateError(f"method '{method}' is not one of auto, recursive, taylor")
    x = np.asarray(x, dtype=float)
    ders = [np.asarray(a, dtype=float) for a in (xd, xdd, xddd, xdddd)]
    pkm = m.jets.is_pkm
    single_ndim = 2 if pkm else 1
    width = m.jets.Pt.shape[0] if pkm else len(m.jets.actuated)
    if x.ndim not in (single_ndim, single_ndim + 1):
        raise StateError(f"x has shape {x.shape}: expected " + ("a 4x4 platform pose" if pkm else f"({width},)")
                         + " or a batch of them")
    batched = x.ndim == single_ndim + 1
    for order, (name, a) in enumerate(zip(("xd", "xdd", "xddd", "xdddd"), ders), start=1):
        want = (x.shape[0], width) if batched else (width,)
        if a.shape != want:
            raise StateError(f"{name} has shape {a.shape}, expected {want}")
        check_rate(a, name, order)
    check_bound(x, np.inf, "x")
    if pkm:
        check_position(x[..., :3, 3], "x (platform position)")
    else:                               # beyond a stroke: as inverse dynamics (INVALID_STATE)
        for row in (x if batched else [x]):
            check_limits(m.desc.tree, m.jets.actuated, row)
        check_position(x, "x", "m or rad")      # a joint without limits (continuous)
    if hasattr(robot, "admissible_task_state"):
        # a ParallelRobot: refuse poses beyond the joint limits or near input, loop or output
        # singularities before the recursion, and close the loops on the IK's working mode
        sol = robot.admissible_task_state(x, initial=q_guess)
        q_guess = sol.q[0] if batched else sol.q
    rows = zip(x, *ders) if batched else [(x, *ders)]
    Us, Qs = [], []
    guess = q_guess
    for r in rows:
        U, qder = _one(m, r[0], r[1:], method, guess, gravity)
        guess = qder[0]
        Us.append(U)
        Qs.append(qder)
    U = np.stack(Us)
    Qd = np.stack(Qs)
    act = m.jets.actuated
    Am = Qd[:, :, act]
    res = HigherOrderResult(U[:, 0], U[:, 1], U[:, 2], Qd, Am, method)
    if np.any(m.elastic):
        ff = sea_feedforward(Am[:, 0], Am[:, 1], Am[:, 2], U[:, 0], U[:, 1], U[:, 2], m.K, m.Mm)
        for k, v in ff.items():
            setattr(res, k, v)
    if not batched:
        for k in res.keys():
            v = getattr(res, k)
            if isinstance(v, np.ndarray):
                setattr(res, k, v[0])
    return res
