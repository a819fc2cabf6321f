"""Spatial algebra on SE(3): the numpy forms (:mod:`.se3`, with its rotation part :mod:`.so3`;
their names are importable from here as ``pkm_dynamics.core.spatial``), their scalar-loop
kernel forms (:mod:`.se3_kernels`), the small dense linear algebra of the kernels
(:mod:`.small_linalg`) and truncated Taylor polynomials of motions (:mod:`.taylor`)."""
from .se3 import *  # noqa: F401,F403
