"""Joint friction of a module chain in actuator space: the Python layer of
:mod:`.chain_friction_kernels` (``u_f = G^T tau_f`` and its partial derivatives), and the
robot's calls with friction: inverse dynamics ``u = u_0 + u_f(x, xd)``, forward dynamics with
``u - u_f(x, xd)`` (friction depends on the state only), and their derivatives."""
from __future__ import annotations

import numpy as np

from ..status import OK
from . import chain_friction_kernels as FK

def chain_friction_forces(model, table, x, xd):
    """``(u_f, du_f/dx, du_f/dxd)`` of actuator states ``x``, ``xd`` ((n,) or (B, n)): the
    actuator forces ``u_f`` that balance the joint friction torques of every tree joint (rows of
    ``table`` (nq, 5)) and the diagonals of their partial derivatives, each of the shape of
    ``x``.  None when an input is not a state of this chain (shape, a loop that does not close):
    the caller's frictionless call then names the error."""
    try:
        x = np.ascontiguousarray(x, float)
        xd = np.ascontiguousarray(xd, float)
    except (TypeError, ValueError):
        return None
    n = model.n
    if x.shape != xd.shape or x.shape[-1:] != (n,) or x.ndim not in (1, 2):
        return None
    if not (x.flags.writeable and xd.flags.writeable):   # the one array type the kernel is compiled for
        x, xd = x.copy(), xd.copy()
    d = model.data()
    if x.ndim == 1:
        out = np.empty((3, n))
        if FK.chain_friction(model.geo, table, d.S, x, xd, out, d.status) != OK:
            return None
        return out[0], out[1], out[2]
    out = np.empty((x.shape[0], 3, n))
    for r in range(x.shape[0]):
        if FK.chain_friction(model.geo, table, d.S, x[r], xd[r], out[r], d.status) != OK:
            return None
    return out[:, 0], out[:, 1], out[:, 2]


def friction_one(model, table, inverse: bool, x, xd, third):
    """The dynamics with friction of one state in one kernel call
    (:func:`.chain_friction_kernels.chain_dynamics_friction_one`): ``xdd`` of the forces ``third``
    or (``inverse``) the forces of the accelerations ``third``, each (n,), as
    :func:`forward_dynamics_with_friction` / :func:`inverse_dynamics_with_friction` compute them.
    None where it does not apply (not one state of float arrays (n,)) or the kernel stops (a
    bad state): the caller then takes those routes, which name the error.  Once the calling
    thread knows the kernel's entry point, its arguments come from one lookup
    (:func:`friction_call`)."""
    try:
        x, xd = np.ascontiguousarray(x, float), np.ascontiguousarray(xd, float)
        third = np.ascontiguousarray(third, float)
    except (TypeError, ValueError):
        return None
    call = model.thread_scratch("friction_call", lambda: friction_call(model))
    if call is None:                            # the first call of this thread: through the dispatcher
        if not x.shape == xd.shape == third.shape == model.shape1:
            return None
        d = model.data()
        work = model.thread_scratch("friction_work", lambda: np.zeros((FK.FRICTION_WORK_ROWS, model.n)))
        out = np.empty(model.n)
        if d.entries.run(FK.chain_dynamics_friction_one, inverse, model.flat, d.flat, table, x, xd, third,
                         d.no_wrench, out, work, d.status) != OK:
            return None
        return out
    run, mflat, dflat, fe, work, status, n, shape1 = call
    if not shape1 == x.shape == xd.shape == third.shape:
        return None
    out = np.empty(n)
    if run(inverse, mflat, dflat, table, x, xd, third, fe, out, work, status) != OK:
        return None
    return out


def friction_call(model):
    """The calling thread's ``(entry, model_flat, data_flat, no_wrench, work, status, n, shape1)``
    of :func:`.chain_friction_kernels.chain_dynamics_friction_one` once this thread has called it
    (None before: :func:`friction_one` then calls it through its dispatcher); kept in the thread's
    scratch (:meth:`.chain_model.ChainModel.thread_scratch`)."""
    d = model.data()
    run = d.entries.known(FK.chain_dynamics_friction_one)
    if run is None:
        return None
    work = model.thread_scratch("friction_work", lambda: np.zeros((FK.FRICTION_WORK_ROWS, model.n)))
    return run, model.flat, d.flat, d.no_wrench, work, d.status, model.n, model.shape1


def _matches(a, x) -> bool:
    """``a`` has the shape of the state ``x`` (else the frictionless call names the error)."""
    return np.shape(a) == np.shape(x)


def forward_dynamics_with_friction(fd, model, table, x, xd, u, wrench):
    """``fd(x, xd, u - u_f(x, xd), wrench)``: the forward dynamics ``fd`` under the actuator
    forces ``u`` with the joints' friction (module docstring)."""
    uf = chain_friction_forces(model, table, x, xd)
    if uf is not None and _matches(u, x):
        u = np.asarray(u, dtype=float) - uf[0]
    return fd(x, xd, u, wrench)


def inverse_dynamics_with_friction(inverse, model, table, x, xd, xdd, wrench):
    """``inverse(x, xd, xdd, wrench) + u_f(x, xd)``: the inverse dynamics ``inverse`` with the
    joints' friction."""
    u = inverse(x, xd, xdd, wrench)
    uf = chain_friction_forces(model, table, x, xd)
    return u + uf[0]            # inverse returned: the state is one of this chain


def derivatives_with_friction(derivatives, inverse: bool, model, table, x, xd, third, wrench):
    """:class:`~..derivatives.derivatives.DynamicsDerivatives` of the dynamics with friction
    from those of ``derivatives`` (the frictionless call): inverse dynamics ``u_0 + u_f`` with
    ``d_x += du_f/dx``, ``d_xd += du_f/dxd``; forward dynamics at ``u - u_f`` with
    ``d_x -= M^-1 du_f/dx``, ``d_xd -= M^-1 du_f/dxd`` (``M^-1 = d_u``; the partials of
    ``u_f`` are diagonal, :mod:`.chain_friction_kernels`)."""
    from dataclasses import replace
    uf = chain_friction_forces(model, table, x, xd)
    if uf is None or not _matches(third, x):
        return derivatives(x, xd, third, wrench)
    u_f, dx, dxd = uf
    if inverse:
        d = derivatives(x, xd, third, wrench)
        eye = np.eye(model.n)
        return replace(d, value=d.value + u_f, d_x=d.d_x + dx[..., None, :] * eye,
                       d_xd=d.d_xd + dxd[..., None, :] * eye)
    d = derivatives(x, xd, np.asarray(third, dtype=float) - u_f, wrench)
    return replace(d, d_x=d.d_x - d.d_u * dx[..., None, :], d_xd=d.d_xd - d.d_u * dxd[..., None, :])
