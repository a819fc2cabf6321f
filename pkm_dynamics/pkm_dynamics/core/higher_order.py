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

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from . import jet_dynamics as JD
from . import taylor as T
from .description import RobotDescription
from .errors import DescriptionError, SingularityError, StateError
from .sea import sea_feedforward, sea_parameters
from .spatial import Ad, Ad_inv, ad, exp_se3, pose_inv
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
        for a, b in zip(bodies[:-1], bodies[1:]):
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
    return SimpleLimbModel(desc, tuple(limbs), pb, off, Pt, np.array(al), np.array(ai))


# ---------------------------------------------------------------------------------------
# Sec. IV-B: fourth-order forward/inverse kinematics
# ---------------------------------------------------------------------------------------


@dataclass
class LimbKinematics:
    """Per-limb output of :func:`fourth_order_kinematics`: joint derivatives ``th`` (5, N_l)
    (orders 0..4; cut-joint freedoms are quasi-velocities, order 0 unused), relative poses
    ``P`` (n_l, 4, 4), body twists ``V`` (4, n_l, 6) (``V, Vdot, Vddot, Vdddot``), Jacobian
    derivatives ``Jt`` (3, delta, N_l) (``J_t, Jdot_t, Jddot_t``), LU factors of ``J_t``."""

    th: np.ndarray
    P: np.ndarray
    C: np.ndarray
    V: np.ndarray
    Jt: np.ndarray
    lu: tuple = field(repr=False)
    Jp: np.ndarray | None = field(default=None, repr=False)


