"""Compiled kernels of the core (numba, ``cache=True``), Pinocchio style: a model of flat
read-only arrays built once per robot, scratch data per robot and thread, one kernel per public
call.  The numpy functions of the core stay the reference route the tests compare against.

``cache`` (where the machine code is kept; imported first, it configures numba),
``spatial_kernels`` (scalar SE(3) helpers), ``chain_closure`` (status codes, the loop closure
of a parallel module), ``chain_kernels`` (paper 000 Algorithm 1 and the
chain inverse dynamics), ``chain_derivatives`` (their first derivatives, forward mode),
``chain_kinematics`` (tree state and forward kinematics of a chain),
``chain_model`` (model, data, the Python layer), ``chain_reactions`` and
``chain_reactions_model`` (the joint reactions of a chain, paper 000 eqs. 11-16, 55-65: kernels;
model and layer), ``tree_kernels`` (FK, kinematics, RNEA, CRBA,
ABA and the frame Jacobian of a spanning tree: building blocks for other kernels and batched
drivers), ``tree_model`` (its model, data and Python layer; ``TreeModel.compiled``); for the
limbs of parallel robots (paper 001) ``small_linalg`` (LU, inverse, condition numbers, least
squares: the small dense linear algebra of every kernel),
``limb_kernels`` (limb FK, cut-joint rows, H and the limb Jacobians, Newton steps),
``limb_ik_kernels`` (Algorithms 1 + 2 and 3 with the checks of the reference route),
``limb_dynamics_kernels`` (rates, accelerations, RNEA, M_t), ``robot_kernels`` (every limb in
one call, on packed arrays), ``limb_tables`` (model, data, the Python layer); for paper 002
``hoid_kinematics`` / ``hoid_kernels`` / ``hoid_model`` (limb IK, four-pass kinematics,
second-order ID, SEA; model, data and Python layer); ``warmup``
(compiles everything once: ``python -m pkm_dynamics.core.compiled.warmup``).
"""
from ..numba_support.cache import CACHE_DIR, CACHING
from ..module_chain.chain_model import (ChainData, ChainModel, chain_forward_dynamics, chain_forward_kinematics,
                          chain_inverse_dynamics, chain_tree_state)

__all__ = ["CACHE_DIR", "CACHING", "ChainData", "ChainModel", "chain_forward_dynamics",
           "chain_forward_kinematics", "chain_inverse_dynamics", "chain_tree_state"]
