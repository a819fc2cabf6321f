"""Model and data of the compiled module-chain dynamics, kept apart as in Pinocchio.

:class:`ChainModel`: the :class:`~pkm_dynamics.core.module_chain.ModuleChain` of a robot as flat
read-only arrays (layouts in :mod:`.chain_layout`), built once at load and shared by every
call.  :class:`ChainData`: the scratch of one call, preallocated per robot and per thread
(:meth:`ChainModel.data`), never shared between threads.  :func:`chain_forward_dynamics` and
:func:`chain_inverse_dynamics` are the thin Python layer: shapes, one kernel call for a whole
batch, and the status turned into the named exception.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from ..errors import PkmDynamicsError, SingularityError, StateError
from . import chain_kernels as K
from . import chain_layout as CL
from ..numba_support.entry_points import EntryPoints
from . import chain_kinematics as KK
from ..status import (BAD_INPUT, CLOSURE, NONFINITE_RESULT, OK, SINGULAR_ALPHA, SINGULAR_ANGLE, SINGULAR_DET,
                      STROKE)

_NAMES = ("x", "xd", "third", "wrench")
#: how far the rotation of an attachment pose may be from one about z (entries) for
#: :func:`rotation_about_z`: round-off of the description's angles, far below the kernels' 1e-12
ROTATION_Z_TOL = 1e-14


def rotation_about_z(R) -> bool:
    """Whether the rotation ``R`` (3, 3) is one about z, ``[[c, -s, 0], [s, c, 0], [0, 0, 1]]``, to
    :data:`ROTATION_Z_TOL` (the flag :data:`.chain_layout.E_RZ`: the kernels then apply the map of E
    as a rotation and a translation, :func:`.chain_closure.carry_from_e`)."""
    R = np.asarray(R, dtype=float)
    c, s = R[0, 0], R[1, 0]
    expected = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return bool(np.all(np.abs(R - expected) <= ROTATION_Z_TOL))


@dataclass(frozen=True)
class ChainData:
    """Scratch of one call (n modules): ``A`` (n, 3, 6, 6), ``V`` (n, 5, 3, 6), ``S`` (n, 30),
    ``W`` (6, 6, 6), ``w`` (12, 6) as laid out in :mod:`.chain_layout`, views of the one buffer
    ``flat`` (:func:`.chain_layout.scratch_arrays`), ``status`` (3,), ``no_wrench`` (1, 6)
    zeros (never written), and the kernels' ``entries`` this thread knows
    (:class:`..numba_support.entry_points.EntryPoints`)."""

    A: np.ndarray
    V: np.ndarray
    S: np.ndarray
    W: np.ndarray
    w: np.ndarray
    status: np.ndarray
    no_wrench: np.ndarray
    flat: np.ndarray
    entries: EntryPoints

    @classmethod
    def allocate(cls, n: int) -> "ChainData":
        sizes = (CL.A_SIZE * n, CL.V_SIZE * n, CL.S_SIZE * n, CL.W_SIZE, CL.w_SIZE)
        flat = np.zeros(sum(sizes))
        A, V, S, W, w = np.split(flat, np.cumsum(sizes)[:-1])
        return cls(A.reshape(n, 3, 6, 6), V.reshape(n, 5, 3, 6), S.reshape(n, CL.S_SIZE), W.reshape(6, 6, 6),
                   w.reshape(12, 6), np.zeros(3, dtype=np.int64), np.zeros((1, 6)), flat, EntryPoints())


def tip_inertia(mod, out) -> float:
    """A serial module's constant articulated inertia as the chain's tip, carried to its base
    frame, into ``out`` (6, 6): ``Ad_inv(B)^T (M_B4 - U U^T / D) Ad_inv(B)``, ``U = M_B4 X``,
    ``D = X^T U`` (paper 000 eqs. 51-52a with ``M_E = 0``), when its screw ``X`` is a translation
    (then ``Ad_inv(B exp(X x)) = Ad_inv(B) Ad_inv(T(R_B e x))``: the kernels apply the congruence
    of eq. 52c as one translation of this constant, :func:`.chain_recursions.serial_tip_prismatic`).
    Returns 1.0 (the flag :data:`.chain_layout.TIP_PRISMATIC`), or 0.0 and ``out`` untouched for
    a revolute joint or a body without inertia along its screw (``D = 0``: the general step
    reports it)."""
    X, M = np.asarray(mod.X, dtype=float), np.asarray(mod.M_B4, dtype=float)
    U = M @ X
    D = float(X @ U)
    if np.any(X[:3] != 0.0) or not D > 0.0:
        return 0.0
    out[:] = mod.AB.T @ (M - np.outer(U, U) / D) @ mod.AB
    return 1.0


@dataclass(frozen=True, eq=False)
class ChainModel:
    """Flat model of a module chain: ``geo`` (n, 24), ``mats`` (n, 5, 6, 6), ``nud0`` (6,)
    (views of the one buffer ``flat``, :func:`.chain_layout.model_arrays`), ``root`` (4, 4)
    (see :mod:`.chain_layout`), read-only; ``nq``: number of tree joints; ``shape1``: ``(n,)``,
    the shape of one state; plus the chain it came from (for error messages and the reference
    route)."""

    chain: object
    nq: int
    geo: np.ndarray
    mats: np.ndarray
    nud0: np.ndarray
    root: np.ndarray
    shape1: tuple
    flat: np.ndarray
    _local: threading.local = field(default_factory=threading.local, repr=False)

    @classmethod
    def build(cls, chain, nq: int) -> "ChainModel":
        """Compile ``chain`` (a :class:`~pkm_dynamics.core.module_chain.ModuleChain` of a tree
        with ``nq`` moving joints) into arrays."""
        n = chain.n
        flat = np.zeros((CL.GEO_SIZE + CL.MATS_SIZE) * n + 6)
        geo = flat[:CL.GEO_SIZE * n].reshape(n, CL.GEO_SIZE)
        mats = flat[CL.GEO_SIZE * n:-6].reshape(n, 5, 6, 6)
        for k, (mod, info) in enumerate(zip(chain.modules, chain.info)):
            g = geo[k]
            g[CL.SX], g[CL.LOWER], g[CL.UPPER] = info.sx, info.lower, info.upper
            g[CL.JOINT_Q:CL.JOINT_Q + len(info.tree_idx)] = info.tree_idx
            if info.kind == "parallel":
                g[CL.KIND] = CL.PARALLEL
                g[CL.GEO_L], g[CL.GEO_L1], g[CL.GEO_LC], g[CL.GEO_LC0], g[CL.GEO_H] = (mod.L, mod.L1, mod.Lc,
                                                                                    mod.Lc0, mod.h)
                (g[CL.SIGN_Q], g[CL.SIGN_Q1]), (g[CL.REF_Q], g[CL.REF_Q1]) = info.signs, info.refs
                mats[k, CL.B1], mats[k, CL.B3], mats[k, CL.B4] = mod.M
                mats[k, CL.C_E, :4, :4] = mod.B1_C_E
            else:
                g[CL.KIND] = CL.SERIAL
                g[CL.SCREW] = mod.X
                mats[k, CL.SERIAL_BODY] = mod.M_B4
                mats[k, CL.SERIAL_B, :4, :4] = mod.B
                mats[k, CL.C_E, :4, :4] = mod.B4_C_E
                g[CL.TIP_PRISMATIC] = tip_inertia(mod, mats[k, CL.SERIAL_TIP])
            mats[k, CL.MAP_E] = mod.AE
            g[CL.E_RZ] = float(rotation_about_z(mats[k, CL.C_E, :3, :3]))
        nud0 = flat[-6:]
        nud0[:] = chain.nud_0
        root = np.array(chain.root_C_Bc, dtype=float)
        for a in (geo, mats, nud0, root, flat):
            a.setflags(write=False)
        return cls(chain, int(nq), geo, mats, nud0, root, (n,), flat)

    def with_chain(self, chain) -> "ChainModel":
        """This model for ``chain``, the same chain under another gravity
        (:meth:`~pkm_dynamics.core.module_chain.ModuleChain.with_gravity`): a copy of the flat
        buffer with ``nud0`` replaced (Algorithm 1 line 1), the other arrays' values shared; its
        scratch is its own (each thread allocates it on its first call, as for a new model).  No
        kernel is compiled: the arrays keep their types and shapes."""
        flat = self.flat.copy()
        n = self.n
        geo = flat[:CL.GEO_SIZE * n].reshape(n, CL.GEO_SIZE)
        mats = flat[CL.GEO_SIZE * n:-6].reshape(n, 5, 6, 6)
        nud0 = flat[-6:]
        nud0[:] = chain.nud_0
        for a in (geo, mats, nud0, flat):
            a.setflags(write=False)
        return ChainModel(chain, self.nq, geo, mats, nud0, self.root, self.shape1, flat)

    @property
    def n(self) -> int:
        return self.geo.shape[0]

    def __reduce__(self):
        """Pickled as the chain it is built from (the per-thread scratch is not copied)."""
        return ChainModel.build, (self.chain, self.nq)

    def data(self) -> ChainData:
        """The scratch of the calling thread (allocated on its first call)."""
        d = getattr(self._local, "data", None)
        if d is None:
            d = self._local.data = ChainData.allocate(self.n)
            self._local.head = (self.geo, self.mats, self.nud0, d.A, d.V, d.S, d.W, d.w)
        return d

    def one_call(self) -> tuple:
        """The calling thread's ``(entry, model_flat, data_flat, no_wrench, status, n, shape1)``
        for one state (:func:`_one`; ``entry`` None until the kernel is compiled): kept per
        thread once the entry point is known, so the robot's short path is one lookup."""
        try:
            return self._local.one
        except AttributeError:
            one = _one(self)
            if one[0] is not None:
                self._local.one = one
            return one

    def thread_scratch(self, name: str, make):
        """The calling thread's scratch ``name`` of a caller built on this model (e.g. the
        tangent buffers of :mod:`~pkm_dynamics.core.derivatives.derivatives`): ``make()`` on the
        thread's first call, kept with the thread's :meth:`data`."""
        s = getattr(self._local, name, None)
        if s is None:
            s = make()
            setattr(self._local, name, s)
        return s

    def head(self) -> tuple:
        """The leading arguments of :func:`.chain_kernels.chain_dynamics` for the calling
        thread: ``(geo, mats, nud0, A, V, S, W, w)``, built with its scratch."""
        try:
            return self._local.head
        except AttributeError:
            self.data()
            return self._local.head