def fourth_order_kinematics(model: SimpleLimbModel, q, Vt) -> list:
    """Paper 002 Sec. IV-B: ``theta^(1..4)`` of every limb from the closed configuration ``q``
    (tree coordinates, (n,)) and the task twist derivatives ``Vt`` (4, delta)
    (``V_t, Vdot_t, Vddot_t, Vdddot_t``), together with the body twists and their first three
    derivatives.  Four passes per limb (eqs. 15-18 with eqs. 22-28)."""
    tree = model.desc.tree
    Pt = model.Pt
    Cw = forward_kinematics(tree, q)
    F = Cw[model.platform_body] @ model.platform_offset
    Fi = pose_inv(F)
    out = []
    for lb in model.limbs:
        b = lb.bodies
        n, N = len(b), lb.N
        X = tree.X[b]
        P = np.array([tree.B[j] @ exp_se3(tree.X[j], q[j]) for j in b]).reshape(n, 4, 4)
        C = Cw[b]
        AdP = np.array([Ad(Fi @ C[i]) for i in range(n)]).reshape(n, 6, 6)   # Ad(C_p,i)
        AiP = [Ad_inv(P[i]) for i in range(n)]                               # Ad(C_i,i-1)
        J = np.zeros((4, 6, N))                                             # J_p and 3 derivatives
        J[0, :, :n] = np.einsum("nij,nj->in", AdP, X)                       # eq. 22
        J[0, :, n:] = lb.cut_screws
        Jt0 = Pt @ J[0]
        lu = scipy.linalg.lu_factor(Jt0, check_finite=False)
        if np.abs(np.diag(lu[0])).min() < 1e-12 * np.abs(np.diag(lu[0])).max():
            raise SingularityError(f"limb '{lb.name}': task-space Jacobian J_t is singular at this configuration")
        th = np.zeros((5, N))
        V = np.zeros((4, n, 6))
        dV = np.zeros((3, n, 6))          # Delta V_p,i and its first two derivatives
        c = np.zeros((5, 6))               # c^nu (eq. 16), nu = 2..4
        Vp = np.zeros((3, 6))
        # pass 1: 1st-order IK (*) and 0th-order FK (poses above)
        th[1] = scipy.linalg.lu_solve(lu, Vt[0], check_finite=False)
        Vp[0] = J[0] @ th[1]
        # pass 2: velocities, Jdot (eq. 23), c^2 (eq. 17), 2nd-order IK (*)
        for i in range(n):
            prev = V[0, i - 1] if i else np.zeros(6)
            V[0, i] = AiP[i] @ prev + X[i] * th[1, i]
            dV[0, i] = Vp[0] - AdP[i] @ V[0, i]                             # eq. 26
            J[1, :, i] = -ad(dV[0, i]) @ J[0, :, i]                          # eq. 23
        c[2] = J[1] @ th[1]
        th[2] = scipy.linalg.lu_solve(lu, Vt[1] - Pt @ c[2], check_finite=False)
        Vp[1] = J[0] @ th[2] + c[2]
        # pass 3: accelerations, Jddot (eq. 24), c^3, 3rd-order IK
        for i in range(n):
            prev = V[1, i - 1] if i else np.zeros(6)
            aX = ad(X[i])
            V[1, i] = AiP[i] @ prev - th[1, i] * aX @ V[0, i] + X[i] * th[2, i]
            A = ad(dV[0, i])
            dV[1, i] = Vp[1] - AdP[i] @ V[1, i] + A @ Vp[0]                 # eq. 27
            J[2, :, i] = (A @ A - ad(dV[1, i])) @ J[0, :, i]                 # eq. 24
        c[3] = J[2] @ th[1] + 2.0 * J[1] @ th[2]
        th[3] = scipy.linalg.lu_solve(lu, Vt[2] - Pt @ c[3], check_finite=False)
        Vp[2] = J[0] @ th[3] + c[3]
        # pass 4: 2nd derivatives of twists, Jdddot (eq. 25), c^4 (eq. 18), 4th-order IK
        for i in range(n):
            prev = V[2, i - 1] if i else np.zeros(6)
            aX = ad(X[i])
            V[2, i] = (AiP[i] @ prev + X[i] * th[3, i]
                       - aX @ (th[2, i] * V[0, i] + 2.0 * th[1, i] * V[1, i])
                       - th[1, i] ** 2 * aX @ aX @ V[0, i])
            A, B = ad(dV[0, i]), ad(dV[1, i])
            dV[2, i] = Vp[2] - AdP[i] @ V[2, i] + A @ (AdP[i] @ V[1, i] + Vp[1]) + B @ Vp[0]   # eq. 28
            J[3, :, i] = (-A @ A @ A + 2.0 * B @ A + A @ B - ad(dV[2, i])) @ J[0, :, i]     # eq. 25
        c[4] = J[3] @ th[1] + 3.0 * J[2] @ th[2] + 3.0 * J[1] @ th[3]
        th[4] = scipy.linalg.lu_solve(lu, Vt[3] - Pt @ c[4], check_finite=False)
        # 3rd-order forward kinematics
        for i in range(n):
            prev = V[3, i - 1] if i else np.zeros(6)
            aX = ad(X[i])
            t1, t2, t3 = th[1, i], th[2, i], th[3, i]
            V[3, i] = (AiP[i] @ prev + X[i] * th[4, i]
                       - aX @ (t3 * V[0, i] + 3.0 * t2 * V[1, i] + 3.0 * t1 * V[2, i])
                       - 3.0 * t1 * aX @ aX @ (t2 * V[0, i] + t1 * V[1, i])
                       - t1 ** 3 * aX @ aX @ aX @ V[0, i])
        th[0, :n] = q[b]
        out.append(LimbKinematics(th, P, C, V, np.einsum("ij,kjl->kil", Pt, J[:3]), lu, J))
    return out


# ---------------------------------------------------------------------------------------
# Sec. V: second-order inverse dynamics
# ---------------------------------------------------------------------------------------


def limb_second_order_forces(tree, lb: SimpleLimb, kin: LimbKinematics, gravity) -> np.ndarray:
    """Sec. V-C backward recursion: ``Q_bar, Qdot_bar, Qddot_bar`` (3, n_l) of one limb."""
    b = lb.bodies
    n = len(b)
    X = tree.X[b]
    V = kin.V
    th = kin.th
    a0 = np.concatenate([np.zeros(3), -gravity])
    W = np.zeros((3, 6))
    Q = np.zeros((3, n))
    for i in range(n - 1, -1, -1):
        M = tree.M[b[i]]
        g0 = Ad_inv(kin.C[i]) @ a0                 # gravity as a body acceleration
        g1 = -ad(V[0, i]) @ g0
        g2 = -ad(V[1, i]) @ g0 - ad(V[0, i]) @ g1
        aT = [ad(V[k, i]).T for k in range(3)]
        MV = [M @ V[k, i] for k in range(3)]
        Wn = np.empty((3, 6))
        Wn[0] = M @ (V[1, i] + g0) - aT[0] @ MV[0]
        Wn[1] = M @ (V[2, i] + g1) - aT[0] @ MV[1] - aT[1] @ MV[0]
        Wn[2] = M @ (V[3, i] + g2) - aT[0] @ MV[2] - aT[2] @ MV[0] - 2.0 * aT[1] @ MV[1]
        if i + 1 < n:
            AT = Ad_inv(kin.P[i + 1]).T
            xT = ad(X[i + 1]).T
            t1, t2 = th[1, i + 1], th[2, i + 1]
            Wn[0] += AT @ W[0]
            Wn[1] += AT @ (W[1] - t1 * xT @ W[0])
            Wn[2] += AT @ (W[2] - 2.0 * t1 * xT @ W[1] + (t1 * t1 * xT @ xT - t2 * xT) @ W[0])
        W = Wn
        Q[:, i] = W @ X[i]
    return Q


