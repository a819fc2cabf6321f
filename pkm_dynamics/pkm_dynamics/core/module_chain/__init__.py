"""Module chains of paper 000 (Paz & Mattila): the linearly actuated 4-bar module
(:mod:`.parallel_module`), the chain and its recognition (:mod:`.module_chain`), Algorithm 1 and
the chain's inverse dynamics in numpy (:mod:`.module_chain_dynamics`, the reference route) and
compiled (layouts in :mod:`.chain_layout`; :mod:`.chain_closure`, :mod:`.chain_recursions`,
:mod:`.chain_kernels`, :mod:`.chain_kinematics`, :mod:`.chain_ik_kernels`; model, data and
Python layer in :mod:`.chain_model`), the chain IK (:mod:`.chain_ik`) and the robot object
(:mod:`.module_chain_robot`)."""


def __getattr__(name):
    """The names of the flat module this package replaces (deprecated: :mod:`..deprecated_paths`)."""
    from ..deprecated_paths import moved_name
    return moved_name(__name__, name)
