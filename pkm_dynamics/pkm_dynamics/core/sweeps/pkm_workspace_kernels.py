"""Compiled workspace sweep of a parallel robot: the platform poses of a grid in one call, each
inverse kinematics warm-started from the poses solved before it (continuation along the grid),
with ``J_IK`` (eq. 30 of paper 001), the static actuator forces of eq. 45 at rest, the reflected
mass ``M_t`` (eq. 40) and its largest eigenvalue, ``kappa(J_IK)`` and the worst loop ``kappa(G_y)``
(eq. 18) of every pose
(:func:`workspace_rows`).

Each pose is one :func:`..pkm.robot_kernels.robot_reference_checked` (the kernel of the robot's
one-pose ``inverse_kinematics`` / ``reference_motion``, at rest: ``V_t = Vdot_t = 0``, without the
limbs' ``kappa(F)`` the map does not return: only its check against the threshold) from, in turn:

1. the joints extrapolated along the line of the last poses (:func:`predicted_start`: where the
   caller marks the pose as the next equally spaced point of a straight line of grid points, a
   secant or quadratic predictor; its start error is of second or third order in the grid step,
   so Newton needs fewer iterations than from the last solution, whose error is of first order);
2. the previous solution;
3. the reference configuration, directly or along the straight task-space path from the reference
   pose (:func:`reference_path`: the one-pose route's continuation, in steps of at most
   :data:`..status.CONTINUATION_STEP`).

Every start refines to round-off (:func:`..limb.limb_ik_kernels.refine`): the solution is the same
to round-off whichever start converged.  ``M_t`` adds :func:`..pkm.robot_kernels.robot_task_inertia`
to the platform's ``P_p^T M_p P_p``; the condition numbers are
:func:`..spatial.small_linalg.condition` (one-sided Jacobi: the extreme singular values, as
``numpy.linalg.cond``).  Where every start fails, or a limb needs the reference route, the call
stops and returns that pose's index: the Python layer solves it with the robot's own call and
resumes.
"""
from __future__ import annotations

import math

from ..numba_support.cache import kernel
from ..limb.limb_kernels import loop_matrix
from ..limb.limb_layout import LD_A, LD_B, LM_SIZES, SIZE_NL
from ..pkm.robot_kernels import data_views, model_views, robot_reference_checked, robot_task_inertia, view2
from ..spatial.se3_kernels import exp_se3, log_se3, pose_inv_mul, pose_mul
from ..spatial.small_linalg import condition, largest_eigenvalue
from ..status import CONTINUATION_STEP, OK


@kernel
def predicted_start(Theta, i, order, out):
    """The start (n,) of pose ``i`` into ``out``, extrapolated from the solutions ``Theta`` (B, n)
    of the ``order`` (1, 2) poses before it, equally spaced on a line: ``2 q_1 - q_2`` (secant),
    ``3 q_1 - 3 q_2 + q_3`` (quadratic; ``q_k`` the solution ``k`` poses back)."""
    for j in range(out.shape[0]):
        if order >= 2:
            out[j] = 3.0 * (Theta[i - 1, j] - Theta[i - 2, j]) + Theta[i - 3, j]
        else:
            out[j] = 2.0 * Theta[i - 1, j] - Theta[i - 2, j]


@kernel
def reset(prepare):
    """Mark every limb's scratch as holding no known state (after a failed solve)."""
    for l in range(len(prepare)):
        prepare[l] = True


@kernel
def path_steps(C_ref, pose, xi, S):
    """The steps ``N >= 2`` of the straight task-space path ``C_ref exp(s xi)``, ``xi = log(C_ref^-1
    pose)`` (into ``xi`` (6,)), each moving no coordinate by more than
    :data:`..status.CONTINUATION_STEP` (:func:`..pkm.working_mode.solve_on_working_mode`);
    ``S`` (4, 4) scratch."""
    pose_inv_mul(C_ref, pose, S)
    log_se3(S, xi)
    big = 0.0
    for a in range(6):
        big = max(big, abs(xi[a]))
    return max(2, int(math.ceil(big / CONTINUATION_STEP)))


@kernel
def reference_path(fm, im, hm, fd, idt, hd, toff, pose, reference, nested, tol, max_iter, threshold, loop_threshold,
                   out, status, rc, rs, K_rows, Vt, At, thd, thdd, Wl, W, prepare, theta, J, u, max_steps, guess,
                   path, xi, iterations):
    """Pose ``pose`` (4, 4) from the ``reference`` configuration (n,) along the straight path of
    :func:`path_steps` from the reference pose (``rc``'s ``C_ref``): each intermediate pose's IK
    (level 0) warm-started from the last, the last at rest with the forces (as
    :func:`workspace_rows`) into ``theta``, ``J``, ``u``; ``guess`` (n,), ``path`` (2, 4, 4),
    ``xi`` (6,) scratch; ``iterations`` (1,) the outer iterations of every step summed.  Returns
    OK, or the status where a step failed (or the path is longer than ``max_steps`` steps)."""
    C_ref = view2(rc, 0, 4, 4)
    steps = path_steps(C_ref, pose, xi, path[0])
    if steps > max_steps:
        return -1
    reset(prepare)
    guess[:] = reference
    total = 0.0
    for k in range(1, steps + 1):
        target, level = pose, 2
        if k < steps:
            exp_se3(xi, k / steps, path[0])
            pose_mul(C_ref, path[0], path[1])
            target, level = path[1], 0
        code = robot_reference_checked(fm, im, hm, fd, idt, hd, toff, target, guess, guess, prepare, theta, nested, tol,
                                       max_iter, threshold, loop_threshold, False, out, status, rc, rs, K_rows, Vt,
                                       At, level, thd, thdd, Wl, W, J, u)
        for l in range(len(toff) - 1):
            total += out[l, 0]
        if code != OK:
            return code
        for l in range(len(prepare)):
            prepare[l] = False                    # the scratch holds every limb's state at theta
        guess[:] = theta
    iterations[0] = total
    return OK


