"""Model and data of the compiled tree dynamics, kept apart as in Pinocchio.

:class:`CompiledTree`: the :class:`~pkm_dynamics.core.tree.TreeModel` of a robot as the flat
read-only ``model`` tuple of :mod:`.tree_kernels` (parent index, joint screws, reference poses,
spatial inertias), built once (``tree.compiled``) and shared by every call, plus the gravity of
the tree.  :meth:`CompiledTree.data`: the scratch tuple of :mod:`.tree_kernels`, preallocated
per tree and per thread, never shared between threads.

The functions below are the thin Python layer, named as their reference in
:mod:`~pkm_dynamics.core.tree_dynamics`: one state (n,) or a batch (B, n), one kernel call for
the whole batch, the status turned into the exception and message of the reference route.
Another kernel calls the building blocks of :mod:`.tree_kernels` with ``ct.model`` and
``ct.data()`` directly.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from ..bounds import check_tree_vector as reference_check
from ..errors import StateError
from . import tree_kernels as K
from ..status import BAD_INPUT, OK

_INPUTS = ("q", "qd", "qdd", "f_ext")


@dataclass(frozen=True, eq=False)
class CompiledTree:
    """Flat model of a spanning tree: ``model = (parent, X, B, M)`` (see :mod:`.tree_kernels`),
    read-only; ``a0`` (6,): the base acceleration ``(0, -g)`` of the tree's gravity; ``tree``:
    the :class:`~pkm_dynamics.core.tree.TreeModel` it came from (names, frames, reference)."""

    tree: object
    model: tuple
    a0: np.ndarray
    _local: threading.local = field(default_factory=threading.local, repr=False)

    @classmethod
    def build(cls, tree) -> "CompiledTree":
        """Compile ``tree`` into arrays (copies, made read-only)."""
        n = tree.nq
        arrays = (np.array(tree.parent, dtype=np.int64).reshape(n), np.array(tree.X, dtype=float).reshape(n, 6),
                  np.array(tree.B, dtype=float).reshape(n, 4, 4), np.array(tree.M, dtype=float).reshape(n, 6, 6))
        a0 = gravity_acceleration(tree.gravity)
        for a in (*arrays, a0):
            a.setflags(write=False)
        return cls(tree, arrays, a0)

    @property
    def n(self) -> int:
        return self.model[0].shape[0]

    def __reduce__(self):
        """Pickled as the tree it is built from (the per-thread scratch is not copied)."""
        return CompiledTree.build, (self.tree,)

    def data(self) -> tuple:
        """The scratch tuple ``(P, C, Ad, V, A, W, Z, Y, s, w, T)`` of the calling thread
        (allocated on its first call; layouts in :mod:`.tree_kernels`)."""
        d = getattr(self._local, "data", None)
        if d is None:
            n = self.n
            d = self._local.data = (np.zeros((n, 4, 4)), np.zeros((n, 4, 4)), np.zeros((n, 6, 6)),
                                    np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 6, 6)),
                                    np.zeros((n, 3, 6)), np.zeros((n, 2)), np.zeros((8, 6)), np.zeros((2, 6, 6)))
            self._local.status = np.zeros(3, dtype=np.int64)
        return d


def gravity_acceleration(g) -> np.ndarray:
    """Base acceleration ``Vdot_0 = (0, -g)`` (6,) of gravity ``g`` (3,)."""
    return np.concatenate([np.zeros(3), -np.asarray(g, dtype=float).reshape(3)])


def _rows(ct: CompiledTree, arrays, names) -> tuple:
    """The state arrays as C-contiguous float (B, n) copies of one shape, and whether they were
    one state (n,); a wrong shape raises :class:`StateError` naming the array."""
    n = ct.n
    out = []
    shape = None
    for a, name in zip(arrays, names):
        a = np.array(a, dtype=float)
        if a.ndim not in (1, 2) or a.shape[-1] != n:
            raise StateError(f"{name} has shape {a.shape}, expected ({n},) or (batch, {n}) "
                             f"for robot '{ct.tree.name}'")
        if shape is not None and a.shape != shape:
            raise StateError(f"{name} has shape {a.shape}, but {names[0]} has shape {shape}")
        shape = a.shape
        out.append(a.reshape(-1, n))
    return out, len(shape) == 1


def _wrenches(ct: CompiledTree, f_ext, B: int, single: bool) -> np.ndarray:
    """``f_ext`` as (1, n, 6) (zeros for None, or one set for every row) or (B, n, 6)."""
    n = ct.n
    if f_ext is None:
        return np.zeros((1, n, 6))
    fe = np.array(f_ext, dtype=float)
    if fe.shape == (n, 6):
        return fe.reshape(1, n, 6)
    if fe.shape == (B, n, 6) and not single:
        return fe
    raise StateError(f"f_ext has shape {fe.shape}, expected ({n}, 6)" + ("" if single else f" or ({B}, {n}, 6)"))


def _read_only(a: np.ndarray) -> np.ndarray:
    """``a`` made read-only like the model arrays: one array type, one compiled signature."""
    a.setflags(write=False)
    return a


def _a0(ct: CompiledTree, gravity) -> np.ndarray:
    """The base acceleration (6,) of ``gravity``, the tree's own when None (read-only)."""
    return ct.a0 if gravity is None else _read_only(gravity_acceleration(gravity))


