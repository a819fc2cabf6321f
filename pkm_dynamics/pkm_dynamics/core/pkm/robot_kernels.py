"""Robot-level drivers of the compiled limb kernels: one call for the IK of every limb of a
parallel robot (:func:`robot_ik`) and one for their rates and shares of the inverse dynamics
(:func:`robot_rates`), on packed arrays; and one feedforward reference in one call
(:func:`robot_reference`: input checks, IK, ``J_IK``, rates, the limbs' and the platform's
shares of eq. 45 and ``u``), which leaves whatever it does not decide to the Python layer.

A call into numba unboxes every array argument; the per-limb tuples of :mod:`..limb.limb_layout`
(27 model and 32 scratch arrays) cost more to pass than to compute with.  So the model of all
limbs is packed into one float array ``fm``, one int array ``im`` and a header ``hm`` (L, 27,
4) of (offset, shape) per entry, the scratch likewise (``fd``, ``idt``, ``hd`` (L, 32, 4));
:func:`model_views` and :func:`data_views` rebuild the tuples of one limb inside the kernel as
views (no copy; :func:`view2`, :func:`view3`: :func:`..numba_support.views.c_view`).  Entry
kinds (float/int, dimensions) are fixed by the layouts of :mod:`..limb.limb_layout`, whose named
indices place every entry here and in :mod:`..pkm.limb_tables`, which packs them.

The drivers allocate nothing and are compiled without numba's memory manager
(:func:`..numba_support.cache.scratch_kernel`), and so is every limb kernel they call: with it,
each view and each array taken out of a limb's tuples in every sub-kernel was an atomic
reference count up and down (thousands per reference, more time than the arithmetic).  The view
builders are inlined into each caller (:func:`..numba_support.cache.inline_kernel`), so that a
caller with the memory manager counts the views it receives and one without does not.
"""
from __future__ import annotations

import math

from ..bounds import MAX_RATE
from ..numba_support.cache import inline_kernel, kernel, scratch_kernel
from ..numba_support.views import c_view
from ..limb.limb_dynamics_kernels import limb_rates_rnea
from ..limb.limb_inertia_kernels import limb_task_inertia
from ..limb.serial_limb_kernels import limb_reference_rates
from ..limb.limb_ik_kernels import limb_ik, limb_ik_checked, limb_prepare
from ..spatial.small_linalg import condition_at_most, lu_solve
from ..limb.limb_layout import (LD_A, LD_B, LD_C, LD_DTHETA, LD_DX, LD_F, LD_FK, LD_G_JAC, LD_G_RES, LD_H, LD_INNER,
                                LD_J_P, LD_K, LD_L_T, LD_POSE, LD_SPARE, LD_STATE, LD_VEC, LD_WORK, LD_Y, LM_B,
                                LM_BASE_ACCELERATION, LM_CUT_BODIES, LM_CUT_COUNTS, LM_CUT_POINTS, LM_CUT_VECTORS,
                                LM_D_T, LM_H_COLUMN, LM_INDEPENDENT, LM_INERTIA, LM_LOOPS, LM_LOOP_DEPENDENT,
                                LM_LOOP_INDEPENDENT, LM_LOOP_ROWS, LM_LOWER, LM_PARENT, LM_PLATFORM_OFFSET, LM_REVOLUTE,
                                LM_SIZES, LM_SUPPORT, LM_TASK_ROWS, LM_UPPER, LM_W, LM_W2, LM_W2V, LM_WV, LM_X, LX_TASK,
                                PACKED_A, PACKED_AP, PACKED_AS, PACKED_BIAS, PACKED_QD, PACKED_QR, PACKED_RHS,
                                PACKED_STACKED, PACKED_TASK, PACKED_TAU, PACKED_V, PACKED_VS, PACKED_ZEROS)
from ..spatial.se3_kernels import exp_se3, log_se3, pose_inv_mul, pose_mul
from ..status import ACTUATION, BAD_INPUT, LIMB_STATUS, MANIFOLD_TOLERANCE, OK, ORTHONORMAL_TOLERANCE, RATES_STATUS

