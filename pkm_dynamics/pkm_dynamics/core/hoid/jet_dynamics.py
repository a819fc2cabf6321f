"""General route of the higher-order inverse dynamics: truncated Taylor polynomials (jets,
:mod:`.taylor`) of the motion propagated through the loop closure and the tree dynamics.

It works on any robot description the core can load — module chains, PKM with simple or
hybrid limbs — because it uses nothing but the spanning tree and the cut-joint constraints
(paper 001 App. A).  Steps, for a motion given by its derivatives up to order 4:

1. geometric closure (order 0): Newton solve of ``g(q) = 0`` with the actuated joints
   (module chains) or the platform pose (PKM) prescribed;
2. orders ``k = 1..4``: the ``t^k`` coefficient of ``g(q(t)) = 0`` is
   ``G(q_0) q_k + r_k(q_0..q_{k-1}) = 0``; together with the prescribed actuator coefficients
   ``x_k`` (or the task twist coefficients ``V_t,k-1 = k P_t J_p q_k + ...``) one
   pseudo-inverse of ``[G; S]`` (``[G; P_t J_p]``) solves every order;
3. the tree inverse dynamics (RNEA) evaluated in jet arithmetic on ``(q, qd, qdd)``
   (degree 2) gives ``tau(t)`` to second order;
4. the actuator forces: with ``Z(t)`` the tree velocities per unit actuator rate
   (``[G(t); S] Z = [0; 1]``), or per unit task twist for a redundantly actuated PKM
   (``[G(t); P_t J_p(t)] Z = [0; 1]``),
   the projection ``(S Z)^T u = Z^T tau`` of
   :func:`~pkm_dynamics.core.constrained.kkt_inverse_dynamics` (``tau = S^T u + G^T lambda``
   multiplied by ``Z^T``), solved for the least-norm ``u`` (redundant actuation) in jet
   arithmetic.

All derivatives are exact (no differencing); the result is the reference the recursive
route of paper 002 (:mod:`.hoid_recursion`) is checked against.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spatial import taylor as T
from ..bounds import continuation_steps
from ..tree.cut_joints import LoopConstraints
from ..description.robot_description import RobotDescription
from ..errors import ConvergenceError, SingularityError, StateError
from ..spatial.se3 import exp_se3, log_se3, pose_inv
from ..status import CONTINUATION_STEP
from ..tree.tree_dynamics import body_jacobian, forward_kinematics

#: order of the motion jets (4th derivative in) and of the force jets (2nd derivative out)
MOTION_DEGREE = 4
FORCE_DEGREE = 2
TASK_INDEX = {"wx": 0, "wy": 1, "wz": 2, "vx": 3, "vy": 4, "vz": 5}


@dataclass
class JetModel:
    """Constant data of the general route for one robot description."""

    desc: RobotDescription
    constraints: LoopConstraints
    actuated: np.ndarray          # tree indices of the actuated joints (na,)
    S: np.ndarray                 # actuator selection (na, n)
    platform_body: int = -1       # tree body carrying the platform frame (-1: none)
    platform_offset: np.ndarray | None = None   # platform frame in that body (4x4)
    Pt: np.ndarray | None = None  # task-space selection (delta, 6)

    @property
    def is_pkm(self) -> bool:
        return self.Pt is not None


def jet_model(desc: RobotDescription) -> JetModel:
    tree = desc.tree
    act = np.array([tree.joint_index(j) for j in desc.actuated_joints], dtype=int)
    S = np.zeros((len(act), tree.nq))
    S[np.arange(len(act)), act] = 1.0
    m = JetModel(desc, LoopConstraints(desc), act, S)
    if desc.platform is not None:
        body, off = tree.frame(desc.platform.link)
        m.platform_body = body
        m.platform_offset = off @ desc.platform.origin
        m.Pt = np.eye(6)[[TASK_INDEX[c] for c in desc.platform.task_space]]
    return m


# ---------------------------------------------------------------------------------------
# jet versions of the tree kinematics, the cut-joint constraints and the RNEA
# ---------------------------------------------------------------------------------------

def _identity_jet(K1):
    I = np.zeros((K1, 4, 4))
    I[0] = np.eye(4)
    return I


def pose_jets(tree, qj: np.ndarray) -> tuple:
    """Jets of the relative poses ``P_i = B_i exp(X_i q_i)`` and absolute poses ``C_i``
    (lists of ``(K+1, 4, 4)``) for a jet ``qj`` of tree coordinates ``(K+1, n)``."""
    P, C = [], []
    for i in range(tree.nq):
        Pi = T.cmatmul(tree.B[i], T.exp_joint(tree.X[i], qj[:, i]))
        p = tree.parent[i]
        P.append(Pi)
        C.append(Pi if p < 0 else T.matmul(C[p], Pi))
    return P, C


def _body_C(C, b, K1):
    return _identity_jet(K1) if b < 0 else C[b]


def constraint_jet(geo, C, K1) -> np.ndarray:
    """Jet of the residual ``g`` (eqs. 50-51, 58 of paper 001) of one cut joint, ``(K+1, m)``."""
    Ck, Cr = _body_C(C, geo.body_k, K1), _body_C(C, geo.body_r, K1)
    Rkt = np.swapaxes(Ck[:, :3, :3], -1, -2)
    R_kr = T.matmul(Rkt, Cr[:, :3, :3])
    dd = T.matmul(Rkt, (Cr[:, :3, 3] - Ck[:, :3, 3])[..., None])[..., 0] + R_kr @ geo.d_r
    d = dd.copy()
    d[0] -= geo.d_k
    g_pos = d @ geo.u_pos.T
    g_rot = np.einsum("ai,kia->ka", geo.u_a, R_kr @ geo.u_b.T) if len(geo.u_a) else np.zeros((K1, 0))
    return np.concatenate([g_pos, g_rot], axis=1)


def _jacobian_jet(tree, C, body, K1, offset=None) -> np.ndarray:
    """Jet of the body-fixed Jacobian (6, n) of ``C[body] @ offset`` (cf. ``body_jacobian``)."""
    J = np.zeros((K1, 6, tree.nq))
    if body < 0:
        return J
    F = C[body] if offset is None else T.cmatmul(np.eye(4), C[body]) @ offset
    Fi = T.pose_inv(F)
    for j in tree.support(body):
        J[:, :, j] = T.Ad(T.matmul(Fi, C[j])) @ tree.X[j]
    return J


def constraint_jacobian_jet(tree, geo, C, K1) -> np.ndarray:
    """Jet of the constraint Jacobian ``G = B J`` (eqs. 55-56, 59) of one cut joint, (K+1, m, n)."""
    Ck, Cr = _body_C(C, geo.body_k, K1), _body_C(C, geo.body_r, K1)
    Rkt = np.swapaxes(Ck[:, :3, :3], -1, -2)
    R_kr = T.matmul(Rkt, Cr[:, :3, :3])
    dd = T.matmul(Rkt, (Cr[:, :3, 3] - Ck[:, :3, 3])[..., None])[..., 0] + R_kr @ geo.d_r
    B_pos = np.zeros((K1, 3, 12))
    B_pos[:, :, 0:3] = T.hat(dd)
    B_pos[0, :, 3:6] = -np.eye(3)
    B_pos[:, :, 6:9] = -(R_kr @ T.hat(geo.d_r[None])[0])
    B_pos[:, :, 9:12] = R_kr
    rows = [np.einsum("ai,kij->kaj", geo.u_pos, B_pos)]
    for ua, ub in zip(geo.u_a, geo.u_b):
        wb = R_kr @ ub
        Br = np.zeros((K1, 3, 12))
        Br[:, :, 0:3] = T.hat(wb)
        Br[:, :, 6:9] = -(R_kr @ T.hat(ub[None])[0])
        rows.append(np.einsum("i,kij->kj", ua, Br)[:, None, :])
    Bm = np.concatenate(rows, axis=1)
    J = np.concatenate([_jacobian_jet(tree, C, geo.body_k, K1), _jacobian_jet(tree, C, geo.body_r, K1)], axis=1)
    return T.matmul(Bm, J)


def rnea_jet(tree, q, qd, qdd, gravity=None) -> np.ndarray:
    """Jet of the tree inverse dynamics ``tau(t)`` (K+1, n): the recursive Newton-Euler
    algorithm of :func:`~pkm_dynamics.core.tree_dynamics.rnea` in jet arithmetic."""
    K1, n = q.shape
    g = tree.gravity if gravity is None else np.asarray(gravity, dtype=float)
    a0 = np.concatenate([np.zeros(3), -g])
    Ai, V, A = [], [], []
    for i in range(n):
        Pi = T.cmatmul(tree.B[i], T.exp_joint(tree.X[i], q[:, i]))
        Ad_i = T.Ad_inv(Pi)
        X = tree.X[i]
        p = tree.parent[i]
        if p < 0:
            Vi = qd[:, i, None] * X
            Ai_acc = Ad_i @ a0 + qdd[:, i, None] * X
        else:
            Vi = T.matmul(Ad_i, V[p][..., None])[..., 0] + qd[:, i, None] * X
            Ai_acc = T.matmul(Ad_i, A[p][..., None])[..., 0] + qdd[:, i, None] * X
        Ai_acc = Ai_acc + T.mul(qd[:, i, None], T.ad(Vi) @ X)
        Ai.append(Ad_i)
        V.append(Vi)
        A.append(Ai_acc)
    W = []
    for i in range(n):
        MV = V[i] @ tree.M[i].T
        W.append(A[i] @ tree.M[i].T - T.matmul(np.swapaxes(T.ad(V[i]), -1, -2), MV[..., None])[..., 0])
    tau = np.zeros((K1, n))
    for i in range(n - 1, -1, -1):
        tau[:, i] = W[i] @ tree.X[i]
        p = tree.parent[i]
        if p >= 0:
            W[p] = W[p] + T.matmul(np.swapaxes(Ai[i], -1, -2), W[i][..., None])[..., 0]
    return tau


# ---------------------------------------------------------------------------------------
# loop closure: order 0 (Newton) and orders 1..4 (linear)
# ---------------------------------------------------------------------------------------

def _platform_pose(jm: JetModel, q) -> np.ndarray:
    C = forward_kinematics(jm.desc.tree, q)
    return C[jm.platform_body] @ jm.platform_offset



def close_loops(jm: JetModel, x, q_guess=None, tol: float = 1e-12, max_iter: int = 50) -> np.ndarray:
    """Tree coordinates ``q`` (n,) with ``g(q) = 0`` and the actuated joints at ``x`` (module
    chains, ``x`` of shape (na,)) or the platform frame at the pose ``x`` (PKM, 4x4).
    Gauss-Newton with the constraint Jacobian (redundant rows allowed), from ``q_guess``.
    Without a guess it starts at the zero configuration (where every loop of a valid
    description is closed) and follows the straight path to ``x`` in steps of at most
    :data:`CONTINUATION_STEP`, so that it stays on that configuration's assembly branch."""
    tree = jm.desc.tree
    x = np.asarray(x, dtype=float)
    if q_guess is None:
        q = np.zeros(tree.nq)
        if jm.is_pkm:
            F0 = _platform_pose(jm, q)
            xi = log_se3(pose_inv(F0) @ x)
            steps = continuation_steps(np.abs(xi).max(), CONTINUATION_STEP, "the platform pose")
            for s in range(1, steps):
                q = _newton(jm, F0 @ exp_se3(xi * s / steps), q, 1e-9, max_iter)
        else:
            dx = x - q[jm.actuated]
            steps = continuation_steps(np.abs(dx).max(), CONTINUATION_STEP, "the actuator state")
            for s in range(1, steps):
                q = _newton(jm, x - dx * (1 - s / steps), q, 1e-9, max_iter)
        return _newton(jm, x, q, tol, max_iter)
    return _newton(jm, x, np.array(q_guess, dtype=float), tol, max_iter)


