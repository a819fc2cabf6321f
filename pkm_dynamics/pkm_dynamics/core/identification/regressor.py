"""The regressor of a robot in its own state space: ``u = Y(x, xd, xdd) pi + u_0`` for every
robot kind (module chains and chains of loops in actuator space, parallel robots in task
space), batched over samples.

Derivation.  The spanning tree with its loops cut moves with ``qd = G xd`` and
``qdd = G xdd + Gdot xd``, ``G`` (n_q, n_x) the constraint embedding of the minimal coordinates
``x`` (actuator positions, or the task twist ``V_t``; paper 000 eqs. 4-5, 7, 27-28; paper 001
eqs. 27-29).  Its equations with the loop constraints as multipliers (paper 001 eqs. 13-14)::

    Y_tree(q, qd, qdd) pi - J_L^T W_EE = tau = S^T u + J_c^T lambda

(:mod:`.tree_regressor`: ``rnea = Y_tree pi``; ``W_EE`` the external wrench on the end
effector / platform frame L, ``J_L`` its body Jacobian, ``S`` the actuated joints' selection).
The loops' constraint forces do no work on a motion of the embedding (``J_c G = 0``), so
multiplying by ``G^T`` leaves ``(S G)^T u = G^T (Y_tree pi - J_L^T W_EE)``:

* actuator space: the actuated joints are tree joints and ``x`` their values, ``S G = 1``::

      u = G^T Y_tree pi - G^T J_L^T W_EE

* task space: ``S G = J_IK`` (paper 001 eq. 30), so (eq. 45; redundant actuation: the
  minimum-norm forces, the pseudo-inverse)::

      u = J_IK^-T G^T Y_tree pi - J_IK^-T G^T J_L^T W_EE

So ``Y = P G^T Y_tree`` and ``u_0 = -P G^T J_L^T W_EE`` with ``P = 1`` or ``J_IK^-T``: ``u_0`` holds
what does not depend on ``pi``, the external wrench (zero without one; gravity acts through
``Y``), and the joints' friction ``P G^T tau_f(qd)`` where the description has some
(:mod:`..friction`: ``tau_f`` adds to the tree's torques; for a parallel robot ``G^T tau_f`` is
paper 001's dissipative wrench ``W_t``, eq. 44).  The tree motion ``(q, qd, qdd)`` is the
robot's own (``tree_state`` / the inverse kinematics of the motion); ``G``: in actuator space
its columns ``qd`` for unit rates ``xd = e_k`` (``qd`` is linear in ``xd`` at a fixed ``x``: one
batched ``tree_state``), in task space the limbs' ``K_l`` of eq. 28 at the inverse kinematics'
joints (:func:`task_embedding`; no further inverse kinematics).

The joints' friction coefficients are linear parameters too (the law of :mod:`..friction` is
linear in F_C, b, F_S at fixed velocities v_S, v_eps): with ``friction_parameters`` their
columns ``P G^T B(qd)`` (:func:`..friction.friction_model.friction_basis`) follow the inertial
ones in ``Y`` (parameters :func:`.parameters.friction_parameters`, names
:func:`.parameters.friction_parameter_names`) and ``u_0`` leaves the friction out.  Further
linear parameters append their columns to ``Y`` and their values to ``pi`` alike;
:func:`.base_parameters.base_parameters` (``rows``, ``names``) and
:func:`.least_squares.identify` (``rows``) take such an extended regressor as it is.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SingularityError, StateError
from ..friction.friction_model import friction_basis, friction_torques
from ..limb.limb_ik import limb_jacobians
from ..status import OK
from ..tree.tree_dynamics import frame_jacobian
from .embedding_kernels import task_embedding_rows
from .parameters import friction_joints
from .tree_regressor import tree_regressor


@dataclass(frozen=True)
class Regressor:
    """``u = Y pi + u0`` at a batch of states: ``Y`` (N, n_act, 10 n_b), ``u0`` (N, n_act); the
    tree motion ``q, qd, qdd`` (N, n_q) and the embedding ``G`` (N, n_q, n_x) it came from."""

    Y: np.ndarray
    u0: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    G: np.ndarray


def wrench_frame(robot) -> tuple:
    """``(link, offset)``: the frame an external wrench acts in (the platform frame of a
    parallel robot, the end-effector link of a module chain)."""
    platform = robot.description.platform
    if platform is not None:
        return platform.link, platform.origin
    return robot.end_effector, None


def _finite(name, a) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    bad = ~np.isfinite(a)
    if bad.any():
        raise StateError(f"{name} is not finite at sample {int(np.argwhere(bad)[0][0])}")
    return a


def _actuator_motion(robot, x, xd, xdd):
    """``q, qd, qdd`` (N, n_q), ``G`` (N, n_q, n) and ``P = 1`` of an actuator-space robot."""
    x, xd, xdd = (np.atleast_2d(_finite(k, v)) for k, v in (("x", x), ("xd", xd), ("xdd", xdd)))
    N, n = x.shape
    q, qd, qdd = (np.atleast_2d(a) for a in robot.tree_state(x, xd, xdd))
    _, Gq, _ = robot.tree_state(np.repeat(x, n, axis=0), np.tile(np.eye(n), (N, 1)))
    G = np.atleast_2d(Gq).reshape(N, n, -1).transpose(0, 2, 1)
    return q, qd, qdd, G, None


def _task_motion(robot, x, xd, xdd):
    """``q, qd, qdd`` (N, n_q), ``G`` (N, n_q, delta) and ``J_IK`` (N, n_act, delta) of a
    task-space robot (its inverse kinematics of the motion, :func:`task_embedding`)."""
    xd, xdd = (np.atleast_2d(_finite(k, v)) for k, v in (("xd", xd), ("xdd", xdd)))
    pose = getattr(x, "pose", x)
    pose = _finite("x", pose).reshape(-1, 4, 4)
    N = len(xd)
    sol = robot.inverse_kinematics(pose if N > 1 else pose[0], xd if N > 1 else xd[0],
                                   xdd if N > 1 else xdd[0])
    q, qd, qdd, J = (np.asarray(a).reshape(N, *np.shape(a)[-(2 if k == 3 else 1):])
                     for k, a in enumerate((sol.q, sol.qd, sol.qdd, sol.J_IK)))
    return q, qd, qdd, task_embedding(robot, sol.limb_theta, N), J


def task_embedding(robot, limb_theta, N) -> np.ndarray:
    """``G`` (N, n_q, delta) of a parallel robot: per sample each limb's ``K_l`` (n_l, delta),
    ``thetad_l = K_l V_t`` (paper 001 eq. 28 at the limb's joints ``limb_theta[l]`` (N, n_l) of
    the inverse kinematics), its rows placed at the limb's tree joints (``limb.whole_index``;
    tree joints of no limb: zero rows).  A robot with ``compiled`` runs
    :func:`.embedding_kernels.task_embedding_rows` on its limb tables and raises
    :class:`~..errors.SingularityError` naming the sample and limb where ``G_y`` or ``L_t`` is
    singular; otherwise :func:`reference_task_embedding`."""
    if not robot.compiled:
        return reference_task_embedding(robot, limb_theta, N)
    tables = robot.limb_tables
    G = np.zeros((N, robot.description.tree.nq, robot.dof))
    theta = np.ascontiguousarray(np.concatenate([np.asarray(t, dtype=float).reshape(N, -1) for t in limb_theta],
                                                axis=1)).ravel()
    rows = np.concatenate([limb.whole_index for limb in robot.limbs]).astype(np.int64)
    status = np.zeros((N, 2), dtype=np.int64)
    task_embedding_rows(*tables.kernel_arguments(), theta, rows, G, status)
    bad = np.flatnonzero(status[:, 0] != OK)
    if len(bad):
        i, l = int(bad[0]), int(status[bad[0], 1])
        raise SingularityError(f"sample {i}: limb '{robot.limbs[l].name}' is singular (G_y or L_t, "
                               f"status {int(status[i, 0])}): no constraint embedding")
    return G


def reference_task_embedding(robot, limb_theta, N) -> np.ndarray:
    """:func:`task_embedding` on the numpy route (:func:`~..limb.limb_ik.limb_jacobians` per
    sample and limb): the reference of the compiled one."""
    G = np.zeros((N, robot.description.tree.nq, robot.dof))
    for limb, theta in zip(robot.limbs, limb_theta):
        rows = limb.whole_index >= 0
        theta = np.asarray(theta, dtype=float).reshape(N, -1)
        for i in range(N):
            G[i, limb.whole_index[rows]] = limb_jacobians(limb, theta[i]).K[rows]
    return G


def _project(P, A):
    """``P A`` with ``P = J_IK^-T`` (least squares: minimum norm for a redundant robot), or ``A``
    when ``P`` is None (actuator space)."""
    if P is None:
        return A
    out = []
    for J, a in zip(P, A):
        if J.shape[0] == J.shape[1]:
            out.append(np.linalg.solve(J.T, a))
        else:
            out.append(np.linalg.lstsq(J.T, a, rcond=None)[0])
    return np.stack(out)


def regressor(robot, x, xd, xdd, wrench=None, friction_parameters: bool = False) -> Regressor:
    """The regressor (module docstring) at the states ``(x, xd, xdd)`` of ``robot`` (its own
    state space, shapes of :meth:`~..interface.Robot.inverse_dynamics`, a leading batch axis or
    one state), with the external ``wrench`` (6,) or (N, 6) on the end effector / platform in
    ``u0``; ``friction_parameters``: the friction coefficients of the joints that have some as
    columns of ``Y`` after the inertial ones, not in ``u0``.  Returns a :class:`Regressor`
    (always batched: N = 1 for one state)."""
    motion = _task_motion if robot.state_space == "task" else _actuator_motion
    q, qd, qdd, G, P = motion(robot, x, xd, xdd)
    tree = robot.description.tree
    Gt = np.swapaxes(G, 1, 2)
    Y = _project(P, Gt @ tree_regressor(tree, q, qd, qdd))
    u0 = np.zeros(Y.shape[:2])
    if wrench is not None:
        w = np.broadcast_to(_finite("wrench", wrench).reshape(-1, 6), (len(q), 6))
        link, offset = wrench_frame(robot)
        JtW = np.stack([frame_jacobian(tree, qi, link, offset).T @ wi for qi, wi in zip(q, w)])
        u0 = -_project(P, np.einsum("nij,nj->ni", Gt, JtW)[..., None])[..., 0]
    friction = robot.description.friction
    if friction is not None and friction_parameters:
        B = friction_basis(friction.table, qd, friction_joints(robot))
        Y = np.concatenate([Y, _project(P, Gt @ B)], axis=-1)
    elif friction is not None:
        tau_f = friction_torques(friction.table, qd)[0]
        u0 = u0 + _project(P, np.einsum("nij,nj->ni", Gt, tau_f)[..., None])[..., 0]
    return Regressor(Y, u0, q, qd, qdd, G)
