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
from ..numba_support.views import c_view
from ..status import OK
from .chain_closure import closure
from .chain_kernels import chain_dynamics, check_inputs, finite_row
from .chain_recursions import fd_recursions, first_forward_pass
from .chain_layout import (GEO_L, GEO_L1, GEO_LC, GEO_LC0, JOINT_Q, JOINT_Q1, JOINT_X, K1, K2, K4, K5, KIND,
                           PARALLEL, SIGN_Q, SIGN_Q1, SX, model_arrays, scratch_arrays)


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


@scratch_kernel
def friction_forces(geo, table, S, xd, out):
    """``out`` (n,) = ``u_f`` alone (row 0 of :func:`chain_friction`, the same arithmetic bit for bit)
    from the closure the dynamics' first forward pass left in ``S``
    (:func:`.chain_recursions.first_forward_pass`): the gains ``g_j`` are ``k1``, ``k2`` (eq. 5),
    functions of ``x`` alone, so the loops close once per evaluation, not twice."""
    for k in range(geo.shape[0]):
        g, v = geo[k], xd[k]
        u = 0.0
        if g[KIND] == PARALLEL:
            sx, s = g[SX], S[k]
            gq, gq1 = g[SIGN_Q] * s[K1] * sx, g[SIGN_Q1] * s[K2] * sx
            u += gq * friction_law(table[int(g[JOINT_Q])], gq * v)[0]
            u += gq1 * friction_law(table[int(g[JOINT_Q1])], gq1 * v)[0]
            u += 1.0 * friction_law(table[int(g[JOINT_X])], 1.0 * v)[0]
        else:
            u += 1.0 * friction_law(table[int(g[JOINT_Q])], 1.0 * v)[0]
        out[k] = u


@scratch_kernel
def forward_dynamics_friction(geo, mats, nud0, A, V, S, W, w, table, x, xd, f, fe, net, out, status):
    """Forward dynamics of one state with the joints' friction, the loops closed once: the checks of
    :func:`.chain_kernels.check_inputs`, the first forward pass, ``net = f - u_f``
    (:func:`friction_forces` from its closure), then the recursions of Algorithm 1 under ``net``
    (:func:`.chain_recursions.fd_recursions`) into ``out``; ``x``, ``xd``, ``f``, ``net``, ``out``
    (1, n) rows, ``fe`` (1, 6), the model and scratch views of :func:`.chain_kernels.chain_dynamics`.
    The arithmetic of :func:`chain_friction` then :func:`.chain_kernels.chain_dynamics`, bit for bit.
    Returns the code with ``status = (code, 0, module)``."""
    status[0], status[1], status[2] = OK, -1, -1
    code = check_inputs(False, geo, x, xd, f, fe, status)
    if code != OK:
        return code
    code, k = first_forward_pass(geo, mats, A, V, S, W, w, x[0], xd[0], False)
    if code == OK:
        u_net = net[0]
        friction_forces(geo, table, S, xd[0], u_net)
        for j in range(x.shape[1]):
            u_net[j] = f[0, j] - u_net[j]
        code, k = fd_recursions(geo, mats, nud0, A, V, S, W, w, u_net, fe[0], out[0])
    if code == OK:
        code, k = finite_row(out[0])
    if code != OK:
        status[0], status[1], status[2] = code, 0, k
    return code


#: rows of the work buffer of :func:`chain_dynamics_friction_one` (FRICTION_WORK_ROWS, n): ``u_f``
#: and its two partials (:func:`chain_friction`, inverse dynamics), then the third input of Algorithm 1
UF_ROWS, NET = 3, 3
FRICTION_WORK_ROWS = 4


@scratch_kernel
def chain_dynamics_friction_one(inverse, model, data, table, x, xd, t, fe, out, work, status):
    """One state of the dynamics with the joints' friction in one call (the short path of the
    robot's ``forward_dynamics`` / ``inverse_dynamics``), arguments as
    :func:`.chain_kernels.chain_dynamics_one`: forward (``t`` the forces), Algorithm 1 under
    ``t - u_f`` with the loops closed once (:func:`forward_dynamics_friction`, ``work[NET]`` the net
    forces); ``inverse`` (``t`` the accelerations), ``u_f(x, xd)`` (:func:`chain_friction`) into
    ``work[:3]`` and ``out = f_0 + u_f`` (:func:`.chain_kernels.chain_dynamics`);
    the arithmetic of :mod:`.chain_friction`'s Python layer, so both agree bit for bit.  ``table``
    (nq, 5) the friction rows, ``work`` (:data:`FRICTION_WORK_ROWS`, n).  Returns the status of
    the first call that fails (the Python layer then words the named error)."""
    n = x.shape[0]
    geo, mats, nud0 = model_arrays(model, n)
    A, V, S, W, w = scratch_arrays(data, n)
    if not inverse:
        return forward_dynamics_friction(geo, mats, nud0, A, V, S, W, w, table, c_view(x, 0, (1, n)),
                                         c_view(xd, 0, (1, n)), c_view(t, 0, (1, n)), fe, work[NET:NET + 1],
                                         c_view(out, 0, (1, n)), status)
    code = chain_friction(geo, table, S, x, xd, work[:UF_ROWS], status)
    if code != OK:
        return code
    for k in range(n):                           # the accelerations as a (1, n) row of one array type
        work[NET, k] = t[k]
    code = chain_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, c_view(x, 0, (1, n)), c_view(xd, 0, (1, n)),
                          work[NET:NET + 1], fe, c_view(out, 0, (1, n)), status)
    if code == OK:
        for k in range(n):
            out[k] = out[k] + work[0, k]
    return code