#: the bounds of a task twist and acceleration (:data:`..bounds.MAX_RATE`)
MAX_TWIST, MAX_ACCELERATION = MAX_RATE[1], MAX_RATE[2]


@inline_kernel
def view2(b, o, s0, s1):
    """``b[o:o + s0 s1]`` as a C-ordered (s0, s1) view (:func:`..numba_support.views.c_view`:
    no helper call, C-ordered, counted only where the caller counts references; the packs'
    headers give sizes that fit)."""
    return c_view(b, o, (s0, s1))


@inline_kernel
def view3(b, o, s0, s1, s2):
    """``b[o:o + s0 s1 s2]`` as a C-ordered (s0, s1, s2) view (as :func:`view2`)."""
    return c_view(b, o, (s0, s1, s2))


@inline_kernel
def _f1(b, h, l, k):
    return c_view(b, h[l, k, 0], (h[l, k, 1],))


@inline_kernel
def _f2(b, h, l, k):
    return view2(b, h[l, k, 0], h[l, k, 1], h[l, k, 2])


@inline_kernel
def _f3(b, h, l, k):
    return view3(b, h[l, k, 0], h[l, k, 1], h[l, k, 2], h[l, k, 3])


@inline_kernel
def model_views(fm, im, hm, l):
    """The model tuple ``lm`` of limb ``l`` (:mod:`..limb.limb_layout`: entry ``LM_*`` at index
    ``LM_*``) as views of the packs."""
    return (_f1(im, hm, l, LM_PARENT), _f3(fm, hm, l, LM_B), _f2(fm, hm, l, LM_X), _f3(fm, hm, l, LM_W),
            _f3(fm, hm, l, LM_W2), _f2(fm, hm, l, LM_WV), _f2(fm, hm, l, LM_W2V), _f2(im, hm, l, LM_SUPPORT),
            _f1(im, hm, l, LM_SIZES), _f2(fm, hm, l, LM_PLATFORM_OFFSET), _f1(im, hm, l, LM_TASK_ROWS),
            _f2(fm, hm, l, LM_D_T), _f1(im, hm, l, LM_INDEPENDENT), _f2(im, hm, l, LM_CUT_BODIES),
            _f3(fm, hm, l, LM_CUT_POINTS), _f3(fm, hm, l, LM_CUT_VECTORS), _f2(im, hm, l, LM_CUT_COUNTS),
            _f2(im, hm, l, LM_LOOPS), _f2(im, hm, l, LM_LOOP_ROWS), _f2(im, hm, l, LM_LOOP_DEPENDENT),
            _f2(im, hm, l, LM_LOOP_INDEPENDENT), _f1(im, hm, l, LM_REVOLUTE), _f1(fm, hm, l, LM_LOWER),
            _f1(fm, hm, l, LM_UPPER), _f1(im, hm, l, LM_H_COLUMN), _f3(fm, hm, l, LM_INERTIA),
            _f1(fm, hm, l, LM_BASE_ACCELERATION))


@inline_kernel
def data_views(fd, idt, hd, l):
    """The scratch tuples of limb ``l`` (:mod:`..limb.limb_layout`): ``ld`` of :mod:`..limb.limb_kernels`
    (entry ``LD_*`` at index ``LD_*``, :func:`ik_views`) and ``lx`` of
    :mod:`..limb.limb_dynamics_kernels` (entry ``LX_*`` at index ``LX_*``, packed after ``ld``
    at ``PACKED_*``, :func:`dynamics_views`)."""
    return ik_views(fd, idt, hd, l), dynamics_views(fd, hd, l)