def _check(ct: CompiledTree, code: int, rows, names=_INPUTS) -> None:
    """Raise the exception of a kernel status (after a call that did not return OK): a bad
    input row goes through the reference check :func:`..bounds.check_tree_vector` (its message)."""
    if code == OK:
        return
    tree = ct.tree
    _, row, idx = (int(v) for v in ct._local.status)
    if code == BAD_INPUT:
        if idx < len(rows) and names[idx] != "f_ext":
            reference_check(tree, names[idx], rows[idx][row])
        raise StateError(f"f_ext is not finite (row {row})")
    raise StateError(f"the result is not finite at joint '{tree.joint_names[idx]}' (row {row}): "
                     "the state is too large for the dynamics")


def forward_kinematics(ct: CompiledTree, q) -> np.ndarray:
    """Absolute poses ``C_i`` (n, 4, 4) or (B, n, 4, 4); as :func:`..tree_dynamics.forward_kinematics`."""
    (Q,), single = _rows(ct, (q,), ("q",))
    data = ct.data()
    out = np.empty((Q.shape[0], ct.n, 4, 4))
    _check(ct, K.forward_kinematics_rows(ct.model, data, Q, out, ct._local.status), (Q,))
    return out[0] if single else out


def kinematics(ct: CompiledTree, q, qd, qdd=None, base_acceleration=None) -> tuple:
    """``(C, V, Vdot)``: absolute poses, body twists and accelerations ((n, 4, 4), (n, 6), (n, 6),
    or with a leading batch axis); as :func:`..tree_dynamics.kinematics` (which also returns
    the relative poses)."""
    qdd = np.zeros_like(np.asarray(q, dtype=float)) if qdd is None else qdd
    (Q, QD, QDD), single = _rows(ct, (q, qd, qdd), _INPUTS[:3])
    a0 = _read_only(np.zeros(6) if base_acceleration is None else
                    np.array(base_acceleration, dtype=float).reshape(6))
    data = ct.data()
    B, n = Q.shape
    C, V, A = np.empty((B, n, 4, 4)), np.empty((B, n, 6)), np.empty((B, n, 6))
    _check(ct, K.kinematics_rows(ct.model, data, Q, QD, QDD, a0, C, V, A, ct._local.status), (Q, QD, QDD))
    return (C[0], V[0], A[0]) if single else (C, V, A)


def rnea(ct: CompiledTree, q, qd, qdd, gravity=None, f_ext=None) -> np.ndarray:
    """Inverse dynamics ``tau`` (n,) or (B, n); ``f_ext`` (n, 6) body-fixed wrenches (for every
    row) or (B, n, 6); as :func:`..tree_dynamics.rnea`."""
    (Q, QD, QDD), single = _rows(ct, (q, qd, qdd), _INPUTS[:3])
    FE = _wrenches(ct, f_ext, Q.shape[0], single)
    data = ct.data()
    tau = np.empty_like(Q)
    _check(ct, K.rnea_rows(ct.model, data, Q, QD, QDD, FE, _a0(ct, gravity), tau, ct._local.status),
           (Q, QD, QDD))
    return tau[0] if single else tau


def crba(ct: CompiledTree, q) -> np.ndarray:
    """Joint-space mass matrix (n, n) or (B, n, n); as :func:`..tree_dynamics.crba`."""
    (Q,), single = _rows(ct, (q,), ("q",))
    data = ct.data()
    H = np.empty((Q.shape[0], ct.n, ct.n))
    _check(ct, K.crba_rows(ct.model, data, Q, H, ct._local.status), (Q,))
    return H[0] if single else H


def aba(ct: CompiledTree, q, qd, tau, gravity=None, f_ext=None) -> np.ndarray:
    """Forward dynamics ``qdd`` (n,) or (B, n); as :func:`..tree_dynamics.aba`."""
    names = ("q", "qd", "tau", "f_ext")
    (Q, QD, TAU), single = _rows(ct, (q, qd, tau), names[:3])
    FE = _wrenches(ct, f_ext, Q.shape[0], single)
    data = ct.data()
    qdd = np.empty_like(Q)
    _check(ct, K.aba_rows(ct.model, data, Q, QD, TAU, FE, _a0(ct, gravity), qdd, ct._local.status),
           (Q, QD, TAU), names)
    return qdd[0] if single else qdd


def frame_jacobian(ct: CompiledTree, q, link: str, offset=None) -> np.ndarray:
    """Body-fixed Jacobian (6, n) or (B, 6, n) of the URDF link ``link`` (times the 4x4
    ``offset``); as :func:`..tree_dynamics.frame_jacobian`."""
    body, O = ct.tree.frame(link)
    O = np.array(O if offset is None else O @ np.asarray(offset, dtype=float), dtype=float)
    (Q,), single = _rows(ct, (q,), ("q",))
    data = ct.data()
    J = np.empty((Q.shape[0], 6, ct.n))
    _check(ct, K.jacobian_rows(ct.model, data, Q, body, O, J, ct._local.status), (Q,))
    return J[0] if single else J
