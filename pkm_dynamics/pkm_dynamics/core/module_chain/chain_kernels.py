"""Compiled drivers of the module-chain dynamics of paper 000 (Paz & Mattila): one public call
over a batch of states (:func:`chain_dynamics`) or one state (:func:`chain_dynamics_one`), its
input checks (:func:`check_inputs`) and one row (:func:`row_dynamics`: the recursions of
Algorithm 1 in :mod:`.chain_recursions`), on the flat model arrays of
:class:`.chain_model.ChainModel` and the scratch of :class:`.chain_model.ChainData`.

Layouts of ``geo``, ``mats``, ``nud0`` (the model) and ``A``, ``V``, ``S``, ``W``, ``w`` (the
scratch), each index a named constant: :mod:`.chain_layout`.

Each driver returns a status code (:mod:`..status`; the closure of a parallel module:
:mod:`.chain_closure`) and writes the culprit into ``status``: (code, row, index).
"""
from __future__ import annotations

import math

from ..numba_support.cache import scratch_kernel
from .chain_closure import (BOUND_ACCELERATION, BOUND_EFFORT, BOUND_POSITION, BOUND_VELOCITY,  # noqa: F401
                            check_strokes)
from .chain_layout import model_arrays, scratch_arrays
from ..numba_support.views import c_view
from .chain_recursions import fd_recursions, first_forward_pass, id_recursions
from ..status import BAD_INPUT, NONFINITE_RESULT, OK


@scratch_kernel
def check_inputs(inverse, geo, X, XD, T, FE, status):
    """The four inputs (``status`` index 0-3: x, xd, third = xdd (``inverse``) or f, f_ext) over
    the whole batch finite and within their bounds (:mod:`..bounds`), then the strokes of every
    row (index: module), in the order of the reference route (``_as_state`` then
    ``_check_actuators``).  Returns the code."""
    B, n = X.shape
    third = BOUND_ACCELERATION if inverse else BOUND_EFFORT
    for r in range(B):
        for k in range(n):
            for which in range(3):
                v = X[r, k] if which == 0 else (XD[r, k] if which == 1 else T[r, k])
                bound = BOUND_POSITION if which == 0 else (BOUND_VELOCITY if which == 1 else third)
                if not abs(v) <= bound:                   # NaN fails too
                    status[0], status[1], status[2] = BAD_INPUT, r, which
                    return BAD_INPUT
    for r in range(FE.shape[0]):
        for j in range(6):
            if not abs(FE[r, j]) <= BOUND_EFFORT:
                status[0], status[1], status[2] = BAD_INPUT, r, 3
                return BAD_INPUT
    return check_strokes(geo, X, status)


@scratch_kernel
def wrench_row(FE, r):
    """The row of ``FE`` holding the end-effector wrench of state ``r``: ``FE`` (B, 6) has one
    per state, (1, 6) one for all."""
    return r if FE.shape[0] > 1 else 0


@scratch_kernel
def row_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, x, xd, t, fe, out, maps=True):
    """One state of a batched call: :func:`first_forward_pass`, then :func:`id_recursions`
    (``inverse``: ``t`` = xdd, ``out`` = f) or :func:`fd_recursions` (``t`` = f, ``out`` = xdd),
    each (n,).  ``maps``: leave the parallel modules' twist maps in ``A`` (the derivatives read
    them; :func:`chain_dynamics` does not ask).  Returns (code, module)."""
    code, k = first_forward_pass(geo, mats, A, V, S, W, w, x, xd, maps)
    if code != OK:
        return code, k
    if inverse:
        return id_recursions(geo, mats, nud0, A, V, S, W, w, t, fe, out)
    return fd_recursions(geo, mats, nud0, A, V, S, W, w, t, fe, out)


@scratch_kernel
def finite_row(y):
    """(OK, -1) when every entry of the result ``y`` (n,) is finite, else (NONFINITE_RESULT, its index)."""
    for j in range(y.shape[0]):
        if not math.isfinite(y[j]):
            return NONFINITE_RESULT, j
    return OK, -1


@scratch_kernel
def chain_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, X, XD, T, FE, out, status):
    """One public call over a batch (B rows): forward dynamics (``inverse`` False: ``T`` are the
    forces, ``out`` the accelerations) or inverse dynamics (``T`` the accelerations, ``out`` the
    forces), each (B, n), with the end-effector wrenches ``FE`` (B, 6), or (1, 6) for all rows.  Checks first
    (:func:`check_inputs`); a failing row stops the call with ``status = (code, row, module)``;
    a non-finite result is NONFINITE_RESULT.  Returns the code."""
    status[0], status[1], status[2] = OK, -1, -1
    code = check_inputs(inverse, geo, X, XD, T, FE, status)
    if code != OK:
        return code
    for r in range(X.shape[0]):
        fe = FE[wrench_row(FE, r)]
        code, k = row_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, X[r], XD[r], T[r], fe, out[r], False)
        if code == OK:
            code, k = finite_row(out[r])
        if code != OK:
            status[0], status[1], status[2] = code, r, k
            return code
    return OK


@scratch_kernel
def forward_flag(X):
    """``inverse`` = False for a call of :func:`chain_dynamics` from compiled code, as a run-time
    bool (``X`` any array): the constant ``False`` would be typed ``Literal[bool](False)`` and
    compile a second signature of :func:`chain_dynamics` beside the public call's, which then
    loses its entry point (:mod:`..numba_support.entry_points`) in the process that compiled both."""
    return X.shape[0] < 0


@scratch_kernel
def state_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, x, xd, t, fe, out, status):
    """:func:`chain_dynamics` of one state, ``x``, ``xd``, ``t``, ``out`` (n,), ``fe`` (1, 6): the same
    checks, recursions and statuses (row 0) without the batch's loops (the one-state call and every
    evaluation of the compiled integrator, :mod:`..simulation.simulation_kernels`).  Returns the code."""
    n = x.shape[0]
    status[0], status[1], status[2] = OK, -1, -1
    code = check_inputs(inverse, geo, c_view(x, 0, (1, n)), c_view(xd, 0, (1, n)), c_view(t, 0, (1, n)), fe,
                        status)
    if code != OK:
        return code
    code, k = row_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, x, xd, t, fe[0], out, False)
    if code == OK:
        code, k = finite_row(out)
    if code != OK:
        status[0], status[1], status[2] = code, 0, k
    return code


@scratch_kernel
def chain_dynamics_one(inverse, model, data, x, xd, t, fe, out, status):
    """:func:`chain_dynamics` for one state (:func:`state_dynamics`): ``x``, ``xd``, ``t``, ``out``
    (n,), ``fe`` (1, 6), the model and the scratch as their flat buffers (:func:`model_arrays`,
    :func:`scratch_arrays`): spares the public call six array arguments."""
    n = x.shape[0]
    geo, mats, nud0 = model_arrays(model, n)
    A, V, S, W, w = scratch_arrays(data, n)
    return state_dynamics(inverse, geo, mats, nud0, A, V, S, W, w, x, xd, t, fe, out, status)
