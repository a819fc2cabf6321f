"""The compiled inverse kinematics of one limb (paper 001 Algorithms 1 + 2 and 3), one kernel
call per limb and pose: the direct Newton solve from the start, the acceptance test of
:func:`..working_mode.solve_on_working_mode`, the round-off refinement and the loop
conditioning monitor of :mod:`..ik_refinement`, the joint limits of
:func:`..working_mode.apply_joint_limits` and the final Jacobians with their ``kappa(F)`` check
(:meth:`..pkm.ParallelRobot._ik_one`).  Model and data layouts: :mod:`.limb_kernels`.

Whatever the kernel does not decide (a direct step beyond ``DIRECT_STEP``: the continuation;
every refusal) it reports as a status; the Python layer then runs the reference route for that
limb, which raises the named exception with its message or takes the continuation.
"""
from __future__ import annotations

import math

from ..numba_support.cache import kernel
from .limb_kernels import (compound_step, jacobians_and_step, limb_jacobians, limb_state, loop_matrix, loop_norm,
                           platform_pose, pose_error, solve_loops)
from ..spatial.small_linalg import condition_at_most, lu_solve
from .limb_layout import (LD_A, LD_B, LD_DX, LD_G_RES, LD_INNER, LD_L_T, LD_POSE, LD_VEC, LD_WORK, LM_LOOPS, LM_LOWER,
                          LM_REVOLUTE, LM_SIZES, LM_UPPER, LOOP_SIZE, SIZE_DL, SIZE_NL)
from ..spatial.se3_kernels import log_se3, pose_inv_mul
from ..status import (DIRECT_STEP, FAR_STEP, LIMIT_SLACK, LIMITS, LOOP_CONDITION, LOOP_SINGULARITY_THRESHOLD,
                      MISS_TOLERANCE, NO_CONVERGENCE, OK, OTHER_BRANCH, REFINEMENT_STEPS, ROUND_OFF, SINGULAR)


@kernel
def nested_ik(lm, ld, target, theta, tol, max_iter, threshold, warm):
    """Algorithm 1 with Algorithm 2 as inner loop (:func:`..limb_ik.limb_inverse_kinematics_nested`)
    from ``theta`` (n,) in place; inner iterations per outer step into ``ld`` inner.  ``warm``:
    ``ld`` already holds the state and Jacobians at ``theta`` (those a previous solve ended on,
    checked against ``threshold`` then): the first step takes them instead of computing them
    again.  Returns ``(status, outer iterations, largest pose error component)`` (the last of
    :func:`..limb_kernels.pose_error`, at the returned ``theta`` on OK)."""
    if not warm:
        limb_state(lm, ld, theta)
    err, big = pose_error(lm, ld, target)
    outer = 0
    inner = ld[LD_INNER]
    while err > tol:
        if outer >= max_iter:
            return NO_CONVERGENCE, outer, big
        if outer > 0 or not warm:               # the Jacobians and Delta q = L_t^-1 dx (one LU)
            st, _ = jacobians_and_step(lm, ld, threshold, False, True)
            if st != OK:
                return st, outer, big
        elif not newton_step(lm, ld):
            return SINGULAR, outer, big
        st = solve_loops(lm, ld, theta, tol, inner[outer])
        if st != OK:
            return st, outer, big
        outer += 1
        err, big = pose_error(lm, ld, target)
    return OK, outer, big


@kernel
def newton_step(lm, ld):
    """``Delta q = L_t^-1 Delta x_t`` (Algorithm 1's outer step) from ``ld`` L_t and dx into
    ``ld`` b[:dl, 0]; False for a singular ``L_t``."""
    dl = lm[LM_SIZES][SIZE_DL]
    A, b, Lt, dx = ld[LD_A], ld[LD_B], ld[LD_L_T], ld[LD_DX]
    for i in range(dl):
        b[i, 0] = dx[i]
        for j in range(dl):
            A[i, j] = Lt[i, j]
    return lu_solve(A, dl, b, 1)