@kernel
def worst_loop_kappa(fm, im, hm, fd, idt, hd, toff):
    """The largest ``kappa(G_y)`` (eq. 18) over every loop of every limb at the state the scratch
    holds (1 without loops): each loop's ``G_y`` (:func:`..limb.limb_kernels.loop_matrix`, the
    tables' partition) by :func:`..spatial.small_linalg.condition`."""
    worst = 1.0
    for l in range(len(toff) - 1):
        lm = model_views(fm, im, hm, l)
        ld, _ = data_views(fd, idt, hd, l)
        for lp in range(lm[LM_SIZES][SIZE_NL]):
            r = loop_matrix(lm, ld, lp)
            worst = max(worst, condition(ld[LD_A], r, r, ld[LD_B]))
    return worst


@kernel
def workspace_rows(fm, im, hm, fd, idt, hd, toff, poses, start, line, warm, reference, nested, tol, max_iter,
                   threshold, loop_threshold, out, status, rc, rs, K_rows, Vt, At, thd, thdd, Wl, W, prepare, Mp,
                   max_steps, guess, path, xi, Wk, Sm, solved, Theta, J, U, Mt, iterations, kappa_J, kappa_G, mass_max):
    """Poses ``start..`` of ``poses`` (B, 4, 4) (module docstring) into ``Theta`` (B, n), ``J``
    (B, na, dp), ``U`` (B, na), ``Mt`` (B, dp, dp) (``Mp`` (dp, dp) the platform's share),
    ``iterations`` (B,) (outer IK iterations summed over the limbs), ``kappa_J``, ``kappa_G``,
    ``mass_max`` (B,) (``lambda_max(M_t)``, :func:`..spatial.small_linalg.largest_eigenvalue`),
    ``solved`` (B,) True; ``line`` (B,) how many poses before each continue its straight line
    with equal steps (0-2: the predictor's order, :func:`predicted_start`; used where those poses
    are solved); ``warm`` (n,) the flat joints of the last pose solved, updated in place;
    ``reference`` (n,) the reference configuration; ``max_steps`` the longest path of
    :func:`reference_path`; ``guess`` (n,), ``path`` (2, 4, 4), ``xi`` (6,), ``Wk`` (at least
    max(na, dp) x min(na, dp)), ``Sm`` (dp, dp) scratch.  Returns the index of the first pose it did not solve (B:
    all)."""
    B = poses.shape[0]
    reset(prepare)                                # the scratch holds no known state at the start
    has_warm = False                              # warm holds the solution of a pose before i
    for k in range(start):
        if solved[k]:
            has_warm = True
    for i in range(start, B):
        order = min(line[i], i - 1)
        for k in range(1, order + 1):
            if not solved[i - k]:
                order = k - 1
                break
        code = -1
        its = 0.0
        if order >= 1:
            predicted_start(Theta, i, order, guess)
            code = robot_reference_checked(fm, im, hm, fd, idt, hd, toff, poses[i], guess, warm, prepare, Theta[i],
                                           nested, tol, max_iter, threshold, loop_threshold, False, out, status, rc,
                                           rs, K_rows, Vt, At, 2, thd, thdd, Wl, W, J[i], U[i])
            if code != OK:
                reset(prepare)
        if code != OK and has_warm:
            code = robot_reference_checked(fm, im, hm, fd, idt, hd, toff, poses[i], warm, warm, prepare, Theta[i],
                                           nested, tol, max_iter, threshold, loop_threshold, False, out, status, rc,
                                           rs, K_rows, Vt, At, 2, thd, thdd, Wl, W, J[i], U[i])
            if code != OK:
                reset(prepare)
        if code != OK:
            code = robot_reference_checked(fm, im, hm, fd, idt, hd, toff, poses[i], reference, warm, prepare,
                                           Theta[i], nested, tol, max_iter, threshold, loop_threshold, False, out,
                                           status, rc, rs, K_rows, Vt, At, 2, thd, thdd, Wl, W, J[i], U[i])
        if code == OK:
            for l in range(len(toff) - 1):
                its += out[l, 0]
        else:
            code = reference_path(fm, im, hm, fd, idt, hd, toff, poses[i], reference, nested, tol, max_iter,
                                  threshold, loop_threshold, out, status, rc, rs, K_rows, Vt, At, thd, thdd, Wl, W,
                                  prepare, Theta[i], J[i], U[i], max_steps, guess, path, xi, iterations[i:i + 1])
            its = iterations[i]
        if code != OK:
            reset(prepare)
            return i
        for l in range(len(prepare)):
            prepare[l] = False                    # the scratch holds every limb's state at Theta[i]
        M = Mt[i]
        M[:, :] = Mp
        robot_task_inertia(fm, im, hm, fd, idt, hd, toff, Theta[i], prepare, M, status)
        for l in range(len(prepare)):
            if status[l] != OK:
                reset(prepare)
                return i
        iterations[i] = its
        na, dp = J.shape[1], J.shape[2]
        kappa_J[i] = condition(J[i], na, dp, Wk)
        kappa_G[i] = worst_loop_kappa(fm, im, hm, fd, idt, hd, toff)
        mass_max[i] = largest_eigenvalue(M, Sm)
        solved[i] = True
        has_warm = True
        warm[:] = Theta[i]
    return B
