"""First derivatives of the forward and inverse dynamics for every robot kind: the result type
and the module-chain layer (:mod:`.derivatives`), the module-chain kernels
(:mod:`.chain_derivatives`, forward-mode tangents of paper 000's passes) and the task-space
dynamics of a parallel robot by first-order jets (:mod:`.pkm_derivatives`)."""


def __getattr__(name):
    """The names of the flat module this package replaces (deprecated: :mod:`..deprecated_paths`)."""
    from ..deprecated_paths import moved_name
    return moved_name(__name__, name)
