"""pkm_dynamics.core: ROS-free dynamics of closed-loop robots (numpy, scipy, urdf_parser_py).

Never imports ROS.  The public API: doc/core_api.rst.

Layout (one concept per folder; each folder's ``__init__`` says what its modules hold):
``errors``, ``bounds`` (input bounds and state checks), ``interface`` (the one robot interface
of every kind: ``Robot``, ``SolverOptions``, ``IKSolution``), ``robot`` (``load_robot``),
``forward_state`` (forward kinematics with rates), ``simulation`` (``robot.simulate``),
``robot_warmup`` / ``precompile`` (kernels compiled and loaded once);
``spatial/`` (SE(3) algebra: numpy, kernel forms, small linear algebra, Taylor jets),
``description/`` (the URDF extension, validation, payload, generated examples),
``tree/`` (tree model, RNEA/CRBA/ABA in numpy and compiled, cut joints of paper 001 App. A,
the KKT form), ``module_chain/`` (paper 000), ``limb/`` (paper 001 Secs. 2-4), ``pkm/``
(paper 001 Sec. 5), ``hoid/`` (paper 002), ``reactions/`` and ``derivatives/`` (both robot
kinds), ``numba_support/`` (the kernel cache and the kernel-only warm-up).  The independent
check sharing no code is test/pinocchio_loops.py.
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
from .deprecated_paths import install as _install_deprecated_paths

_install_deprecated_paths()     # the import paths of the flat core, with a DeprecationWarning

__all__ = [
    "ConvergenceError", "DescriptionError", "PkmDynamicsError", "SingularityError", "StateError",
    "TreeModel", "build_tree", "load_tree", "read_description", "spatial", "tree_dynamics",
    "ActuatorSpec", "CutJoint", "PlatformSpec", "RobotDescription", "parse_description",
    "load_robot", "robot_from_description", "IKSolution", "Robot", "SolverOptions",
]
