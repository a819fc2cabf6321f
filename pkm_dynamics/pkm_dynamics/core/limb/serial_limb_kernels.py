"""Compiled rates and inverse dynamics of a serial limb whose rate map is ``K`` itself (paper 001
eqs. 27-29, 37): a limb without loops, with 6 joints, 6 constrained directions and 6 task
coordinates (``P_p`` square: a 6-DOF platform, e.g. a UPS leg of the Gough-Stewart platform).
There ``H = I`` and ``J_p K = P_p`` (eq. 28, ``J_p`` square), so ``thd = K V_t`` solves the
platform's rows exactly and the least-squares refinement of :func:`.limb_dynamics_kernels.limb_rates_rnea`
(the stacked ``[G; J_p]``, its QR) has nothing to refine beyond round-off; the accelerations
come from the same ``K`` and one pass of spatial velocity products.
"""
from __future__ import annotations

import math

from ..numba_support.cache import kernel
from .limb_dynamics_kernels import _frame_acceleration, add_joint_accelerations, limb_rates_rnea, rnea_spatial, \
    spatial_motion
from .limb_inertia_kernels import bodies_to_last_mass
from .limb_layout import (LD_C, LD_K, LD_Y, LM_BASE_ACCELERATION, LM_INERTIA, LM_PARENT, LM_PLATFORM_OFFSET, LM_SIZES,
                          LM_SUPPORT, LX_A, LX_AP, LX_AS, LX_QD, LX_TAU, LX_V, LX_VS, LX_ZEROS, SIZE_DL, SIZE_NL,
                          SIZE_PLATFORM_BODY)
from ..status import OK, SINGULAR


@kernel
def rate_map_is_K(sizes, n, dp):
    """Whether a limb (``sizes`` its ``lm[LM_SIZES]``, ``n`` joints, ``dp`` task coordinates)
    has no loops, 6 joints, 6 constrained directions and 6 task coordinates (module docstring)."""
    return sizes[SIZE_NL] == 0 and sizes[SIZE_DL] == 6 and n == 6 and dp == 6


@kernel
def serial_limb_rates_rnea(parent, sup, M, a0, offset, pb, C, Y, Kl, P_p, Vt, At, with_acc, zero, thd, thdd, V, A, Vs,
                           As, tau, ap, tmp, Wl):
    """A limb whose rate map is ``K`` (:func:`rate_map_is_K`) at the IK solution whose frames
    ``C`` (n, 4, 4), screws ``Y`` (n, 6) and ``K`` (n, dp) are given: ``thd = K V_t`` (eq. 27)
    and, with ``with_acc``, ``thdd = K (Vdot_t - P_p^T A0_p)`` (eq. 29, ``P_p`` square and
    orthogonal), ``A0_p`` the platform frame's acceleration at ``thdd = 0`` without gravity (one
    pass of spatial velocity products, :func:`.limb_dynamics_kernels.spatial_motion`); then the
    gravity ``a0`` and ``thdd`` added to that pass
    (:func:`.limb_dynamics_kernels.add_joint_accelerations`) and the RNEA over the bodies up to
    the last one with mass (the joints past it get ``tau = 0``: their subtrees carry no
    wrench), and the limb's share ``Wl = K^T tau`` (dp,) of eq. 45.  ``Vt``, ``At`` (dp,);
    ``sup`` (n, n) the support table, ``M`` (n, 6, 6) the inertias, ``offset`` (4, 4) the
    platform frame on body ``pb``; ``zero`` (>= 6,) zeros; ``V``, ``A``, ``Vs``, ``As`` (n, 6),
    ``tau`` (n,), ``ap``, ``tmp`` (6,) scratch.  Returns False if ``Wl`` is not finite (the
    reference route takes over)."""
    n, dp = Kl.shape[0], Kl.shape[1]
    for i in range(n):                           # thd = K V_t
        s = 0.0
        for c in range(dp):
            s += Kl[i, c] * Vt[c]
        thd[i] = s
    if not with_acc:
        return True
    for i in range(n):
        thdd[i] = 0.0
    spatial_motion(parent, Y, thd, thdd, zero, Vs, As)
    _frame_acceleration(C, pb, offset, As, ap, tmp)
    for c in range(dp):                          # tmp = Vdot_t - P_p^T A0_p
        s = 0.0
        for a in range(6):
            s += P_p[a, c] * ap[a]
        tmp[c] = At[c] - s
    for i in range(n):                           # thdd = K tmp
        s = 0.0
        for c in range(dp):
            s += Kl[i, c] * tmp[c]
        thdd[i] = s
    used = bodies_to_last_mass(M, n)
    add_joint_accelerations(parent, C, Y, thdd, a0, used, V, A, Vs, As)
    rnea_spatial(sup, M, C, Y[:used], V, A, Vs, tau)
    for i in range(used, n):
        tau[i] = 0.0
    finite = True
    for c in range(dp):                          # Wl = K^T tau
        s = 0.0
        for i in range(n):
            s += Kl[i, c] * tau[i]
        Wl[c] = s
        finite = finite and abs(s) < math.inf
    return finite


@kernel
def limb_reference_rates(lm, ld, lx, P_p, Vt, At, Vp, Ap, with_acc, thd, thdd, Wl):
    """A limb's rates ``thd``, ``thdd`` (n,) and share ``Wl`` (dp,) of eq. 45 at the IK solution
    in ``ld`` (``lm``, ``ld``, ``lx`` and the arguments as
    :func:`.limb_dynamics_kernels.limb_rates_rnea`, ``P_p`` (6, dp)): by
    :func:`serial_limb_rates_rnea` where the limb's rate map is ``K`` (:func:`rate_map_is_K`),
    else by :func:`.limb_dynamics_kernels.limb_rates_rnea`.  Returns a status."""
    sizes = lm[LM_SIZES]
    if not rate_map_is_K(sizes, len(thd), len(Vt)):
        return limb_rates_rnea(lm, ld, lx, Vt, At, Vp, Ap, with_acc, thd, thdd, Wl)
    ok = serial_limb_rates_rnea(lm[LM_PARENT], lm[LM_SUPPORT], lm[LM_INERTIA], lm[LM_BASE_ACCELERATION],
                                lm[LM_PLATFORM_OFFSET], sizes[SIZE_PLATFORM_BODY], ld[LD_C], ld[LD_Y], ld[LD_K], P_p,
                                Vt, At, with_acc, lx[LX_ZEROS], thd, thdd, lx[LX_V], lx[LX_A], lx[LX_VS], lx[LX_AS],
                                lx[LX_TAU], lx[LX_AP], lx[LX_QD], Wl)
    return OK if ok else SINGULAR
