"""The model data of a limb (paper 001 Secs. 2-3), read-only once built: :class:`Limb` (one limb),
:class:`LoopGroup` (one fundamental cycle) and :class:`LimbScrews` (the constant data of the
closed-form exponentials of its joint screws).  Built by :func:`.limb_model.build_limbs`; the
algorithms of :mod:`.limb_kinematics`, :mod:`.loop_constraints` and :mod:`.limb_ik` read them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..tree.tree_model import TreeModel


@dataclass(frozen=True)
class LimbScrews:
    """Constant per-joint data for the closed-form exponentials ``exp(X theta)`` of unit screws
    ``X = (w, v)``, ``|w| = 1`` (revolute) or ``(0, e)`` (prismatic)
    (:func:`.spatial.exp_unit_screws_batch`)."""

    parent: tuple
    B: np.ndarray
    X: np.ndarray
    W: np.ndarray
    W2: np.ndarray
    Wv: np.ndarray
    W2v: np.ndarray
    revolute: np.ndarray
    supports: tuple
    support_mask: np.ndarray = None   # (n, n) row i: 1.0 at the joints supporting body i


@dataclass(frozen=True)
class LoopGroup:
    """One fundamental cycle of a limb (or several FCs that share joints), paper 001 Sec. 3.3.

    ``joints`` (n,): limb-tree joint indices of ``theta_lambda``; ``dependent`` (r,) and
    ``independent`` (n - r,): the partition ``theta_lambda = (y, q)`` (eq. 16); ``rows`` (r,):
    the independent constraint rows used in ``G_y`` (Remark 4); ``size``: all rows ``m``."""

    cuts: tuple                 # CutJointGeometry of the cut joints, in the limb tree
    joints: np.ndarray
    dependent: np.ndarray
    independent: np.ndarray
    rows: np.ndarray
    size: int

    @property
    def names(self) -> tuple:
        return tuple(c.name for c in self.cuts)

    @property
    def dof(self) -> int:
        """``delta_lambda``: DOF of the cycle (joints minus independent constraints)."""
        return len(self.independent)


@dataclass(frozen=True)
class Limb:
    """Model data of one limb (paper 001 Sec. 3).

    ``tree``: the limb tree (platform massless); ``whole_index`` (n_l,): index of each
    limb-tree joint in the robot's spanning tree (-1: a joint made from a cut joint between
    this limb and the platform); ``independent`` (delta_l,): limb-tree indices of the limb's
    generalized coordinates ``q_(l)`` (eq. 15); ``loops``: its FCs; ``platform_body`` and
    ``platform_offset`` (4x4): the platform frame F_p on the limb tree; ``task_rows``
    (delta_p(l),): rows of the platform twist forming ``L_t`` (the selection ``P_t``, eq. 32);
    ``D_t`` (delta_p(l), delta_p): velocity distribution matrix (eqs. 25-26)."""

    name: str
    tree: TreeModel
    whole_index: np.ndarray
    independent: np.ndarray
    loops: tuple
    platform_body: int
    platform_offset: np.ndarray
    task_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    D_t: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    kin: "LimbScrews | None" = field(default=None, repr=False, compare=False)

    @property
    def n(self) -> int:
        return self.tree.nq

    @property
    def dof(self) -> int:
        """``delta_l``: DOF of the separated limb."""
        return len(self.independent)

    @property
    def P_t(self) -> np.ndarray:
        """Selection matrix ``P_t`` (delta_p(l), 6) of eq. 31-32."""
        P = np.zeros((len(self.task_rows), 6))
        P[np.arange(len(self.task_rows)), self.task_rows] = 1.0
        return P

    @property
    def joint_names(self) -> tuple:
        return self.tree.joint_names
