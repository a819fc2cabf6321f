"""Robot-level drivers of the compiled limb kernels: one call for the IK of every limb of a
parallel robot (:func:`robot_ik`) and one for their rates and shares of the inverse dynamics
(:func:`robot_rates`), on packed arrays.

A call into numba unboxes every array argument; the per-limb tuples of :mod:`.limb_kernels`
(27 model and 31 scratch arrays) cost more to pass than to compute with.  So the model of all
limbs is packed into one float array ``fm``, one int array ``im`` and a header ``hm`` (L, 27,
4) of (offset, shape) per entry, the scratch likewise (``fd``, ``idt``, ``hd`` (L, 31, 4));
:func:`model_views` and :func:`data_views` rebuild the tuples of one limb inside the kernel as
views (no copy).  Entry kinds (float/int, dimensions) are fixed by the layouts of
:mod:`.limb_kernels`; :mod:`.limb_tables` packs them.
"""
from __future__ import annotations

from .cache import kernel
from .limb_dynamics_kernels import limb_rates_rnea, limb_task_inertia
from .limb_ik_kernels import limb_ik, limb_prepare
from .limb_kernels import OK
from .spatial_kernels import exp_se3, log_se3, pose_inv_mul, pose_mul


@kernel
def _f1(b, h, l, k):
    o = h[l, k, 0]
    return b[o:o + h[l, k, 1]]


@kernel
def _f2(b, h, l, k):
    o, s0, s1 = h[l, k, 0], h[l, k, 1], h[l, k, 2]
    return b[o:o + s0 * s1].reshape((s0, s1))


@kernel
def _f3(b, h, l, k):
    o, s0, s1, s2 = h[l, k, 0], h[l, k, 1], h[l, k, 2], h[l, k, 3]
    return b[o:o + s0 * s1 * s2].reshape((s0, s1, s2))


@kernel
def model_views(fm, im, hm, l):
    """The model tuple of limb ``l`` (layout of :mod:`.limb_kernels`) as views of the packs."""
    return (_f1(im, hm, l, 0), _f3(fm, hm, l, 1), _f2(fm, hm, l, 2), _f3(fm, hm, l, 3), _f3(fm, hm, l, 4),
            _f2(fm, hm, l, 5), _f2(fm, hm, l, 6), _f2(im, hm, l, 7), _f1(im, hm, l, 8), _f2(fm, hm, l, 9),
            _f1(im, hm, l, 10), _f2(fm, hm, l, 11), _f1(im, hm, l, 12), _f2(im, hm, l, 13), _f3(fm, hm, l, 14),
            _f3(fm, hm, l, 15), _f2(im, hm, l, 16), _f2(im, hm, l, 17), _f2(im, hm, l, 18), _f2(im, hm, l, 19),
            _f2(im, hm, l, 20), _f1(im, hm, l, 21), _f1(fm, hm, l, 22), _f1(fm, hm, l, 23), _f1(im, hm, l, 24),
            _f3(fm, hm, l, 25), _f1(fm, hm, l, 26))


@kernel
def data_views(fd, idt, hd, l):
    """The scratch tuple of limb ``l`` (entries 0-18 of :mod:`.limb_kernels`) and the extra
    scratch of :mod:`.limb_dynamics_kernels` (entries 19-30: :func:`limb_rates_rnea`'s, 31: the
    (n, 6, dp) of :func:`limb_task_inertia`)."""
    ld = (_f3(fd, hd, l, 0), _f2(fd, hd, l, 1), _f2(fd, hd, l, 2), _f3(fd, hd, l, 3), _f2(fd, hd, l, 4),
          _f2(fd, hd, l, 5), _f2(fd, hd, l, 6), _f2(fd, hd, l, 7), _f2(fd, hd, l, 8), _f2(fd, hd, l, 9),
          _f2(fd, hd, l, 10), _f2(fd, hd, l, 11), _f1(fd, hd, l, 12), _f1(fd, hd, l, 13), _f2(fd, hd, l, 14),
          _f2(idt, hd, l, 15), _f1(fd, hd, l, 16), _f1(fd, hd, l, 17), _f2(fd, hd, l, 18))
    lx = (_f2(fd, hd, l, 19), _f2(fd, hd, l, 20), _f1(fd, hd, l, 21), _f1(fd, hd, l, 22), _f2(fd, hd, l, 23),
          _f2(fd, hd, l, 24), _f2(fd, hd, l, 25), _f2(fd, hd, l, 26), _f1(fd, hd, l, 27), _f1(fd, hd, l, 28),
          _f1(fd, hd, l, 29), _f1(fd, hd, l, 30), _f3(fd, hd, l, 31))
    return ld, lx


