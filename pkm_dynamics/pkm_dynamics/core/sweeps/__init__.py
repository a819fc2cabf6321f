"""Sweeps: batched kernels that run one question over many states in one call, for the maps of
:mod:`pkm_dynamics.analysis` (a crane's load chart: :mod:`.chain_static`; a parallel robot's workspace map:
:mod:`.pkm_workspace`)."""
