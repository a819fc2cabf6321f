"""One reference of a parallel robot in one compiled call (:func:`.robot_kernels.robot_reference`:
the input checks, every limb's IK, ``J_IK`` (eq. 30), the rates (eqs. 27-29), the limbs' and the
platform's shares of eq. 45 and the actuator forces ``u``) and the thin Python layer around it:
:func:`compiled_reference` for an IK solution (:class:`.limb_tables.CompiledIK`, with copies of the
scratch its limbs are made of) and :func:`compiled_motion` for a feedforward stream (the
actuators' motion and forces alone, :meth:`..pkm.ParallelRobot.reference_motion`).

The kernel takes 35 arguments; those fixed for one robot and thread (the packed model, the
thread's scratch, the robot's constants, the kernel's entry point) are gathered once per thread
in a :class:`ReferenceCall`, so that a reference pays for its own inputs and outputs only.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from . import robot_kernels as KR
from .limb_tables import CompiledIK, LimbTables
from ..status import BAD_INPUT, LIMB_STATUS, OK, RATES_STATUS


class ReferenceCall:
    """One thread's call of :func:`.robot_kernels.robot_reference` for one robot: the kernel's
    entry point (:mod:`..numba_support.entry_points`; before this thread's first call, the call
    that learns it), its leading arguments (the packed model and the thread's limb scratch), the
    robot's ``rc``, ``K_rows``, ``act_flat`` it was built for (``key``), and the thread's
    scratch of ``J_IK``, the flat rates and ``W`` for a reference whose result keeps none of them
    (:func:`compiled_motion`), with the empty ``kept``, ``kept_inner`` of one that keeps no copy
    of the limb scratch."""

    __slots__ = ("run", "head", "key", "max_iter", "J", "thd", "thdd", "W", "no_kept", "no_inner")

    def __init__(self, tables: LimbTables, rc, K_rows, act_flat):
        fd, idt, hd = tables.data()
        loc = tables._local
        self.run = loc.entries.known(KR.robot_reference) or partial(loc.entries.run, KR.robot_reference)
        self.head = (tables.fm, tables.im, tables.hm, fd, idt, hd, tables.toff)
        self.key = (tables.fm, rc, K_rows, act_flat)
        self.max_iter = tables.max_iter
        n, (na, dp) = tables.n, K_rows.shape
        self.J, self.thd, self.thdd, self.W = np.empty((na, dp)), np.empty(n), np.empty(n), np.empty(dp)
        self.no_kept, self.no_inner = np.empty(0), np.empty(0, dtype=idt.dtype)

    def __call__(self, loc, rc, K_rows, act_flat, pose, theta0, nested, tol, threshold, loop_threshold, V_t, Vdot_t,
                 level, theta, thd, thdd, W, J, u, act, kept, kept_inner) -> tuple:
        """The kernel's ``(code, worst kappa(F))`` for the C-contiguous float64 inputs ``pose``, ``theta0``, ``V_t``,
        ``Vdot_t`` into the outputs given; the scratch of the thread's ``loc``
        (:meth:`.limb_tables.LimbTables.data`), whose record ``loc.theta`` of the joints it holds
        the state of (None: none) the kernel keeps up from here."""
        held = loc.theta                        # the limbs' state in the scratch: the warm start's
        if held is None or len(held) != len(theta):
            loc.prepare[:] = True
            held = loc.theta = np.full(len(theta), np.nan)
        return self.run(*self.head, pose, theta0, held, loc.prepare, theta, nested, tol, self.max_iter, threshold,
                        loop_threshold, loc.out, loc.status, rc, loc.rs, K_rows, V_t, Vdot_t, level, thd, thdd,
                        loc.Wl, W, J, u, act_flat, act, kept, kept_inner)


def reference_call(tables: LimbTables, rc, K_rows, act_flat) -> ReferenceCall:
    """The calling thread's :class:`ReferenceCall` for these tables and robot arrays (built on
    its first call, kept with the thread's scratch once the entry point is known; another robot
    that shares the scratch, :meth:`.limb_tables.LimbTables.with_limbs`, builds its own)."""
    loc = tables._local
    call = getattr(loc, "reference_call", None)
    key = None if call is None else call.key
    if key is None or key[0] is not tables.fm or key[1] is not rc or key[2] is not K_rows or key[3] is not act_flat:
        call = ReferenceCall(tables, rc, K_rows, act_flat)
        if not isinstance(call.run, partial):
            loc.reference_call = call
    return call


def compiled_reference(tables: LimbTables, rc, K_rows, act_flat, pose, theta0, nested: bool, tol: float, threshold,
                       loop_threshold, V_t, Vdot_t, level: int) -> CompiledIK:
    """One reference in one kernel call (:func:`.robot_kernels.robot_reference`, through its entry
    point once this thread has called it: :class:`ReferenceCall`): the IK of every limb for
    ``pose`` (4, 4) from the flat ``theta0``, ``J_IK``, and with ``level`` 1 the rates of the
    task twist ``V_t``, with ``level`` 2 those of ``Vdot_t`` too, the limbs' share ``W`` of eq.
    45 and the actuator forces ``u``; the actuators' rows ``act`` (at the flat positions
    ``act_flat``).  ``code``: OK (:mod:`..status`) or where the kernel stopped; the arrays it did
    not reach are None.  A call that is OK returns ``status`` (all OK) and ``out`` as the
    thread's scratch, valid until its next call (the caller reads them at once), and the copies
    ``inner``, ``fd`` of the scratch an IK solution's limbs are made of (the kernel's: ``fd``
    those entries alone, :func:`.robot_kernels.keep_states`).  ``inputs``: ``(pose, V_t,
    Vdot_t)`` as the kernel read them (the arrays given where they are C-contiguous float64)."""
    call = reference_call(tables, rc, K_rows, act_flat)
    fd, idt, _ = call.head[3:6]
    n, (na, dp) = tables.n, K_rows.shape
    theta, J, act = np.empty(n), np.empty((na, dp)), np.empty((3, na))
    thd, thdd, W, u = np.empty(n), np.empty(n), np.empty(dp), np.empty(na)
    pose, theta0 = np.ascontiguousarray(pose, float), np.ascontiguousarray(theta0, float)   # the entry
    V_t, Vdot_t = np.ascontiguousarray(V_t, float), np.ascontiguousarray(Vdot_t, float)     # point's layout
    kept, kept_inner = np.empty(len(fd)), np.empty(len(idt), dtype=idt.dtype)
    loc = tables._local
    code, _ = call(loc, rc, K_rows, act_flat, pose, theta0, nested, tol, threshold, loop_threshold, V_t, Vdot_t, level,
                   theta, thd, thdd, W, J, u, act, kept, kept_inner)
    if code == OK:                              # every limb's status is OK too
        done = (thdd, W, u) if level == 2 else (None, None, None)
        return CompiledIK(theta, loc.status, loc.out, kept_inner, kept, code, J, thd if level else None, *done, act,
                          (pose, V_t, Vdot_t))
    return stopped(tables, code, level, theta, J, thd, thdd, W)


def stopped(tables: LimbTables, code: int, level: int, theta, J, thd, thdd, W) -> CompiledIK:
    """The :class:`.limb_tables.CompiledIK` of a reference the kernel stopped with ``code``
    (:func:`compiled_reference`): copies of the thread's scratch, and ``J``, ``thd``, ``thdd``,
    ``W`` where it reached them (BAD_INPUT: the thread's scratch itself, nothing reached)."""
    fd, idt, _ = tables.data()
    loc = tables._local
    if code == BAD_INPUT:
        return CompiledIK(theta, loc.status, loc.out, idt, fd, code)
    r = CompiledIK(theta, loc.status.copy(), loc.out.copy(), idt.copy(), fd.copy(), code)
    if code != LIMB_STATUS:
        r.J = J
        if level >= 1 and code != RATES_STATUS:
            r.thd = thd
            if level == 2:
                r.thdd, r.W = thdd, W
    return r


def compiled_motion(tables: LimbTables, rc, K_rows, act_flat, pose, theta0, nested: bool, tol: float, threshold,
                    loop_threshold, V_t, Vdot_t):
    """:func:`compiled_reference` at ``level`` 2 for a feedforward stream: ``pose``, ``theta0``,
    ``V_t``, ``Vdot_t`` C-contiguous float64 arrays (the entry point's layout; the caller makes
    them so).  When the kernel completes, ``(theta, act, u, kappa)``: fresh arrays (the flat
    joints, the actuators' rows (3, n_act) of positions, rates and accelerations, the forces of
    eq. 45) and the worst ``kappa(F)`` of the limbs; ``J_IK``, the rates and ``W`` stay in the
    thread's scratch (:class:`ReferenceCall`) and no copy of the limb scratch is made.  Else the
    :class:`.limb_tables.CompiledIK` of where it stopped (:func:`stopped`, with copies of those
    it reached), from which the IK solution's route continues."""
    call = reference_call(tables, rc, K_rows, act_flat)
    theta, act, u = np.empty(tables.n), np.empty((3, len(act_flat))), np.empty(len(act_flat))
    loc = tables._local
    code, kappa = call(loc, rc, K_rows, act_flat, pose, theta0, nested, tol, threshold, loop_threshold, V_t, Vdot_t,
                       2, theta, call.thd, call.thdd, call.W, call.J, u, act, call.no_kept, call.no_inner)
    if code == OK:
        return theta, act, u, kappa
    return stopped(tables, code, 2, theta, call.J.copy(), call.thd.copy(), call.thdd.copy(), call.W.copy())
