"""Compiled integrators of a module chain (paper 000): the whole horizon in one kernel call, every
evaluation of the dynamics a direct call of the compiled Algorithm 1
(:func:`..module_chain.chain_kernels.state_dynamics`) on the views of the chain's flat model and
the calling thread's scratch (:class:`..module_chain.chain_model.ChainModel` / ``ChainData``),
taken once per call (:func:`chain_views`), and on (1, n) rows of the state arrays.

The same arithmetic, in the same order, as the Python route (:mod:`.reference`: :func:`.reference.rk4`
and :func:`.reference.semi_implicit` over ``robot.forward_dynamics``), so both agree to round-off.

Efforts (:func:`efforts_at`): ``F`` (1, n) a constant, or (N, n) a schedule on the output grid,
linear between its samples (RK4's midpoint stages take the mean of the two neighbours); or the
compiled controller ``control(t, x, xd) -> (n,)`` (a numba ``@njit`` function; ``control`` None:
the schedule; numba prunes the other branch).

Statuses (:mod:`..status`): those of the FD kernel (culprit in ``status``), or
:data:`~..status.BAD_EFFORTS` (the efforts of an evaluation are not ``n`` finite values).  On any status the
kernel stops with the failing evaluation's time in ``clock[0]`` and its state and efforts in the
rows 0-2 of ``work``, for the Python layer to word the named error.
"""
from __future__ import annotations

import math

from numba import types

from ..module_chain.chain_friction_kernels import forward_dynamics_friction
from ..module_chain.chain_kernels import forward_flag, state_dynamics
from ..module_chain.chain_layout import model_arrays, scratch_arrays
from ..numba_support.cache import kernel, typed_kernel
from ..status import BAD_EFFORTS, OK

#: rows of the work buffer ``work`` (WORK_ROWS, n): the failing evaluation's state and efforts
#: (XS, XDS, FS; FS also the efforts of RK4's inner stages), the accelerations of the four
#: stages, the rates of stages 2 and 3, the state of the stage being evaluated; with joint
#: friction the efforts less the friction forces (F_NET)
XS, XDS, FS, A1, A2, A3, A4, V2, V3, STAGE_X, STAGE_XD, F_NET = range(12)
WORK_ROWS = 12


@kernel
def efforts_at(F, control, i, w, t, x, xd, f):
    """The efforts ``f`` (n,) of the evaluation at time ``t`` of step ``i``, at the fraction ``w``
    (0, 0.5, 1) of the step: the constant ``F[0]``, the schedule ``F[i] + w (F[i+1] - F[i])``
    (0.5: the mean, 1: ``F[i+1]``), or ``control(t, x, xd)``.  Returns OK or :data:`BAD_EFFORTS`."""
    n = f.shape[0]
    if control is None:
        if F.shape[0] == 1:
            for j in range(n):
                f[j] = F[0, j]
        elif w == 0.0:
            for j in range(n):
                f[j] = F[i, j]
        elif w == 1.0:
            for j in range(n):
                f[j] = F[i + 1, j]
        else:
            for j in range(n):
                f[j] = 0.5 * (F[i, j] + F[i + 1, j])
    else:
        r = control(t, x, xd)
        if r.shape[0] != n:
            return BAD_EFFORTS
        for j in range(n):
            f[j] = r[j]
    for j in range(n):
        if not math.isfinite(f[j]):
            return BAD_EFFORTS
    return OK


@kernel
def chain_views(model, data, n):
    """The chain's model and scratch views ``(geo, mats, nud0, A, V, S, W, w)``
    (:func:`..module_chain.chain_layout.model_arrays`, :func:`~..module_chain.chain_layout.scratch_arrays`)
    of its flat buffers: taken once for the whole horizon, not at every evaluation."""
    geo, mats, nud0 = model_arrays(model, n)
    A, V, S, W, w = scratch_arrays(data, n)
    return geo, mats, nud0, A, V, S, W, w


