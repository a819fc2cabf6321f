"""Inverse kinematics of module chains (paper 000 chains; the end-effector pose, twist and
acceleration to actuator values, rates and accelerations).

A pose can have several solutions within the strokes: a crane's lift, tilt and extension act in
one vertical plane, where the end-effector position and pitch are reached by the "elbow" of the
two booms in two ways (a circle of the lift boom's pivot meets the line of the telescope), both
often inside the strokes.  Which one is "the" solution is therefore defined, not left to the
iteration:

* **The solution nearest the reference configuration** among those found, in stroke-normalized
  coordinates (each actuator's difference divided by its stroke; a joint without limits by one
  turn, 2 pi, its difference wrapped to (-pi, pi]).  The reference is the request's seed
  (``initial``), or **the middle of every stroke** (0 for a joint without limits) without one:
  the mid-stroke solution leaves the most travel to both ends of every cylinder, and it depends
  only on the pose, never on earlier calls.
* Solutions are searched by Gauss-Newton from the reference and from the ``2^b`` corners of the
  box at 1/4 and 3/4 of the ``b`` strokes (a joint without limits starts at its reference value);
  chains with more than :data:`SEARCH_MAX_STROKES` limited actuators start from the reference
  only.  Every distinct solution within the strokes is returned in ``solutions``, nearest first:
  more than one row means the pose has several configurations (a chain with more actuators than
  pose constraints has a continuum of them; the rows are then samples of it).
"""
from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError, SingularityError, StateError
from ..interface import IKSolution
from ..spatial.pose_newton import box_starts, pose_newton as newton
from ..spatial.se3 import Ad_inv
from ..tree.tree_dynamics import kinematics

#: relative residual up to which a twist / acceleration counts as realisable by the chain
REALISABLE = 1e-6
#: at most this many limited actuators get the 2^b corner starts of the solution search
SEARCH_MAX_STROKES = 6
#: stroke-normalized distance below which two solutions are the same configuration
SAME_SOLUTION = 1e-6


def chain_jacobian(robot, x) -> tuple:
    """End-effector Jacobian of a module chain: ``J`` (6, n) with ``V_E = J xd`` (body-fixed
    twist of the end-effector frame), as the tree Jacobian of the end-effector link times the
    loop-closure map ``H = dq/dx`` (columns: tree-joint rates of unit actuator rates, eqs. 4-5),
    both compiled (``robot.tree_state`` of the n unit rates as one batch, the tree kernels'
    frame Jacobian).  Returns ``(J, q)``."""
    from ..tree.compiled_tree import frame_jacobian
    n = robot.n
    x = np.asarray(x, dtype=float)
    Q, H_T, _ = robot.tree_state(np.broadcast_to(x, (n, n)), np.eye(n), np.zeros((n, n)))
    return frame_jacobian(robot.tree.compiled, Q[0], robot.end_effector) @ H_T.T, Q[0]


def stroke_metric(chain) -> tuple:
    """``(lower, upper, scale, turns)`` (each (n,)): limits, the normalizing length of each
    coordinate (stroke; 2 pi for a joint without limits) and which coordinates are angles
    without limits (differences wrapped to (-pi, pi])."""
    lower = np.array([i.lower for i in chain.info])
    upper = np.array([i.upper for i in chain.info])
    bounded = np.isfinite(lower) & np.isfinite(upper)
    scale = np.where(bounded, np.where(bounded, upper - lower, 1.0), 2 * np.pi)
    return lower, upper, scale, ~bounded


def mid_stroke(chain) -> np.ndarray:
    """The default reference configuration (n,): the middle of every stroke, 0 for a joint
    without limits."""
    lower, upper, _, turns = stroke_metric(chain)
    return np.where(turns, 0.0, 0.5 * (np.where(turns, 0.0, lower) + np.where(turns, 0.0, upper)))


def stroke_distance(chain, a, b) -> float:
    """Stroke-normalized distance of two actuator vectors (n,) (see the module docstring)."""
    _, _, scale, turns = stroke_metric(chain)
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    d = np.where(turns, np.mod(d + np.pi, 2 * np.pi) - np.pi, d)
    return float(np.linalg.norm(d / scale))