def second_order_inverse_dynamics(model: SimpleLimbModel, kins: list, gravity=None) -> np.ndarray:
    """Eqs. 14, 19, 20: ``(u, udot, uddot)`` (3, na) from the limb kinematics of
    :func:`fourth_order_kinematics`, with ``Fdot = -F Jdot_t F``,
    ``Fddot = 2 F Jdot_t F Jdot_t F - F Jddot_t F`` and ``J_IK`` the actuated rows of ``F``."""
    tree = model.desc.tree
    g = tree.gravity if gravity is None else np.asarray(gravity, dtype=float)
    delta = model.Pt.shape[0]
    s = np.zeros((3, delta))
    Fs = []
    for lb, kin in zip(model.limbs, kins):
        n = len(lb.bodies)
        F0 = scipy.linalg.lu_solve(kin.lu, np.eye(delta), check_finite=False)
        J1, J2 = kin.Jt[1], kin.Jt[2]
        F1 = -F0 @ J1 @ F0
        F2 = 2.0 * F0 @ J1 @ F0 @ J1 @ F0 - F0 @ J2 @ F0
        Fs.append((F0, F1, F2))
        Q = limb_second_order_forces(tree, lb, kin, g)
        Fb0, Fb1, Fb2 = F0[:n], F1[:n], F2[:n]
        s[0] += Fb0.T @ Q[0]
        s[1] += Fb0.T @ Q[1] + Fb1.T @ Q[0]
        s[2] += Fb0.T @ Q[2] + 2.0 * Fb1.T @ Q[1] + Fb2.T @ Q[0]
    JIK = np.array([[Fs[l][k][i] for l, i in zip(model.actuator_limb, model.actuator_local)] for k in range(3)])
    lu = scipy.linalg.lu_factor(JIK[0].T, check_finite=False)
    u0 = scipy.linalg.lu_solve(lu, s[0], check_finite=False)
    u1 = scipy.linalg.lu_solve(lu, s[1] - JIK[1].T @ u0, check_finite=False)
    u2 = scipy.linalg.lu_solve(lu, s[2] - JIK[2].T @ u0 - 2.0 * JIK[1].T @ u1, check_finite=False)
    return np.array([u0, u1, u2])


def tree_motion_from_limbs(model: SimpleLimbModel, kins: list) -> np.ndarray:
    """Derivatives (5, n) of every tree joint (orders 0..4) from the limbs' solutions."""
    out = np.zeros((5, model.desc.tree.nq))
    for lb, kin in zip(model.limbs, kins):
        out[:, lb.bodies] = kin.th[:, :len(lb.bodies)]
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
    q0 = JD.close_loops(jm, x, q_guess)
    if method == "recursive":
        kins = fourth_order_kinematics(m.limbs, q0, np.asarray(derivs, dtype=float))
        U = second_order_inverse_dynamics(m.limbs, kins, gravity)
        qder = tree_motion_from_limbs(m.limbs, kins)
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
    for name, a in zip(("xd", "xdd", "xddd", "xdddd"), ders):
        want = (x.shape[0], width) if batched else (width,)
        if a.shape != want:
            raise StateError(f"{name} has shape {a.shape}, expected {want}")
        if not np.all(np.isfinite(a)):
            raise StateError(f"{name} is not finite")
    if not np.all(np.isfinite(x)):
        raise StateError("x is not finite")
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
