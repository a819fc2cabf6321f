"""pkm_dynamics.core: ROS-free dynamics of closed-loop robots (numpy, scipy, urdf_parser_py).

Never imports ROS.  See the package README for the public API.
"""
from .errors import (ConvergenceError, DescriptionError, PkmDynamicsError, SingularityError,
                     StateError)
from .tree import TreeModel, build_tree, load_tree, read_description
from . import spatial, tree_dynamics

__all__ = [
    "ConvergenceError", "DescriptionError", "PkmDynamicsError", "SingularityError", "StateError",
    "TreeModel", "build_tree", "load_tree", "read_description", "spatial", "tree_dynamics",
]