def ik_starts(chain, reference) -> list:
    """Start configurations of the solution search: ``reference`` (n,), then the corners of the
    box at 1/4 and 3/4 of every stroke (``2^b`` for ``b <= SEARCH_MAX_STROKES`` limited
    actuators; a joint without limits keeps its reference value;
    :func:`..spatial.pose_newton.box_starts`)."""
    lower, upper, _, turns = stroke_metric(chain)
    return box_starts(reference, lower, upper, turns, SEARCH_MAX_STROKES)


def pose_newton(robot, T_star, x, tol: float, max_iter: int) -> tuple:
    """Projected Gauss-Newton on the body-frame pose error ``log(T(x)^-1 T*)`` from ``x`` (n,)
    with the Jacobian of :func:`chain_jacobian` (:func:`..spatial.pose_newton.pose_newton`: the
    trial clipped to the strokes and halved until the error decreases and the loops close, one
    polishing step below ``tol``).  Returns ``(x, residual, iterations)``."""
    from .module_chain_dynamics import chain_forward_kinematics
    chain = robot.chain
    lower, upper, _, _ = stroke_metric(chain)
    return newton(lambda xv: (chain_forward_kinematics(chain, xv), chain_jacobian(robot, xv)[0]),
                  T_star, x, lower, upper, tol, max_iter, infeasible=SingularityError)


def compiled_pose_newton(robot, T_star, x, tol: float, max_iter: int) -> tuple:
    """:func:`pose_newton` as one compiled kernel (:func:`~pkm_dynamics.core.module_chain.chain_ik_kernels.pose_newton`,
    on ``robot.compiled`` and ``robot.tree.compiled``); where the kernel reports a failure (the
    kinematics at ``x`` or a Jacobian), :func:`pose_newton` runs instead and raises its named
    exception.  Returns ``(x, residual, iterations)``."""
    from .chain_ik_kernels import pose_newton as kernel
    from ..status import OK
    cm, ct = robot.compiled, robot.tree.compiled
    cm.data()
    d = cm.data()
    body, offset = robot.tree.frame(robot.end_effector)
    lower, upper, _, _ = stroke_metric(robot.chain)
    out = np.empty(robot.chain.n)
    code, residual, it = kernel(cm.geo, cm.mats, cm.root, d.S, d.W, d.status, ct.model, ct.data(), body,
                                np.array(offset, dtype=float), lower, upper, np.array(T_star, dtype=float),
                                np.array(x, dtype=float), float(tol), int(max_iter), out)
    if code != OK:
        return pose_newton(robot, T_star, x, tol, max_iter)
    return out, float(residual), int(it)


def pose_solutions(robot, T_star, reference, tol: float, max_iter: int, search: bool = True) -> list:
    """Every distinct solution ``(x, residual, iterations)`` reached by
    :func:`compiled_pose_newton` from :func:`ik_starts` (``search=False``: from ``reference``
    only), sorted by stroke-normalized distance to
    ``reference``; ``[]`` when none converged."""
    chain = robot.chain
    found = []
    for start in ik_starts(chain, reference) if search else [np.array(reference, dtype=float)]:
        x, res, it = compiled_pose_newton(robot, T_star, start, tol, max_iter)
        if res <= tol and all(stroke_distance(chain, x, y) > SAME_SOLUTION for y, _, _ in found):
            found.append((x, res, it))
    return sorted(found, key=lambda s: stroke_distance(chain, s[0], reference))