def _rows(a, n: int, name: str) -> np.ndarray:
    """``a`` as a C-contiguous writeable float (B, n) array (the one array type the kernels are
    compiled for: another layout would compile them again); shape errors raise
    :class:`StateError` as the reference route does."""
    a = np.ascontiguousarray(a, dtype=float)
    if a.shape[-1:] != (n,) or a.ndim not in (1, 2):
        raise StateError(f"{name} has shape {a.shape}, expected ({n},) or (batch, {n})")
    if not a.flags.writeable:
        a = a.copy()
    return a.reshape(-1, n)


def _batch(model: ChainModel, data: ChainData, x, xd, t, f_ext):
    """Inputs as (B, n) arrays (see :func:`_rows`) and the wrenches as (1, 6) (one for every
    row) or (B, 6).  Returns (x, xd, third, f_ext, single)."""
    n = model.n
    x = np.ascontiguousarray(x, dtype=float)
    xd = np.ascontiguousarray(xd, dtype=float)
    t = np.ascontiguousarray(t, dtype=float)
    shape = x.shape
    if shape == xd.shape == t.shape == (n,) and x.flags.writeable and xd.flags.writeable and t.flags.writeable:
        x, xd, t, single = x.reshape(1, n), xd.reshape(1, n), t.reshape(1, n), True
    elif shape == xd.shape == t.shape and len(shape) == 2 and shape[1] == n and x.flags.writeable \
            and xd.flags.writeable and t.flags.writeable:
        single = False
    else:                                          # the careful path: names a bad shape, copies
        shapes = {shape, xd.shape, t.shape}
        x, xd, t = (_rows(a, n, _NAMES[i]) for i, a in enumerate((x, xd, t)))
        if len(shapes) > 1:
            raise StateError(f"state arrays have different shapes {sorted(shapes)}")
        single = len(shape) == 1
    if f_ext is None:
        return x, xd, t, data.no_wrench, single
    fe = np.asarray(f_ext, dtype=float)
    B = x.shape[0]
    if fe.shape != (6,) and (fe.shape != (B, 6) or single):
        raise StateError(f"wrench has shape {fe.shape}, expected (6,)" + ("" if single else f" or ({B}, 6)"))
    return x, xd, t, _rows(fe, 6, "wrench"), single


