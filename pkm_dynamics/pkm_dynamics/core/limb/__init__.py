"""Hybrid limbs (paper 001 Secs. 2-4): the index of the modules the limb concept is made of.

==============================================  ===========================================
:mod:`.limb_types`                               :class:`Limb`, :class:`LoopGroup`, :class:`LimbScrews`
:mod:`.limb_model`                               :func:`build_limbs` (the model data from a description)
:mod:`.limb_tree`                                the tree of one limb (Fig. 2c)
:mod:`.limb_kinematics`                          ``C, Y, (g, G)`` at ``theta`` (:func:`limb_state`),
                                                 ``psi_p`` (eq. 4), ``Jdot`` (paper 002 eq. 23)
:mod:`.loop_constraints`                         eqs. 12-20: ``g, G, Gdot``, ``H``, ``Hdot``,
                                                 Algorithm 2 (eq. 33)
:mod:`.limb_ik`                                  eqs. 21-31, Algorithms 1 + 2 and 3, eqs. 27-29
:mod:`.ik_refinement`                            round-off polish, exact rates, ``kappa(G_y)``
:mod:`..pkm.working_mode`                        working modes and joint limits of a solution
==============================================  ===========================================

The compiled route: :mod:`.limb_kernels`, :mod:`.limb_ik_kernels`, :mod:`.limb_dynamics_kernels`,
:mod:`.limb_inertia_kernels` (kernels); their model, data and Python layer: :mod:`..pkm.limb_tables`.

The names below are importable from here as well.
"""
from .limb_ik import (LimbIKInfo, LimbJacobians, compound_newton_step, limb_acceleration_ik,  # noqa: F401
                      limb_inverse_kinematics_compound, limb_inverse_kinematics_nested, limb_jacobians,
                      limb_velocity_ik, pose_error)
from .limb_kinematics import (body_jacobian_derivative, limb_platform_pose, limb_state,  # noqa: F401
                              tree_coriolis_matrix)
from .limb_model import TWIST_COMPONENTS, Limb, LoopGroup, build_limbs  # noqa: F401
from .loop_constraints import (constraint_resolution, constraint_resolution_derivative,  # noqa: F401
                               cut_joint_jacobian_derivative, loop_acceleration_bias, loop_constraints,
                               loop_residual, solve_loop_constraints)