@kernel
def compound_ik(lm, ld, target, theta, tol, max_iter, threshold, warm):
    """Algorithm 3 (:func:`..limb_ik.limb_inverse_kinematics_compound`) from ``theta`` in place
    (``warm`` as :func:`nested_ik`).  Returns ``(status, outer iterations, largest pose error
    component)`` (as :func:`nested_ik`)."""
    outer = 0
    while True:
        if outer > 0 or not warm:
            limb_state(lm, ld, theta)
        err, big = pose_error(lm, ld, target)
        gnorm = 0.0
        for lp in range(lm[LM_SIZES][SIZE_NL]):
            gnorm = max(gnorm, loop_norm(ld, lm, lp))
        if err <= tol and gnorm <= tol:
            return OK, outer, big
        if outer >= max_iter:
            return NO_CONVERGENCE, outer, big
        if outer > 0 or not warm:
            st, _ = limb_jacobians(lm, ld, threshold, False)
            if st != OK:
                return st, outer, big
        if not compound_step(lm, ld, theta):
            return SINGULAR, outer, big
        outer += 1


@kernel
def refine(lm, ld, target, theta, big, held):
    """:func:`..ik_refinement.refine_to_round_off`: compound Newton steps until the pose error
    and every loop residual are at most ROUND_OFF (at most REFINEMENT_STEPS); the state in
    ``ld`` is that of the returned ``theta``.  ``big``: the largest pose error component at the
    start, which the solve has just computed there (:func:`nested_ik`; its
    :func:`..limb_kernels.pose_error` is not run again).  ``held``: ``ld`` holds the Jacobians
    (``H``, ``J_p``, ``L_t``) of the solve's last Newton iterate, within a converged step of
    ``theta``: the first step takes them (a chord step: the error, at most ``tol``, shrinks by
    a factor of the order of that step, to round-off where a full step would), the others
    compute them at ``theta``.  Returns ``(ok, at round-off)``: ok False when a solve is
    singular; at round-off True when the error was found at most ROUND_OFF at the returned
    ``theta``."""
    g, loops = ld[LD_G_RES], lm[LM_LOOPS]
    for step in range(REFINEMENT_STEPS):
        if step > 0:
            _, big = pose_error(lm, ld, target)
        for lp in range(lm[LM_SIZES][SIZE_NL]):
            for i in range(loops[lp, LOOP_SIZE]):
                big = max(big, abs(g[lp, i]))
        if big <= ROUND_OFF:
            return True, True
        if step > 0 or not held:
            st, _ = limb_jacobians(lm, ld, -1.0, False)
            if st != OK:
                return False, False
        if not compound_step(lm, ld, theta):
            return False, False
        limb_state(lm, ld, theta)
    return True, False


@kernel
def miss(lm, ld, target):
    """``|log(C_p^-1 C_target)|`` (pkm._ik_one's test for another assembly branch)."""
    P, D, e = ld[LD_POSE], ld[LD_WORK], ld[LD_VEC]
    platform_pose(lm, ld, P)
    pose_inv_mul(P, target, D)
    log_se3(D, e)
    s = 0.0
    for a in range(6):
        s += e[a] * e[a]
    return math.sqrt(s)


@kernel
def joint_limits(lm, theta, theta0):
    """:func:`..working_mode.apply_joint_limits` in place: revolute angles shifted by the
    multiple of 2 pi nearest the start within the limits; returns the index of a joint that
    cannot be brought within them, or -1."""
    rev, lo_, hi_ = lm[LM_REVOLUTE], lm[LM_LOWER], lm[LM_UPPER]
    two_pi = 2.0 * math.pi
    for j in range(len(theta)):
        lo, hi = lo_[j] - LIMIT_SLACK, hi_[j] + LIMIT_SLACK
        v = theta[j]
        if rev[j]:
            base = v - two_pi * round((v - theta0[j]) / two_pi)
            best, found = 0.0, False
            for k in range(-3, 4):
                cand = base + two_pi * k
                if lo <= cand <= hi and (not found or abs(cand - theta0[j]) < abs(best - theta0[j])):
                    best, found = cand, True
            if found:
                theta[j] = best
                continue
            v = base
        if not (lo <= v <= hi):
            return j
    return -1