@inline_kernel
def ik_views(fd, idt, hd, l):
    """The IK scratch ``ld`` of limb ``l`` (:func:`data_views`)."""
    return (_f3(fd, hd, l, LD_C), _f2(fd, hd, l, LD_Y), _f2(fd, hd, l, LD_G_RES), _f3(fd, hd, l, LD_G_JAC),
            _f2(fd, hd, l, LD_J_P), _f2(fd, hd, l, LD_H), _f2(fd, hd, l, LD_L_T), _f2(fd, hd, l, LD_F),
            _f2(fd, hd, l, LD_K), _f2(fd, hd, l, LD_A), _f2(fd, hd, l, LD_B), _f2(fd, hd, l, LD_WORK),
            _f1(fd, hd, l, LD_VEC), _f1(fd, hd, l, LD_DX), _f2(fd, hd, l, LD_POSE), _f2(idt, hd, l, LD_INNER),
            _f1(fd, hd, l, LD_DTHETA), _f1(fd, hd, l, LD_SPARE), _f2(fd, hd, l, LD_FK))


@inline_kernel
def dynamics_views(fd, hd, l):
    """The rates and dynamics scratch ``lx`` of limb ``l`` (:func:`data_views`): built only
    where the rates are asked (:func:`robot_reference_checked` at level 0 does without)."""
    return (_f2(fd, hd, l, PACKED_STACKED), _f2(fd, hd, l, PACKED_QR), _f1(fd, hd, l, PACKED_RHS),
            _f1(fd, hd, l, PACKED_TAU), _f2(fd, hd, l, PACKED_V), _f2(fd, hd, l, PACKED_A), _f2(fd, hd, l, PACKED_VS),
            _f2(fd, hd, l, PACKED_AS), _f1(fd, hd, l, PACKED_BIAS), _f1(fd, hd, l, PACKED_QD),
            _f1(fd, hd, l, PACKED_ZEROS), _f1(fd, hd, l, PACKED_AP), _f3(fd, hd, l, PACKED_TASK))


@scratch_kernel
def robot_ik(fm, im, hm, fd, idt, hd, toff, pose, theta0, theta, nested, tol, max_iter, threshold,
             loop_threshold, out, status):
    """:func:`.limb_ik_kernels.limb_ik` of every limb ``l`` for the platform pose ``pose``
    (4,4) from ``theta0[toff[l]:toff[l+1]]`` into ``theta`` (flat); ``out`` (L, 3) outer
    iterations, kappa(F), largest loop residual; ``status`` (L,) each limb's status (the limbs
    after a failed one are still solved: the Python layer hands only the failed ones over)."""
    for l in range(len(toff) - 1):
        lm = model_views(fm, im, hm, l)
        ld = ik_views(fd, idt, hd, l)
        a, b = toff[l], toff[l + 1]
        status[l] = limb_ik(lm, ld, pose, theta0[a:b], theta[a:b], nested, tol, max_iter, threshold,
                            loop_threshold, False, out[l])


@kernel
def holds_state(held, prepare, theta0, l, a, b):
    """Whether limb ``l``'s scratch holds its state and Jacobians at ``theta0[a:b]``: not
    ``prepare[l]`` and ``held[a:b]`` (the flat joints the scratch holds the state of, the
    contract of :func:`..robot_dynamics.robot_forward_dynamics`) equal to them."""
    if prepare[l]:
        return False
    for i in range(a, b):
        if held[i] != theta0[i]:
            return False
    return True


@scratch_kernel
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


@scratch_kernel
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
        limb_task_inertia(lm[LM_PARENT], lm[LM_INERTIA], ld[LD_C], ld[LD_Y], ld[LD_K], lx[LX_TASK], Mt)


@inline_kernel
def constant_views(rc, dp):
    """``(C_ref (4, 4), P_p (6, dp), M_p (6, 6), gravity (3,))`` of the robot constants ``rc``
    (:func:`.limb_tables.robot_constants` packs them in that order): views, so that a kernel's
    entry point unboxes one argument for them."""
    o = 16 + 6 * dp
    return view2(rc, 0, 4, 4), view2(rc, 16, 6, dp), view2(rc, o, 6, 6), rc[o + 36:o + 39]


