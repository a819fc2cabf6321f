"""Compiled route of a serial chain of loops in actuator space (paper 001, constraint embedding):
the steps of :class:`~..pkm.limb_chain.LimbChainRobot` (the reference route the tests compare
against) as loops over bodies with scalar arithmetic, on the limb kernels of :mod:`..limb`
(forward kinematics and cut-joint rows, Algorithm 2, ``H``, the cut-joint acceleration bias,
the RNEA and ``H^T M H`` of the limb tree).  One call of :func:`loop_chain_calls` serves a batch:

1. the loop closure ``theta = psi(x)`` (Algorithm 2, eq. 33) from the reference configuration
   ``theta = 0``, or, in an FC of one limited independent joint, from the closed
   configurations tabulated over its stroke when the robot is built (interpolated: one Newton
   step remains), checked to be on its assembly branch (``sign det G_y`` of every FC);
2. ``H`` (eqs. 16-18, 20) and the end-effector Jacobian ``J_E`` (eq. 5, the limb's platform frame);
3. ``thetad = H xd``, ``thetadd = H xdd + Hdot xd`` (eq. 20, ``Hdot xd`` from ``Gdot thetad``);
4. by ``mode``: the actuator efforts ``u = H^T tau`` (eqs. 36-37) with ``tau = rnea(theta,
   thetad, thetadd) - J_E^T W + tau_f(thetad)``; the accelerations from ``H^T M H xdd = u -
   H^T tau(xdd = 0)``; ``H^T M H`` and that bias; the tree motion alone; the end-effector pose
   and ``J_E H``.

Coordinates: ``cols`` (n,) the limb-tree joint of each generalized coordinate (the actuators,
then the passive joints), ``hcol[cols[k]]`` its column of ``H``.  Model and scratch of the limb:
:class:`..pkm.limb_tables.LimbTables` (layout :mod:`..limb.limb_layout`).  Status per row
(:mod:`..status`): OK, or the code on which the Python layer runs the reference route for that
row (which raises the named exception, or continues from the reference configuration).
"""
from __future__ import annotations

from ..friction.friction_kernels import joint_friction
from ..limb.limb_dynamics_kernels import body_motion, loop_acceleration_bias, rnea_spatial
from ..limb.limb_inertia_kernels import limb_task_inertia
from ..limb.limb_kernels import (limb_jacobians, limb_state, loop_correction, loop_matrix, loop_norm, platform_pose,
                                 solve_loops)
from ..limb.limb_layout import (LD_A, LD_B, LD_C, LD_H, LD_INNER, LD_J_P, LD_POSE, LD_Y, LM_BASE_ACCELERATION,
                                LM_H_COLUMN, LM_INERTIA, LM_LOOP_DEPENDENT, LM_LOOP_INDEPENDENT, LM_LOOPS, LM_PARENT,
                                LM_REVOLUTE, LM_SIZES, LM_SUPPORT, LOOP_NDEP, LX_A, LX_AS, LX_BIAS, LX_QD, LX_RHS,
                                LX_V, LX_VS, LX_ZEROS, SIZE_DELTA, SIZE_NL)
from ..bounds import MAX_EFFORT, MAX_RATE
from ..numba_support.cache import kernel
from ..pkm.robot_kernels import data_views, model_views
from ..spatial.small_linalg import lu_solve
from ..status import BAD_INPUT, OK, OTHER_BRANCH, SINGULAR

#: what :func:`loop_chain_calls` computes: the efforts, the accelerations, ``(H^T M H, bias)``,
#: the tree motion, the end-effector pose and Jacobian, the hybrid dynamics (efforts of the first
#: ``na`` coordinates, accelerations of the others)
MODE_ID, MODE_FD, MODE_MASS, MODE_STATE, MODE_POSE, MODE_HYBRID = 0, 1, 2, 3, 4, 5

