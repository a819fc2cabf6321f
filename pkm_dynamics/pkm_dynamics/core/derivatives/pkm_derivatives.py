"""First derivatives of the task-space dynamics of a parallel robot (paper 001 eqs. 39-45) by
forward-mode differentiation: first-order jets (dual numbers, :mod:`.taylor` of degree 1)
propagated through the closure and the tree dynamics of the general route
(:mod:`.jet_dynamics`), one direction at a time.  Exact to round-off, no differencing.

State: the platform pose ``C``, its task twist ``V_t`` (delta,), task acceleration ``Vdot_t``
or actuator efforts ``u``.  Pose derivatives are taken along ``C exp(P_p delta)`` (a
body-frame perturbation of the task coordinates, Pinocchio's convention on SE(3)): column j of
``d_x`` is the derivative along ``delta = e_j`` at ``delta = 0``.

For a direction ``(w, v, a)`` of ``(delta, V_t, Vdot_t)`` the tree motion is a jet in the
parameter ``s`` (:func:`direction_jets`):

1. ``q(s) = q0 + s q1``: the closed configuration along the pose (:func:`.tree_motion_jet` with
   the constant task twist ``w``);
2. ``K(q) = [G(q); P_t J_p(q)]`` (loop constraint and task Jacobians, jets along ``q(s)``);
   ``qd(s)`` from ``K qd = [0; V_t + s v]``;
3. ``qdd(s)`` from ``K qdd = [0; Vdot_t + s a] - beta(q, qd)``, ``beta = (DK[qd]) qd`` the
   velocity-product terms (:func:`.jet_bias.velocity_product_jet`, shared with the chains of
   loops);
4. ``tau(s)`` = RNEA of the tree (:func:`.rnea_jet`) plus the joints' friction torques
   ``tau_f(qd(s))`` (:func:`.jet_bias.with_friction_jet`: exact for the smooth law), ``N(s)``
   from ``K N = [0; I]`` (tree velocities per unit task twist), ``J_IK(s) = S N(s)`` and the
   generalised task force ``W(s) = N^T tau - P_p^T W_EE`` (eqs. 39, 45: ``J_IK^T u = W``; the
   friction's share ``N^T tau_f`` is eq. 44's ``W_t``, each tree joint once).

Inverse dynamics: ``u = J_IK^-T W`` (minimum norm for redundant actuation); forward dynamics at
``Vdot_t = FD(C, V_t, u)``: ``J_IK^T u - W = 0`` differentiated, ``M_t dVdot = dJ_IK^T u - dW``
with ``M_t = dW/dVdot``.  Cost: ``3 delta`` directions, each a few jet evaluations of the tree
in numpy (see bench/README.md).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ..spatial import taylor as T
from .derivatives import DynamicsDerivatives
from .jet_bias import velocity_product_jet, with_friction_jet
from ..errors import StateError
from ..hoid.jet_dynamics import (close_loops, constraint_jacobian_jet, pose_jets, rnea_jet, tree_motion_jet,
                                 _jacobian_jet)


def task_jacobian_jet(jm, qj) -> np.ndarray:
    """Jet (K+1, m + delta, n) of ``K(q) = [G(q); P_t J_p(q)]`` along the tree jet ``qj``."""
    tree = jm.desc.tree
    K1 = qj.shape[0]
    _, C = pose_jets(tree, qj)
    rows = [constraint_jacobian_jet(tree, geo, C, K1) for geo in jm.constraints.geometry]
    rows.append(np.einsum("ti,kij->ktj", jm.Pt, _jacobian_jet(tree, C, jm.platform_body, K1, jm.platform_offset)))
    return np.concatenate(rows, axis=1)


def direction_jets(jm, q0, V, A, wrench, w, v, a) -> tuple:
    """First-order jets along the direction ``(w, v, a)`` of ``(delta, V_t, Vdot_t)`` (steps 1-4
    of the module docstring): ``(W, J)`` of shapes (2, delta) and (2, n_act, delta), the
    generalised task force and ``J_IK``; ``wrench``: ``P_p^T W_EE`` (delta,) or None."""
    tree = jm.desc.tree
    n, dp = tree.nq, jm.Pt.shape[0]
    q = tree_motion_jet(jm, q0, np.asarray(w, dtype=float)[None]) if np.any(w) else np.stack([q0, np.zeros(n)])
    Kj = task_jacobian_jet(jm, q)
    m = Kj.shape[1] - dp
    Kp = np.linalg.pinv(Kj[0])
    rhs = np.zeros((2, m + dp))
    rhs[0, m:], rhs[1, m:] = V, v
    qd = T.solve(Kj, rhs, Kp)
    rhs = -velocity_product_jet(partial(task_jacobian_jet, jm), q0, q[1], qd)
    rhs[0, m:] += A
    rhs[1, m:] += a
    qdd = T.solve(Kj, rhs, Kp)
    tau = with_friction_jet(jm.desc, rnea_jet(tree, q, qd, qdd), qd)        # eq. 44: Q_l + tau_f
    I = np.zeros((2, m + dp, dp))
    I[0, m:] = np.eye(dp)
    N = T.solve(Kj, I, Kp)                                   # (2, n, delta)
    W = T.matmul(np.swapaxes(N, -1, -2), tau[..., None])[..., 0]
    if wrench is not None:
        W[0] -= wrench
    return W, N[:, jm.actuated, :]


def _state(robot, jm, pose, initial):
    """The closed tree configuration of ``pose`` (Newton from the robot's IK solution)."""
    sol = robot.admissible_task_state(pose, initial)
    return close_loops(jm, np.asarray(pose, dtype=float), sol.q), sol


def _actuator_forces(W, J) -> np.ndarray:
    """Jet of ``u`` with ``J^T u = W``: ``J^-T W``, or ``J (J^T J)^-1 W`` (minimum norm) for
    redundant actuation."""
    if J.shape[1] == J.shape[2]:
        return T.solve(np.swapaxes(J, -1, -2), W)
    y = T.solve(T.matmul(np.swapaxes(J, -1, -2), J), W)
    return T.matmul(J, y[..., None])[..., 0]


def _one(robot, inverse, pose, V, third, wrench, initial):
    jm = robot.jet_model              # built with the robot (ParallelRobot.__init__)
    dp = robot.dof
    if inverse:                         # the value first: it checks every input and names it
        value = robot.inverse_dynamics(pose, V, third, wrench=wrench, initial=initial)
        A = np.asarray(third, dtype=float)
    else:
        value = A = robot.forward_dynamics(pose, V, third, wrench=wrench, initial=initial)
        u = np.asarray(third, dtype=float)
    V = np.asarray(V, dtype=float)
    Pw = None if wrench is None else robot.P_p.T @ np.asarray(wrench, dtype=float).reshape(6)
    q0, _ = _state(robot, jm, pose, initial)
    z = np.zeros(dp)
    cols = []
    for which in range(3):
        for j in range(dp):
            e = np.eye(dp)[j]
            cols.append(direction_jets(jm, q0, V, A, Pw, *(e if i == which else z for i in range(3))))
    J = cols[0][1][0]
    if inverse:
        d = [_actuator_forces(W, Jj)[1] for W, Jj in cols]
        d_x, d_xd, d_u = (np.column_stack(d[k * dp:(k + 1) * dp]) for k in range(3))
        return value, d_x, d_xd, d_u
    Mt = np.column_stack([W[1] for W, _ in cols[2 * dp:]])          # dW / dVdot
    d_x = np.column_stack([Jj[1].T @ u - W[1] for W, Jj in cols[:dp]])
    d_xd = np.column_stack([-W[1] for W, _ in cols[dp:2 * dp]])
    sol = np.linalg.solve(Mt, np.hstack([d_x, d_xd, J.T]))
    return value, sol[:, :dp], sol[:, dp:2 * dp], sol[:, 2 * dp:]


def _finite(out: tuple) -> tuple:
    """``out`` if every entry is finite, else :class:`StateError` (never a non-finite result)."""
    if not all(np.isfinite(a).all() for a in out):
        raise StateError("the dynamics derivatives are not finite at this state (near a singularity)")
    return out


def _call(robot, inverse, pose, V, third, wrench, initial) -> DynamicsDerivatives:
    pose = np.asarray(pose, dtype=float)
    if pose.ndim == 2:
        return DynamicsDerivatives(*_finite(_one(robot, inverse, pose, V, third, wrench, initial)))
    rows = []
    W = None if wrench is None else np.asarray(wrench, dtype=float).reshape(-1, 6)
    for i in range(len(pose)):
        wi = None if W is None else W[i if len(W) > 1 else 0]
        rows.append(_finite(_one(robot, inverse, pose[i], np.asarray(V)[i], np.asarray(third)[i], wi, initial)))
    return DynamicsDerivatives(*(np.stack(r) for r in zip(*rows)))


def pkm_inverse_dynamics_derivatives(robot, pose, twist, acceleration, wrench=None, initial=None):
    """``u`` (n_act,) of :meth:`ParallelRobot.inverse_dynamics` and its derivatives ``d_x``
    (along ``pose exp(P_p delta)``), ``d_xd`` (twist), ``d_u`` (task acceleration), each
    (n_act, delta); batched over a leading axis of pose/twist/acceleration/wrench."""
    return _call(robot, True, pose, twist, acceleration, wrench, initial)


def pkm_forward_dynamics_derivatives(robot, pose, twist, u, wrench=None, initial=None):
    """``Vdot_t`` (delta,) of :meth:`ParallelRobot.forward_dynamics` and its derivatives
    ``d_x`` (along ``pose exp(P_p delta)``), ``d_xd`` (twist), each (delta, delta), and
    ``d_u = M_t^-1 J_IK^T`` (delta, n_act); batched over a leading axis."""
    return _call(robot, False, pose, twist, u, wrench, initial)
