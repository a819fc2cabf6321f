"""Model, data and Python layer of the compiled joint reactions of a module chain
(:mod:`.chain_reactions`, paper 000 eqs. 11-16, 55-65).

:class:`ReactionsModel`: the spanning tree and the 4-bars' cut joints as flat read-only arrays
(layouts in :mod:`.chain_reactions`), built once when the robot is built; the scratch of a call
is per thread (``threading.local``), never shared.  :func:`chain_joint_reactions` is the thin
layer: the forward dynamics and tree state (compiled, :mod:`.chain_model`), one kernel call for
the whole batch, the status turned into the named exception.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from ..errors import PkmDynamicsError, SingularityError, StateError
from ..spatial import Ad_inv
from . import chain_reactions as KR
from .chain_closure import NONFINITE_RESULT, OK, SINGULAR_DET
from .chain_model import chain_forward_dynamics, chain_tree_state

#: largest relative residual of a 4-bar's pin equations (as ``reactions.CONSISTENCY_TOLERANCE``)
CONSISTENCY_TOLERANCE = 1e-8


@dataclass(frozen=True, eq=False)
class ReactionsModel:
    """Flat model of the joint reactions of a module chain (see :mod:`.chain_reactions`):
    ``parent``, ``B``, ``X``, ``M``, ``a0``, ``ee``, ``ee_map``, ``loops``, ``cuts``; plus the
    names (``joints``, ``cut_names``, ``module_of_cut``), ``actuated`` (tree indices of the
    actuators, chain order) and ``m`` (number of multipliers)."""

    chain_model: object
    parent: np.ndarray
    B: np.ndarray
    X: np.ndarray
    M: np.ndarray
    a0: np.ndarray
    ee: int
    ee_map: np.ndarray
    loops: np.ndarray
    cuts: np.ndarray
    joints: tuple
    cut_names: tuple
    module_of_cut: tuple
    actuated: np.ndarray
    m: int
    _local: threading.local = field(default_factory=threading.local, repr=False)

    @classmethod
    def build(cls, desc, chain_model, end_effector: str) -> "ReactionsModel":
        """From the description ``desc`` and the :class:`.chain_model.ChainModel` of its chain
        (module roles: every cut joint closes the 4-bar of one parallel module)."""
        tree, chain = desc.tree, chain_model.chain
        by_loop = {i.loop: i for i in chain.info if i.kind == "parallel"}
        loops = np.zeros((len(desc.cut_joints), 11), dtype=np.int64)
        cuts = np.zeros((len(desc.cut_joints), 21))
        offset = 0
        for c, cut in enumerate(desc.cut_joints):
            info = by_loop[cut.name]
            k, Ok = tree.frame(cut.parent_link)
            r, Or = tree.frame(cut.child_link)
            if k < 0 or r < 0:
                raise PkmDynamicsError(f"loop '{cut.name}': a cut joint on the fixed base is not a 4-bar module")
            sk, sr = set(tree.support(k)), set(tree.support(r))
            sides = [(j in sk) - (j in sr) for j in info.tree_idx]
            if 0 in sides:
                raise PkmDynamicsError(f"loop '{cut.name}': joint(s) of module '{info.name}' off its loop")
            m = 5                                        # a revolute cut joint (the only module kind)
            loops[c] = (k, r, *info.tree_idx, *sides, info.tree_idx[0], offset, m)
            Tk, Tr = Ok @ cut.parent_origin, Or @ cut.child_origin
            cuts[c] = np.concatenate([Tr[:3, 3], Tr[:3, :3].ravel(), Tk[:3, :3].ravel()])
            offset += m
        ee, off = tree.frame(end_effector)
        arrays = dict(parent=np.ascontiguousarray(tree.parent, dtype=np.int64),
                      B=np.ascontiguousarray(tree.B, dtype=float), X=np.ascontiguousarray(tree.X, dtype=float),
                      M=np.ascontiguousarray(tree.M, dtype=float),
                      a0=np.concatenate([np.zeros(3), -np.asarray(tree.gravity, dtype=float)]),
                      ee_map=np.ascontiguousarray(Ad_inv(off).T), loops=loops, cuts=cuts)
        for a in arrays.values():
            a.setflags(write=False)
        actuated = np.array([tree.joint_index(i.joint) for i in chain.info], dtype=np.int64)
        return cls(chain_model, ee=int(ee), joints=tuple(tree.joint_names),
                   cut_names=tuple(c.name for c in desc.cut_joints),
                   module_of_cut=tuple(by_loop[c.name].name for c in desc.cut_joints),
                   actuated=actuated, m=offset, **arrays)

    def scratch(self) -> tuple:
        """``(P, C, AdP, V, A, T, h, status)`` of the calling thread (allocated on its first
        call)."""
        s = getattr(self._local, "scratch", None)
        if s is None:
            nq = len(self.parent)
            s = self._local.scratch = (np.zeros((nq, 4, 4)), np.zeros((nq, 4, 4)), np.zeros((nq, 6, 6)),
                                       np.zeros((nq, 6)), np.zeros((nq, 6)), np.zeros((4, 4)),
                                       np.zeros((3, 16)), np.zeros(3, dtype=np.int64))
        return s


def chain_joint_reactions(model: ReactionsModel, x, xd, f, wrench=None):
    """Joint reactions (:class:`..reactions.JointReactions`) of a module chain at ``(x, xd)``
    under the actuator forces ``f`` ((n,) or (B, n) each; ``wrench`` (6,) or (B, 6) on the end
    effector, in its frame): paper 000's route of :mod:`.chain_reactions`, compiled, O(n).
    Raises what the forward dynamics raises, and :class:`SingularityError` naming the module
    and loop whose pin force is undetermined."""
    from ..reactions import JointReactions
    acc = chain_forward_dynamics(model.chain_model, x, xd, f, wrench)
    single = acc.ndim == 1
    Q, QD, QDD = (np.ascontiguousarray(a).reshape(-1, len(model.parent))
                  for a in chain_tree_state(model.chain_model, x, xd, acc))
    rows = Q.shape[0]
    TAU = np.zeros_like(Q)
    TAU[:, model.actuated] = np.asarray(f, dtype=float).reshape(rows, -1)
    FE = np.zeros((1, 6)) if wrench is None else np.ascontiguousarray(wrench, dtype=float).reshape(-1, 6)
    W = np.zeros((rows, len(model.parent), 6))
    WC = np.zeros((rows, len(model.cuts), 6))
    LAM = np.zeros((rows, model.m))
    *scratch, status = model.scratch()
    code = KR.chain_reactions(model.parent, model.B, model.X, model.M, model.a0, model.ee, model.ee_map,
                              model.loops, model.cuts, CONSISTENCY_TOLERANCE, Q, QD, QDD, TAU, FE,
                              W, WC, LAM, *scratch, status)
    if code != OK:
        row, c = int(status[1]), int(status[2])
        where = f"module '{model.module_of_cut[c]}' (loop '{model.cut_names[c]}')" if c >= 0 else ""
        if code == SINGULAR_DET:
            raise SingularityError(f"{where}: the pin force of the 4-bar is undetermined (row {row}): its "
                                   "loop is singular at this state")
        if code == KR.INCONSISTENT:
            raise SingularityError(f"{where}: the loop constraint forces cannot balance the motion (residual "
                                   f"{scratch[6][2, 6]:.3g} N or N m): the loop is singular at this state")
        if code == NONFINITE_RESULT:
            raise StateError(f"the joint reactions are not finite (row {row}): the state is too large")
        raise PkmDynamicsError(f"compiled reactions kernel failed with status {code} at row {row}")
    if single:
        return JointReactions(model.joints, W[0], model.cut_names, WC[0], LAM[0], acc)
    return JointReactions(model.joints, W, model.cut_names, WC, LAM, acc)
