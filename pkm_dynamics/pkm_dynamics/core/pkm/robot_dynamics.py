"""Compiled forward dynamics of a parallel robot in task space (paper 001 eq. 39): one kernel call
from the IK solution the limb scratch holds to the task acceleration ``Vdot_t``.

:func:`robot_forward_dynamics` runs, on the packed model and scratch of :mod:`.robot_kernels`:

* each limb's rates and its share of the bias, ``K^T tau`` with the RNEA ``tau`` of the limb tree
  at ``thetad = K V_t`` and ``thetadd = Kdot V_t`` (eqs. 27-29 at zero task acceleration, eq. 37;
  :func:`..limb.serial_limb_kernels.serial_limb_rates_rnea` for a limb without loops whose rate
  map is ``K`` itself, else :func:`..limb.limb_dynamics_kernels.limb_rates_rnea`), and its share
  ``K^T H_l K`` of ``M_t`` (eq. 40; :func:`..limb.limb_inertia_kernels.limb_task_inertia`);
* the platform's own Newton-Euler terms (eq. 38): ``P_p^T M_p P_p`` and
  ``P_p^T (-M_p (0, R^T g) - ad(V_p)^T M_p V_p)``;
* ``rhs = J_IK^T u + P_p^T W_EE - bias``, the conditioning checks ``kappa(J_IK) <= threshold``
  (output singularity) and ``kappa(M_t) <= threshold^2``, and ``Vdot_t = M_t^-1 rhs`` (LU).

The inputs are checked first (finite, within the bounds of :mod:`..bounds`).  The kernel returns a
status and a culprit index; the Python layer (:func:`compiled_forward_dynamics`, then
:meth:`..pkm.ParallelRobot.forward_dynamics`) words the named exception, or runs the reference
route for a limb whose kernel stopped.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ..bounds import MAX_EFFORT
from ..numba_support.cache import inline_kernel, kernel, scratch_kernel
from ..limb.limb_dynamics_kernels import limb_rates_rnea
from ..limb.limb_inertia_kernels import limb_task_inertia
from ..limb.serial_limb_kernels import rate_map_is_K, serial_limb_rates_rnea
from ..limb.limb_ik_kernels import limb_prepare
from .robot_kernels import MAX_TWIST, _f1, _f2, _f3, constant_views, data_views, model_views
from ..spatial.small_linalg import condition, condition_at_most, lu_solve, positive_definite
from ..status import ACTUATION, BAD_INPUT, LIMB_STATUS, MASS_MATRIX, OK, SINGULAR
from ..limb.limb_layout import (LD_A, LD_B, LD_C, LD_DX, LD_F, LD_FK, LD_G_JAC, LD_H, LD_J_P, LD_K, LD_L_T, LD_VEC,
                                LD_Y, LM_BASE_ACCELERATION, LM_CUT_BODIES, LM_CUT_COUNTS, LM_CUT_POINTS, LM_CUT_VECTORS,
                                LM_INERTIA, LM_LOOPS, LM_LOOP_DEPENDENT, LM_LOOP_ROWS, LM_PARENT, LM_PLATFORM_OFFSET,
                                LM_SIZES, LM_SUPPORT, LM_TASK_ROWS, PACKED_A, PACKED_AP, PACKED_AS, PACKED_BIAS,
                                PACKED_QD, PACKED_QR, PACKED_RHS, PACKED_STACKED, PACKED_TASK, PACKED_TAU, PACKED_V,
                                PACKED_VS, PACKED_ZEROS, SIZE_PLATFORM_BODY)

#: the bound of efforts (:mod:`..bounds`), as a constant of the kernel (the twist's: ``MAX_TWIST``)
MAX_FORCE = float(MAX_EFFORT)


@kernel
def first_out_of_bound(v, bound):
    """Index of the first entry of ``v`` that is not finite or beyond ``+-bound``, else -1
    (:func:`..bounds.check_bound`'s test)."""
    for i in range(len(v)):
        if not abs(v[i]) <= bound:
            return i
    return -1


@kernel
def lean_views(fm, im, hm, fd, idt, hd, l):
    """``(lm, ld, lx)`` of limb ``l`` as :func:`.robot_kernels.model_views` and ``data_views``
    build them, with only the entries the rates and the RNEA read at a state
    the scratch holds (the names of :mod:`..limb.limb_layout`, placed at their indices); every
    other entry is ``hm`` (an int array of three dimensions, so that a read of it does not
    compile): a view costs more to build than most of the arithmetic on it."""
    x = hm
    lm = (_f1(im, hm, l, LM_PARENT), x, x, x, x, x, x, _f2(im, hm, l, LM_SUPPORT), _f1(im, hm, l, LM_SIZES),
          _f2(fm, hm, l, LM_PLATFORM_OFFSET), _f1(im, hm, l, LM_TASK_ROWS), x, x, _f2(im, hm, l, LM_CUT_BODIES),
          _f3(fm, hm, l, LM_CUT_POINTS), _f3(fm, hm, l, LM_CUT_VECTORS), _f2(im, hm, l, LM_CUT_COUNTS),
          _f2(im, hm, l, LM_LOOPS), _f2(im, hm, l, LM_LOOP_ROWS), _f2(im, hm, l, LM_LOOP_DEPENDENT), x, x, x, x, x,
          _f3(fm, hm, l, LM_INERTIA), _f1(fm, hm, l, LM_BASE_ACCELERATION))
    ld = (_f3(fd, hd, l, LD_C), _f2(fd, hd, l, LD_Y), x, _f3(fd, hd, l, LD_G_JAC), _f2(fd, hd, l, LD_J_P),
          _f2(fd, hd, l, LD_H), _f2(fd, hd, l, LD_L_T), _f2(fd, hd, l, LD_F), _f2(fd, hd, l, LD_K),
          _f2(fd, hd, l, LD_A), _f2(fd, hd, l, LD_B), x, _f1(fd, hd, l, LD_VEC), _f1(fd, hd, l, LD_DX), x, x, x, x,
          _f2(fd, hd, l, LD_FK))
    lx = (_f2(fd, hd, l, PACKED_STACKED), _f2(fd, hd, l, PACKED_QR), _f1(fd, hd, l, PACKED_RHS),
          _f1(fd, hd, l, PACKED_TAU), _f2(fd, hd, l, PACKED_V), _f2(fd, hd, l, PACKED_A), _f2(fd, hd, l, PACKED_VS),
          _f2(fd, hd, l, PACKED_AS), _f1(fd, hd, l, PACKED_BIAS), _f1(fd, hd, l, PACKED_QD),
          _f1(fd, hd, l, PACKED_ZEROS), _f1(fd, hd, l, PACKED_AP), x)
    return lm, ld, lx


@kernel
def platform_terms(P_p, M_p, R, g, Vp, Mt, bias, S):
    """Eq. 38 projected on the task space: ``Mt += P_p^T M_p P_p``, ``bias += P_p^T (-M_p (0,
    R^T g) - ad(V_p)^T M_p V_p)`` (``R`` the platform's pose (4, 4), its rotation read, ``g`` (3,)
    gravity in the base frame, ``Vp = P_p V_t`` (6,)); ``S`` (3, 6) scratch.  The terms of
    ``P_p^T M_p P_p`` at a zero entry of ``P_p`` (exact zeros) are skipped."""
    dp = P_p.shape[1]
    a0, h, w = S[0], S[1], S[2]
    for a in range(3):                           # (0, R^T g)
        a0[a] = 0.0
        a0[3 + a] = R[0, a] * g[0] + R[1, a] * g[1] + R[2, a] * g[2]
    for a in range(6):                           # h = M_p V_p
        s = 0.0
        for b in range(6):
            s += M_p[a, b] * Vp[b]
        h[a] = s
    wx, wy, wz, vx, vy, vz = Vp[0], Vp[1], Vp[2], Vp[3], Vp[4], Vp[5]
    # -ad(V)^T h: moment w x h_m + v x h_f, force w x h_f
    w[0] = wy * h[2] - wz * h[1] + vy * h[5] - vz * h[4]
    w[1] = wz * h[0] - wx * h[2] + vz * h[3] - vx * h[5]
    w[2] = wx * h[1] - wy * h[0] + vx * h[4] - vy * h[3]
    w[3] = wy * h[5] - wz * h[4]
    w[4] = wz * h[3] - wx * h[5]
    w[5] = wx * h[4] - wy * h[3]
    for a in range(6):
        s = w[a]
        for b in range(6):
            s -= M_p[a, b] * a0[b]
        w[a] = s
    for c in range(dp):
        s = 0.0
        for a in range(6):
            s += P_p[a, c] * w[a]
        bias[c] += s
        for d in range(dp):                      # the exact zeros of P_p (a selection) skipped
            s = 0.0
            for a in range(6):
                pa = P_p[a, c]
                if pa == 0.0:
                    continue
                for b in range(6):
                    pd = P_p[b, d]
                    if pd != 0.0:
                        s += pa * M_p[a, b] * pd
            Mt[c, d] += s


@kernel
def fd_scratch_size(n, dp, na):
    """Length of the float scratch of :func:`robot_forward_dynamics` for ``n`` joints, ``dp``
    task coordinates and ``na`` actuators (:func:`fd_scratch_views`)."""
    side = max(na, dp)
    return dp * dp + 2 * dp + 2 * side * (side + 1) + 30 + 2 * n


@inline_kernel
def fd_scratch_views(fs, n, dp, na):
    """The float scratch ``fs`` of :func:`robot_forward_dynamics` as ``(Mt (dp, dp), bias (dp,),
    Wl (dp,), W (2 max(na, dp), max(na, dp) + 1), S (5, 6), thd (n,), thdd (n,))``: one array, so
    the kernel's entry point unboxes one argument for them (inlined: views that a kernel
    compiled without NRT takes uncounted, as :func:`..module_chain.chain_layout.model_arrays`)."""
    side = max(na, dp)
    o = dp * dp
    w = o + 2 * dp
    v = w + 2 * side * (side + 1)
    return (fs[:o].reshape((dp, dp)), fs[o:o + dp], fs[o + dp:w], fs[w:v].reshape((2 * side, side + 1)),
            fs[v:v + 30].reshape((5, 6)), fs[v + 30:v + 30 + n], fs[v + 30 + n:v + 30 + 2 * n])


@kernel
def mass_matrix_solve(Mt, acc, bound, W):
    """``acc <- M_t^-1 acc`` (eq. 39 solved, LU), refused where ``kappa(M_t) > bound`` (< 0: no
    check): ``M_t`` (dp, dp) is symmetric positive definite (eq. 40;
    :func:`..spatial.small_linalg.positive_definite` confirms it), so its eigenvalues are its
    singular values and ``kappa(M_t) <= tr(M_t) tr(M_t^-1)``, with ``M_t^-1`` from the same LU
    (the identity's columns beside ``acc``; the columns are eliminated independently, so ``acc``
    is the one-column solve's); only where that bound does not decide do the singular values
    (:func:`..spatial.small_linalg.condition`).  ``W`` (2 dp, dp + 1) scratch.  Returns ``(OK or
    MASS_MATRIX, -1)``."""
    dp = len(acc)
    k = dp + 1 if bound >= 0.0 else 1
    for a in range(dp):
        W[dp + a, 0] = acc[a]
        for b in range(dp):
            W[a, b] = Mt[a, b]
            if k > 1:
                W[dp + a, 1 + b] = 1.0 if a == b else 0.0
    if not lu_solve(W[:dp], dp, W[dp:2 * dp], k):
        return MASS_MATRIX, -1
    tr, tri = 0.0, 0.0
    for a in range(dp):
        acc[a] = W[dp + a, 0]
        tr += Mt[a, a]
        if k > 1:
            tri += W[dp + a, 1 + a]
    # tri <= 0: M_t^-1 is round-off (or M_t not positive definite): the singular values decide
    if k > 1 and not (tri > 0.0 and tr * tri <= bound and positive_definite(Mt, dp, W[dp:2 * dp])) \
            and not condition(Mt, dp, dp, W) <= bound:
        return MASS_MATRIX, -1
    return OK, -1


@scratch_kernel
def robot_forward_dynamics(fm, im, hm, fd, idt, hd, toff, theta, held, prepare, Vt, u, wrench, has_wrench, rc,
                           pose, J_IK, threshold, fs, acc, status):
    """``acc = Vdot_t`` (dp,) of eq. 39 at the flat IK solution ``theta`` for the task twist
    ``Vt`` (dp,), actuator forces ``u`` (n_act,), platform wrench ``wrench`` (6,) (body-fixed;
    used if ``has_wrench``); ``rc`` the robot constants (:func:`.robot_kernels.constant_views`:
    ``P_p`` (6, dp), ``M_p`` (6, 6), gravity ``g`` (3,) read), ``pose`` the platform pose (4, 4),
    ``J_IK`` (n_act, dp) (eq. 30); ``threshold`` on kappa (< 0: no check).
    ``held`` (flat): the joint vector whose state the scratch holds, ``prepare[l]``: not for
    limb l; where ``held`` differs from ``theta`` every limb is prepared again and ``held``
    becomes ``theta``; past the input checks ``prepare[l]`` is left True only for a limb that
    stopped.  Scratch: ``fs`` (:func:`fd_scratch_size`), as :func:`fd_scratch_views` reads it;
    ``status`` (L,) each limb's.  Returns ``(status, culprit)`` (:mod:`..status`): OK; BAD_INPUT and the entry of the
    twist, effort or wrench beyond its bound; LIMB_STATUS and the first limb that stopped;
    ACTUATION and the actuator whose row of ``J_IK`` is not finite, or -1 (``J_IK`` beyond the
    threshold); MASS_MATRIX and -1."""
    dp, na = Vt.shape[0], u.shape[0]
    Mt, bias, Wl, W, S, thd, thdd = fd_scratch_views(fs, len(theta), dp, na)
    _, P_p, M_p, g = constant_views(rc, dp)
    c = first_out_of_bound(Vt, MAX_TWIST)
    if c >= 0:
        return BAD_INPUT, c
    c = first_out_of_bound(u, MAX_FORCE)
    if c >= 0:
        return BAD_INPUT, c
    if has_wrench:
        c = first_out_of_bound(wrench, MAX_FORCE)
        if c >= 0:
            return BAD_INPUT, c
    zero, Vp = S[3], S[4]
    for a in range(6):                           # Vp = P_p Vt
        zero[a] = 0.0
        v = 0.0
        for k in range(dp):
            v += P_p[a, k] * Vt[k]
        Vp[a] = v
    for i in range(len(theta)):
        if held[i] != theta[i]:
            for k in range(len(theta)):
                held[k] = theta[k]
            for k in range(len(prepare)):
                prepare[k] = True
            break
    for a in range(dp):
        bias[a] = 0.0
        Wl[a] = 0.0
        for b in range(dp):
            Mt[a, b] = 0.0
    failed = -1
    for l in range(len(toff) - 1):               # limbs: K^T tau at thetadd = Kdot V, K^T H K
        a, b = toff[l], toff[l + 1]
        if prepare[l]:
            status[l] = limb_prepare(model_views(fm, im, hm, l), data_views(fd, idt, hd, l)[0], theta[a:b])
            if status[l] != OK:
                failed = l if failed < 0 else failed
                continue
        parent, M, C, Y = _f1(im, hm, l, LM_PARENT), _f3(fm, hm, l, LM_INERTIA), _f3(fd, hd, l, LD_C), \
            _f2(fd, hd, l, LD_Y)
        Kl = _f2(fd, hd, l, LD_K)
        sizes = _f1(im, hm, l, LM_SIZES)
        if rate_map_is_K(sizes, b - a, dp):       # at zero task acceleration: the bias
            ok = serial_limb_rates_rnea(parent, _f2(im, hm, l, LM_SUPPORT), M, _f1(fm, hm, l, LM_BASE_ACCELERATION),
                                        _f2(fm, hm, l, LM_PLATFORM_OFFSET), sizes[SIZE_PLATFORM_BODY], C, Y, Kl, P_p,
                                        Vt, zero[:dp], True, zero, thd[a:b], thdd[a:b], _f2(fd, hd, l, PACKED_V),
                                        _f2(fd, hd, l, PACKED_A), _f2(fd, hd, l, PACKED_VS), _f2(fd, hd, l, PACKED_AS),
                                        _f1(fd, hd, l, PACKED_TAU), _f1(fd, hd, l, PACKED_AP),
                                        _f1(fd, hd, l, PACKED_QD), Wl)
            status[l] = OK if ok else SINGULAR
        else:
            lm, ld, lx = lean_views(fm, im, hm, fd, idt, hd, l)
            status[l] = limb_rates_rnea(lm, ld, lx, Vt, zero[:dp], Vp, zero, True, thd[a:b], thdd[a:b], Wl)
        prepare[l] = status[l] != OK           # a limb that stopped is prepared at the next call
        if status[l] != OK:
            failed = l if failed < 0 else failed
            continue
        for k in range(dp):
            bias[k] += Wl[k]
        limb_task_inertia(parent, M, C, Y, Kl, _f3(fd, hd, l, PACKED_TASK), Mt)
    if failed >= 0:
        return LIMB_STATUS, failed
    platform_terms(P_p, M_p, pose, g, Vp, Mt, bias, S)
    for k in range(dp):                          # rhs = J_IK^T u + P_p^T W_EE - bias
        s = -bias[k]
        for i in range(na):
            s += J_IK[i, k] * u[i]
        if has_wrench:
            for i in range(6):
                s += P_p[i, k] * wrench[i]
        acc[k] = s
    checked = threshold >= 0.0
    if checked:
        for i in range(na):
            for k in range(dp):
                if not abs(J_IK[i, k]) < np.inf:
                    return ACTUATION, i
        if not condition_at_most(J_IK, na, dp, W, threshold):
            return ACTUATION, -1
    return mass_matrix_solve(Mt, acc, threshold * threshold if checked else -1.0, W)


class FdCall:
    """One thread's call of :func:`robot_forward_dynamics` for one robot: the kernel's entry
    point (:mod:`..numba_support.entry_points`; before this thread's first call, the call that
    learns it: :meth:`..numba_support.entry_points.EntryPoints.run`), its leading arguments
    after ``fm`` (the packed model's tables and the thread's limb scratch: the same for the
    tables of another gravity, :meth:`.limb_tables.LimbTables.with_limbs`, whose ``fm`` differs
    and is passed at each call), the float scratch ``fs``
    and the per-thread ``prepare`` and ``status`` of :meth:`.limb_tables.LimbTables.data`; the
    sizes ``(dp, n_act)`` it was built for."""

    __slots__ = ("run", "head", "prepare", "fs", "status", "sizes")

    def __init__(self, tables, dp: int, na: int):
        fd, idt, hd = tables.data()
        loc = tables._local
        self.run = loc.entries.known(robot_forward_dynamics) or partial(loc.entries.run, robot_forward_dynamics)
        self.head = (tables.im, tables.hm, fd, idt, hd, tables.toff)
        self.prepare, self.status = loc.prepare, loc.status
        self.fs = np.zeros(fd_scratch_size(tables.n, dp, na))
        self.sizes = (dp, na)


def fd_call(tables, dp: int, na: int) -> FdCall:
    """The calling thread's :class:`FdCall` for ``dp`` task coordinates and ``na`` actuators
    (built on its first call, kept with the thread's scratch once the entry point is known)."""
    loc = tables._local
    call = getattr(loc, "fd_call", None)
    if call is None or call.sizes != (dp, na):
        call = FdCall(tables, dp, na)
        if not isinstance(call.run, partial):
            loc.fd_call = call
    return call


def compiled_forward_dynamics(tables, rc, theta, V_t, u, wrench, pose, J_IK, threshold: float):
    """``(Vdot_t (dp,) fresh, status, culprit)`` of :func:`robot_forward_dynamics` at the flat IK
    solution ``theta`` (the limb scratch of the calling thread, :meth:`.limb_tables.LimbTables.data`,
    is prepared again where it holds another state); ``rc`` the robot constants
    (:func:`.limb_tables.robot_constants`); ``wrench`` None: none; ``threshold`` on kappa as the
    kernel takes it (< 0: no conditioning check).  ``V_t``, ``u``, ``wrench`` C-contiguous
    float64 arrays (the entry point's one layout; ``theta``, ``pose`` and ``J_IK`` are made so
    here).  Through the kernel's entry point once this thread has called it (:class:`FdCall`:
    numba's type matching of its arguments skipped)."""
    dp = len(V_t)
    call = fd_call(tables, dp, len(u))
    loc = tables._local
    held = loc.theta
    if held is None or len(held) != len(theta):
        call.prepare[:] = True
        held = loc.theta = np.array(theta, dtype=float)
    acc = np.empty(dp)
    c = np.ascontiguousarray
    status, culprit = call.run(
        tables.fm, *call.head, c(theta, float), held, call.prepare, V_t, u, call.fs if wrench is None else wrench,
        wrench is not None, rc, c(pose, float), c(J_IK, float), threshold, call.fs, acc, call.status)
    return acc, status, culprit
