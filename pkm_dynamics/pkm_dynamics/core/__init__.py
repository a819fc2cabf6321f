"""pkm_dynamics.core: ROS-free dynamics of closed-loop robots (numpy, scipy, urdf_parser_py).

Never imports ROS.  See the package README for the public API.

Module map (one concept per module): ``spatial`` (SE(3) conventions), ``errors``,
``validation`` (the size and number bounds of a description), ``tree`` (spanning tree from
URDF), ``tree_dynamics`` (RNEA/CRBA/ABA), ``description`` (the loop/actuator
extension of the robot description), ``cut_joints`` (paper 001 App. A), ``constrained`` (KKT
constrained dynamics of tree + cut joints: a second route sharing the cut-joint rows and tree
dynamics; the check sharing no code is test/pinocchio_loops.py), ``parallel_module`` and
``module_chain`` (paper 000), ``limb`` and ``pkm`` (paper 001: constraint embedding, limb IK,
task-space dynamics), ``simple_limb`` (paper 002's simple
limbs and their IK), ``hoid_recursion`` (paper 002 recursion), ``higher_order`` (the public
higher-order call), ``taylor`` and ``jet_dynamics``
(the general Taylor route for u, u-dot, u-ddot), ``sea`` (series-elastic feedforward),
``examples`` (generated module chains), ``robot`` (``load_robot``), ``interface`` (the one
robot interface of every kind: ``Robot``, ``SolverOptions``, ``IKSolution``), ``forward_state``
(forward kinematics with rates, tree joints and M_t), ``payload`` (a run-time load at the end
effector / platform), ``reactions`` (the wrench every tree and cut joint transmits),
``simulation`` (``robot.simulate``: RK4 / adaptive integration of the forward dynamics),
``compiled`` (numba kernels of the module chains, the limbs and paper 002's recursion: flat
model, per-thread data, one kernel per call).
"""
from .errors import (ConvergenceError, DescriptionError, PkmDynamicsError, SingularityError,
                     StateError)
from .tree.tree_model import TreeModel, build_tree, load_tree, read_description
from .description.robot_description import (ActuatorSpec, CutJoint, PlatformSpec, RobotDescription,
                          parse_description)
from .interface import IKSolution, Robot, SolverOptions
from .robot import load_robot, robot_from_description
from . import spatial
from .tree import tree_dynamics

__all__ = [
    "ConvergenceError", "DescriptionError", "PkmDynamicsError", "SingularityError", "StateError",
    "TreeModel", "build_tree", "load_tree", "read_description", "spatial", "tree_dynamics",
    "ActuatorSpec", "CutJoint", "PlatformSpec", "RobotDescription", "parse_description",
    "load_robot", "robot_from_description", "IKSolution", "Robot", "SolverOptions",
]
