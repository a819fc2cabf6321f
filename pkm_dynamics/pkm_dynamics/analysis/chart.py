"""Load charts of module chains (cranes): the largest payload at the tool over a reach x height
grid with every actuator within its force limits, the reachable region and the actuators'
utilisation under a given payload.

**The payload is linear in the static inverse dynamics.**  At a fixed configuration ``x`` (n,)
and no motion, a point mass ``m`` at the tool origin adds the wrench of its weight to the tool,
so the actuator forces are ``u(m) = u_0 + m u_1`` with ``u_0 = ID(x, 0, 0)`` (the crane's own
weight) and ``u_1 = ID(x, 0, 0, W_1) - u_0``, ``W_1 = (0, R^T g)`` the body-fixed wrench
(moment, force) of 1 kg at the tool (``R`` the tool's orientation, ``g`` gravity).  With limits
``lower_i <= u_i <= upper_i`` the largest mass is in closed form (:func:`largest_payload`)::

    m_max = min_i { (upper_i - u0_i) / u1_i  if u1_i > 0;  (lower_i - u0_i) / u1_i  if u1_i < 0 }

(0 <= m; NaN where the unloaded crane already exceeds a limit).  A **dynamic factor** ``phi``
(the hoist load coefficient of crane standards, e.g. EN 13001-2 phi_2) multiplies the payload's
load: ``u = u_0 + phi m u_1``, so ``m_max(phi)`` is the same formula with ``phi u_1``.

**Tool positions from configurations.**  A crane with more actuators than the two coordinates of
its vertical plane (the 4-DoF HIAB: lift, tilt and extension) reaches a point in a continuum of
configurations; its load chart is the *envelope*, the largest payload over every configuration
reaching the point, as crane makers draw it.  The configurations are sampled on a grid of the
actuator strokes (``samples`` values from end to end of every limited actuator; an actuator
without limits, e.g. the slew, is held at ``fixed``), their tool positions come from the forward
kinematics (reach = horizontal distance from the root's z axis, height = z, m) and each sample
goes to the chart cell around its nearest grid point; a cell keeps its best configuration.  The
value of a cell is therefore exact for the configuration stored with it (``actuators``), and the
chart converges to the envelope as ``samples`` grows.

A chunk of consecutive configuration samples is one compiled call for ``u_0`` and ``u_1`` of every
sample and one batched forward kinematics (:func:`load_chart_chunk`); chunks combine by a maximum that keeps
the smallest sample index on ties (:func:`combine_parts`), so the result is the same for any
split of the chunks over workers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import PkmDynamicsError
from ..core.sweeps.chain_static import load_chart_cells
from ..core.sweeps.chain_static import static_payload_forces as sweep_static_forces


@dataclass(frozen=True)
class LoadChartSetup:
    """What every chunk of a load chart needs: ``samples`` per actuator (list of (k_i,) arrays,
    order ``actuated_joints``; one value for a held actuator), the chart's ``reach`` (n_r,) and
    ``height`` (n_h,) grid points (m), ``lower``, ``upper`` (n,) force limits (N, N m),
    ``dynamic_factor`` (>= 1) and ``payload`` (kg) of the utilisation map."""

    samples: tuple
    reach: np.ndarray
    height: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    dynamic_factor: float = 1.0
    payload: float = 0.0

    @property
    def count(self) -> int:
        """Number of configuration samples."""
        return int(np.prod([len(s) for s in self.samples]))

    def configurations(self, start: int, stop: int) -> np.ndarray:
        """The actuator values (stop - start, n) of samples ``start..stop-1`` (C order of the
        sample grid: the first actuator slowest)."""
        return self.at(np.arange(start, stop))

    def at(self, indices) -> np.ndarray:
        """The actuator values (len(indices), n) of the samples ``indices``."""
        shape = tuple(len(s) for s in self.samples)
        idx = np.unravel_index(np.asarray(indices, dtype=np.int64), shape)
        return np.ascontiguousarray(np.stack([s[i] for s, i in zip(self.samples, idx)], axis=1))


@dataclass
class LoadChartPart:
    """Per chart cell (n_r * n_h,), C order of (reach, height): ``mass`` (kg; -inf: no sample),
    ``index`` (the sample of that mass; -1: none), ``mass_dynamic`` (kg, with the dynamic
    factor), ``index_dynamic``, ``utilisation`` (smallest over the cell's samples of the largest
    ``|u_i| / limit_i`` under ``payload``; inf: none), ``count`` (samples in the cell)."""

    mass: np.ndarray
    index: np.ndarray
    mass_dynamic: np.ndarray
    index_dynamic: np.ndarray
    utilisation: np.ndarray
    count: np.ndarray


def tool_weight_wrench(robot, poses) -> np.ndarray:
    """``W_1`` (B, 6): the body-fixed wrench (moment, force) on the tool frame of 1 kg at its
    origin, ``(0, R^T g)`` (N per kg) for tool poses (B, 4, 4) and the robot's gravity (3,)."""
    g = np.asarray(robot.description.tree.gravity, dtype=float)
    W = np.zeros((len(poses), 6))
    W[:, 3:] = np.einsum("bji,j->bi", poses[:, :3, :3], g)
    return W