def _newton(jm: JetModel, x, q, tol, max_iter) -> np.ndarray:
    tree = jm.desc.tree
    if jm.is_pkm:
        if x.shape != (4, 4):
            raise StateError(f"the platform pose must be a 4x4 homogeneous matrix, got shape {x.shape}")
        x_inv = pose_inv(x)
    res = np.inf
    for _ in range(max_iter):
        g, G, _ = jm.constraints.evaluate(q)
        if jm.is_pkm:
            C = forward_kinematics(tree, q)
            F = C[jm.platform_body] @ jm.platform_offset
            e = log_se3(x_inv @ F)
            Jt = body_jacobian(tree, C, jm.platform_body, jm.platform_offset)
            r = np.concatenate([g, e])
            Jm = np.vstack([G, Jt])
        else:
            r = np.concatenate([g, q[jm.actuated] - x])
            Jm = np.vstack([G, jm.S])
        res = np.abs(r).max()
        if res < tol:
            return q
        dq, *_ = np.linalg.lstsq(Jm, -r, rcond=None)
        q = q + dq
    raise ConvergenceError(f"loop closure of robot '{tree.name}' did not converge in {max_iter} "
                           f"iterations (residual {res:.3g}); give a closer starting configuration")


def _residual_jets(jm: JetModel, qj: np.ndarray) -> tuple:
    """Jets of ``g(q(t))`` and of the task twist ``P_t V_p(t)`` (PKM) along ``qj``."""
    tree = jm.desc.tree
    K1 = qj.shape[0]
    _, C = pose_jets(tree, qj)
    g = [constraint_jet(geo, C, K1) for geo in jm.constraints.geometry]
    g = np.concatenate(g, axis=1) if g else np.zeros((K1, 0))
    Vt = None
    if jm.is_pkm:
        F = C[jm.platform_body] @ jm.platform_offset
        Vt = T.body_twist(F) @ jm.Pt.T
    return g, Vt


