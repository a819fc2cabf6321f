"""Forward kinematics with rates: from actuator positions (and rates) to the end-effector or
platform pose and twist, every tree joint, and the task-space mass matrix of a PKM.

* Module chains (paper 000): the pose is the product of the module poses (eqs. 2-3,
  :func:`.module_chain.chain_forward_kinematics`), the tree joints follow from the loop
  closures (eqs. 2, 4-5, :meth:`.module_chain_robot.ModuleChainRobot.tree_state`) and the
  end-effector twist is ``V_E = J xd`` (6,) with the end-effector Jacobian ``J`` (6, n)
  (:func:`.chain_ik.chain_jacobian`).
* Parallel manipulators (paper 001): the pose is found by Newton's method on the inverse
  kinematics (:meth:`.pkm.ParallelRobot.forward_kinematics`); the task twist solves
  ``J_IK V_t = xd`` (eq. 30; least squares, and refused when the rates of a redundantly
  actuated robot are inconsistent); the tree-joint rates are those of the velocity IK at
  ``(pose, V_t)`` (eqs. 27-29); ``M_t`` (delta_p, delta_p) is the reflected mass of Sec. 5.4,
  eq. 40 (:meth:`.pkm.ParallelRobot.mass_matrix`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import StateError

#: relative residual of J_IK V_t = xd up to which actuator rates count as consistent
CONSISTENT_RATES = 1e-6


@dataclass(frozen=True)
class ForwardState:
    """``pose`` (4, 4) of the end effector / platform in the root link frame; ``twist``: module
    chain: the body-fixed end-effector twist (6,) (angular, linear), PKM: the task twist V_t
    (delta_p,), None without rates; ``q`` (nq,), ``qd`` (nq,) or None: every tree joint;
    ``mass_matrix``: PKM: M_t (delta_p, delta_p), module chain: None; ``solution``: PKM: the
    inverse-kinematics solution at the pose (a warm start for the next call), else None."""

    pose: np.ndarray
    twist: np.ndarray | None
    q: np.ndarray
    qd: np.ndarray | None
    mass_matrix: np.ndarray | None = None
    solution: object = None


def chain_forward_state(robot, x, xd=None, joints_only: bool = False) -> ForwardState:
    """Forward kinematics of a module chain (``ModuleChainRobot``): ``x``, ``xd`` (n,);
    ``joints_only``: the tree joints only (``pose``, ``twist`` None)."""
    from .module_chain.chain_ik import chain_jacobian
    x = np.asarray(x, dtype=float)
    q, qd, _ = robot.tree_state(x, xd)
    if joints_only:
        return ForwardState(None, None, q, qd if xd is not None else None)
    pose = robot.forward_kinematics(x)
    twist = None
    if xd is not None:
        J, _ = chain_jacobian(robot, x)
        twist = J @ np.asarray(xd, dtype=float)
    return ForwardState(pose, twist, q, qd if xd is not None else None)


def task_twist(J_IK, xd) -> np.ndarray:
    """``V_t`` (delta_p,) with ``J_IK V_t = xd`` (eq. 30; ``J_IK`` (n_act, delta_p)); raises
    :class:`StateError` when no task twist produces the actuator rates ``xd`` (n_act,)."""
    xd = np.asarray(xd, dtype=float)
    V = np.linalg.lstsq(J_IK, xd, rcond=None)[0]
    residual = np.linalg.norm(J_IK @ V - xd)
    if residual > CONSISTENT_RATES * max(1.0, np.linalg.norm(xd)):
        raise StateError(f"the actuator rates {xd.tolist()} are inconsistent: no platform twist "
                         f"produces them (residual {residual:.3g}; a redundantly actuated robot "
                         "has fewer task coordinates than actuators)")
    return V


def pkm_forward_state(robot, x, xd=None, initial=None, joints_only: bool = False) -> ForwardState:
    """Forward kinematics of a parallel manipulator (``ParallelRobot``): ``x``, ``xd``
    (n_act,); ``initial``: start pose (4, 4) or a previous solution (default: the reference
    pose); ``joints_only``: without ``M_t``."""
    pose, sol = robot.forward_kinematics(x, initial=initial, return_solution=True)
    M_t = None if joints_only else robot.mass_matrix(sol)
    if xd is None:
        return ForwardState(pose, None, sol.q, None, M_t, sol)
    V = task_twist(sol.J_IK, xd)
    moving = robot.inverse_kinematics(pose, V, initial=sol)
    return ForwardState(pose, V, sol.q, moving.qd, M_t, sol)


def forward_state(robot, x, xd=None, initial=None, joints_only: bool = False) -> ForwardState:
    """:func:`chain_forward_state` or :func:`pkm_forward_state`, by the robot's state space
    (``initial``, a previous ``ForwardState.solution``, is used by PKMs only);
    ``joints_only``: what joint-state completion needs, ``q`` and ``qd`` (the module chain's
    pose and twist and the PKM's ``M_t`` are not computed: None)."""
    if robot.state_space == "actuator":
        return chain_forward_state(robot, x, xd, joints_only)
    return pkm_forward_state(robot, x, xd, initial, joints_only)