@kernel
def robot_ik(fm, im, hm, fd, idt, hd, toff, pose, theta0, theta, nested, tol, max_iter, threshold,
             loop_threshold, out, status):
    """:func:`.limb_ik_kernels.limb_ik` of every limb ``l`` for the platform pose ``pose``
    (4,4) from ``theta0[toff[l]:toff[l+1]]`` into ``theta`` (flat); ``out`` (L, 3) outer
    iterations, kappa(F), largest loop residual; ``status`` (L,) each limb's status (the limbs
    after a failed one are still solved: the Python layer hands only the failed ones over)."""
    for l in range(len(toff) - 1):
        lm = model_views(fm, im, hm, l)
        ld, _ = data_views(fd, idt, hd, l)
        a, b = toff[l], toff[l + 1]
        status[l] = limb_ik(lm, ld, pose, theta0[a:b], theta[a:b], nested, tol, max_iter, threshold,
                            loop_threshold, out[l])


@kernel
def robot_rates(fm, im, hm, fd, idt, hd, toff, theta, prepare, Vt, At, Vp, Ap, with_acc, thd, thdd, W, Wl,
                status):
    """Rates (eqs. 27-29, refined) of every limb at ``theta`` (flat) into ``thd``, ``thdd``
    (flat), and with ``with_acc`` the sum of the limbs' shares ``K^T tau`` of eq. 45 into ``W``
    (dp,) (``Wl`` (dp,) scratch); ``prepare[l]``: the scratch does not hold limb l's state at
    ``theta`` (:func:`.limb_ik_kernels.limb_prepare` first).  ``status`` (L,) as
    :func:`robot_ik`."""
    for c in range(len(W)):
        W[c] = 0.0
    for l in range(len(toff) - 1):
        lm = model_views(fm, im, hm, l)
        ld, lx = data_views(fd, idt, hd, l)
        a, b = toff[l], toff[l + 1]
        if prepare[l]:
            status[l] = limb_prepare(lm, ld, theta[a:b])
            if status[l] != OK:
                continue
        status[l] = limb_rates_rnea(lm, ld, lx, Vt, At, Vp, Ap, with_acc, thd[a:b], thdd[a:b], Wl)
        if status[l] == OK and with_acc:
            for c in range(len(W)):
                W[c] += Wl[c]


@kernel
def task_manifold_offset(C_ref, P_p, pose, out, S, X):
    """``log(C(x)^-1 pose)`` (6,) into ``out``, ``C(x) = C_ref exp(P_p x)`` with the task
    coordinates ``x = P_p^T log(C_ref^-1 pose)`` (:meth:`..pkm.ParallelRobot.task_pose`,
    ``task_coordinates``): how far a pose is off the task manifold.  ``S`` (3, 4, 4) and ``X``
    (6,) scratch."""
    pose_inv_mul(C_ref, pose, S[0])
    log_se3(S[0], out)
    for a in range(6):                          # X = P_p P_p^T xi
        v = 0.0
        for c in range(P_p.shape[1]):
            x = 0.0
            for b in range(6):
                x += P_p[b, c] * out[b]
            v += P_p[a, c] * x
        X[a] = v
    exp_se3(X, 1.0, S[1])
    pose_mul(C_ref, S[1], S[2])
    pose_inv_mul(S[2], pose, S[0])
    log_se3(S[0], out)


@kernel
def robot_task_inertia(fm, im, hm, fd, idt, hd, toff, theta, prepare, Mt, status):
    """``Mt += sum_l K_l^T H_l K_l`` (eq. 40 without the platform) at the flat IK solution
    ``theta``; ``prepare``, ``status`` as :func:`robot_rates`."""
    for l in range(len(toff) - 1):
        lm = model_views(fm, im, hm, l)
        ld, lx = data_views(fd, idt, hd, l)
        if prepare[l]:
            status[l] = limb_prepare(lm, ld, theta[toff[l]:toff[l + 1]])
            if status[l] != OK:
                continue
        status[l] = OK
        limb_task_inertia(lm, ld, lx[12], Mt)
