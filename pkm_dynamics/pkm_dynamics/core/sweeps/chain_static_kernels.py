"""Compiled static payload forces of a module chain over a batch of configurations: per row the
actuator forces ``u_0`` that hold the chain at rest under gravity and ``u_1``, those of 1 kg at
the tool, in one pass (:func:`static_payload_rows`).

At rest (``xd = xdd = 0``) the inverse dynamics of paper 000 (Algorithm 1 with the analytic
inverse dynamics, :func:`..module_chain.chain_recursions.id_recursions`) is linear in the base
acceleration ``nud_0 = (0, -g)`` (Algorithm 1 line 1) and in the end-effector wrench ``f_ext``
(eq. 20: ``p_E = -f_ext``)::

    u(x, 0, 0, f_ext) = u_0(x) + u_W(x, f_ext),   u_0 = ID(x, 0, 0)

so one first forward recursion serves both: ``u_0`` with ``nud_0`` and no wrench, then ``u_1``
with zero base acceleration and the wrench of 1 kg at the tool frame's origin,
``W_1 = (0, R^T g)`` (moment, force; ``R`` the tool's orientation).  The forward recursion of
the accelerations carries ``nud_0`` to the tool frame: at rest it is ``(0, -R^T g)``, so ``W_1``
is minus its linear part and needs no forward kinematics.  The joint friction of the robot's
calls (:mod:`..friction.friction_kernels`) is exactly zero at rest (``tanh(0) = 0``, ``b 0 = 0``),
so these are the robot's static forces with friction too.
"""
from __future__ import annotations

import math

from ..module_chain.chain_closure import check_strokes
from ..module_chain.chain_recursions import first_forward_pass, id_recursions
from ..numba_support.cache import scratch_kernel
from ..status import BAD_INPUT, NONFINITE_RESULT, OK


@scratch_kernel
def static_row(geo, mats, nud0, A, V, S, W, w, x, zero, no_acc, fe, u0, u1):
    """``u_0`` (n,) and ``u_1`` (n,) of one configuration ``x`` (n,) (module docstring);
    ``zero`` (n,) and ``no_acc`` (6,) zeros, ``fe`` (6,) scratch for ``W_1``.  Returns (code,
    module)."""
    code, k = first_forward_pass(geo, mats, A, V, S, W, w, x, zero, False)
    if code != OK:
        return code, k
    code, k = id_recursions(geo, mats, nud0, A, V, S, W, w, zero, no_acc, u0)
    if code != OK:
        return code, k
    for j in range(3):                      # W_1 = (0, R^T g) = -(linear part of nud at the tool)
        fe[j] = 0.0
        fe[3 + j] = -w[10, 3 + j]
    return id_recursions(geo, mats, no_acc, A, V, S, W, w, zero, fe, u1)


@scratch_kernel
def static_payload_rows(geo, mats, nud0, A, V, S, W, w, X, zero, no_acc, fe, U0, U1, codes, status):
    """:func:`static_row` for every row of ``X`` (B, n) into ``U0``, ``U1`` (B, n); ``codes``
    (B,) each row's status (OK; BAD_INPUT for a value that is not finite, the strokes' STROKE,
    the closure's codes, NONFINITE_RESULT), its ``U0``, ``U1`` rows NaN where not OK (the other
    rows go on).  ``status`` (3,): scratch of the stroke check.  Returns how many rows are OK."""
    B, n = X.shape
    good = 0
    for r in range(B):
        x = X[r]
        code = OK
        for k in range(n):
            if not math.isfinite(x[k]):
                code = BAD_INPUT
        if code == OK:
            code = check_strokes(geo, X[r:r + 1], status)
        if code == OK:
            code, _ = static_row(geo, mats, nud0, A, V, S, W, w, x, zero, no_acc, fe, U0[r], U1[r])
        if code == OK:
            for k in range(n):
                if not (math.isfinite(U0[r, k]) and math.isfinite(U1[r, k])):
                    code = NONFINITE_RESULT
        codes[r] = code
        if code == OK:
            good += 1
        else:
            for k in range(n):
                U0[r, k] = math.nan
                U1[r, k] = math.nan
    return good
