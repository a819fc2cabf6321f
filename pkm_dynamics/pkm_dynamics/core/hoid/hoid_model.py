"""Model and data of the compiled higher-order inverse dynamics (paper 002), kept apart as in
Pinocchio, and the thin Python layer.

:class:`HoidKernelModel`: a :class:`~pkm_dynamics.core.simple_limb.SimpleLimbModel` (and the
SEA parameters) as flat read-only arrays (layout in :mod:`.hoid_kinematics`), built once per
robot description; :meth:`HoidKernelModel.data` the scratch of the calling thread.
:func:`hoid_full_call` (loop closure + recursion + SEA, one kernel call for a whole batch) and
:func:`hoid_recursion` (the recursion alone from a closed configuration) check shapes, call
the kernel and return fresh arrays; a status goes back to the caller, which names the culprit
through the numpy route (:func:`..higher_order.higher_order_inverse_dynamics`).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from . import hoid_kernels as K
from . import hoid_kinematics as HK
from . import hoid_robot_kernels as KR
from ..module_chain.chain_model import _entry_point


def _frozen(*arrays):
    for a in arrays:
        a.setflags(write=False)
    return arrays


@dataclass(frozen=True, eq=False)
class HoidKernelModel:
    """Flat model of a PKM with simple limbs: ``arrays`` the model tuple of
    :mod:`.hoid_kinematics` (read-only); ``L`` limbs, ``D`` task coordinates, ``na`` actuators,
    ``nq`` tree joints; ``limbs`` the model it came from, ``source`` the arguments of
    :meth:`build`."""

    limbs: object
    arrays: tuple
    L: int
    D: int
    na: int
    nq: int
    source: tuple = ()
    _local: threading.local = field(default_factory=threading.local, repr=False)

    @classmethod
    def build(cls, limbs, K_stiffness, motor_inertia, task_frame=None) -> "HoidKernelModel":
        """Compile ``limbs`` (:class:`~pkm_dynamics.core.simple_limb.SimpleLimbModel`) and the
        stiffnesses ``K_stiffness`` (na,) (``inf``: rigid) and motor inertias (na,);
        ``task_frame``: ``(C_ref, P_p)`` of the parallel robot (default: the identity and
        ``P_t^T``), the task manifold of its admissibility checks."""
        m = limbs
        tree = m.desc.tree
        L, D = m.real.shape
        act = np.stack([m.actuator_limb, m.actuator_local], axis=1).astype(np.int64)
        joints = m.index[act[:, 0], act[:, 1]]
        Kf = np.asarray(K_stiffness, dtype=float)
        c = np.where(np.isfinite(Kf), 1.0 / np.where(np.isfinite(Kf), Kf, 1.0), 0.0)
        C_ref, P_p = (np.eye(4), np.asarray(m.Pt, dtype=float).T) if task_frame is None else task_frame
        a = [None] * HK.MODEL_ENTRIES
        a[HK.N_REAL] = m.real.sum(axis=1).astype(np.int64)
        a[HK.SLOT_JOINT] = np.ascontiguousarray(m.index, dtype=np.int64)
        a[HK.SCREW_X], a[HK.INERTIA_M], a[HK.REFERENCE_B] = (np.ascontiguousarray(v) for v in (m.X, m.M, m.B))
        a[HK.CUT_SCREWS] = np.ascontiguousarray(np.swapaxes(m.cut_columns, 1, 2))
        a[HK.END_TO_PLATFORM_T] = np.ascontiguousarray(m.end_to_platform)
        a[HK.CUT_PROJECTOR] = np.ascontiguousarray(m.cut_projector)
        a[HK.PLATFORM_OFFSET] = np.ascontiguousarray(m.platform_offset, dtype=float)
        a[HK.TASK_ROWS] = np.argmax(m.Pt, axis=1).astype(np.int64)
        a[HK.ACTUATORS] = act
        a[HK.STROKES] = np.stack([tree.lower[joints], tree.upper[joints]], axis=1).astype(float)
        a[HK.SEA_PARAMS] = np.stack([c, np.asarray(motor_inertia, dtype=float)], axis=1)
        a[HK.C_REF] = np.array(C_ref, dtype=float)
        a[HK.P_P] = np.array(P_p, dtype=float)
        a[HK.JOINT_LIMITS] = np.stack([tree.lower, tree.upper], axis=1).astype(float)
        return cls(m, _frozen(*a), L, D, len(joints), tree.nq, (limbs, K_stiffness, motor_inertia, task_frame))

    def __reduce__(self):
        """Pickled as what it is built from (the per-thread scratch is not copied)."""
        return HoidKernelModel.build, self.source

    def data(self) -> tuple:
        """The scratch tuple of the calling thread (layout in :mod:`.hoid_kinematics`),
        allocated on its first call."""
        d = getattr(self._local, "data", None)
        if d is None:
            L, D = self.L, self.D
            shapes = {HK.POSE_P: (L, D, 4, 4), HK.POSE_C: (L, D, 4, 4), HK.POSE_CP: (L, D, 4, 4),
                      HK.JACOBIAN_J: (4, L, D, 6), HK.THETA: (5, L, D), HK.TWIST_V: (4, L, D, 6),
                      HK.DELTA_V: (3, L, D, 6), HK.BRACKETS: (3, L, D, 6), HK.F_INV_JT: (L, D, D),
                      HK.CUT_S: (L, 4, 4), HK.SLOT_Q: (L, D), HK.LU_A: (D, D), HK.RHS_R: (D, D),
                      HK.POSES_H: (4, 4, 4), HK.TWISTS_W: (16, 6), HK.VECTORS_W: (8, D), HK.Q_BAR: (3, L, D),
                      HK.J_IK: (3, D, D), HK.INFO: (1,), HK.GRAM: (2 * D, D)}
            d = self._local.data = tuple(np.zeros(shapes[k]) for k in range(HK.DATA_ENTRIES))
            self._local.status = np.zeros(3, dtype=np.int64)
        return d


#: each kernel, or its entry point once compiled (see :func:`.chain_model._entry_point`)
_ENTRY = {}


def _writable(a) -> np.ndarray:
    """``a`` as a C-contiguous writeable float array (the one array type the kernels are
    compiled for: another would compile them again)."""
    a = np.ascontiguousarray(a, dtype=float)
    return a if a.flags.writeable else a.copy()


def _run(kernel, *args) -> int:
    code = _ENTRY.get(kernel, kernel)(*args)
    if kernel not in _ENTRY:
        _ENTRY[kernel] = _entry_point(kernel)
    return code


def hoid_full_call(model: HoidKernelModel, X, Vt, q_guess, gravity, tol: float = 1e-12,
                   max_iter: int = 50, threshold: float | None = None) -> tuple:
    """Loop closure + recursion + SEA feedforward of a batch in one kernel call; with a
    ``threshold`` (of ``kappa(F)`` and ``kappa(J_IK)``, < 0: none) also the admissibility
    checks of a parallel robot's call (:func:`.hoid_robot_kernels.hoid_robot_call`).

    ``X`` (B, 4, 4) platform poses, ``Vt`` (B, 4, D) task twists and their derivatives,
    ``q_guess`` (nq,) the start of row 0's limb Newton (each further row starts from the
    previous row's solution), ``gravity`` (3,).  Returns ``(status, Q, U, motor)``:
    ``status`` (3,) = (code of :mod:`.hoid_kinematics`, row, limb or actuator) and fresh
    arrays ``Q`` (B, 5, nq) tree-joint derivatives, ``U`` (B, 3, na) ``u, du, ddu``,
    ``motor`` (B, 4, na) SEA motor position, velocity, acceleration and torque."""
    X, Vt, g = _writable(X), _writable(Vt), _writable(gravity)
    B = X.shape[0]
    if X.shape != (B, 4, 4) or Vt.shape != (B, 4, model.D) or g.shape != (3,):
        raise ValueError(f"hoid_full_call: shapes {X.shape}, {Vt.shape}, {g.shape}")
    status, Q, U, motor = _full_call(model, X, Vt, np.array(q_guess, dtype=float), g, float(tol), int(max_iter),
                                     None if threshold is None else float(threshold))
    return status.copy(), Q, U, motor


def _full_call(model: HoidKernelModel, X, Vt, q0, g, tol: float = 1e-12, max_iter: int = 50,
               threshold: float | None = None) -> tuple:
    """:func:`.hoid_kernels.hoid_call` (with a float ``threshold``:
    :func:`.hoid_robot_kernels.hoid_robot_call`) on arrays of its one layout (C-contiguous
    float64 ``X`` (B, 4, 4), ``Vt`` (B, 4, D), ``q0`` (nq,), ``g`` (3,); read only), into fresh
    ``Q, U, motor``; returns ``(status, Q, U, motor)`` with ``status`` the calling thread's
    scratch (overwritten by its next call)."""
    B = X.shape[0]
    Q = np.empty((B, 5, model.nq))
    U = np.empty((B, 3, model.na))
    motor = np.empty((B, 4, model.na))
    dat = model.data()
    status = model._local.status
    if threshold is None:
        _run(K.hoid_call, model.arrays, dat, X, Vt, q0, g, tol, max_iter, Q, U, motor, status)
    else:
        _run(KR.hoid_robot_call, model.arrays, dat, X, Vt, q0, g, tol, max_iter, threshold, Q, U, motor, status)
    return status, Q, U, motor


def hoid_one(model: HoidKernelModel, x, Vt, q0, g, threshold: float | None = None) -> tuple:
    """:func:`hoid_full_call` of one sample whose arrays need no conversion: ``x`` (4, 4),
    ``Vt`` (4, D), ``q0`` (nq,), ``g`` (3,), each C-contiguous float64, ``threshold`` a float
    or None (not checked: the caller's).  Returns ``(code, Q (5, nq), U (3, na), motor (4,
    na))``, fresh arrays; the row and culprit of a refusal stay in the thread's status scratch."""
    status, Q, U, motor = _full_call(model, x[None], Vt[None], q0, g, 1e-12, 50, threshold)
    return int(status[0]), Q[0], U[0], motor[0]


def hoid_recursion(model: HoidKernelModel, q, Vt, gravity) -> tuple:
    """Paper 002's recursion alone (the closed configuration ``q`` (nq,) given, ``Vt``
    (4, D)): ``(status, Q (5, nq), U (3, na))``, fresh arrays."""
    dat = model.data()
    status = model._local.status
    Q = np.zeros((5, model.nq))
    U = np.empty((3, model.na))
    _run(K.hoid_recursion_call, model.arrays, dat, _writable(q), _writable(Vt), _writable(gravity), Q, U, status)
    return status.copy(), Q, U