@kernel
def evaluate(chain, fe, F, control, friction, i, w, t, x, xd, f, xdd, work, status, clock):
    """One evaluation of the dynamics: efforts (:func:`efforts_at`) into ``f``, then ``xdd`` by
    Algorithm 1 (:func:`..module_chain.chain_kernels.state_dynamics` on the views ``chain`` of
    :func:`chain_views`); ``x``, ``xd``, ``f``, ``xdd`` (1, n) rows; under ``f - u_f(x, xd)`` when
    the chain has joint friction (``friction`` (nq, 5) rows, :func:`..module_chain.
    chain_friction_kernels.forward_dynamics_friction`: the loops closed once; (0, 5): none, the
    efforts go to Algorithm 1 untouched).  On a status, the stage (``t``, ``x``, ``xd``, ``f``) is
    left in ``clock[0]`` and ``work`` rows XS, XDS, FS.  Returns the status."""
    n = x.shape[1]
    code = efforts_at(F, control, i, w, t, x[0], xd[0], f[0])
    geo, mats, nud0, A, V, S, W, ws = chain
    if code == OK and friction.shape[0] > 0:
        code = forward_dynamics_friction(geo, mats, nud0, A, V, S, W, ws, friction, x, xd, f, fe,
                                         work[F_NET:F_NET + 1], xdd, status)
    elif code == OK:
        code = state_dynamics(forward_flag(x), geo, mats, nud0, A, V, S, W, ws, x[0], xd[0], f[0], fe, xdd[0], status)
    if code != OK:
        clock[0] = t
        for j in range(n):
            work[XS, j], work[XDS, j], work[FS, j] = x[0, j], xd[0, j], f[0, j]
    return code


@kernel
def stage_state(x, xd, h, v, a, xs, xds):
    """``(xs, xds) = (x, xd) + h (v, a)``: the state of the next RK4 stage."""
    for j in range(x.shape[0]):
        xs[j] = x[j] + h * v[j]
        xds[j] = xd[j] + h * a[j]


@kernel
def copy_row(src, dst):
    """``dst = src`` (n,) as a loop (numba's slice assignment checks shapes and broadcasting at
    every call)."""
    for j in range(src.shape[0]):
        dst[j] = src[j]


@kernel
def rk4_step(chain, fe, F, control, friction, i, T, X, XD, FO, work, status, clock):
    """Step ``i`` of classical Runge-Kutta, ``(X[i], XD[i])`` -> ``(X[i+1], XD[i+1])``, efforts at
    the step's start into ``FO[i]``: :func:`.reference.rk4`, term by term."""
    h, ti = T[i + 1] - T[i], T[i]
    x, xd = X[i], XD[i]
    xs, xds, f = work[STAGE_X:STAGE_X + 1], work[STAGE_XD:STAGE_XD + 1], work[FS:FS + 1]
    code = evaluate(chain, fe, F, control, friction, i, 0.0, ti, X[i:i + 1], XD[i:i + 1], FO[i:i + 1],
                    work[A1:A1 + 1], work, status, clock)
    if code != OK:
        return code
    hh = 0.5 * h
    stage_state(x, xd, hh, xd, work[A1], xs[0], xds[0])
    code = evaluate(chain, fe, F, control, friction, i, 0.5, ti + 0.5 * h, xs, xds, f, work[A2:A2 + 1], work,
                    status, clock)
    if code != OK:
        return code
    copy_row(xds[0], work[V2])
    stage_state(x, xd, hh, work[V2], work[A2], xs[0], xds[0])
    code = evaluate(chain, fe, F, control, friction, i, 0.5, ti + 0.5 * h, xs, xds, f, work[A3:A3 + 1], work,
                    status, clock)
    if code != OK:
        return code
    copy_row(xds[0], work[V3])
    stage_state(x, xd, h, work[V3], work[A3], xs[0], xds[0])
    code = evaluate(chain, fe, F, control, friction, i, 1.0, ti + h, xs, xds, f, work[A4:A4 + 1], work, status,
                    clock)
    if code != OK:
        return code
    g = h / 6.0
    v2, v3, v4 = work[V2], work[V3], xds[0]
    a1, a2, a3, a4 = work[A1], work[A2], work[A3], work[A4]
    for j in range(x.shape[0]):
        X[i + 1, j] = x[j] + g * (xd[j] + 2.0 * v2[j] + 2.0 * v3[j] + v4[j])
        XD[i + 1, j] = xd[j] + g * (a1[j] + 2.0 * a2[j] + 2.0 * a3[j] + a4[j])
    return OK