def tree_motion_jet(jm: JetModel, q0: np.ndarray, xj: np.ndarray) -> np.ndarray:
    """Jet (degree ``K = len(xj) - 1``) of the tree coordinates along a motion.

    ``q0``: closed configuration (n,); ``xj``: for module chains the jet of the actuator
    coordinates ``(K+1, na)``; for PKM the jet of the task twist ``V_t`` ``(K, delta)``
    (one degree lower: ``V_t, Vdot_t, ...`` correspond to the 1st.. derivatives of the pose).
    """
    tree = jm.desc.tree
    n = tree.nq
    K = xj.shape[0] - 1 if not jm.is_pkm else xj.shape[0]
    _, G0, _ = jm.constraints.evaluate(q0)
    if jm.is_pkm:
        C0 = forward_kinematics(tree, q0)
        Tm = jm.Pt @ body_jacobian(tree, C0, jm.platform_body, jm.platform_offset)
    else:
        Tm = jm.S
    Km = np.vstack([G0, Tm])
    s = np.linalg.svd(Km, compute_uv=False)
    if s[-1] < 1e-9 * s[0]:
        raise SingularityError(f"robot '{tree.name}' is at a singular configuration: the loop constraints "
                               f"and the prescribed {'task' if jm.is_pkm else 'actuator'} motion do not "
                               f"determine the tree velocities (smallest singular value {s[-1]:.3g})")
    Kp = np.linalg.pinv(Km)
    qj = np.zeros((K + 1, n))
    qj[0] = q0
    for k in range(1, K + 1):
        g, Vt = _residual_jets(jm, qj[: k + 1])
        if jm.is_pkm:
            rhs_t = (xj[k - 1] - Vt[k - 1]) / k
        else:
            rhs_t = xj[k] - qj[k, jm.actuated]
        qj[k] = Kp @ np.concatenate([-g[k], rhs_t])
    return qj


