"""Inverse kinematics of a chain of loops (end-effector pose, twist, acceleration to actuator
values, rates, accelerations), defined as for module chains (:mod:`..module_chain.chain_ik`):
the solution within the strokes nearest the reference (``initial``, else mid-stroke) in
stroke-normalized coordinates, searched by projected Gauss-Newton on the body-frame pose error
from the reference and the corners of the box at 1/4 and 3/4 of the strokes; the Jacobian is
the end-effector's tree Jacobian times the constraint-embedding map ``H`` (paper 001 eq. 20).

With passive joints (the grapple crane's swing axes) the IK moves the actuators only: the passive
joints are held at given positions (the caller's ``held``: zero unless given, the grapple hanging
along its mount's axes), at rest, and the end effector's pose, twist and acceleration are reached
by the actuators' columns of the Jacobian.  A crane operator places the grapple: where it swings
to afterwards is the dynamics' (hybrid dynamics, simulate), not the IK's."""
from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError, PkmDynamicsError, StateError
from ..interface import IKSolution
from ..module_chain.chain_ik import REALISABLE, SAME_SOLUTION, SEARCH_MAX_STROKES
from ..spatial.pose_newton import box_starts, pose_newton as newton
from ..spatial.se3 import Ad_inv
from ..tree.compiled_tree import kinematics as compiled_kinematics
from ..tree.tree_dynamics import body_jacobian, forward_kinematics


def stroke_scale(robot) -> tuple:
    """``(scale, turns)`` (n_act,): the stroke of each actuator (2 pi for a joint without limits)
    and which actuators are angles without limits."""
    lo, hi = robot.lower[:robot.n_act], robot.upper[:robot.n_act]
    turns = ~(np.isfinite(lo) & np.isfinite(hi))
    return np.where(turns, 2 * np.pi, np.where(turns, 0.0, hi - lo)), turns


def stroke_distance(robot, a, b) -> float:
    """Stroke-normalized distance of two actuator vectors (n,)."""
    scale, turns = stroke_scale(robot)
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    return float(np.linalg.norm(np.where(turns, np.mod(d + np.pi, 2 * np.pi) - np.pi, d) / scale))


def end_effector_jacobian(robot, x) -> tuple:
    """``J`` (6, n) with ``V_E = J xd`` (body-fixed twist of the end-effector frame) and ``q``:
    the tree Jacobian of the end effector times ``H`` (the tree rates of unit actuator rates,
    eq. 20), on the compiled route (:meth:`.loop_chain_compiled.CompiledLoopChain.pose_and_jacobian`);
    on the reference route where it stops."""
    _, J, q = robot.compiled.pose_and_jacobian(x)
    if J is not None:
        return J, q
    n = robot.n
    Q, Hc, _ = robot.route.tree_state(np.broadcast_to(x, (n, n)).copy(), np.eye(n), np.zeros((n, n)))
    C = forward_kinematics(robot.tree, Q[0])
    return body_jacobian(robot.tree, C, robot.ee_body, robot.ee_offset) @ Hc.T, Q[0]


def pose_and_jacobian(robot, x) -> tuple:
    """The end-effector pose (4, 4) and ``J`` (6, n) (:func:`end_effector_jacobian`) at the
    actuators ``x`` (n,), in one compiled call (the reference route where it stops, which raises
    the named exception beyond a loop's feasible range)."""
    T, J, _ = robot.compiled.pose_and_jacobian(x)
    if T is None:
        J, q = end_effector_jacobian(robot, x)
        T = robot.end_effector_pose(q)
    return T, J


def actuated_pose_and_jacobian(robot, x, held) -> tuple:
    """:func:`pose_and_jacobian` at the actuators ``x`` (n_act,) with the passive joints at
    ``held`` (n_pass,): the pose (4, 4) and the actuators' columns of ``J`` (6, n_act)."""
    T, J = pose_and_jacobian(robot, np.concatenate([x, held]) if len(held) else x)
    return T, J[:, :robot.n_act]


def pose_newton(robot, T_star, x, tol: float, max_iter: int, held=()) -> tuple:
    """Projected Gauss-Newton on ``log(T(x)^-1 T*)`` from the actuators ``x`` (n_act,) clipped to
    the strokes, the passive joints at ``held`` (n_pass,), with the pose and the Jacobian of
    :func:`end_effector_jacobian` from one compiled call (:func:`actuated_pose_and_jacobian`;
    :func:`..spatial.pose_newton.pose_newton`; a trial where a loop does not close counts as no
    decrease).  Returns ``(x, residual, iterations)``."""
    held = np.asarray(held, dtype=float)
    lo, hi = robot.lower[:robot.n_act], robot.upper[:robot.n_act]
    return newton(lambda xv: actuated_pose_and_jacobian(robot, xv, held), T_star,
                  np.clip(np.array(x, dtype=float), lo, hi), lo, hi, tol, max_iter, infeasible=PkmDynamicsError)