_PI = 3.141592653589793
#: a closure whose residuals are all below this fraction of its tolerance is at round-off (no
#: polishing step): 1e-14 m / rad at the served 1e-12, a few units in the last place of a loop's
#: lengths -- where one Newton step from the start tables ends (a polishing step there only
#: moves the round-off)
ROUND_OFF = 1e-2
#: the largest finite float: ``abs(v) <= _FINITE`` is False for Inf and NaN
_FINITE = 1.7976931348623157e308
#: the package's bounds (:mod:`..bounds`) of the rates, accelerations and efforts the public
#: calls take (``abs(v) <= bound`` is False for Inf and NaN too)
_MAX_VELOCITY, _MAX_ACCELERATION, _MAX_EFFORT = float(MAX_RATE[1]), float(MAX_RATE[2]), float(MAX_EFFORT)


@kernel
def inputs_valid(x, xd, z, floor, ceiling, z_bound):
    """The checks of :meth:`.loop_chain_robot.LoopChainRobot.checked_state` in one row: ``x``
    (n,) finite and within ``[floor, ceiling]`` (the strokes and joint limits widened by
    ``LIMIT_SLACK``), ``xd`` (n,) within the velocity bound and ``z`` (the accelerations or
    efforts) within ``z_bound`` (NaN fails every comparison).  The refusal is worded by the
    Python layer."""
    for k in range(len(x)):
        if not (abs(x[k]) <= _FINITE and floor[k] <= x[k] <= ceiling[k] and abs(xd[k]) <= _MAX_VELOCITY):
            return False
    for k in range(len(z)):
        if not abs(z[k]) <= z_bound:
            return False
    return True


@kernel
def branch_sign(lm, ld, lp):
    """``sign det G_y`` (eq. 16) of FC ``lp`` at the state in ``ld`` (the assembly branch of
    :func:`..pkm.limb_chain.loop_branches`), by LU with partial pivoting; 0 when singular."""
    A = ld[LD_A]
    r = loop_matrix(lm, ld, lp)
    sign = 1.0
    for c in range(r):
        p, best = c, abs(A[c, c])
        for i in range(c + 1, r):
            if abs(A[i, c]) > best:
                p, best = i, abs(A[i, c])
        if not best > 0.0:
            return 0.0
        if p != c:
            sign = -sign
            for j in range(r):
                A[c, j], A[p, j] = A[p, j], A[c, j]
        if A[c, c] < 0.0:
            sign = -sign
        for i in range(c + 1, r):
            f = A[i, c] / A[c, c]
            for j in range(c + 1, r):
                A[i, j] -= f * A[c, j]
    return sign


@kernel
def start_configuration(lm, ld, x, seeds, tabled, theta):
    """The start of the closure for the coordinates ``x`` (in ``ld`` b[:delta, 0] on return:
    ``Delta q`` from ``theta``): the reference configuration ``theta = 0``, except in each FC
    ``lp`` with a table (``tabled[lp] = t >= 0``: one independent joint, limited): there ``theta``
    is the cubic Hermite interpolant of the closed configurations ``seeds[t]`` tabulated over the
    joint's stroke (``seeds[t, 0]`` = (first value, step), rows ``2k`` and ``2k + 1`` of
    ``seeds[t, 1:]`` the closed ``theta`` (n_l,) at sample ``k`` and its slope), its independent
    joint at ``x`` (``Delta q = 0``)."""
    b, hcol = ld[LD_B], lm[LM_H_COLUMN]
    for i in range(len(theta)):
        theta[i] = 0.0
    for lp in range(lm[LM_SIZES][SIZE_NL]):
        t = tabled[lp]
        if t < 0:
            continue
        j = lm[LM_LOOP_INDEPENDENT][lp, 0]
        q = b[hcol[j], 0]
        q0, h = seeds[t, 0, 0], seeds[t, 0, 1]
        last = (seeds.shape[1] - 1) // 2 - 2         # the last interval
        k = min(max(int((q - q0) / h), 0), last)
        s = (q - q0) / h - k
        s2, s3 = s * s, s * s * s
        h00, h10, h01, h11 = 2 * s3 - 3 * s2 + 1.0, (s3 - 2 * s2 + s) * h, -2 * s3 + 3 * s2, (s3 - s2) * h
        p0, m0, p1, m1 = seeds[t, 1 + 2 * k], seeds[t, 2 + 2 * k], seeds[t, 3 + 2 * k], seeds[t, 4 + 2 * k]
        for i in range(lm[LM_LOOPS][lp, LOOP_NDEP]):
            d = lm[LM_LOOP_DEPENDENT][lp, i]
            theta[d] = h00 * p0[d] + h10 * m0[d] + h01 * p1[d] + h11 * m1[d]
        theta[j] = q
        b[hcol[j], 0] = 0.0


