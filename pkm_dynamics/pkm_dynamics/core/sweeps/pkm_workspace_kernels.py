"""Compiled workspace sweep of a parallel robot: the platform poses of a grid in one call, each
inverse kinematics warm-started from the last pose solved (continuation along the grid), with
``J_IK`` (eq. 30 of paper 001), the static actuator forces of eq. 45 at rest and the reflected
mass ``M_t`` (eq. 40) of every pose (:func:`workspace_rows`).

Each pose is one :func:`..pkm.robot_kernels.robot_reference_checked` (the kernel of the robot's one-pose
``inverse_kinematics`` / ``reference_motion``, at rest: ``V_t = Vdot_t = 0``, without the limbs'
``kappa(F)`` the map does not return: only its check against the threshold) from the previous
solution, then from the reference configuration where that fails (as the one-pose calls from those
starts); ``M_t`` adds :func:`..pkm.robot_kernels.robot_task_inertia` to the platform's
``P_p^T M_p P_p``.  Where both starts fail, or a limb needs the reference route, the call stops
and returns that pose's index: the Python layer solves it with the robot's own call and resumes.
"""
from __future__ import annotations

from ..numba_support.cache import kernel
from ..pkm.robot_kernels import robot_reference_checked, robot_task_inertia
from ..status import OK


@kernel
def workspace_rows(fm, im, hm, fd, idt, hd, toff, poses, start, warm, reference, nested, tol, max_iter, threshold,
                   loop_threshold, out, status, rc, rs, K_rows, Vt, At, thd, thdd, Wl, W, prepare, Mp,
                   Theta, J, U, Mt, iterations, FD, keep):
    """Poses ``start..`` of ``poses`` (B, 4, 4) (module docstring) into ``Theta`` (B, n), ``J``
    (B, na, dp), ``U`` (B, na), ``Mt`` (B, dp, dp) (``Mp`` (dp, dp) the platform's share),
    ``iterations`` (B,) (outer IK iterations summed over the limbs) and with ``keep`` the scratch
    ``fd`` of each pose into ``FD`` (B, len(fd)) (its limbs' states); ``warm`` (n,) the flat
    joints of the last pose solved, updated in place; ``reference`` (n,) the reference
    configuration.  Returns the index of the first pose it did not solve (B: all)."""
    B = poses.shape[0]
    L = len(toff) - 1
    for l in range(L):
        prepare[l] = True                        # the scratch holds no known state at the start
    for i in range(start, B):
        code = robot_reference_checked(fm, im, hm, fd, idt, hd, toff, poses[i], warm, warm, prepare, Theta[i], nested,
                                       tol, max_iter, threshold, loop_threshold, False, out, status, rc, rs, K_rows, Vt,
                                       At, 2, thd, thdd, Wl, W, J[i], U[i])
        if code != OK:
            for l in range(L):
                prepare[l] = True
            code = robot_reference_checked(fm, im, hm, fd, idt, hd, toff, poses[i], reference, warm, prepare,
                                           Theta[i], nested, tol, max_iter, threshold, loop_threshold, False, out,
                                           status, rc, rs, K_rows, Vt, At, 2, thd, thdd, Wl, W, J[i], U[i])
        if code != OK:
            return i
        for l in range(L):
            prepare[l] = False                   # the scratch holds every limb's state at Theta[i]
        M = Mt[i]
        M[:, :] = Mp
        robot_task_inertia(fm, im, hm, fd, idt, hd, toff, Theta[i], prepare, M, status)
        for l in range(L):
            if status[l] != OK:
                return i
        s = 0.0
        for l in range(L):
            s += out[l, 0]
        iterations[i] = s
        if keep:
            FD[i, :] = fd
        warm[:] = Theta[i]
    return B
