"""The spanning tree: its model from URDF (:mod:`.tree_model`), recursive dynamics -- RNEA, CRBA,
ABA -- in numpy (:mod:`.tree_dynamics`, the reference route) and compiled (:mod:`.tree_kernels`,
with model, data and Python layer in :mod:`.compiled_tree`), the cut joints that close loops
(:mod:`.cut_joints`, paper 001 App. A) and the KKT form of the constrained dynamics
(:mod:`.constrained`)."""


def __getattr__(name):
    """The names of the flat module this package replaces (deprecated: :mod:`..deprecated_paths`)."""
    from ..deprecated_paths import moved_name
    return moved_name(__name__, name)