@inline_kernel
def robot_views(rc, rs, dp):
    """The robot constants ``rc`` as :func:`constant_views` and the per-thread scratch ``rs`` as
    ``(S (3,4,4), X, off, Vp, Ap, h, Wp (6,) each, A (dp,dp), B (dp,1), Wc (2 dp,dp))``
    (:meth:`.limb_tables.LimbTables.data`)."""
    C_ref, P_p, M_p, g = constant_views(rc, dp)
    q = 84 + dp * dp
    return (C_ref, P_p, M_p, g, view3(rs, 0, 3, 4, 4), rs[48:54], rs[54:60], rs[60:66], rs[66:72], rs[72:78],
            rs[78:84], view2(rs, 84, dp, dp), view2(rs, q, dp, 1), view2(rs, q + dp, 2 * dp, dp))


@kernel
def _within(v, bound):
    """Every entry of ``v`` finite and of magnitude at most ``bound`` (:func:`..bounds.check_bound`)."""
    for a in range(len(v)):
        if not abs(v[a]) <= bound:
            return False
    return True


@kernel
def reference_input_ok(C_ref, P_p, pose, Vt, At, level, S, X, off):
    """The checks of :meth:`..pkm.ParallelRobot._check_pose`, ``_check_task_manifold`` and
    ``_vec`` on a pose (4,4), task twist and acceleration (``level`` >= 1, 2): True when none
    refuses (False: the Python layer runs them and words the refusal)."""
    for a in range(4):
        for b in range(4):
            if not math.isfinite(pose[a, b]):
                return False
    e = 0.0
    for a in range(3):                            # |R^T R - I|_F
        for b in range(3):
            v = pose[0, a] * pose[0, b] + pose[1, a] * pose[1, b] + pose[2, a] * pose[2, b]
            v -= 1.0 if a == b else 0.0
            e += v * v
    if not math.sqrt(e) <= ORTHONORMAL_TOLERANCE:
        return False
    if P_p.shape[1] < 6:
        task_manifold_offset(C_ref, P_p, pose, off, S, X)
        for a in range(6):
            if not abs(off[a]) <= MANIFOLD_TOLERANCE:
                return False
    return (level < 1 or _within(Vt, MAX_TWIST)) and (level < 2 or _within(At, MAX_ACCELERATION))


@kernel
def platform_share(R, P_p, M_p, g, Vt, At, Vp, Ap, h, Wp, W):
    """``W += P_p^T (M_p Vdot_p - ad(V_p)^T M_p V_p - M_p (0, R^T g))`` (eq. 38 projected, the
    platform's share of eq. 45) with ``V_p = P_p V_t``, ``Vdot_p = P_p Vdot_t``; ``R`` the
    platform's rotation (3,3 of the pose); ``Vp``, ``Ap``, ``h``, ``Wp`` (6,) scratch."""
    dp = len(Vt)
    for a in range(6):
        s, t = 0.0, 0.0
        for c in range(dp):
            s += P_p[a, c] * Vt[c]
            t += P_p[a, c] * At[c]
        Vp[a], Ap[a] = s, t
    for a in range(3):                            # Ap - (0, R^T g)
        Ap[3 + a] -= R[0, a] * g[0] + R[1, a] * g[1] + R[2, a] * g[2]
    for a in range(6):
        s, t = 0.0, 0.0
        for b in range(6):
            s += M_p[a, b] * Vp[b]
            t += M_p[a, b] * Ap[b]
        h[a], Wp[a] = s, t
    w0, w1, w2, v0, v1, v2 = Vp[0], Vp[1], Vp[2], Vp[3], Vp[4], Vp[5]
    # ad(V)^T h = (-w x h_w - v x h_v, -w x h_v)
    Wp[0] += (w1 * h[2] - w2 * h[1]) + (v1 * h[5] - v2 * h[4])
    Wp[1] += (w2 * h[0] - w0 * h[2]) + (v2 * h[3] - v0 * h[5])
    Wp[2] += (w0 * h[1] - w1 * h[0]) + (v0 * h[4] - v1 * h[3])
    Wp[3] += w1 * h[5] - w2 * h[4]
    Wp[4] += w2 * h[3] - w0 * h[5]
    Wp[5] += w0 * h[4] - w1 * h[3]
    for c in range(dp):
        s = 0.0
        for a in range(6):
            s += P_p[a, c] * Wp[a]
        W[c] += s