def static_payload_forces(robot, x) -> tuple:
    """``(poses (B, 4, 4), u_0 (B, n), u_1 (B, n))`` at the configurations ``x`` (B, n): the
    tool poses, the static actuator forces of the crane alone and per kg of payload at the tool
    (module docstring): one compiled call for ``u_0`` and ``u_1`` of every row
    (:func:`~pkm_dynamics.core.sweeps.chain_static.static_payload_forces`, the robot's static
    inverse dynamics without and with the weight of 1 kg, joint friction included: zero at rest)
    and one batched forward kinematics of the rows it solved.  Rows the robot refuses (a loop at
    its singular stretch) are NaN."""
    B, n = x.shape
    poses = np.full((B, 4, 4), np.nan)
    u0, u1, ok = sweep_static_forces(robot, x)
    stack = [np.flatnonzero(ok)]
    while stack:                   # the forward kinematics of the solved rows (halves of a refused batch)
        rows = stack.pop()
        try:
            poses[rows] = robot.forward_kinematics(x[rows])
        except PkmDynamicsError:
            if len(rows) > 1:
                stack += [rows[len(rows) // 2:], rows[:len(rows) // 2]]
            else:
                u0[rows], u1[rows] = np.nan, np.nan
    return poses, u0, u1


def largest_payload(u0, u1, lower, upper, dynamic_factor: float = 1.0) -> np.ndarray:
    """The largest payload ``m_max`` (B,) (kg) with ``lower <= u_0 + phi m u_1 <= upper``
    (module docstring; ``u0``, ``u1`` (B, n), limits (n,), ``phi = dynamic_factor``); inf where no
    limit binds, NaN where ``u_0`` alone is out of limits (and for NaN rows)."""
    a = dynamic_factor * np.asarray(u1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(a > 0, (upper - u0) / a, np.where(a < 0, (lower - u0) / a, np.inf))
    m = room.min(axis=1)
    unloaded_ok = ((u0 >= lower) & (u0 <= upper)).all(axis=1)
    return np.where(unloaded_ok, m, np.nan)


def utilisation(u, lower, upper) -> np.ndarray:
    """``max_i u_i / upper_i`` (``u_i >= 0``) or ``u_i / lower_i`` (``u_i < 0``) (B,): 1 at a
    limit; 0 for actuators without limits."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(u >= 0, u / upper, u / lower)
    return r.max(axis=1)


def chart_cells(setup: LoadChartSetup, poses) -> np.ndarray:
    """The chart cell (B,) (C order of (reach, height); -1: outside the grid or NaN) of each
    tool pose (B, 4, 4): the nearest grid point within half a step of either axis."""
    p = poses[:, :3, 3]
    r, h = np.hypot(p[:, 0], p[:, 1]), p[:, 2]
    cells = np.full(len(p), -1)
    i, ok_i = _nearest(setup.reach, r)
    j, ok_j = _nearest(setup.height, h)
    ok = ok_i & ok_j
    cells[ok] = i[ok] * len(setup.height) + j[ok]
    return cells


def _nearest(grid, v) -> tuple:
    """Index of the nearest point of the sorted ``grid`` to each ``v`` and whether ``v`` is
    within half a step of it (the end points: half the neighbouring step)."""
    if len(grid) == 1:
        return np.zeros(len(v), dtype=int), np.abs(v - grid[0]) <= 1e-9
    edges = 0.5 * (grid[1:] + grid[:-1])
    idx = np.searchsorted(edges, v)
    lo = grid[0] - 0.5 * (grid[1] - grid[0])
    hi = grid[-1] + 0.5 * (grid[-1] - grid[-2])
    return idx, np.isfinite(v) & (v >= lo) & (v < hi)


def cell_best(cells, values, index, ncell: int) -> tuple:
    """Per cell (ncell,) the largest of ``values`` (B,) and the smallest ``index`` holding it
    (-inf and -1 for a cell without a finite value)."""
    ok = (cells >= 0) & ~np.isnan(values)
    c, v, k = cells[ok], values[ok], index[ok]
    best = np.full(ncell, -np.inf)
    np.maximum.at(best, c, v)
    at = np.full(ncell, np.iinfo(np.int64).max)
    hit = v == best[c]
    np.minimum.at(at, c[hit], k[hit])
    return best, np.where(best > -np.inf, at, -1)


def load_chart_chunk(robot, setup: LoadChartSetup, start: int, stop: int) -> LoadChartPart:
    """The chart of the configuration samples ``start..stop-1`` (:class:`LoadChartPart`) in one
    compiled call (:func:`~pkm_dynamics.core.sweeps.chain_static.load_chart_cells`: the static
    recursion for ``u_0``, ``u_1`` and the tool position, then per sample the largest payload
    (static and with the dynamic factor), the utilisation under ``setup.payload`` and the cell,
    reduced per cell); the same arrays as :func:`load_chart_chunk_reference`."""
    return LoadChartPart(*load_chart_cells(robot, setup.samples, start, stop, setup.reach, setup.height,
                                           setup.lower, setup.upper, setup.dynamic_factor, setup.payload))


def load_chart_chunk_reference(robot, setup: LoadChartSetup, start: int, stop: int) -> LoadChartPart:
    """:func:`load_chart_chunk` in numpy steps (the reference route of the tests): one compiled
    call for the static forces and one batched forward kinematics
    (:func:`static_payload_forces`), then per sample :func:`largest_payload` (static and with
    the dynamic factor) and :func:`utilisation` under ``setup.payload``, reduced per cell
    (:func:`cell_best`)."""
    x = setup.configurations(start, stop)
    poses, u0, u1 = static_payload_forces(robot, x)
    cells = chart_cells(setup, poses)
    index = np.arange(start, stop)
    ncell = len(setup.reach) * len(setup.height)
    m, k = cell_best(cells, largest_payload(u0, u1, setup.lower, setup.upper), index, ncell)
    md, kd = cell_best(cells, largest_payload(u0, u1, setup.lower, setup.upper, setup.dynamic_factor), index, ncell)
    util = utilisation(u0 + setup.payload * u1, setup.lower, setup.upper)
    ok = (cells >= 0) & ~np.isnan(util)
    best_util = np.full(ncell, np.inf)
    np.minimum.at(best_util, cells[ok], util[ok])
    count = np.bincount(cells[cells >= 0], minlength=ncell)
    return LoadChartPart(m, k, md, kd, best_util, count)


def _better(m_a, k_a, m_b, k_b) -> tuple:
    """The larger mass per cell, the smaller index on ties (-1 indices are empty cells)."""
    take_b = (m_b > m_a) | ((m_b == m_a) & (k_b >= 0) & ((k_a < 0) | (k_b < k_a)))
    return np.where(take_b, m_b, m_a), np.where(take_b, k_b, k_a)


def combine_parts(parts) -> LoadChartPart:
    """The chart of all chunks from their parts (in any order: max with ties to the smallest
    sample index, min, sum: the same arrays for any grouping)."""
    parts = list(parts)
    out = LoadChartPart(*(np.copy(a) for a in vars(parts[0]).values()))
    for p in parts[1:]:
        out.mass, out.index = _better(out.mass, out.index, p.mass, p.index)
        out.mass_dynamic, out.index_dynamic = _better(out.mass_dynamic, out.index_dynamic, p.mass_dynamic,
                                                      p.index_dynamic)
        out.utilisation = np.minimum(out.utilisation, p.utilisation)
        out.count = out.count + p.count
    return out


def chart_setup(robot, reach, height, samples: int, lower, upper, dynamic_factor: float = 1.0,
                payload: float = 0.0, fixed: dict | None = None) -> LoadChartSetup:
    """The :class:`LoadChartSetup` of a robot: ``samples`` (>= 2) values over every limited
    actuator's stroke, ends included; an actuator without limits held at ``fixed[name]``
    (default 0; ``fixed`` may hold a limited one too).  Raises ``ValueError`` naming a bad
    argument."""
    from .grids import GridError
    if int(samples) != samples or samples < 2:
        raise GridError(f"samples {samples} must be an integer of at least 2 (values per actuator stroke)")
    if not dynamic_factor >= 1.0:
        raise GridError(f"dynamic factor {dynamic_factor} must be at least 1")
    if not (np.isfinite(payload) and payload >= 0):
        raise GridError(f"payload {payload} kg must be finite and not negative")
    fixed = dict(fixed or {})
    unknown = set(fixed) - set(robot.actuated_joints)
    if unknown:
        raise GridError(f"fixed actuator(s) {', '.join(sorted(unknown))}: not actuators of '{robot.name}'")
    values = []
    for name, info in zip(robot.actuated_joints, robot.chain.info):
        if name in fixed:
            v = float(fixed.pop(name))
            if not (info.lower <= v <= info.upper):
                raise GridError(f"fixed actuator '{name}' = {v:g} is outside its stroke "
                                f"[{info.lower:g}, {info.upper:g}]")
            values.append(np.array([v]))
        elif np.isfinite(info.lower) and np.isfinite(info.upper):
            values.append(np.linspace(info.lower, info.upper, int(samples)))
        else:
            values.append(np.array([0.0]))
    return LoadChartSetup(tuple(values), np.asarray(reach, float), np.asarray(height, float),
                          np.asarray(lower, float), np.asarray(upper, float), float(dynamic_factor), float(payload))
