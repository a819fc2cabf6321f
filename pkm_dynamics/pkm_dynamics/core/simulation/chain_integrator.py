"""The Python layer of the compiled integrators of a module chain (:mod:`.simulation_kernels`):
the output and work arrays, one kernel call for the whole horizon on the chain's flat model and
the calling thread's scratch (``robot.compiled``, :class:`..module_chain.chain_model.ChainModel`),
and a status turned into the named error of the Python route (:mod:`.reference`)."""
from __future__ import annotations

import numpy as np

from ..errors import PkmDynamicsError, StateError
from ..friction.friction_model import NO_FRICTION
from .reference import check_efforts
from ..status import BAD_EFFORTS, OK
from .simulation_kernels import (CONTROLLER, FS, STATE, WORK_ROWS, XDS, XS, integrate,
                                 integrate_controlled)


def compiled_controller(controller, n: int):
    """The numba function ``controller`` compiled for ``(t, x, xd)`` = (float, (n,) float array,
    (n,) float array), returning a (n,) float array (:data:`.simulation_kernels.CONTROLLER`), else
    :class:`StateError` saying what it must be (numba's typing error quoted)."""
    from numba.core.errors import TypingError
    args = CONTROLLER.signature.args
    try:
        controller.compile(args)
    except TypingError as exc:
        raise StateError(f"controller {controller.py_func.__name__}: a numba function (t, x, xd) -> efforts of "
                         f"float t and (x, xd) float arrays ({n},) does not compile: {exc}") from exc
    got = controller.overloads[args].signature.return_type
    if got != STATE:
        raise StateError(f"controller {controller.py_func.__name__} returns {got}, expected a C-contiguous float "
                         f"array ({n},) of efforts ({STATE})")
    return controller


def chain_wrench(wrench) -> np.ndarray | None:
    """The constant end-effector wrench as the FD kernel's (1, 6) row (None: none)."""
    if wrench is None:
        return None
    fe = np.asarray(wrench, dtype=float)
    if fe.shape != (6,):
        raise StateError(f"wrench has shape {fe.shape}, expected (6,)")
    return np.ascontiguousarray(fe).reshape(1, 6)


def integrate_chain(robot, x0, xd0, t, F, control, wrench, semi_implicit: bool):
    """``X``, ``XD``, ``FO`` (N, n) of the module chain ``robot`` from ``(x0, xd0)`` along the grid
    ``t`` (N,) in one call of :func:`.simulation_kernels.integrate`: efforts the constant ``F``
    (1, n), the schedule ``F`` (N, n) or the compiled ``control`` (:func:`compiled_controller`;
    ``F`` then unused, :func:`.simulation_kernels.integrate_controlled`);
    ``wrench`` (6,) or None; RK4 or ``semi_implicit`` Euler; the chain's joint friction
    (``robot.friction``) in every evaluation (efforts less ``u_f(x, xd)``).  A status raises the error the Python
    route raises at that evaluation (:func:`raise_status`)."""
    model = robot.compiled
    data = model.data()
    fe = chain_wrench(wrench)
    N, n = len(t), model.n
    X, XD, FO = np.empty((N, n)), np.empty((N, n)), np.empty((N, n))
    X[0], XD[0] = x0, xd0
    work, clock = np.zeros((WORK_ROWS, n)), np.zeros(1)
    fe = data.no_wrench if fe is None else fe
    t = np.ascontiguousarray(t, dtype=float)
    friction = NO_FRICTION if getattr(robot, "friction", None) is None else robot.friction.table
    if control is None:
        code = integrate(bool(semi_implicit), model.flat, data.flat, fe, np.ascontiguousarray(F, dtype=float), None,
                         friction, t, X, XD, FO, work, data.status, clock)
    else:
        code = integrate_controlled(bool(semi_implicit), model.flat, data.flat, fe, compiled_controller(control, n),
                                    friction, t, X, XD, FO, work, data.status, clock)
    if code != OK:
        raise_status(robot, code, float(clock[0]), work[XS].copy(), work[XDS].copy(), work[FS].copy(), control,
                     wrench)
    return X, XD, FO


def raise_status(robot, code: int, t: float, x, xd, f, control, wrench) -> None:
    """The named error of the evaluation at time ``t`` of state ``(x, xd)`` with efforts ``f``
    where the kernel stopped with ``code``: the efforts checked as the Python route checks them
    (:func:`.reference.check_efforts`, the controller called again for them), then
    ``robot.forward_dynamics`` of that stage, which raises the robot's named error (joint,
    module, value); the time prefixed as in :meth:`.reference.Dynamics.__call__`."""
    try:
        if code == BAD_EFFORTS:
            check_efforts(robot, t, control(t, x, xd) if control is not None else f)
        robot.forward_dynamics(x, xd, f, wrench=wrench)
    except PkmDynamicsError as exc:
        raise type(exc)(f"simulation at t = {t:.6g} s: {exc}") from exc
    raise PkmDynamicsError(f"simulation at t = {t:.6g} s: the compiled integrator stopped with status {code} "
                           f"at x = {x.tolist()}, xd = {xd.tolist()}, f = {f.tolist()}")