@kernel
def semi_implicit_step(chain, fe, F, control, friction, i, T, X, XD, FO, work, status, clock):
    """Step ``i`` of the semi-implicit (symplectic) Euler method: ``xd' = xd + h xdd(x, xd, f)``,
    then ``x' = x + h xd'`` (:func:`.reference.semi_implicit`)."""
    h = T[i + 1] - T[i]
    code = evaluate(chain, fe, F, control, friction, i, 0.0, T[i], X[i:i + 1], XD[i:i + 1], FO[i:i + 1],
                    work[A1:A1 + 1], work, status, clock)
    if code != OK:
        return code
    a = work[A1]
    for j in range(X.shape[1]):
        XD[i + 1, j] = XD[i, j] + h * a[j]
        X[i + 1, j] = X[i, j] + h * XD[i + 1, j]
    return OK


@kernel
def integrate(semi_implicit, model, data, fe, F, control, friction, T, X, XD, FO, work, status, clock):
    """The whole horizon: ``X``, ``XD`` (N, n) with the initial state in row 0 filled along the
    grid ``T`` (N,) by RK4 (:func:`rk4_step`) or, ``semi_implicit``, :func:`semi_implicit_step`;
    ``FO`` (N, n) the efforts at each sample.  The last state is evaluated too (its efforts and
    checks, as the Python route).  ``model``, ``data``: the chain's flat model and scratch; ``fe``
    (1, 6) the end-effector wrench; ``friction`` (nq, 5) the joint friction rows (read-only; (0, 5):
    none, :func:`evaluate`); ``work`` (:data:`WORK_ROWS`, n) scratch; ``status`` (3,) the
    FD kernel's culprit; ``clock`` (1,) the time of a failing evaluation.  Returns the status."""
    N = T.shape[0]
    chain = chain_views(model, data, X.shape[1])
    for i in range(N - 1):
        if semi_implicit:
            code = semi_implicit_step(chain, fe, F, control, friction, i, T, X, XD, FO, work, status, clock)
        else:
            code = rk4_step(chain, fe, F, control, friction, i, T, X, XD, FO, work, status, clock)
        if code != OK:
            return code
    return evaluate(chain, fe, F, control, friction, N - 1, 0.0, T[N - 1], X[N - 1:], XD[N - 1:], FO[N - 1:],
                    work[A1:A1 + 1], work, status, clock)


#: the types of a compiled controller ``(t, x, xd) -> f``: float, (n,), (n,) -> (n,) float arrays
STATE = types.Array(types.float64, 1, "C")
CONTROLLER = types.FunctionType(STATE(types.float64, STATE, STATE))


@kernel
def zero_controller(t, x, xd):
    """A compiled controller of signature :data:`CONTROLLER`: zero efforts (the warm-up's)."""
    return 0.0 * x


_MODEL = types.Array(types.float64, 1, "C", readonly=True)
_ROWS = types.Array(types.float64, 2, "C")
_FRICTION = types.Array(types.float64, 2, "C", readonly=True)


@typed_kernel((types.boolean, _MODEL, STATE, _ROWS, CONTROLLER, _FRICTION, STATE, _ROWS, _ROWS, _ROWS, _ROWS,
               types.Array(types.int64, 1, "C"), STATE))
def integrate_controlled(semi_implicit, model, data, fe, control, friction, T, X, XD, FO, work, status, clock):
    """:func:`integrate` driven by the compiled controller ``control`` (any numba function of the
    signature :data:`CONTROLLER`, taken as a first-class function: this entry and the steps are
    compiled once, for every controller)."""
    return integrate(semi_implicit, model, data, fe, fe, control, friction, T, X, XD, FO, work, status, clock)