def motion_basis_jet(jm: JetModel, C, D1: int) -> np.ndarray:
    """Jet (``D1`` coefficients) of ``Z(t)`` (n, m): tree velocities whose columns span the
    motions the loops admit (null space of ``G``), ``[G(t); T(t)] Z(t) = [0; 1]``: ``T = S``
    (m = na, per unit actuator rate) where the actuators determine the motion (module chains,
    PKM with as many actuators as degrees of freedom), else ``T = P_t J_p(t)`` (redundantly
    actuated PKM, m = delta: per unit task twist; ``[G; S] Z = [0; 1]`` has no solution there)."""
    tree = jm.desc.tree
    G = [constraint_jacobian_jet(tree, geo, C, D1) for geo in jm.constraints.geometry]
    if jm.is_pkm and len(jm.actuated) > jm.Pt.shape[0]:
        Tm = jm.Pt @ _jacobian_jet(tree, C, jm.platform_body, D1, jm.platform_offset)
    else:
        Tm = np.zeros((D1,) + jm.S.shape)
        Tm[0] = jm.S
    Kj = np.concatenate(G + [Tm], axis=1)
    m = Tm.shape[1]
    rhs = np.zeros((D1, Kj.shape[1], m))
    rhs[0, -m:] = np.eye(m)
    return T.solve(Kj, rhs)


