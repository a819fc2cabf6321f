"""Compiled joint friction of a module chain in actuator space (paper 000's modules; the
constraint embedding of paper 001 eq. 37, ``Q = H^T Q_tree``).

Every tree joint ``j`` of a module chain moves with the one actuator ``k`` of its module:
``q_j = phi_j(x_k)`` (eqs. 2, 4-5: the link angle q and cylinder angle q1 of a parallel module,
the piston x itself; a serial module's joint is its actuator), so ``G = dq/dx`` is diagonal by
modules with entries ``g_j = phi_j'(x_k)`` and ``qd_j = g_j xd_k``.  The joint friction torques
``tau_f,j(qd_j)`` (:mod:`..friction.friction_kernels`) act on the actuators as

    u_f,k = sum_j g_j tau_f,j(g_j xd_k)                       (u_f = G^T tau_f)

whose power ``xd^T u_f = qd^T tau_f`` is the power the joints' friction dissipates.  Its
partial derivatives are diagonal too: ``du_f,k/dxd_k = sum_j g_j^2 tau_f,j'`` and
``du_f,k/dx_k = sum_j g_j' (tau_f,j + g_j xd_k tau_f,j')``, with ``g_j' = phi_j''``, the
``xd^2`` term of eq. 28 at unit rate (``S[K4]``, ``S[K5]``).
"""
from __future__ import annotations

from ..friction.friction_kernels import friction_law
from ..numba_support.cache import scratch_kernel
from ..status import OK
from .chain_closure import closure
from .chain_layout import (GEO_L, GEO_L1, GEO_LC, GEO_LC0, JOINT_Q, JOINT_Q1, JOINT_X, K1, K2, K4, K5, KIND,
                           PARALLEL, SIGN_Q, SIGN_Q1, SX)


@scratch_kernel
def add_joint(c, g, dg, xd, out, k):
    """Add one tree joint (friction row ``c`` (5,), gain ``g = dq_j/dx_k``, its derivative
    ``dg``) to row ``k`` of ``out`` (3, n): ``u_f``, ``du_f/dx``, ``du_f/dxd``."""
    tau, dtau, _ = friction_law(c, g * xd)
    out[0, k] += g * tau
    out[1, k] += dg * (tau + g * xd * dtau)
    out[2, k] += g * g * dtau


@scratch_kernel
def chain_friction(geo, table, S, x, xd, out, status):
    """``out`` (3, n) = ``u_f``, ``du_f/dx``, ``du_f/dxd`` (the diagonals) of one actuator state
    ``x``, ``xd`` (n,) (module docstring); ``table`` (nq, 5) the friction rows of the tree joints,
    ``S`` (n, 30) the closure scratch (:mod:`.chain_layout`).  Returns OK or the closure's code
    with ``status = (code, 0, module)``."""
    n = x.shape[0]
    for k in range(n):
        out[0, k], out[1, k], out[2, k] = 0.0, 0.0, 0.0
    for k in range(n):
        g = geo[k]
        if g[KIND] == PARALLEL:
            sx = g[SX]
            code = closure(g[GEO_L], g[GEO_L1], g[GEO_LC], g[GEO_LC0], sx * x[k], sx, S[k])   # unit rate
            if code != OK:
                status[0], status[1], status[2] = code, 0, k
                return code
            s = S[k]
            add_joint(table[int(g[JOINT_Q])], g[SIGN_Q] * s[K1] * sx, g[SIGN_Q] * s[K4], xd[k], out, k)
            add_joint(table[int(g[JOINT_Q1])], g[SIGN_Q1] * s[K2] * sx, g[SIGN_Q1] * s[K5], xd[k], out, k)
            add_joint(table[int(g[JOINT_X])], 1.0, 0.0, xd[k], out, k)
        else:
            add_joint(table[int(g[JOINT_Q])], 1.0, 0.0, xd[k], out, k)
    return OK
