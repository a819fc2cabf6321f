"""Model, data and Python layer of the compiled joint reactions of a module chain
(:mod:`.chain_reactions`, paper 000 eqs. 11-16, 55-65).

:class:`ReactionsModel`: the spanning tree and the 4-bars' cut joints as flat read-only arrays
(layouts in :mod:`.chain_reactions`), built once when the robot is built; the scratch of a call
is per thread (``threading.local``), never shared.  :func:`chain_joint_reactions` is the thin
layer: one kernel call for the whole batch (the forward dynamics on the scratch of
:class:`.chain_model.ChainData`, the tree state, the reactions), the status turned into the
named exception.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import PkmDynamicsError, SingularityError, StateError
from ..spatial.se3 import Ad_inv
from .reactions import CONSISTENCY_TOLERANCE, JointReactions
from . import chain_reactions as KR
from ..friction.friction_model import NO_FRICTION
from ..module_chain.chain_friction import chain_friction_forces
from ..module_chain.chain_model import _batch, _raise
from ..status import INCONSISTENT, NONFINITE_RESULT, OK, PIN_SINGULAR


@dataclass(frozen=True, eq=False)
class ReactionsModel:
    """Flat model of the joint reactions of a module chain (see :mod:`.chain_reactions`):
    ``parent``, ``B``, ``X``, ``M``, ``a0``, ``ee``, ``ee_map``, ``loops``, ``cuts``, ``friction``; plus the
    names (``joints``, ``cut_names``, ``module_of_cut``), ``actuated`` (tree indices of the
    actuators, chain order), ``m`` (number of multipliers) and ``source`` (the arguments of
    :meth:`build`)."""

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
    friction: np.ndarray | None = None       # the tree joints' friction rows (nq, 5), None: none
    source: tuple = field(default=(), repr=False)
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
                   actuated=actuated, m=offset, source=(desc, chain_model, end_effector),
                   friction=None if desc.friction is None else desc.friction.table, **arrays)

    def with_gravity(self, desc, chain_model) -> "ReactionsModel":
        """This model for ``desc`` and ``chain_model``, the same robot under another gravity
        (``desc.tree.gravity``): ``a0`` replaced, every other array shared, a scratch of its own
        (no kernel compiled)."""
        a0 = np.concatenate([np.zeros(3), -np.asarray(desc.tree.gravity, dtype=float)])
        a0.setflags(write=False)
        return replace(self, chain_model=chain_model, a0=a0, source=(desc, chain_model, self.source[2]),
                       _local=threading.local())

    def __reduce__(self):
        """Pickled as what it is built from (the per-thread scratch is not copied)."""
        return ReactionsModel.build, self.source

    def scratch(self) -> tuple:
        """``(P, C, AdP, V, A, T, h, Q)`` of the calling thread (allocated on its first call)."""
        s = getattr(self._local, "scratch", None)
        if s is None:
            nq = len(self.parent)
            s = self._local.scratch = (np.zeros((nq, 4, 4)), np.zeros((nq, 4, 4)), np.zeros((nq, 6, 6)),
                                       np.zeros((nq, 6)), np.zeros((nq, 6)), np.zeros((4, 4)),
                                       np.zeros((3, 16)), np.zeros((4, 1, nq)))
        return s


def chain_joint_reactions(model: ReactionsModel, x, xd, f, wrench=None):
    """Joint reactions (:class:`..reactions.JointReactions`) of a module chain at ``(x, xd)``
    under the actuator forces ``f`` ((n,) or (B, n) each; ``wrench`` (6,) or (B, 6) on the end
    effector, in its frame): paper 000's route of :mod:`.chain_reactions`, one compiled call,
    O(n).  Raises what the forward dynamics raises (the same messages), and
    :class:`SingularityError` naming the module and loop whose pin force is undetermined."""
    cm = model.chain_model
    head = cm.head()
    d = cm.data()
    X, XD, F, FE, single = _batch(cm, d, x, xd, f, wrench)
    FN, table = F, NO_FRICTION
    if model.friction is not None:
        uf = chain_friction_forces(cm, model.friction, X, XD)
        if uf is not None:
            FN, table = F - uf[0], model.friction
    rows, nq = X.shape[0], len(model.parent)
    ACC = np.empty_like(X)
    W, WC, LAM = np.zeros((rows, nq, 6)), np.zeros((rows, len(model.cuts), 6)), np.zeros((rows, model.m))
    scratch = model.scratch()
    kernel = KR.joint_reactions
    code = d.entries.run(kernel, *head, X, XD, F, FN, FE, ACC, model.parent, model.B, model.X, model.M, model.a0,
                         model.ee, model.ee_map, model.loops, model.cuts, model.actuated, table,
                         CONSISTENCY_TOLERANCE, W, WC, LAM, *scratch, d.status)
    if code != OK:
        _raise_reactions(model, code, d.status, scratch[6][2, 6], X, XD, F, FE)
    if single:
        return JointReactions(model.joints, W[0], model.cut_names, WC[0], LAM[0], ACC[0])
    return JointReactions(model.joints, W, model.cut_names, WC, LAM, ACC)


def _raise_reactions(model: ReactionsModel, code: int, status, residual: float, X, XD, F, FE) -> None:
    """The named exception of a failed :func:`.chain_reactions.joint_reactions` call: the forward
    dynamics' own (:func:`.chain_model._raise`, as ``robot.forward_dynamics`` raises it) or
    the 4-bar's whose pin force could not be found."""
    row, c = int(status[1]), int(status[2])
    if code == PIN_SINGULAR:
        raise SingularityError(f"module '{model.module_of_cut[c]}' (loop '{model.cut_names[c]}'): the pin force "
                               f"of the 4-bar is undetermined (row {row}): its loop is singular at this state")
    if code == INCONSISTENT:
        raise SingularityError(f"module '{model.module_of_cut[c]}' (loop '{model.cut_names[c]}'): the loop "
                               f"constraint forces cannot balance the motion (residual {residual:.3g} N or N m): "
                               "the loop is singular at this state")
    if code == NONFINITE_RESULT and c < 0:
        raise StateError(f"the joint reactions are not finite (row {row}): the state is too large")
    from ..module_chain.module_chain_dynamics import parallel_serial_forward_dynamics
    cm = model.chain_model
    w = FE[row if len(FE) > 1 else 0]
    _raise(cm, status, (X, XD, F), lambda a, b, c: parallel_serial_forward_dynamics(cm.chain, a, b, c, w), w,
           ("x", "xd", "f"))