def _raise(model: ChainModel, status, arrays, reference, fe=None, names=("x", "xd", "xdd")) -> None:
    """Turn a kernel status into the exception of the reference route: the culprit row goes
    through the numpy functions of :mod:`~pkm_dynamics.core.module_chain` (``reference(*rows)``
    raises the named exception with its message); the status alone words the message if they
    do not.  ``names``: the names of the inputs (their bounds, :mod:`..bounds`)."""
    from ..bounds import check_effort
    from .module_chain_dynamics import _as_state, _check_actuators
    code, row, idx = (int(v) for v in status)
    chain = model.chain
    rows = [a[row] for a in arrays]
    if code == BAD_INPUT:
        if idx == 3:
            check_effort(fe, "wrench")
            raise StateError(f"wrench is not finite: {fe.tolist()}")
        _as_state(names[idx], rows[idx], model.n)
    if code == STROKE:
        _check_actuators(chain, rows[0])
    if code in (CLOSURE, SINGULAR_ANGLE, SINGULAR_DET, SINGULAR_ALPHA):
        with np.errstate(all="ignore"):                  # its NaN warnings: it raises anyway
            reference(*rows)
        raise SingularityError(f"module '{chain.info[idx].name}': singular state at x = {rows[0][idx]:.6g} "
                               f"(status {code})")
    if code == NONFINITE_RESULT:
        raise StateError(f"the result is not finite at module '{chain.info[idx].name}' "
                         f"(row {row}): the state is too large for the dynamics")
    raise PkmDynamicsError(f"compiled chain kernel failed with status {code} at row {row}, index {idx}")