@kernel
def limb_ik(lm, ld, target, theta0, theta, nested, tol, max_iter, threshold, loop_threshold, warm, out):
    """One limb's IK for the platform pose ``target`` (4,4) from ``theta0`` (n,) into ``theta``,
    with every check of the reference route (module docstring); ``threshold``,
    ``loop_threshold``: of ``kappa(F)`` and ``kappa(G_y)`` (< 0: none); ``warm``: ``ld`` holds
    the state and Jacobians at ``theta0`` (:func:`nested_ik`).  ``out`` (3,): outer
    iterations, ``kappa(F)``, largest loop residual.  Returns a status (OK: ``ld`` holds the
    state and Jacobians at ``theta``)."""
    return limb_ik_checked(lm, ld, target, theta0, theta, nested, tol, max_iter, threshold, loop_threshold, warm,
                           True, out)


@kernel
def limb_ik_checked(lm, ld, target, theta0, theta, nested, tol, max_iter, threshold, loop_threshold, warm,
                    want_kappa, out):
    """:func:`limb_ik`; without ``want_kappa`` ``out[1]`` is -1: the final ``kappa(F)`` check
    against ``threshold`` decides by :func:`..limb_kernels.limb_jacobians`' bound and takes
    the singular values only where the bound does not (the same decision; for the sweeps,
    which do not return ``kappa(F)``)."""
    for i in range(len(theta)):
        theta[i] = theta0[i]
    if nested:
        st, outer, big = nested_ik(lm, ld, target, theta, tol, max_iter, threshold, warm)
    else:
        st, outer, big = compound_ik(lm, ld, target, theta, tol, max_iter, threshold, warm)
    out[0] = outer
    if st != OK:
        return st
    step = 0.0
    for i in range(len(theta)):
        step = max(step, abs(theta[i] - theta0[i]))
    if not step <= DIRECT_STEP:
        return FAR_STEP
    ok, round_off = refine(lm, ld, target, theta, big, warm or outer > 0)
    if not ok:
        return SINGULAR
    # a limb that constrains all six pose components and is at round-off on each is no
    # MISS_TOLERANCE away: the test decides only for the others
    if not (round_off and lm[LM_SIZES][SIZE_DL] == 6) and not miss(lm, ld, target) <= MISS_TOLERANCE:
        return OTHER_BRANCH
    if loop_threshold >= 0.0:
        for lp in range(lm[LM_SIZES][SIZE_NL]):
            r = loop_matrix(lm, ld, lp)
            if not condition_at_most(ld[LD_A], r, r, ld[LD_B], loop_threshold):
                return LOOP_CONDITION
    if joint_limits(lm, theta, theta0) >= 0:
        return LIMITS
    st, kappa = limb_jacobians(lm, ld, threshold, want_kappa)
    out[1] = kappa
    if st != OK:
        return st
    res, g, loops = 0.0, ld[LD_G_RES], lm[LM_LOOPS]
    for lp in range(lm[LM_SIZES][SIZE_NL]):
        for i in range(loops[lp, LOOP_SIZE]):
            res = max(res, abs(g[lp, i]))
    out[2] = res
    return OK


@kernel
def limb_prepare(lm, ld, theta):
    """The state and Jacobians of ``theta`` (n,) into ``ld`` (for the rates and dynamics of a
    solution the scratch no longer holds); returns a status: LOOP_CONDITION where a loop's
    ``kappa(G_y)`` of the tables' partition exceeds :data:`..status.LOOP_SINGULARITY_THRESHOLD` (the reference
    route, which re-selects the partition there, :mod:`..loop_partition`, takes the limb)."""
    limb_state(lm, ld, theta)
    st, _ = limb_jacobians(lm, ld, -1.0, False)
    if st != OK:
        return st
    for lp in range(lm[LM_SIZES][SIZE_NL]):
        r = loop_matrix(lm, ld, lp)
        if not condition_at_most(ld[LD_A], r, r, ld[LD_B], LOOP_SINGULARITY_THRESHOLD):
            return LOOP_CONDITION
    return OK