def ik_starts(robot, reference) -> list:
    """``reference`` (n_act,), then the corners of the box at 1/4 and 3/4 of every stroke
    (``2^b`` for ``b <= SEARCH_MAX_STROKES`` limited actuators; :func:`..spatial.pose_newton.box_starts`)."""
    return box_starts(reference, robot.lower[:robot.n_act], robot.upper[:robot.n_act], stroke_scale(robot)[1],
                      SEARCH_MAX_STROKES)


def loop_chain_inverse_kinematics(robot, pose, twist=None, acceleration=None, initial=None,
                                  search: bool = True, held=()) -> IKSolution:
    """Actuator values for the end-effector pose ``pose`` (4, 4) (root link frame): the solution
    within the strokes nearest ``initial`` (n_act,) (default mid-stroke), the passive joints held
    at ``held`` (n_pass,) at rest; ``solutions``: every distinct one found, nearest first.
    ``twist`` (6,) -> ``xd = J^+ V``; ``acceleration`` (6,) -> ``xdd = J^+ (Vdot - Jdot xd)``, each
    refused (:class:`StateError`) when the chain cannot realise it.  :class:`ConvergenceError`
    when no start reaches the pose."""
    T_star = np.asarray(pose, dtype=float)
    if T_star.shape != (4, 4) or not np.all(np.isfinite(T_star)):
        raise StateError(f"pose must be a finite 4x4 matrix, got shape {T_star.shape}")
    na, held = robot.n_act, np.asarray(held, dtype=float)
    reference = (robot.seed_reference if initial is None
                 else robot.checked_state("initial", initial, limits=True, size=na))
    tol, max_iter = robot.options.tolerance, robot.options.max_iterations
    found = []
    for start in ik_starts(robot, reference) if search else [reference]:
        x, res, it = pose_newton(robot, T_star, start, tol, max_iter, held)
        if res <= tol and all(stroke_distance(robot, x, y) > SAME_SOLUTION for y, _, _ in found):
            found.append((x, res, it))
    if not found:
        _, residual, it = pose_newton(robot, T_star, reference, tol, max_iter, held)
        raise ConvergenceError(f"inverse kinematics of '{robot.name}' did not reach the pose: error "
                               f"{residual:.3g} (m, rad) after {it} iterations; the pose is probably outside "
                               f"the workspace of its {na} actuators")
    found.sort(key=lambda s: stroke_distance(robot, s[0], reference))
    x, residual, it = found[0]
    state = np.concatenate([x, held])                   # the passive joints held, at rest
    J, q = end_effector_jacobian(robot, state)
    J = J[:, :na]
    xd = xdd = qd = qdd = None
    if twist is not None:
        V = np.asarray(twist, dtype=float)
        if V.shape != (6,) or not np.all(np.isfinite(V)):
            raise StateError(f"twist must be 6 finite values, got shape {V.shape}")
        xd = np.linalg.lstsq(J, V, rcond=None)[0]
        if np.linalg.norm(J @ xd - V) > REALISABLE * max(1.0, np.linalg.norm(V)):
            raise StateError(f"twist {V.tolist()} is not realisable by the {na} actuators of "
                             f"'{robot.name}' at this pose (residual {np.linalg.norm(J @ xd - V):.3g})")
        rest = np.zeros(len(held))
        q, qd, qdd0 = robot.tree_state(state, np.concatenate([xd, rest]), np.zeros(robot.n))
        if acceleration is not None:
            Vd = np.asarray(acceleration, dtype=float)
            if Vd.shape != (6,) or not np.all(np.isfinite(Vd)):
                raise StateError(f"acceleration must be 6 finite values, got shape {Vd.shape}")
            A = compiled_kinematics(robot.compiled_tree, q, qd, qdd0)[2]      # body accelerations
            bias = _frame_acceleration(robot, A)
            xdd = np.linalg.lstsq(J, Vd - bias, rcond=None)[0]
            if np.linalg.norm(J @ xdd + bias - Vd) > REALISABLE * max(1.0, np.linalg.norm(Vd)):
                raise StateError(f"acceleration {Vd.tolist()} is not realisable by the {na} actuators "
                                 f"of '{robot.name}' at this pose and twist")
            q, qd, qdd = robot.tree_state(state, np.concatenate([xd, rest]), np.concatenate([xdd, rest]))
    elif acceleration is not None:
        raise StateError("an acceleration needs a twist")
    return IKSolution(pose=T_star, actuators=x, q=q, iterations=np.array([it]), residual=residual,
                      condition=np.array([np.linalg.cond(J)]), actuators_d=xd, qd=qd, actuators_dd=xdd,
                      qdd=qdd, solutions=np.array([s[0] for s in found]))


def _frame_acceleration(robot, A) -> np.ndarray:
    """``Jdot xd`` of the end-effector frame (6,): the body acceleration ``A`` (body frame, no
    gravity in ``kinematics``' bias) moved to the end-effector frame."""
    return Ad_inv(robot.ee_offset) @ A[robot.ee_body]