@kernel
def close_chain(lm, ld, cols, x, tol, branch, seeds, tabled, theta):
    """``theta = psi(x)`` (n_l,) by Algorithm 2 from :func:`start_configuration` (the predictor
    of eq. 33, then Newton per FC until ``|g| <= tol``; :func:`..limb.limb_kernels.solve_loops`)
    and one Newton step more unless every ``|g| <= ROUND_OFF tol`` already (the solution to
    round-off, whatever the start: independent of the path to it), the state of the solution
    left in ``ld``; OTHER_BRANCH when an FC's ``sign det G_y`` is not
    ``branch`` (nl,); the dependent revolute angles then wrapped to [-pi, pi).  Returns a status."""
    n = len(theta)
    b, hcol = ld[LD_B], lm[LM_H_COLUMN]
    for k in range(len(cols)):                   # Delta q from the reference (zero) configuration
        b[hcol[cols[k]], 0] = x[k]
    start_configuration(lm, ld, x, seeds, tabled, theta)
    limb_state(lm, ld, theta)
    status = solve_loops(lm, ld, theta, tol, ld[LD_INNER][0])
    if status != OK:
        return status
    worst = 0.0
    for lp in range(lm[LM_SIZES][SIZE_NL]):
        worst = max(worst, loop_norm(ld, lm, lp))
    if worst > ROUND_OFF * tol:                  # one Newton step more: to round-off
        if not loop_correction(lm, ld, theta, -1.0):
            return SINGULAR
        limb_state(lm, ld, theta)
    for lp in range(lm[LM_SIZES][SIZE_NL]):
        if branch_sign(lm, ld, lp) != branch[lp]:
            return OTHER_BRANCH
    rev = lm[LM_REVOLUTE]
    for i in range(n):
        if rev[i] and hcol[i] < 0:
            theta[i] = (theta[i] + _PI) % (2.0 * _PI) - _PI
    return OK


@kernel
def chain_motion(lm, ld, lx, cols, xd, xdd, with_acc, thd, thdd):
    """``thd = H xd`` and ``thdd = H xdd + Hdot xd`` (n_l,) (eq. 20; ``xdd`` taken as zero unless
    ``with_acc``) at the closed state in
    ``ld`` (``H`` there): ``Hdot xd`` has the rows ``-G_y^-1 (Gdot thd)`` at the dependent
    joints of every FC (:func:`..limb.loop_constraints.loop_acceleration_bias`; ``Gdot thd`` by
    :func:`..limb.limb_dynamics_kernels.cut_bias` from the motion with ``thdd = 0``)."""
    H, hcol = ld[LD_H], lm[LM_H_COLUMN]
    C, Y = ld[LD_C], ld[LD_Y]
    q, zeros, bias, rhs = lx[LX_QD], lx[LX_ZEROS], lx[LX_BIAS], lx[LX_RHS]
    n, delta = len(thd), lm[LM_SIZES][SIZE_DELTA]
    for k in range(len(cols)):
        q[hcol[cols[k]]] = xd[k]
    for i in range(n):
        s = 0.0
        for j in range(delta):
            s += H[i, j] * q[j]
        thd[i] = s
    V, A0 = lx[LX_V], lx[LX_A]
    body_motion(lm[LM_PARENT], C, Y, thd, zeros, zeros, V, A0, lx[LX_VS], lx[LX_AS])
    if not loop_acceleration_bias(lm, ld, C, V, A0, rhs, bias, n):     # Hdot xd (eq. 20)
        return SINGULAR
    for k in range(len(cols)):
        q[hcol[cols[k]]] = xdd[k] if with_acc else 0.0
    for i in range(n):
        s = bias[i]
        for j in range(delta):
            s += H[i, j] * q[j]
        thdd[i] = s
    return OK