@kernel
def actuator_forces(J, W, threshold, A, B, Wc, u):
    """``u = J_IK^-T W`` (eq. 45) after the check of
    :meth:`..pkm.ParallelRobot.check_actuation` (``kappa(J_IK)`` at most ``threshold``, < 0:
    none; the threshold alone is asked, so :func:`..spatial.small_linalg.condition_at_most`
    decides by its bound and takes the singular values only above it; ``Wc`` (2 dp, dp));
    False when ``J_IK`` is not finite, beyond the threshold, singular or not square (the
    Python layer decides)."""
    na, dp = J.shape
    if na != dp:
        return False
    for a in range(na):
        for c in range(dp):
            if not math.isfinite(J[a, c]):
                return False
    if threshold >= 0.0 and not condition_at_most(J, na, dp, Wc, threshold):
        return False
    for a in range(dp):
        B[a, 0] = W[a]
        for c in range(na):
            A[a, c] = J[c, a]
    if not lu_solve(A, dp, B, 1):
        return False
    for a in range(na):
        u[a] = B[a, 0]
    return True


@scratch_kernel
def robot_reference(fm, im, hm, fd, idt, hd, toff, pose, theta0, held, prepare, theta, nested, tol, max_iter,
                    threshold, loop_threshold, out, status, rc, rs, K_rows, Vt, At, level, thd, thdd, Wl, W, J, u,
                    act_flat, act, kept, kept_inner):
    """One feedforward reference in one call: the input checks (:func:`reference_input_ok`),
    each limb's IK (as :func:`robot_ik`) into ``theta``, ``out``, ``status`` (a limb whose
    scratch holds its state at ``theta0``, :func:`holds_state` of ``held``, ``prepare``: from
    that state, the warm start of a stream), ``J_IK`` (eq. 30) into ``J`` (na, dp)
    from the positions ``K_rows`` of the rows of the limbs' ``K`` in ``fd``; with ``level`` >= 1
    the rates ``thd`` (eqs. 27-28), with ``level`` 2 ``thdd`` (eq. 29), the limbs' share
    ``W`` of eq. 45 (each limb right after its IK, :func:`..limb.serial_limb_kernels.limb_reference_rates`:
    as :func:`robot_rates`, but a limb whose rate map is ``K`` by the serial route), the platform's
    (:func:`platform_share`) and the actuator forces ``u`` (:func:`actuator_forces`, ``J_IK^-T
    W`` with the limbs' share alone left in ``W``).  ``rc``, ``rs``: :func:`robot_views`.
    Past the input checks the scratch's record is kept up: ``held`` (n_theta,, not ``theta0``)
    becomes ``theta`` and ``prepare[l]`` whether limb l stopped.  When everything is done, the
    actuators' rows (flat positions ``act_flat`` (na,)) of ``theta``, ``thd``, ``thdd`` (those of
    ``level``) go into the rows of ``act`` (3, na), and the limbs' states and Jacobians
    (:func:`keep_states`) into ``kept`` (the length of ``fd``; empty: not kept) and the int
    scratch (the inner iterations) into ``kept_inner`` (the length of ``idt``, or empty).
    Returns ``(code, kappa)``: OK (everything done, ``u`` too) and the worst ``kappa(F)`` of the
    limbs (the largest of ``out[:, 1]``), or where it stopped (the Python layer continues from
    there) and 0: BAD_INPUT (the Python checks word it), LIMB_STATUS (a limb's IK, ``status``),
    RATES_STATUS (a limb's rates), ACTUATION (``J_IK`` not finite, beyond the threshold, singular
    or not square; rates and ``W`` done)."""
    code = robot_reference_checked(fm, im, hm, fd, idt, hd, toff, pose, theta0, held, prepare, theta, nested, tol,
                                   max_iter, threshold, loop_threshold, True, out, status, rc, rs, K_rows, Vt, At,
                                   level, thd, thdd, Wl, W, J, u)
    if code == BAD_INPUT:
        return code, 0.0
    for i in range(len(theta)):                   # the scratch holds the state of these limbs
        held[i] = theta[i]
    for l in range(len(prepare)):
        prepare[l] = status[l] != OK
    if code != OK:
        return code, 0.0
    kappa = out[0, 1]
    for l in range(1, out.shape[0]):
        if out[l, 1] > kappa:
            kappa = out[l, 1]
    for a in range(len(act_flat)):
        i = act_flat[a]
        act[0, a] = theta[i]
        act[1, a] = thd[i] if level >= 1 else 0.0
        act[2, a] = thdd[i] if level >= 2 else 0.0
    if len(kept) > 0:
        keep_states(fd, hd, kept)
    for i in range(len(kept_inner)):
        kept_inner[i] = idt[i]
    return code, kappa


