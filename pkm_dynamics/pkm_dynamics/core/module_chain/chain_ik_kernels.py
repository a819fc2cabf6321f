"""Compiled Gauss-Newton solve of the module-chain inverse kinematics: the same steps as
:func:`pkm_dynamics.core.chain_ik.pose_newton` (the reference route the tests compare against)
as one kernel per solve, on the chain model of :mod:`.chain_model` (forward kinematics and tree
state of :mod:`.chain_kinematics`) and the tree model of :mod:`.tree_model` (the end-effector
Jacobian of :mod:`.tree_kernels`).  The multi-start search stays in Python
(:func:`~pkm_dynamics.core.chain_ik.pose_solutions`).
"""
from __future__ import annotations

import math

import numpy as np

from ..numba_support.cache import kernel
from .chain_kinematics import forward_kinematics, tree_state
from ..spatial.se3_kernels import log_se3, pose_inv_mul
from ..status import OK
from ..tree.tree_kernels import body_jacobian
from ..tree.tree_kernels import forward_kinematics as tree_forward_kinematics


@kernel
def pose_error(geo, mats, root, S, W, status, T_star, x, C, G, e):
    """Body-frame pose error ``e = log(T(x)^-1 T*)`` (6,) for actuator values ``x`` (1, n);
    ``C`` (1, 4, 4), ``G`` (4, 4) scratch.  Returns the code of the chain kinematics."""
    code = forward_kinematics(geo, mats, root, x, C, S, W, status)
    if code != OK:
        return code
    pose_inv_mul(C[0], T_star, G)
    log_se3(G, e)
    return OK


@kernel
def norm6(e) -> float:
    return math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3] + e[4] * e[4] + e[5] * e[5])


@kernel
def end_effector_jacobian(geo, S, status, tmodel, tdata, body, offset, x, XB, XDB, ZB, Q, QD, QDD, Jt, J):
    """``J = J_tree(q) H`` (6, n) as :func:`~pkm_dynamics.core.chain_ik.chain_jacobian`: the
    tree Jacobian of the end-effector frame (body ``body``, pose ``offset`` in it) times the
    loop-closure map ``H = dq/dx`` (tree-joint rates of unit actuator rates, eqs. 4-5), for
    ``x`` (n,).  ``XB``, ``XDB``, ``ZB`` (n, n), ``Q``, ``QD``, ``QDD`` (n, nq), ``Jt`` (6, nq):
    scratch.  Returns the code of the tree state."""
    n = x.shape[0]
    for r in range(n):
        for k in range(n):
            XB[r, k] = x[k]
            XDB[r, k] = 1.0 if r == k else 0.0
            ZB[r, k] = 0.0
    code = tree_state(geo, XB, XDB, ZB, Q, QD, QDD, S, status)
    if code != OK:
        return code
    tree_forward_kinematics(tmodel, tdata, Q[0])
    body_jacobian(tmodel, tdata, body, offset, Jt)
    for i in range(6):
        for r in range(n):
            s = 0.0
            for j in range(Jt.shape[1]):
                s += Jt[i, j] * QD[r, j]
            J[i, r] = s
    return OK


@kernel
def bounded_step(J, e, x, lower, upper, dx):
    """Least-squares step ``dx`` (n,) for ``J dx = e`` (numpy's ``lstsq`` cutoff) with the
    actuators on a stroke end that would be pushed beyond it held fixed (active set), as
    :func:`~pkm_dynamics.core.spatial.pose_newton.bounded_step`."""
    m, n = J.shape
    rc = 2.220446049250313e-16 * max(m, n)
    dx[:] = np.linalg.lstsq(J, e, rc)[0]
    free = 0
    for k in range(n):
        blocked = (x[k] <= lower[k] and dx[k] < 0.0) or (x[k] >= upper[k] and dx[k] > 0.0)
        if not blocked:
            free += 1
    if free == n:
        return
    Jf = np.empty((m, free))
    idx = np.empty(free, dtype=np.int64)
    c = 0
    for k in range(n):
        if not ((x[k] <= lower[k] and dx[k] < 0.0) or (x[k] >= upper[k] and dx[k] > 0.0)):
            idx[c] = k
            for i in range(m):
                Jf[i, c] = J[i, k]
            c += 1
    dx[:] = 0.0
    if free > 0:
        sol = np.linalg.lstsq(Jf, e, rc)[0]
        for c in range(free):
            dx[idx[c]] = sol[c]


@kernel
def pose_newton(geo, mats, root, S, W, status, tmodel, tdata, body, offset, lower, upper, T_star, x0, tol,
                max_iter, x_out):
    """Projected Gauss-Newton on ``log(T(x)^-1 T*)`` from ``x0`` (n,), as
    :func:`~pkm_dynamics.core.chain_ik.pose_newton`: :func:`bounded_step` on the Jacobian of
    :func:`end_effector_jacobian`, the trial clipped to the strokes ``lower``, ``upper`` (n,) and
    halved up to 30 times until the error decreases (a trial whose loops do not close counts as
    no decrease); once the error is below ``tol`` one more step polishes it.  Writes ``x_out``
    (n,); returns ``(code, residual, iterations)``: a code other than OK when the kinematics at
    ``x0`` or a Jacobian failed (the reference route raises its exception there)."""
    n = x0.shape[0]
    nq = tmodel[0].shape[0]
    x = np.empty((1, n))
    trial = np.empty((1, n))
    x[0] = x0
    C, G = np.empty((1, 4, 4)), np.empty((4, 4))
    e, et = np.empty(6), np.empty(6)
    dx = np.empty(n)
    XB, XDB, ZB = np.empty((n, n)), np.empty((n, n)), np.empty((n, n))
    Q, QD, QDD = np.empty((n, nq)), np.empty((n, nq)), np.empty((n, nq))
    Jt, J = np.empty((6, nq)), np.empty((6, n))
    code = pose_error(geo, mats, root, S, W, status, T_star, x, C, G, e)
    if code != OK:
        return code, math.inf, 0
    ne = norm6(e)
    it = 0
    while it < max_iter and ne > 1e-3 * tol:
        polishing = ne <= tol                      # converged: one more step to round-off
        it += 1
        code = end_effector_jacobian(geo, S, status, tmodel, tdata, body, offset, x[0], XB, XDB, ZB, Q, QD, QDD,
                                     Jt, J)
        if code != OK:
            return code, ne, it
        bounded_step(J, e, x[0], lower, upper, dx)
        step = 1.0
        decreased = False
        for _ in range(30):
            for k in range(n):
                trial[0, k] = min(max(x[0, k] + step * dx[k], lower[k]), upper[k])
            if pose_error(geo, mats, root, S, W, status, T_star, trial, C, G, et) == OK and norm6(et) < ne:
                decreased = True
                break
            step *= 0.5
        if not decreased:
            break                                  # no decrease: a local minimum (or done)
        x[0] = trial[0]
        e[:] = et
        ne = norm6(e)
        if polishing:
            break
    x_out[:] = x[0]
    status[0] = OK
    return OK, ne, it
