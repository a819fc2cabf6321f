"""Static payload forces of a module chain over a batch of configurations (the load chart's
question), the Python layer of :mod:`.chain_static_kernels` (one compiled call for ``u_0``,
``u_1`` and the tool position of every row) and :mod:`.chain_chart_kernels` (one compiled call
for a chunk of a load chart)."""
from __future__ import annotations

import numpy as np

from ..errors import StateError
from ..status import OK
from . import chain_chart_kernels as KC
from . import chain_static_kernels as K


def static_payload_states(robot, x) -> tuple:
    """``(u_0, u_1, p, ok)`` of the configurations ``x`` (B, n) of the module-chain ``robot``:
    the static actuator forces (B, n) (N, N m) that hold the chain at rest, those of 1 kg at the
    tool frame's origin, so that a payload ``m`` needs ``u_0 + m u_1`` (the robot's
    ``inverse_dynamics(x, 0, 0)`` and its difference with the wrench ``(0, R^T g)`` per kg;
    :mod:`.chain_static_kernels`), and the tool positions ``p`` (B, 3) in the root link (as
    ``forward_kinematics``); ``ok`` (B,) the rows solved (the others, a value not finite,
    beyond a stroke or a loop the state does not close, are NaN).  Raises
    :class:`~pkm_dynamics.core.errors.StateError` for ``x`` of another shape."""
    model = robot.compiled
    x = np.ascontiguousarray(x, dtype=float)
    if x.ndim != 2 or x.shape[1] != model.n:
        raise StateError(f"configurations have shape {x.shape}, expected (B, {model.n}) for '{robot.name}'")
    B, n = x.shape
    u0, u1, p = np.empty((B, n)), np.empty((B, n)), np.empty((B, 3))
    codes = np.empty(B, dtype=np.int64)
    status = model.thread_scratch("static_payload", lambda: np.zeros(3, dtype=np.int64))
    K.static_payload_rows(*model.head(), model.root, x, u0, u1, p, codes, status)
    return u0, u1, p, codes == OK


def static_payload_forces(robot, x) -> tuple:
    """``(u_0, u_1, ok)`` of :func:`static_payload_states` (without the tool positions)."""
    u0, u1, _, ok = static_payload_states(robot, x)
    return u0, u1, ok


def load_chart_cells(robot, samples, start: int, stop: int, reach, height, lower, upper,
                     dynamic_factor: float, payload: float) -> tuple:
    """The load chart of the configuration samples ``start..stop-1`` (C order of the grid of
    ``samples``, one array of values per actuator) over the cells of ``reach`` (n_r,) x
    ``height`` (n_h,) (C order), in one compiled call (:func:`.chain_chart_kernels.chart_chunk`):
    ``(mass, index, mass_dynamic, index_dynamic, utilisation, count)`` (n_r * n_h,) (-inf / -1 /
    inf / 0 for a cell no sample reached)."""
    model = robot.compiled
    n = model.n
    lengths = np.array([len(s) for s in samples], dtype=np.int64)
    table = np.zeros((n, int(lengths.max())))
    for k, s in enumerate(samples):
        table[k, :len(s)] = s
    ncell = len(reach) * len(height)
    mass, mass_d = np.full(ncell, -np.inf), np.full(ncell, -np.inf)
    index, index_d = np.full(ncell, -1, dtype=np.int64), np.full(ncell, -1, dtype=np.int64)
    util, count = np.full(ncell, np.inf), np.zeros(ncell, dtype=np.int64)
    scratch = model.thread_scratch("load_chart", lambda: (np.zeros((1, n)), np.zeros(n), np.zeros(n),
                                                          np.zeros(3, dtype=np.int64)))
    KC.chart_chunk(*model.head(), model.root, table, lengths, int(start), int(stop),
                   np.ascontiguousarray(lower, dtype=float), np.ascontiguousarray(upper, dtype=float),
                   float(dynamic_factor), float(payload), np.ascontiguousarray(reach, dtype=float),
                   np.ascontiguousarray(height, dtype=float), *scratch, mass, index, mass_d, index_d, util, count)
    return mass, index, mass_d, index_d, util, count
