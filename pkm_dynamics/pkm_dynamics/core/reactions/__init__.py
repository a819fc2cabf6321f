"""Joint reactions: the wrench every tree and cut joint transmits, for both robot kinds
(:mod:`.reactions`), and the O(n) route of a module chain (paper 000 eqs. 11-16, 55-65:
kernels :mod:`.chain_reactions`; model, data and Python layer :mod:`.chain_reactions_model`)."""


def __getattr__(name):
    """The names of the flat module this package replaces (deprecated: :mod:`..deprecated_paths`)."""
    from ..deprecated_paths import moved_name
    return moved_name(__name__, name)