@kernel
def chain_forces(lm, ld, lx, thd, thdd, wrench, with_wrench, table, with_friction, tau, tf):
    """``tau = rnea(theta, thd, thdd) - J_E^T W + tau_f(thd)`` (n_l,) (eq. 37 before ``H^T``):
    the RNEA of the limb tree with gravity (:func:`..limb.limb_dynamics_kernels.rnea_spatial`),
    the wrench ``W`` (6,) on the end-effector frame (``J_E`` its body-fixed Jacobian in ``ld``)
    and the joint friction of ``table`` (n_l, 5); ``tf`` (n_l,) scratch."""
    C, Y = ld[LD_C], ld[LD_Y]
    V, A, Vs = lx[LX_V], lx[LX_A], lx[LX_VS]
    body_motion(lm[LM_PARENT], C, Y, thd, thdd, lm[LM_BASE_ACCELERATION], V, A, Vs, lx[LX_AS])
    rnea_spatial(lm[LM_SUPPORT], lm[LM_INERTIA], C, Y, V, A, Vs, tau)
    n = len(thd)
    if with_wrench:
        J = ld[LD_J_P]
        for j in range(n):
            s = 0.0
            for a in range(6):
                s += J[a, j] * wrench[a]
            tau[j] -= s
    if with_friction:
        joint_friction(table, thd, tf)
        for j in range(n):
            tau[j] += tf[j]


@kernel
def hybrid_split(Mt, bias, na, xdd, A, b, out):
    """Featherstone's hybrid dynamics from ``M_t = H^T M H`` (n, n) and ``bias = H^T tau(xdd = 0)``
    (n,) (eqs. 36-37) split into the actuated (a: the first ``na``) and passive (p) coordinates:
    ``M_pp qdd_p = -b_p - M_pa xdd`` and ``u = M_aa xdd + M_ap qdd_p + b_a``; ``xdd`` (na,) the
    actuators' accelerations, ``out`` (n,) = (``u``, ``qdd_p``); ``A``, ``b`` scratch (>= n - na
    square, column; ``out`` may be ``bias``).  False for a singular ``M_pp``."""
    n = len(bias)
    p = n - na
    for i in range(p):
        s = 0.0
        for j in range(na):
            s += Mt[na + i, j] * xdd[j]
        b[i, 0] = -bias[na + i] - s
        for j in range(p):
            A[i, j] = Mt[na + i, na + j]
    if not lu_solve(A, p, b, 1):
        return False
    for i in range(na):
        s = 0.0
        for j in range(na):
            s += Mt[i, j] * xdd[j]
        for j in range(p):
            s += Mt[i, na + j] * b[j, 0]
        out[i] = s + bias[i]
    for i in range(p):
        out[na + i] = b[i, 0]
    return True