@kernel
def keep_states(fd, hd, kept):
    """Copy into ``kept`` (the length of ``fd``) each limb's entries of the scratch ``fd`` an IK
    solution's limbs are made of (:data:`..limb.limb_layout.LD_STATE`, which
    :meth:`.limb_tables.LimbTables.state` reads), at their places; ``kept``'s other entries are
    left as they are."""
    for l in range(hd.shape[0]):
        for k in LD_STATE:
            size = 0
            for d in range(1, 4):
                s = hd[l, k, d]
                if s != 0:
                    size = s if size == 0 else size * s
            o = hd[l, k, 0]
            for i in range(o, o + size):
                kept[i] = fd[i]


@scratch_kernel
def robot_reference_checked(fm, im, hm, fd, idt, hd, toff, pose, theta0, held, prepare, theta, nested, tol, max_iter,
                            threshold, loop_threshold, want_kappa, out, status, rc, rs, K_rows, Vt, At, level, thd,
                            thdd, Wl, W, J, u):
    """:func:`robot_reference`; without ``want_kappa`` each limb's ``kappa(F)`` (``out[:, 1]``)
    is not computed, only checked against ``threshold``
    (:func:`..limb.limb_ik_kernels.limb_ik_checked`: the workspace sweep, which does not return it)."""
    dp = len(Vt)
    C_ref, P_p, M_p, g, S, X, off, Vp, Ap, h, Wp, A, B, Wc = robot_views(rc, rs, dp)
    if not reference_input_ok(C_ref, P_p, pose, Vt, At, level, S, X, off):
        return BAD_INPUT
    for a in range(6):                            # V_p = P_p V_t, Vdot_p = P_p Vdot_t
        v, w = 0.0, 0.0
        for c in range(dp):
            v += P_p[a, c] * Vt[c]
            w += P_p[a, c] * At[c]
        Vp[a], Ap[a] = v, w
    for c in range(dp):
        W[c] = 0.0
    code = OK
    for l in range(len(toff) - 1):                # each limb's IK (robot_ik), then its rates (robot_rates)
        lm = model_views(fm, im, hm, l)
        ld = ik_views(fd, idt, hd, l)
        a, b = toff[l], toff[l + 1]
        status[l] = limb_ik_checked(lm, ld, pose, theta0[a:b], theta[a:b], nested, tol, max_iter, threshold,
                                    loop_threshold, holds_state(held, prepare, theta0, l, a, b), want_kappa, out[l])
        if status[l] != OK:
            code = LIMB_STATUS                    # the limbs after it are still solved
        elif level >= 1 and code == OK:
            st = limb_reference_rates(lm, ld, dynamics_views(fd, hd, l), P_p, Vt, At, Vp, Ap, level > 1, thd[a:b],
                                      thdd[a:b], Wl)
            if st != OK:
                code = RATES_STATUS
            elif level > 1:
                for c in range(dp):
                    W[c] += Wl[c]
    if code == LIMB_STATUS:
        return code
    for a in range(J.shape[0]):                   # J_IK (eq. 30): rows of the limbs' K
        for c in range(dp):
            J[a, c] = fd[K_rows[a, c]]
    if level < 1 or code != OK:
        return code
    if level < 2:
        return OK
    Wt = X[:dp]
    for c in range(dp):
        Wt[c] = W[c]
    platform_share(pose, P_p, M_p, g, Vt, At, Vp, Ap, h, Wp, Wt)
    return OK if actuator_forces(J, Wt, threshold, A, B, Wc, u) else ACTUATION