def _one(model: ChainModel) -> tuple:
    """The calling thread's ``(entry, model_flat, data_flat, no_wrench, status, n, shape1)`` for
    one state: the entry point of :func:`.chain_kernels.chain_dynamics_one` (see
    :mod:`..numba_support.entry_points`; None until this thread has called it once), its leading
    arguments (the flat model and scratch buffers), the scratch and the shape of one state.  Kept
    per thread by :meth:`ChainModel.one_call` once the entry point is known: the short path of
    the robot's ``forward_dynamics`` / ``inverse_dynamics`` reads it there."""
    d = model.data()
    return (d.entries.known(K.chain_dynamics_one), model.flat, d.flat, d.no_wrench, d.status, model.n,
            model.shape1)


def _call(model: ChainModel, inverse: bool, x, xd, t, f_ext):
    """One kernel call.  One state of float arrays (n,) without a wrench goes straight to the
    entry point of :func:`.chain_kernels.chain_dynamics_one` (no type dispatch; read-only inputs
    are fine there: the kernel does not write them); everything else through :func:`_batch` to
    :func:`.chain_kernels.chain_dynamics`.  (``np.ascontiguousarray(a, float)``: the dtype
    given by position is parsed faster than by keyword.)"""
    x = np.ascontiguousarray(x, float)
    xd = np.ascontiguousarray(xd, float)
    t = np.ascontiguousarray(t, float)
    run, mflat, dflat, fe, status, n, shape1 = model.one_call()
    if f_ext is None and run is not None and x.shape == xd.shape == t.shape == shape1:
        out = np.empty(n)
        if run(inverse, mflat, dflat, x, xd, t, fe, out, status) == OK:
            return out
        single = True
    else:
        d = model.data()
        x, xd, t, fe, single = _batch(model, d, x, xd, t, f_ext)
        if single and f_ext is None:
            kernel, head, x, xd, t = K.chain_dynamics_one, (model.flat, d.flat), x[0], xd[0], t[0]
        else:
            kernel, head = K.chain_dynamics, model.head()
        out = np.empty_like(x)
        if d.entries.run(kernel, inverse, *head, x, xd, t, fe, out, status) == OK:
            return out[0] if single and out.ndim == 2 else out
    from .module_chain_dynamics import chain_inverse_dynamics, parallel_serial_forward_dynamics
    row = int(status[1])
    w = fe[row if len(fe) > 1 else 0]
    fn = chain_inverse_dynamics if inverse else parallel_serial_forward_dynamics
    rows = tuple(a.reshape(-1, model.n) for a in (x, xd, t))
    _raise(model, status, rows, lambda a, b, c: fn(model.chain, a, b, c, w), w,
           ("x", "xd", "xdd" if inverse else "f"))


