"""The PKM reference kernel (``robot_kernels.robot_reference``: IK warm from the previous
reference, ``J_IK``, rates, eq. 45) along ``bench_pkm``'s path (1 ms samples) in one compiled
loop, process CPU time per reference (median and range of REPS passes), levels 0 (IK only) and
2 (IK + rates + forces); with ``--parts`` the limb sub-kernels timed in compiled loops at a state
of the path (µs per limb call; every row but ``views`` includes the ~1 µs of building the
limb's views).  ROOT: the checkout whose ``pkm_dynamics`` and ``bench`` are imported, so two
trees are timed in turns by running it for each:

    python bench/profile_pkm_reference.py ROOT [gs|ir] [--parts]
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

REPS, PART_CALLS = 9, 2000
PARTS = ("views", "limb_state", "limb_jacobians", "jacobians + exact kappa(F)", "pose_error", "condition(F)",
         "miss", "joint_limits", "limb_rates_rnea")


def main(root: str, which: str, parts: bool) -> None:
    sys.path.insert(0, os.path.join(root, "pkm_dynamics"))
    sys.path.insert(0, os.path.join(root, "bench"))
    import numba
    from bench_pkm import paths
    from pkm_dynamics.core.limb import limb_ik_kernels as IK
    from pkm_dynamics.core.limb import limb_kernels as LK
    from pkm_dynamics.core.limb.limb_dynamics_kernels import limb_rates_rnea
    from pkm_dynamics.core.limb.limb_layout import LD_F, LD_WORK, LM_SIZES, SIZE_DELTA, SIZE_DP
    from pkm_dynamics.core.pkm import robot_kernels as KR
    from pkm_dynamics.core.spatial.small_linalg import condition

    name = "gough_stewart_6ups" if which == "gs" else "irsbot2_paths"
    robot, (P, V, A) = paths(False)[name]
    T, rc, K_rows = robot.limb_tables, robot.reference_constants, robot.J_IK_positions
    th0 = np.array(robot.inverse_kinematics(P[0], V[0], A[0]).flat, float)
    thr = -1.0 if robot.singularity_threshold is None else float(robot.singularity_threshold)
    lthr = -1.0 if robot.loop_singularity_threshold is None else float(robot.loop_singularity_threshold)
    fd, idt, hd, out, status, rs, Wl, prepare = T.reference_scratch()
    n, (na, dp) = T.n, K_rows.shape

    @numba.njit
    def path(fm, im, hm, fd, idt, hd, toff, P, V, A, th0, prepare, Theta, nested, tol, max_iter, thr, lthr, out,
             status, rc, rs, K_rows, level, thd, thdd, Wl, W, J, u, act_flat, act, its):
        prev = th0.copy()
        prepare[:] = True
        for i in range(1, P.shape[0]):
            code = KR.robot_reference(fm, im, hm, fd, idt, hd, toff, P[i], prev, prev, prepare, Theta[i], nested,
                                      tol, max_iter, thr, lthr, out, status, rc, rs, K_rows, V[i], A[i], level, thd,
                                      thdd, Wl, W, J, u, act_flat, act, act[0, :0], act_flat[:0])[0]
            if code != 0:
                return i
            for l in range(len(prepare)):
                prepare[l] = status[l] != 0
            its[i] = out[:, 0].sum()
            prev[:] = Theta[i]
        return P.shape[0]

    for level in (0, 2):
        Theta, its = np.zeros((len(P), n)), np.zeros(len(P))
        args = (T.fm, T.im, T.hm, fd, idt, hd, T.toff, P, V, A, th0, prepare, Theta, robot.ik_scheme == "nested",
                robot.tol, T.max_iter, thr, lthr, out, status, rc, rs, K_rows, level, np.zeros(n), np.zeros(n), Wl,
                np.zeros(dp), np.zeros((na, dp)), np.zeros(na), robot._act_flat, np.zeros((3, na)), its)
        assert path(*args) == len(P)
        ts = []
        for _ in range(REPS):
            c = time.process_time()
            path(*args)
            ts.append((time.process_time() - c) / (len(P) - 1) * 1e6)
        print(f"{name} level {level}: {np.median(ts):.1f} us per reference (range {min(ts):.1f}-{max(ts):.1f}), "
              f"outer iterations per reference {its[1:].mean():.2f}")
    if not parts:
        return

    @numba.njit
    def part(which, fm, im, hm, fd, idt, hd, toff, pose, theta, Vt, At, Vp, Ap, Wl, calls):
        th, thd, thdd = theta.copy(), np.zeros(len(theta)), np.zeros(len(theta))
        acc = 0.0
        for _ in range(calls):
            for l in range(len(toff) - 1):
                lm, (ld, lx) = KR.model_views(fm, im, hm, l), KR.data_views(fd, idt, hd, l)
                a, b = toff[l], toff[l + 1]
                if which == 0:
                    acc += ld[0][0, 0, 0] + lm[1][0, 0, 0]
                elif which == 1:
                    LK.limb_state(lm, ld, th[a:b])
                elif which == 2:
                    acc += LK.limb_jacobians(lm, ld, -1.0, False)[1]
                elif which == 3:
                    acc += LK.limb_jacobians(lm, ld, 1e6, True)[1]
                elif which == 4:
                    acc += LK.pose_error(lm, ld, pose)[0]
                elif which == 5:
                    acc += condition(ld[LD_F], lm[LM_SIZES][SIZE_DELTA], lm[LM_SIZES][SIZE_DP], ld[LD_WORK])
                elif which == 6:
                    acc += IK.miss(lm, ld, pose)
                elif which == 7:
                    acc += IK.joint_limits(lm, th[a:b], theta[a:b])
                else:
                    acc += limb_rates_rnea(lm, ld, lx, Vt, At, Vp, Ap, True, thd[a:b], thdd[a:b], Wl)
        return acc

    i = 5
    sol = robot.inverse_kinematics(P[i], V[i], A[i])        # the scratch holds its state and Jacobians
    theta = np.array(sol.flat, float)
    Vp, Ap = robot.P_p @ V[i], robot.P_p @ A[i]
    L = len(T.toff) - 1
    fd, idt, hd = T.data()
    for w, label in enumerate(PARTS):
        args = (w, T.fm, T.im, T.hm, fd, idt, hd, T.toff, np.ascontiguousarray(P[i]), theta,
                np.ascontiguousarray(V[i]), np.ascontiguousarray(A[i]), Vp, Ap, Wl)
        part(*args, 2)
        ts = []
        for _ in range(5):
            c = time.process_time()
            part(*args, PART_CALLS)
            ts.append((time.process_time() - c) / PART_CALLS / L * 1e6)
        print(f"  {label:28s} {np.median(ts):6.2f} us per limb call")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))), sys.argv[2] if len(sys.argv) > 2 and not
         sys.argv[2].startswith("-") else "gs", "--parts" in sys.argv)