@kernel
def loop_chain_calls(fm, im, hm, fd, idt, hd, cols, tol, branch, seeds, tabled, mode, na, check, floor, ceiling,
                     X, XD, Z, W, with_wrench, table, with_friction, T, tf, vec, mat, tree, pose, jac, status):
    """One ``mode`` (``MODE_*``) over the batch ``X``, ``XD``, ``Z`` (B, n) (``Z``: ``xdd`` or
    ``u``, in the coordinates' order, MODE_FD's zero at the coordinates
    beyond its columns: the passive joints; MODE_HYBRID: (B, ``na``) the actuators' ``xdd``, ``vec``
    then (``u``, ``qdd_p``) of :func:`hybrid_split`), the closure's start tables ``seeds``, ``tabled``
    (:func:`start_configuration`), wrenches ``W`` (B, 6) (``with_wrench``), friction rows
    ``table`` (n_l, 5) (``with_friction``); ``T`` (n_l, 6, n), ``tf`` (n_l,) scratch.  Outputs
    (B, ...): ``vec`` (n,) the efforts, the accelerations or the bias ``H^T tau(xdd = 0)``;
    ``mat`` (n, n) ``H^T M H`` (MODE_MASS, also left by MODE_FD before its solve); ``tree`` (3,
    n_l) theta, thetad, thetadd; ``pose`` (4, 4) and ``jac`` (6, n) (MODE_POSE); ``status``
    (B,): BAD_INPUT at a row :func:`inputs_valid` refuses (``check``: the public calls, ``floor``,
    ``ceiling`` (n,) the coordinates' limits with their slack; the rates' and efforts' bounds of
    :mod:`..bounds`), nothing computed there."""
    lm = model_views(fm, im, hm, 0)
    ld, lx = data_views(fd, idt, hd, 0)
    hcol = lm[LM_H_COLUMN]
    nc = len(cols)
    H = ld[LD_H]
    z_bound = _MAX_EFFORT if mode == MODE_FD else _MAX_ACCELERATION
    for r in range(X.shape[0]):
        if check and not inputs_valid(X[r], XD[r], Z[r], floor, ceiling, z_bound):
            status[r] = BAD_INPUT
            continue
        th, thd, thdd = tree[r, 0], tree[r, 1], tree[r, 2]
        st = close_chain(lm, ld, cols, X[r], tol, branch, seeds, tabled, th)
        if st == OK:
            st = limb_jacobians(lm, ld, -1.0, False)[0]
        if st == OK and mode == MODE_POSE:
            platform_pose(lm, ld, ld[LD_POSE])
            for a in range(4):
                for b in range(4):
                    pose[r, a, b] = ld[LD_POSE][a, b]
            J = ld[LD_J_P]
            for a in range(6):
                for k in range(nc):
                    s = 0.0
                    for i in range(len(th)):
                        s += J[a, i] * H[i, hcol[cols[k]]]
                    jac[r, a, k] = s
        elif st == OK:
            st = chain_motion(lm, ld, lx, cols, XD[r], Z[r], mode == MODE_ID or mode == MODE_STATE, thd, thdd)
        status[r] = st
        if st != OK or mode == MODE_POSE or mode == MODE_STATE:
            continue
        tau = lx[LX_BIAS]                        # Hdot xd is in thdd now
        chain_forces(lm, ld, lx, thd, thdd, W[r], with_wrench, table, with_friction, tau, tf)
        for k in range(nc):                      # H^T tau in the coordinates' order
            s = 0.0
            for i in range(len(th)):
                s += H[i, hcol[cols[k]]] * tau[i]
            vec[r, k] = s
        if mode == MODE_ID:
            continue
        Mt = mat[r]                              # H^T M H (eq. 36), columns of H in the coordinates' order
        K = ld[LD_B]
        for i in range(len(th)):
            for k in range(nc):
                K[i, k] = H[i, hcol[cols[k]]]
        for k in range(nc):
            for m in range(nc):
                Mt[k, m] = 0.0
        limb_task_inertia(lm[LM_PARENT], lm[LM_INERTIA], ld[LD_C], ld[LD_Y], K[:len(th), :nc], T, Mt)
        if mode == MODE_MASS:
            continue
        A, b = ld[LD_A], ld[LD_B]
        if mode == MODE_HYBRID:
            if not hybrid_split(Mt, vec[r], na, Z[r], A, b, vec[r]):
                status[r] = SINGULAR
            continue
        for k in range(nc):
            b[k, 0] = (Z[r, k] if k < Z.shape[1] else 0.0) - vec[r, k]      # no effort at a passive joint
            for m in range(nc):
                A[k, m] = Mt[k, m]
        if not lu_solve(A, nc, b, 1):
            status[r] = SINGULAR
            continue
        for k in range(nc):
            vec[r, k] = b[k, 0]
