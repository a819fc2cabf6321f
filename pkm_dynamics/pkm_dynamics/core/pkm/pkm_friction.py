"""Joint friction of a parallel robot: paper 001's dissipative wrench ``W_t`` (eq. 44) from the
friction torques of every limb's tree joints, and the actuator forces that balance it.

The friction torques ``tau_f(thetad)`` (:mod:`..friction`) of limb l are its ``Q_l`` of eq. 34;
with the limb's task-space Jacobian ``F_l = K_l`` (``thetad_l = K_l V_t``, eq. 27) eq. 44 gives

    W_t = sum_l K_l^T tau_f,l(K_l V_t)

which enters eq. 39 beside ``C_t V_t + W_grav``: inverse dynamics (eq. 45) adds
``u_f = J_IK^-T W_t`` (the least-norm solution for a redundant actuation), forward dynamics
solves eq. 39 under ``u - u_f``.  Its power ``V_t^T W_t = sum thetad^T tau_f`` is what the joints'
friction dissipates.  Every tree joint of the robot counts once: a joint two limbs share takes
its friction in the limb the robot's ``tree_state`` reads it from.
"""
from __future__ import annotations

import numpy as np

from ..friction.friction_kernels import FRICTION_COLUMNS, SMOOTHING_VELOCITY, STRIBECK_VELOCITY
from ..friction.friction_model import friction_torques


def flat_friction_table(table: np.ndarray, toff: np.ndarray, whole_src, whole_dst, nq: int) -> np.ndarray:
    """The friction rows (n_flat, 5) of the limbs' joints end to end (offsets ``toff``): the row
    of tree joint ``whole_dst[i]`` at flat entry ``whole_src[i]``, once per tree joint; zero
    (no friction) elsewhere.  Read-only."""
    flat = np.zeros((int(toff[-1]), FRICTION_COLUMNS))
    flat[:, STRIBECK_VELOCITY] = flat[:, SMOOTHING_VELOCITY] = 1.0
    taken = np.zeros(nq, dtype=bool)
    for src, dst in zip(whole_src, whole_dst):
        if not taken[dst]:
            flat[src], taken[dst] = table[dst], True
    flat.setflags(write=False)
    return flat


def limb_task_jacobian(robot, sol) -> np.ndarray:
    """``K`` (n_flat, delta): the flat limb joint rates per unit task twist at the IK solution
    ``sol`` (eq. 27): the limbs' ``K_l`` stacked where the solution carries its limb Jacobians,
    else column by column (the rates of the unit twists ``e_i``)."""
    if sol.jacobians is not None:
        return np.concatenate([j.K for j in sol.jacobians])
    eye = np.eye(robot.dof)
    return np.stack([robot._rates(sol, eye[i], None)[0] for i in range(robot.dof)], axis=1)


def dissipative_wrench(flat_table: np.ndarray, K: np.ndarray, V_t) -> tuple:
    """``(W_t, dW_t/dV_t)``: eq. 44 with ``Q_l = tau_f,l`` for the task twist ``V_t`` (delta,),
    ``K`` (n_flat, delta) of :func:`limb_task_jacobian`; ``dW_t/dV_t = K^T diag(tau_f') K``."""
    tau, dtau, _ = friction_torques(flat_table, K @ np.asarray(V_t, dtype=float))
    return K.T @ tau, K.T @ (dtau[:, None] * K)


def friction_efforts(robot, sol, V_t) -> np.ndarray:
    """``u_f`` (n_act,) = ``J_IK^-T W_t`` (eq. 45's share of eq. 44) at the IK solution ``sol``."""
    W, _ = dissipative_wrench(robot.friction_table, limb_task_jacobian(robot, sol), V_t)
    return robot._solve_u(sol.J_IK, W)
