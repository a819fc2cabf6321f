"""Model and data of the compiled limb kernels, kept apart as in Pinocchio, and the thin Python
layer of the limb inverse kinematics, rates and inverse dynamics.

:class:`LimbTables`: the limbs of a parallel robot as flat read-only arrays (the per-limb model
tuples of :mod:`.limb_kernels`, packed as :mod:`.robot_kernels` reads them), built once at
load and shared by every call, and the packed scratch of each thread (:meth:`LimbTables.data`,
never shared between threads).  :func:`compiled_ik` and :func:`compiled_rates` call the
robot-level kernels and return fresh arrays; :func:`.reference_call.compiled_reference` does IK,
rates and the inverse dynamics of one reference in one call (the robot's constants from
:func:`robot_constants`, built at load); a limb whose kernel stops with a status is
reported as such and the caller runs the reference route of :mod:`..limb.limb_ik`,
:mod:`.working_mode`, :mod:`..limb.ik_refinement` for it, which raises the named exception or
continues along the task path (the kernels never word an error themselves).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace

import numpy as np

from ..limb.limb_layout import (LD_ALL, LD_A, LD_B, LD_C, LD_COUNT, LD_DTHETA, LD_DX, LD_F, LD_FK, LD_G_JAC, LD_G_RES,
                                LD_H, LD_INNER, LD_INT, LD_J_P, LD_K, LD_L_T, LD_POSE, LD_SPARE, LD_STATE, LD_VEC,
                                LD_WORK, LD_Y, LM_B, LM_BASE_ACCELERATION, LM_COUNT, LM_CUT_BODIES, LM_CUT_COUNTS,
                                LM_CUT_POINTS, LM_CUT_VECTORS, LM_D_T, LM_H_COLUMN, LM_INDEPENDENT, LM_INERTIA, LM_INT,
                                LM_LOOP_DEPENDENT, LM_LOOP_INDEPENDENT, LM_LOOP_ROWS, LM_LOOPS, LM_LOWER, LM_PARENT,
                                LM_PLATFORM_OFFSET, LM_REVOLUTE, LM_SIZES, LM_SUPPORT, LM_TASK_ROWS, LM_UPPER, LM_W,
                                LM_W2, LM_W2V, LM_WV, LM_X, LX_A, LX_AP, LX_AS, LX_BIAS, LX_QD, LX_QR, LX_RHS,
                                LX_STACKED, LX_TASK, LX_TAU, LX_V, LX_VS, LX_ZEROS, SIZE_DELTA, SIZE_DL, SIZE_DP,
                                SIZE_NC, SIZE_NL, SIZE_PLATFORM_BODY, SIZE_SQUARE)
from . import robot_kernels as KR
from ..numba_support.entry_points import EntryPoints
from ..status import LIMB_STATUS, OK

#: kinds of the model entries (:mod:`.limb_layout`): 1 for int arrays
_MODEL_INT = tuple(1 if k in LM_INT else 0 for k in range(LM_COUNT))
#: the inner iterations of a limb without loops (read only)
_NO_LOOPS = np.zeros(0, dtype=np.int64)
_NO_LOOPS.setflags(write=False)
#: kinds of the scratch entries, ``ld`` then ``lx`` (:mod:`.limb_layout`)
_DATA_INT = tuple(1 if k in LD_INT else 0 for k in range(LD_ALL))


def _pack(entries: list, kinds: tuple):
    """``(floats, ints, header (L, K, 4))`` of the per-limb entry lists ``entries``: each array
    flattened into the float or int pack (``kinds``), its offset and shape in the header."""
    L, Kn = len(entries), len(kinds)
    head = np.zeros((L, Kn, 4), dtype=np.int64)
    parts = ([], [])
    size = [0, 0]
    for l, arrays in enumerate(entries):
        for k, a in enumerate(arrays):
            a = np.asarray(a, dtype=np.int64 if kinds[k] else float)
            head[l, k, 0] = size[kinds[k]]
            head[l, k, 1:1 + a.ndim] = a.shape
            parts[kinds[k]].append(a.ravel())
            size[kinds[k]] += a.size
    f = np.concatenate(parts[0]) if parts[0] else np.zeros(0)
    i = np.concatenate(parts[1]).astype(np.int64) if parts[1] else np.zeros(0, dtype=np.int64)
    return f, i, head


def _limb_model(limb) -> tuple:
    """The model entries of one limb (:mod:`.limb_layout`) and its scratch sizes
    ``(n_loops, rows, side of the square scratch, stacked rows m)``."""
    kin, tree = limb.kin, limb.tree
    n = limb.n
    cuts = [geo for lp in limb.loops for geo in lp.cuts]
    nc, nl = len(cuts), len(limb.loops)
    cut_body = np.zeros((max(nc, 1), 2), dtype=np.int64)
    cut_d = np.zeros((max(nc, 1), 2, 3))
    cut_u = np.zeros((max(nc, 1), 9, 3))
    cut_m = np.zeros((max(nc, 1), 2), dtype=np.int64)
    for c, geo in enumerate(cuts):
        cut_body[c] = geo.body_k, geo.body_r
        cut_d[c] = geo.d_k, geo.d_r
        npos, nrot = len(geo.u_pos), len(geo.u_a)
        cut_u[c, :npos] = geo.u_pos
        cut_u[c, 3:3 + nrot] = geo.u_a
        cut_u[c, 6:6 + nrot] = geo.u_b
        cut_m[c] = npos, nrot
    R = max([len(lp.dependent) for lp in limb.loops] + [1])
    I = max([len(lp.independent) for lp in limb.loops] + [1])
    M = max([lp.size for lp in limb.loops] + [1])
    loops = np.zeros((max(nl, 1), 5), dtype=np.int64)
    rows = np.zeros((max(nl, 1), R), dtype=np.int64)
    dep = np.zeros((max(nl, 1), R), dtype=np.int64)
    ind = np.zeros((max(nl, 1), I), dtype=np.int64)
    c0 = 0
    for i, lp in enumerate(limb.loops):
        loops[i] = c0, c0 + len(lp.cuts), lp.size, len(lp.dependent), len(lp.independent)
        c0 += len(lp.cuts)
        rows[i, :len(lp.rows)] = lp.rows
        dep[i, :len(lp.dependent)] = lp.dependent
        ind[i, :len(lp.independent)] = lp.independent
    hcol = -np.ones(n, dtype=np.int64)
    hcol[limb.independent] = np.arange(limb.dof)
    dl, dp = limb.D_t.shape
    square = dl == dp == limb.dof and np.array_equal(limb.D_t.T @ limb.D_t, np.eye(dp))
    sizes = np.zeros(7, dtype=np.int64)
    sizes[SIZE_PLATFORM_BODY], sizes[SIZE_DL], sizes[SIZE_DP], sizes[SIZE_DELTA] = limb.platform_body, dl, dp, limb.dof
    sizes[SIZE_NL], sizes[SIZE_NC], sizes[SIZE_SQUARE] = nl, nc, square
    entries = {LM_PARENT: kin.parent, LM_B: kin.B, LM_X: kin.X, LM_W: kin.W, LM_W2: kin.W2, LM_WV: kin.Wv,
               LM_W2V: kin.W2v, LM_SUPPORT: kin.support_mask, LM_SIZES: sizes,
               LM_PLATFORM_OFFSET: limb.platform_offset, LM_TASK_ROWS: limb.task_rows, LM_D_T: limb.D_t,
               LM_INDEPENDENT: limb.independent, LM_CUT_BODIES: cut_body, LM_CUT_POINTS: cut_d,
               LM_CUT_VECTORS: cut_u, LM_CUT_COUNTS: cut_m, LM_LOOPS: loops, LM_LOOP_ROWS: rows,
               LM_LOOP_DEPENDENT: dep, LM_LOOP_INDEPENDENT: ind, LM_REVOLUTE: kin.revolute, LM_LOWER: tree.lower,
               LM_UPPER: tree.upper, LM_H_COLUMN: hcol, LM_INERTIA: tree.M,
               LM_BASE_ACCELERATION: np.concatenate([np.zeros(3), -tree.gravity])}
    model = [entries[k] for k in range(LM_COUNT)]          # the pack gives each its dtype
    return model, (nl, M, 2 * max(n, 6, dp), 6 + sum(lp.size for lp in limb.loops))


def _limb_scratch(limb, sizes, max_iter) -> list:
    """The scratch entries of one limb, ``ld`` then ``lx`` (:mod:`.limb_layout`,
    :func:`.robot_kernels.data_views`)."""
    nl, M, N, m = sizes
    n, delta = limb.n, limb.dof
    dl, dp = limb.D_t.shape
    nl = max(nl, 1)
    ld = {LD_C: (n, 4, 4), LD_Y: (n, 6), LD_G_RES: (nl, M), LD_G_JAC: (nl, M, n), LD_J_P: (6, n),
          LD_H: (n, delta), LD_L_T: (dl, delta), LD_F: (delta, dp), LD_K: (n, dp), LD_A: (N, N), LD_B: (N, N),
          LD_WORK: (N, N), LD_VEC: N, LD_DX: 6, LD_POSE: (4, 4), LD_INNER: (max_iter + 1, nl), LD_DTHETA: n,
          LD_SPARE: n, LD_FK: (16, 4)}
    lx = {LX_STACKED: (m, n), LX_QR: (m, n), LX_RHS: m, LX_TAU: max(n, 6), LX_V: (n, 6), LX_A: (n, 6),
          LX_VS: (n, 6), LX_AS: (n, 6), LX_BIAS: n, LX_QD: max(n, 6), LX_ZEROS: max(n, 6), LX_AP: 6,
          LX_TASK: (n, 6, dp)}
    shapes = [ld[k] for k in range(LD_COUNT)] + [lx[k] for k in range(LD_ALL - LD_COUNT)]
    return [np.zeros(s, dtype=np.int64 if _DATA_INT[k] else float) for k, s in enumerate(shapes)]


@dataclass(frozen=True, eq=False)
class LimbTables:
    """The limbs of a parallel robot as packed read-only arrays (``fm``, ``im``, ``hm``:
    :mod:`.robot_kernels`), ``toff`` (L+1,) the offsets of each limb's joints in the flat
    joint vector, and the packed scratch of each thread."""

    limbs: tuple
    fm: np.ndarray
    im: np.ndarray
    hm: np.ndarray
    toff: np.ndarray
    sizes: tuple
    max_iter: int
    layout: np.ndarray        # the header hd of the packed scratch (the same in every thread)
    parts: tuple = ()         # per limb the slice of its joints in the flat joint vector (toff)
    _local: threading.local = field(default_factory=threading.local, repr=False)

    @classmethod
    def build(cls, limbs, max_iter: int) -> "LimbTables":
        """Flatten ``limbs`` (:class:`~pkm_dynamics.core.limb_model.Limb` with their
        :class:`~pkm_dynamics.core.limb_kinematics.LimbScrews`) for IK solves of at most
        ``max_iter`` outer iterations."""
        models, sizes = zip(*[_limb_model(limb) for limb in limbs])
        fm, im, hm = _pack(list(models), _MODEL_INT)
        for a in (fm, im, hm):
            a.setflags(write=False)
        toff = np.concatenate([[0], np.cumsum([limb.n for limb in limbs])]).astype(np.int64)
        toff.setflags(write=False)
        layout = _pack([_limb_scratch(limb, s, max_iter) for limb, s in zip(limbs, sizes)], _DATA_INT)[2]
        parts = tuple(slice(int(a), int(b)) for a, b in zip(toff[:-1], toff[1:]))
        return cls(tuple(limbs), fm, im, hm, toff, tuple(sizes), int(max_iter), layout, parts)

    def with_limbs(self, limbs) -> "LimbTables":
        """These tables for ``limbs``, the same limbs under another gravity (their trees'
        ``gravity``): a copy of the float pack ``fm`` with each limb's base acceleration
        ``(0, -g)`` replaced, every other array shared, and the same per-thread scratch (its
        layout and contents depend on the limbs' geometry only: a thread runs one call at a
        time, on either tables).  No kernel is compiled."""
        fm = self.fm.copy()
        for l, limb in enumerate(limbs):
            o = int(self.hm[l, LM_BASE_ACCELERATION, 0])
            fm[o:o + 6] = np.concatenate([np.zeros(3), -limb.tree.gravity])
        fm.setflags(write=False)
        return replace(self, limbs=tuple(limbs), fm=fm)

    @property
    def n(self) -> int:
        """Joints of all limbs (the length of the flat joint vector)."""
        return int(self.toff[-1])

    def rows_of_K(self, pairs) -> np.ndarray:
        """Positions in the float scratch of the rows ``K[j]`` (dp,) of the limbs' ``K`` for
        ``pairs`` of (limb, joint): ``J_IK = fd[positions]`` (eq. 30)."""
        dp = self.limbs[0].D_t.shape[1]
        return np.array([[self.layout[l, LD_K, 0] + j * dp + c for c in range(dp)] for l, j in pairs], dtype=np.int64)

    def data(self):
        """``(fd, idt, hd)``: the packed scratch of the calling thread (allocated on its first
        call), and its per-thread record of the flat joint vector the scratch holds the state of."""
        d = getattr(self._local, "data", None)
        if d is None:
            d = self._local.data = _pack([_limb_scratch(limb, s, self.max_iter)
                                          for limb, s in zip(self.limbs, self.sizes)], _DATA_INT)
            L = len(self.limbs)
            self._local.out = np.zeros((L, 3))
            self._local.status = np.zeros(L, dtype=np.int64)
            self._local.theta = None
            self._local.prepare = np.ones(L, dtype=np.bool_)
            dp = self.limbs[0].D_t.shape[1]
            self._local.Wl = np.zeros(dp)
            self._local.rs = np.zeros(84 + 3 * dp * dp + dp)     # robot_kernels.robot_views
            self._local.entries = EntryPoints()
        return d

    def kernel_arguments(self) -> tuple:
        """``(fm, im, hm, fd, idt, hd, toff)``: the model and the calling thread's scratch for a
        kernel that runs the limb kernels at joints of its own (the scratch then no longer holds
        the state of the last IK: the next rates or dynamics rebuild it)."""
        fd, idt, hd = self.data()
        self._local.theta = None
        return self.fm, self.im, self.hm, fd, idt, hd, self.toff

    def reference_scratch(self) -> tuple:
        """``(fd, idt, hd, out, status, rs, Wl, prepare)``: the calling thread's scratch of
        :func:`.robot_kernels.robot_reference` for a kernel that runs it at poses of its own (the
        scratch then no longer holds the state of the last IK, as :meth:`kernel_arguments`)."""
        fd, idt, hd = self.data()
        loc = self._local
        loc.theta = None
        return fd, idt, hd, loc.out, loc.status, loc.rs, loc.Wl, loc.prepare

    def split(self, flat) -> list:
        """Per limb views (n_l,) of a flat joint vector."""
        return [flat[p] for p in self.parts]

    def inner(self, l: int, idt, outer: int) -> list:
        """Limb ``l``'s inner iterations of each FC per outer step (nested scheme) from the copy
        ``idt`` of the int scratch."""
        nl = len(self.limbs[l].loops)
        if nl == 0:
            return [_NO_LOOPS] * int(outer)
        o, rows, cols, _ = self.layout[l, LD_INNER]
        table = idt[o:o + rows * cols].reshape(rows, cols)
        return list(table[:outer, :nl])

    def state(self, l: int, fd) -> tuple:
        """Limb ``l``'s ``(C, Y, [(g, G, None) per FC])`` and ``(H, J_p, L_t, F, K)`` as views
        of the scratch copy ``fd`` (the entries :data:`..limb.limb_layout.LD_STATE`)."""
        hd = self.layout

        def v(k):
            o, *shape = hd[l, k]
            shape = [s for s in shape if s] or [0]
            return fd[o:o + int(np.prod(shape))].reshape(shape)

        e = {k: v(k) for k in LD_STATE}
        g, G = e[LD_G_RES], e[LD_G_JAC]
        cons = [(g[i, :lp.size], G[i, :lp.size], None) for i, lp in enumerate(self.limbs[l].loops)]
        return (e[LD_C], e[LD_Y], cons), (e[LD_H], e[LD_J_P], e[LD_L_T], e[LD_F], e[LD_K])


@dataclass
class CompiledIK:
    """The IK of every limb from :func:`compiled_ik`: ``theta`` (flat, fresh), ``status`` (L,)
    (OK or the reason the reference route takes over), ``out`` (L, 3): outer iterations,
    kappa(F), largest loop residual; ``inner`` (L, max_iter+1, n_loops): inner iterations
    (nested); ``fd``: a copy of the scratch (the states and Jacobians, :meth:`LimbTables.state`)
    (:func:`.reference_call.compiled_reference` that completes: ``status``, ``out`` the thread's scratch, ``fd``
    those entries alone, ``act`` (3, n_act) the actuators' positions, rates, accelerations,
    ``inputs`` the pose, ``V_t``, ``Vdot_t`` the kernel read)."""

    theta: np.ndarray
    status: np.ndarray
    out: np.ndarray
    inner: np.ndarray
    fd: np.ndarray
    code: int = LIMB_STATUS
    J: np.ndarray | None = None
    thd: np.ndarray | None = None
    thdd: np.ndarray | None = None
    W: np.ndarray | None = None
    u: np.ndarray | None = None
    act: np.ndarray | None = None
    inputs: tuple | None = None


def compiled_ik(tables: LimbTables, pose, theta0, nested: bool, tol: float, threshold, loop_threshold) -> CompiledIK:
    """The IK of every limb for the platform pose ``pose`` (4, 4) from the flat ``theta0``
    (:func:`.robot_kernels.robot_ik`)."""
    fd, idt, hd = tables.data()
    loc = tables._local
    theta = np.empty(tables.n)
    pose, theta0 = np.array(pose, dtype=float), np.array(theta0, dtype=float)   # the one array type
    KR.robot_ik(tables.fm, tables.im, tables.hm, fd, idt, hd, tables.toff, pose, theta0, theta, nested, tol,
                tables.max_iter, -1.0 if threshold is None else float(threshold),
                -1.0 if loop_threshold is None else float(loop_threshold), loc.out, loc.status)
    ok = loc.status == OK
    loc.theta = theta.copy()                    # the scratch holds the state of these limbs
    loc.prepare[:] = ~ok
    return CompiledIK(theta, loc.status.copy(), loc.out.copy(), idt.copy(), fd.copy())


def robot_constants(reference_pose, P_p, M_p, gravity) -> np.ndarray:
    """The read-only constants of :func:`.robot_kernels.robot_views`: ``C_ref``, ``P_p``,
    ``M_p``, gravity packed in one array (built once at load)."""
    rc = np.concatenate([np.ravel(reference_pose), np.ravel(P_p), np.ravel(M_p), np.ravel(gravity)]).astype(float)
    rc.setflags(write=False)
    return rc


def compiled_rates(tables: LimbTables, theta, V_t, Vdot_t, P_p):
    """``(thetad, thetadd, W, status)`` of every limb at the flat IK solution ``theta``
    (:func:`.robot_kernels.robot_rates`: eqs. 27-29 refined as :func:`..ik_refinement.limb_rates`,
    and ``W`` the sum of the limbs' shares ``K^T tau`` of eq. 45); ``Vdot_t`` None: only
    ``thetad`` (``thetadd``, ``W`` None).  ``status`` (L,): limbs for which the reference route
    must run."""
    fd, idt, hd = tables.data()
    loc = tables._local
    if loc.theta is None or not np.array_equal(loc.theta, theta):
        loc.prepare[:] = True
        loc.theta = np.array(theta, dtype=float)
    V_t = np.array(V_t, dtype=float)
    A_t = np.zeros_like(V_t) if Vdot_t is None else np.array(Vdot_t, dtype=float)
    thd, thdd, W = np.empty(tables.n), np.empty(tables.n), np.empty(len(V_t))
    KR.robot_rates(tables.fm, tables.im, tables.hm, fd, idt, hd, tables.toff, loc.theta, loc.prepare, V_t, A_t,
                   P_p @ V_t, P_p @ A_t, Vdot_t is not None, thd, thdd, W, loc.Wl, loc.status)
    loc.prepare[:] = loc.status != OK
    return thd, (thdd if Vdot_t is not None else None), (W if Vdot_t is not None else None), loc.status.copy()


class LazyLimbs:
    """A per-limb sequence whose entries are built on first access by ``build(l)`` (views of a
    scratch copy, or the reference route's values set with ``seq[l] = value``)."""

    def __init__(self, n: int, build):
        self._v, self._build = [None] * n, build

    def __getitem__(self, l):
        if self._v[l] is None:
            self._v[l] = self._build(l)
        return self._v[l]

    def __setitem__(self, l, value):
        self._v[l] = value

    def __len__(self):
        return len(self._v)

    def __iter__(self):
        return (self[l] for l in range(len(self._v)))


def compiled_task_inertia(tables: LimbTables, theta, Mt):
    """``Mt += sum_l K_l^T H_l K_l`` (eq. 40 without the platform, in place) at the flat IK
    solution ``theta`` (:func:`.robot_kernels.robot_task_inertia`); returns the status per limb
    (limbs to add by the reference route)."""
    fd, idt, hd = tables.data()
    loc = tables._local
    if loc.theta is None or not np.array_equal(loc.theta, theta):
        loc.prepare[:] = True
        loc.theta = np.array(theta, dtype=float)
    KR.robot_task_inertia(tables.fm, tables.im, tables.hm, fd, idt, hd, tables.toff, loc.theta, loc.prepare, Mt,
                          loc.status)
    loc.prepare[:] = loc.status != OK
    return loc.status.copy()