def chain_inverse_kinematics(robot, pose_target, twist=None, acceleration=None,
                             initial=None, tol: float = 1e-10, max_iter: int = 50,
                             search: bool = True) -> IKSolution:
    """Actuator values of a module chain for an end-effector pose (4, 4): the solution within the
    strokes nearest the reference configuration (``initial`` (n,), default mid-stroke), see the
    module docstring; a chain with fewer than 6 actuators reaches the poses of its workspace
    exactly, any other pose raises :class:`ConvergenceError`.

    ``twist`` (6,): body-fixed end-effector twist (omega, v) -> ``xd = J^+ V``; ``acceleration``
    (6,): its time derivative -> ``xdd = J^+ (Vdot - Jdot xd)``; both must be realisable by the
    chain (else :class:`StateError`).  ``search=False``: Gauss-Newton from the reference only
    (about 9 times cheaper for the 4-DoF crane; for a seed close to the answer, e.g. the
    previous sample of a path), ``solutions`` then holds that one solution."""
    from .module_chain_dynamics import _as_state, _check_actuators, chain_tree_state
    chain = robot.chain
    n = chain.n
    T_star = np.asarray(pose_target, dtype=float)
    if T_star.shape != (4, 4) or not np.all(np.isfinite(T_star)):
        raise StateError(f"pose must be a finite 4x4 matrix, got shape {T_star.shape}")
    if initial is None:
        reference = mid_stroke(chain)
    else:
        reference = _as_state("initial", initial, n).copy()
        _check_actuators(chain, reference)
    found = pose_solutions(robot, T_star, reference, tol, max_iter, search)
    if not found:
        _, residual, it = compiled_pose_newton(robot, T_star, reference, tol, max_iter)
        raise ConvergenceError(f"inverse kinematics of '{robot.name}' did not reach the pose: "
                               f"error {residual:.3g} (m, rad) after {it} iterations; the pose is "
                               f"probably outside the workspace of its {n} actuators")
    x, residual, it = found[0]
    J, q = chain_jacobian(robot, x)
    cond = float(np.linalg.cond(J))
    xd = xdd = qd = qdd = None
    if twist is not None:
        V = _as_state("twist", twist, 6)
        xd = np.linalg.lstsq(J, V, rcond=None)[0]
        if np.linalg.norm(J @ xd - V) > REALISABLE * max(1.0, np.linalg.norm(V)):
            raise StateError(f"twist {V.tolist()} is not realisable by the {n} actuators of "
                             f"'{robot.name}' at this pose (residual {np.linalg.norm(J @ xd - V):.3g})")
        if acceleration is not None:
            Vd = _as_state("acceleration", acceleration, 6)
            q0, qd0, qdd0 = chain_tree_state(chain, robot.tree.nq, x, xd, np.zeros(n))
            body, offset = robot.tree.frame(robot.end_effector)
            A = kinematics(robot.tree, q0, qd0, qdd0)[3]
            bias = Ad_inv(offset) @ A[body]                       # Jdot xd of the end effector
            xdd = np.linalg.lstsq(J, Vd - bias, rcond=None)[0]
            if np.linalg.norm(J @ xdd + bias - Vd) > REALISABLE * max(1.0, np.linalg.norm(Vd)):
                raise StateError(f"acceleration {Vd.tolist()} is not realisable by the {n} "
                                 f"actuators of '{robot.name}' at this pose and twist")
        q, qd, qdd = chain_tree_state(chain, robot.tree.nq, x, xd,
                                      xdd if xdd is not None else np.zeros(n))
        if acceleration is None:
            qdd = None
    elif acceleration is not None:
        raise StateError("an acceleration needs a twist")
    return IKSolution(pose=T_star, actuators=x, q=q, iterations=np.array([it]), residual=residual,
                      condition=np.array([cond]), actuators_d=xd, qd=qd, actuators_dd=xdd, qdd=qdd,
                      solutions=np.array([s[0] for s in found]))


def batched_chain_inverse_kinematics(robot, poses, twists=None, accelerations=None, initial=None,
                                     tol: float = 1e-10, max_iter: int = 50, search: bool = True) -> IKSolution:
    """:func:`chain_inverse_kinematics` of every pose of ``poses`` (N, 4, 4) (``twists``,
    ``accelerations`` (N, 6) or None), each on its own: a module chain's solution depends only on
    the pose and ``initial`` (the reference), never on the other samples.  Returns one
    :class:`IKSolution` with a leading axis on every array; ``solutions`` is a list of the samples'
    (k_i, n) arrays and ``iterations``, ``condition`` are (N, 1)."""
    sols = [chain_inverse_kinematics(robot, P, None if twists is None else twists[i],
                                     None if accelerations is None else accelerations[i], initial, tol, max_iter,
                                     search) for i, P in enumerate(poses)]

    def st(name):
        v = [getattr(s, name) for s in sols]
        return None if v[0] is None else np.stack([np.asarray(a) for a in v])

    return IKSolution(pose=st("pose"), actuators=st("actuators"), q=st("q"), iterations=st("iterations"),
                      residual=st("residual"), condition=st("condition"), actuators_d=st("actuators_d"),
                      qd=st("qd"), actuators_dd=st("actuators_dd"), qdd=st("qdd"),
                      solutions=[s.solutions for s in sols])