def minimum_norm_force_jet(B: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Jet of the least-norm ``u(t)`` with ``B(t) u(t) = f(t)``, ``B`` (m, na) of full row rank
    m <= na (``B`` of shape (D1, m, na), ``f`` (D1, m)): ``u = B^+ f = B^T y`` with
    ``(B B^T) y = f``, both solved in jet arithmetic, so that the derivatives include those of
    the pseudo-inverse (square ``B``: ``u = B^-1 f``).  Differentiating ``u = B^T y``,
    ``B B^T y = f``::

        B B^T ydot = fdot - (Bdot B^T + B Bdot^T) y
        udot = Bdot^T y + B^T ydot = B^+ (fdot - Bdot u) + (1 - B^+ B) Bdot^T y

    The last term (in the null space of ``B``: the internal forces of a redundant actuation) is
    what ``B^+ fdot`` misses besides ``-B^+ Bdot u``; ``uddot`` follows from the second-order
    coefficients of the same two products (:func:`.taylor.solve`, :func:`.taylor.matmul`)."""
    Bt = np.swapaxes(B, -1, -2)
    y = T.solve(T.matmul(B, Bt), f[..., None])
    return T.matmul(Bt, y)[..., 0]


def actuator_force_jet(jm: JetModel, qj: np.ndarray, gravity=None, degree: int = FORCE_DEGREE) -> np.ndarray:
    """Jet (degree ``degree``) of the actuator forces ``u(t)`` along the tree motion jet ``qj``
    (which must have degree ``degree + 2``): the KKT equations ``tau = S^T u + G^T lambda``
    (:func:`~pkm_dynamics.core.constrained.kkt_inverse_dynamics`) projected on the admissible
    motions ``Z(t)`` (:func:`motion_basis_jet`), ``(S Z)^T u = Z^T tau``, solved for the
    least-norm ``u`` (:func:`minimum_norm_force_jet`; redundant actuation, paper 001 Sec. 3.7:
    the same ``u`` as the task-space inverse dynamics, eq. 45 in the minimum-norm sense; with
    as many actuators as degrees of freedom the one solution)."""
    tree = jm.desc.tree
    D1 = degree + 1
    q = qj[:D1]
    qd = T.deriv(qj)[:D1]
    qdd = T.deriv(T.deriv(qj))[:D1]
    tau = rnea_jet(tree, q, qd, qdd, gravity)
    _, C = pose_jets(tree, q)
    Z = motion_basis_jet(jm, C, D1)
    Zt = np.swapaxes(Z, -1, -2)
    B = Zt @ jm.S.T                     # (S Z)^T, coefficient by coefficient (S constant)
    return minimum_norm_force_jet(B, T.matmul(Zt, tau[..., None])[..., 0])