def chain_forward_dynamics(model: ChainModel, x, xd, f, f_ext=None) -> np.ndarray:
    """Algorithm 1 of paper 000 (compiled): actuator accelerations (n,) or (B, n) from positions,
    velocities and forces of the same shape; ``f_ext`` (6,) or (B, 6): wrench (moment, force) on
    the end effector in its frame.  Raises what
    :func:`~pkm_dynamics.core.module_chain.parallel_serial_forward_dynamics` raises."""
    return _call(model, False, x, xd, f, f_ext)


def chain_inverse_dynamics(model: ChainModel, x, xd, xdd, f_ext=None) -> np.ndarray:
    """Analytic chain inverse dynamics (compiled): actuator forces (n,) or (B, n); as
    :func:`~pkm_dynamics.core.module_chain.chain_inverse_dynamics`."""
    return _call(model, True, x, xd, xdd, f_ext)


def chain_tree_state(model: ChainModel, x, xd=None, xdd=None) -> tuple:
    """Positions, velocities, accelerations of every tree joint ((nq,) or (B, nq) each) with all
    loops closed (compiled); ``xd``, ``xdd`` default to zero.  As
    :func:`~pkm_dynamics.core.module_chain.chain_tree_state`."""
    d = model.data()
    x = np.asarray(x, dtype=float)
    xd = np.zeros_like(x) if xd is None else xd
    xdd = np.zeros_like(x) if xdd is None else xdd
    *arrays, _, single = _batch(model, d, x, xd, xdd, None)
    B = arrays[0].shape[0]
    Q, QD, QDD = (np.zeros((B, model.nq)) for _ in range(3))
    if KK.tree_state(model.geo, *arrays, Q, QD, QDD, d.S, d.status) != OK:
        from .module_chain_dynamics import chain_tree_state as reference
        _raise(model, d.status, arrays, lambda a, b, c: reference(model.chain, model.nq, a, b, c))
    return (Q[0], QD[0], QDD[0]) if single else (Q, QD, QDD)


def chain_forward_kinematics(model: ChainModel, x) -> np.ndarray:
    """End-effector pose (4, 4) or (B, 4, 4) in the root link (compiled); as
    :func:`~pkm_dynamics.core.module_chain.chain_forward_kinematics`."""
    d = model.data()
    x = np.asarray(x, dtype=float)
    *arrays, _, single = _batch(model, d, x, x, x, None)
    out = np.empty((arrays[0].shape[0], 4, 4))
    if KK.forward_kinematics(model.geo, model.mats, model.root, arrays[0], out, d.S, d.W, d.status) != OK:
        from .module_chain_dynamics import chain_forward_kinematics as reference
        _raise(model, d.status, arrays, lambda a, b, c: reference(model.chain, a))
    return out[0] if single else out
