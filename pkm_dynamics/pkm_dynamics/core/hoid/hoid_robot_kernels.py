"""The higher-order inverse dynamics of a parallel robot in one kernel call, with the checks its
robot method makes before paper 002's recursion (those of paper 001's inverse kinematics that
:meth:`~pkm_dynamics.core.pkm.parallel_robot.ParallelRobot.admissible_task_state` runs): the
pose (a rotation, on the task manifold), the working mode (a direct step from the start), the
joint limits and the input and output singularities (``kappa(F)`` of every limb and
``kappa(J_IK)`` within the robot's threshold), on the closure and the Jacobians of paper 002's
own kernels (:mod:`.hoid_kernels`).  Model and data layouts: :mod:`.hoid_kinematics`.

Where the two parametrisations differ, so may a decision near a threshold: ``kappa(F)`` is
that of ``J_t^-1`` with a cut joint's freedoms as the subgroup of the cut joint (paper 002),
where paper 001's limb writes a spherical cut joint as three revolute angles (its ``F`` then
carries the conditioning of their Euler-angle map, 1 at the reference configuration); the
direct step is tested on the tree joints (paper 001 also tests those angles, which start at 0
from a tree configuration).

Whatever a check refuses is a status (:data:`..status.BAD_POSE` ...); the Python layer
then runs the robot's reference route (its inverse kinematics with every check, then the
recursion), which raises the named exception with its message or, for a step beyond the
direct one, continues along the task path on the working mode (the kernels never word an
error themselves).
"""
from __future__ import annotations

from ..numba_support.cache import scratch_kernel
from ..pkm.robot_kernels import reference_input_ok
from ..spatial.small_linalg import condition_at_most
from .hoid_kernels import hoid_sample
from ..status import BAD_POSE, DIRECT_STEP, FAR_STEP, ILL_CONDITIONED, LIMIT_SLACK, LIMITS, OK
from .hoid_kinematics import ACTUATORS, C_REF, F_INV_JT, GRAM, J_IK, JOINT_LIMITS, P_P, POSES_H, TWISTS_W


@scratch_kernel
def joints_admissible(mdl, q, q_start, status) -> int:
    """The tree configuration ``q`` (nq,) of a closed sample against its start ``q_start``
    (nq,): every joint moved at most ``DIRECT_STEP`` (FAR_STEP: the reference route's Newton
    would not take that step, it continues along the task path to stay on the working mode,
    :func:`..pkm.working_mode.solve_on_working_mode`) and within its limits (LIMITS, with the
    slack of :func:`..pkm.working_mode.apply_joint_limits`); ``status[2]``: the joint."""
    lim = mdl[JOINT_LIMITS]
    for j in range(q.shape[0]):
        if not abs(q[j] - q_start[j]) <= DIRECT_STEP:
            status[2] = j
            return FAR_STEP
        if not (lim[j, 0] - LIMIT_SLACK <= q[j] <= lim[j, 1] + LIMIT_SLACK):
            status[2] = j
            return LIMITS
    return OK


@scratch_kernel
def conditioning_admissible(mdl, dat, threshold, status) -> int:
    """The input singularities (paper 001: ``kappa(F)`` of every limb, here ``F = J_t^-1`` of
    paper 002 eq. 22) and the output singularity (``kappa(J_IK)``, eq. 30 / paper 002 eq. 14)
    of the sample the recursion left in ``dat``, each at most ``threshold`` (< 0: no test;
    :func:`..spatial.small_linalg.condition_at_most`, the test of the limb kernels and of
    ``check_actuation``).  ILL_CONDITIONED with ``status[2]`` the limb (-1: ``J_IK``)."""
    if threshold < 0.0:
        return OK
    F, JIK, W = dat[F_INV_JT], dat[J_IK], dat[GRAM]
    D = F.shape[1]
    for l in range(F.shape[0]):
        if not condition_at_most(F[l], D, D, W, threshold):
            status[2] = l
            return ILL_CONDITIONED
    if not condition_at_most(JIK[0], mdl[ACTUATORS].shape[0], D, W, threshold):
        status[2] = -1
        return ILL_CONDITIONED
    return OK


@scratch_kernel
def hoid_robot_call(mdl, dat, Xs, Vts, q0, gravity, tol, max_iter, threshold, Q, U, motor, status) -> int:
    """:func:`.hoid_kernels.hoid_call` of a parallel robot: for each row ``r`` of the platform
    poses ``Xs`` (B, 4, 4) and task twist derivatives ``Vts`` (B, 4, D), the pose checks of its
    inverse kinematics (:func:`..pkm.robot_kernels.reference_input_ok`: BAD_POSE), the sample
    (:func:`.hoid_kernels.hoid_sample`, from ``q0`` (nq,) for row 0 and from the previous
    row's solution after), then :func:`joints_admissible` and :func:`conditioning_admissible`
    (``threshold``), into ``Q`` (B, 5, nq), ``U`` (B, 3, na), ``motor`` (B, 4, na).  Returns
    OK or the status, with ``status = (code, row, limb, actuator or joint)``."""
    H, w = dat[POSES_H], dat[TWISTS_W]
    status[0] = OK
    for r in range(Xs.shape[0]):
        status[1] = r
        q_start = q0 if r == 0 else Q[r - 1, 0]
        if not reference_input_ok(mdl[C_REF], mdl[P_P], Xs[r], Vts[r, 0], Vts[r, 1], 0, H[:3], w[0], w[1]):
            status[0], status[2] = BAD_POSE, 0
            return BAD_POSE
        code = hoid_sample(mdl, dat, Xs[r], Vts[r], q_start, gravity, tol, max_iter, Q[r], U[r], motor[r], status)
        if code == OK:
            code = joints_admissible(mdl, Q[r, 0], q_start, status)
        if code == OK:
            code = conditioning_admissible(mdl, dat, threshold, status)
        if code != OK:
            status[0] = code
            return code
    return OK
