"""Warm-up of the kernels that need no robot: the tree kernels on a given spanning tree, the
higher-order ID kernels of paper 002 and the valve-cylinder kernels of the hydraulics on minimal
models (imports kernels and their Python layers only).  Compiling everything, robots included:
:mod:`pkm_dynamics.core.precompile`."""
from __future__ import annotations

import numpy as np

from ..hoid.hoid_model import HoidKernelModel, hoid_full_call, hoid_recursion
from ..hydraulics.hydraulic_trajectory import pressure_step, pressure_trajectory
from ..hydraulics.valve_cylinder import HydraulicModel, cylinder_force, hydraulic_state
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


def warm_hydraulics() -> None:
    """The valve-cylinder kernels (:mod:`..hydraulics.valve_kernels`: the steady and the given
    pressures' map, the carried step and trajectory, the reverse map) on one cylinder (the
    kernels' types do not depend on the sizes: one compilation covers every robot)."""
    from ..description.hydraulic_description import CylinderSpec, HydraulicsSpec, ValveSpec
    spec = HydraulicsSpec(190e5, 10e5, 800e6, (CylinderSpec("x", 5e-3, 3e-3, 0.5, 0.0, 1e-3, 1e-3),),
                          (ValveSpec("x", 1e-6, 1.0),))
    m = HydraulicModel.build(spec, ("x",))
    x, z, f = np.full(1, 0.25), np.zeros(1), np.full(1, 1e3)
    h = hydraulic_state(m, x, z, f, z, check=False)
    hydraulic_state(m, x, z, f, z, check=False, pressure_a=h.pressure_a)
    pressure_step(m, h, 1e-3, x, z, f, z, restart=True)
    pressure_trajectory(m, np.arange(2.0), np.stack([x, x]), np.stack([z, z]), np.stack([f, f]), check=False)
    cylinder_force(m, h.pressure_a, h.pressure_b)
