"""Static payload forces of a module chain over a batch of configurations (the load chart's
question), the Python layer of :mod:`.chain_static_kernels`: one compiled call for ``u_0`` and
``u_1`` of every row."""
from __future__ import annotations

import numpy as np

from ..errors import StateError
from ..status import OK
from . import chain_static_kernels as K


def static_payload_forces(robot, x) -> tuple:
    """``(u_0, u_1, ok)`` of the configurations ``x`` (B, n) of the module-chain ``robot``: the
    static actuator forces (B, n) (N, N m) that hold the chain at rest, and those of 1 kg at the
    tool frame's origin, so that a payload ``m`` needs ``u_0 + m u_1`` (the robot's
    ``inverse_dynamics(x, 0, 0)`` and its difference with the wrench ``(0, R^T g)`` per kg;
    :mod:`.chain_static_kernels`); ``ok`` (B,) the rows solved (the others, a value not finite,
    beyond a stroke or a loop the state does not close, are NaN).  Raises
    :class:`~pkm_dynamics.core.errors.StateError` for ``x`` of another shape."""
    model = robot.compiled
    x = np.ascontiguousarray(x, dtype=float)
    if x.ndim != 2 or x.shape[1] != model.n:
        raise StateError(f"configurations have shape {x.shape}, expected (B, {model.n}) for '{robot.name}'")
    B, n = x.shape
    u0, u1 = np.empty((B, n)), np.empty((B, n))
    codes = np.empty(B, dtype=np.int64)
    scratch = model.thread_scratch("static_payload", lambda: (np.zeros(n), np.zeros(6), np.zeros(6),
                                                              np.zeros(3, dtype=np.int64)))
    zero, no_acc, fe, status = scratch
    K.static_payload_rows(*model.head(), x, zero, no_acc, fe, u0, u1, codes, status)
    return u0, u1, codes == OK
