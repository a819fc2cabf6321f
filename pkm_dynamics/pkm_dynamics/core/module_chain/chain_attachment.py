"""The constant map ``AE = Ad_inv(C_E)`` of a module (paper 000 eqs. 6b, 9: twists of its last body
B1 / B4 seen from the attachment frame E of the next module, wrenches and inertias carried back
by its transpose, eqs. 19, 23-24, 50), compiled.  When the pose ``C_E`` of E is a rotation about
z and a translation, ``T(p) Rz(theta)`` (the flag :data:`.chain_layout.E_RZ`, set at build by
:func:`.chain_model.rotation_about_z`), the map applies as a rotation and a translation without
the 6x6 matrix: a twist in 15 products instead of 36, an inertia in two structured congruences
(:func:`..spatial.se3_kernels.congruence_rz`, :func:`~..spatial.se3_kernels.congruence_translation`)
instead of the general one (324 products); else as the matrix of slot :data:`.chain_layout.MAP_E`.
``g`` one module's row of ``geo``, ``Mk`` its slots of ``mats`` (5, 6, 6).
"""
from __future__ import annotations

from ..numba_support.cache import scratch_kernel
from ..spatial.se3_kernels import (ad_inv_pose_rz_T_add, ad_inv_pose_rz_vec, carry_from_next, congruence_rz,
                                   congruence_translation, matvec)
from .chain_layout import C_E, E_RZ, MAP_E


@scratch_kernel
def map_e(g, Mk, v, out):
    """``out = AE v`` (6,): a twist or acceleration of the module's last body seen from E (eq. 9b)."""
    if g[E_RZ] != 0.0:
        C = Mk[C_E]
        ad_inv_pose_rz_vec(C[0, 0], C[1, 0], C[0, 3], C[1, 3], C[2, 3], v, out)
    else:
        matvec(Mk[MAP_E], v, out)


@scratch_kernel
def carry_from_e(g, Mk, M_own, p_own, M_next, p_next, M_out, p_out, tmp, tip):
    """``M_out = M_own + AE^T M_next AE``, ``p_out = p_own + AE^T p_next`` (6, 6), (6,): the next
    module's articulated inertia and bias at E carried onto the module's last body (eqs. 23-24,
    50a-b; :func:`..spatial.se3_kernels.carry_from_next`); ``tmp`` (6, 6) scratch, not aliasing
    ``M_out``; ``tip``: the chain's last module (``M_E = 0``, eq. 20: ``M_out = M_own``)."""
    if g[E_RZ] == 0.0:
        carry_from_next(M_own, p_own, Mk[MAP_E], M_next, p_next, M_out, p_out, tmp, tip)
        return
    C = Mk[C_E]
    c, s, px, py, pz = C[0, 0], C[1, 0], C[0, 3], C[1, 3], C[2, 3]
    if tip:
        for i in range(6):
            for j in range(6):
                M_out[i, j] = M_own[i, j]
    else:
        congruence_rz(M_next, c, s, tmp)                    # Ad_inv(T(p) Rz) = Ad_inv(Rz) Ad_inv(T(p))
        congruence_translation(tmp, px, py, pz, M_out)
        for i in range(6):
            for j in range(6):
                M_out[i, j] += M_own[i, j]
    for j in range(6):
        p_out[j] = p_own[j]
    ad_inv_pose_rz_T_add(c, s, px, py, pz, p_next, p_out)

