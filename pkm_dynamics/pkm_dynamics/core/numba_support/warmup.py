"""Warm-up of the kernels that need no robot: the tree kernels on a given spanning tree and the
higher-order ID kernels of paper 002 on a minimal model (imports kernels and their Python layers
only).  Compiling everything, robots included: :mod:`pkm_dynamics.core.precompile`."""
from __future__ import annotations

import numpy as np

from ..hoid.hoid_model import HoidKernelModel, hoid_full_call, hoid_recursion
from ..tree import compiled_tree as T


def warm_tree(tree) -> None:
    """Every tree kernel once (:mod:`..tree.compiled_tree`: one signature each, a batch of two states)."""
    ct = tree.compiled
    q = np.zeros((2, tree.nq))
    T.forward_kinematics(ct, q)
    T.kinematics(ct, q, q, q)
    tau = T.rnea(ct, q, q, q)
    T.crba(ct, q)
    T.aba(ct, q, q, tau)
    T.frame_jacobian(ct, q, tree.body_names[-1])


def warm_hoid() -> None:
    """The paper-002 kernels (full call, the parallel robot's call and recursion alone) on the smallest PKM with simple
    limbs: one limb of one revolute joint carrying the platform, task space ``wz`` (the
    kernels' types do not depend on the sizes: one compilation covers every robot)."""
    from types import SimpleNamespace

    tree = SimpleNamespace(lower=np.array([-3.0]), upper=np.array([3.0]), nq=1)
    limbs = SimpleNamespace(desc=SimpleNamespace(tree=tree), real=np.ones((1, 1), dtype=bool),
                            index=np.zeros((1, 1), dtype=int), X=np.array([[[0.0, 0, 1, 0, 0, 0]]]),
                            M=np.eye(6)[None, None], B=np.eye(4)[None, None], cut_columns=np.zeros((1, 6, 1)),
                            end_to_platform=np.eye(4)[None], cut_projector=np.zeros((1, 6, 6)),
                            platform_offset=np.eye(4), Pt=np.eye(6)[[2]], actuator_limb=np.zeros(1, dtype=int),
                            actuator_local=np.zeros(1, dtype=int))
    model = HoidKernelModel.build(limbs, np.array([1.0]), np.array([1.0]))
    hoid_full_call(model, np.eye(4)[None], np.zeros((1, 4, 1)), np.zeros(1), np.zeros(3))
    hoid_full_call(model, np.eye(4)[None], np.zeros((1, 4, 1)), np.zeros(1), np.zeros(3), threshold=-1.0)
    hoid_recursion(model, np.zeros(1), np.zeros((4, 1)), np.zeros(3))
