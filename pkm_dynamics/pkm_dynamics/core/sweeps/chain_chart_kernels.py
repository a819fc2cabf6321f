"""Compiled load chart of a module chain (cranes), one call per chunk of configuration samples
(:func:`chart_chunk`): per sample the static forces ``u_0``, ``u_1`` and the tool position in one
pass (:func:`.chain_static_kernels.static_row`), the largest payload in closed form (static and
with the dynamic factor, :func:`largest_payload`), the utilisation under a given payload
(:func:`utilisation`), the chart cell of the tool position (:func:`nearest`) and the reduction
into the cells (the largest payload with its sample, the smallest index on ties; the smallest
utilisation; the count).  The formulas and their numpy counterparts:
:mod:`pkm_dynamics.analysis.chart` (the reference route the tests compare against).
"""
from __future__ import annotations

import math

from ..module_chain.chain_closure import check_strokes
from ..numba_support.cache import scratch_kernel
from ..status import OK
from .chain_static_kernels import static_row


@scratch_kernel
def largest_payload(u0, u1, lower, upper, phi) -> float:
    """``m_max = min_i (limit_i - u0_i) / (phi u1_i)`` over the actuators (n,) (the limit the
    payload's load moves towards; inf where none binds); NaN where ``u_0`` alone is out of its
    limits (:func:`pkm_dynamics.analysis.chart.largest_payload`)."""
    m = math.inf
    for k in range(u0.shape[0]):
        if not (lower[k] <= u0[k] <= upper[k]):
            return math.nan
        a = phi * u1[k]
        if a > 0:
            room = (upper[k] - u0[k]) / a
        elif a < 0:
            room = (lower[k] - u0[k]) / a
        else:
            room = math.inf
        m = min(m, room)
    return m


@scratch_kernel
def utilisation(u0, u1, payload, lower, upper) -> float:
    """``max_i u_i / upper_i`` (``u_i >= 0``) or ``u_i / lower_i`` of ``u = u_0 + payload u_1``
    (:func:`pkm_dynamics.analysis.chart.utilisation`)."""
    r = -math.inf
    for k in range(u0.shape[0]):
        u = u0[k] + payload * u1[k]
        r = max(r, u / upper[k] if u >= 0 else u / lower[k])
    return r


@scratch_kernel
def nearest(grid, v) -> int:
    """Index of the nearest point of the sorted ``grid`` to ``v`` within half a step of it (the
    end points: half the neighbouring step), -1 if none (:func:`pkm_dynamics.analysis.chart._nearest`:
    the first midpoint not below ``v``)."""
    m = grid.shape[0]
    if m == 1:
        return 0 if abs(v - grid[0]) <= 1e-9 else -1
    lo = grid[0] - 0.5 * (grid[1] - grid[0])
    hi = grid[m - 1] + 0.5 * (grid[m - 1] - grid[m - 2])
    if not (math.isfinite(v) and lo <= v < hi):
        return -1
    a, b = 0, m - 1                                  # searchsorted over the m - 1 midpoints
    while a < b:
        c = (a + b) // 2
        if 0.5 * (grid[c + 1] + grid[c]) < v:
            a = c + 1
        else:
            b = c
    return a


@scratch_kernel
def chart_chunk(geo, mats, nud0, A, V, S, W, w, root, samples, lengths, start, stop, lower, upper, phi, payload,
                reach, height, X, u0, u1, status, mass, index, mass_d, index_d, util, count):
    """The load chart of the configuration samples ``start..stop-1`` (C order of the sample grid
    ``samples`` (n, k_max), ``lengths`` (n,) values per actuator) reduced into the cells (n_r *
    n_h,) (C order of ``reach`` (n_r,) x ``height`` (n_h,)), on top of what they hold: ``mass``
    and ``index`` (the largest payload, kg, and its sample), ``mass_d``, ``index_d`` (with the
    dynamic factor ``phi``), ``util`` (the smallest utilisation under ``payload`` kg) and
    ``count`` (the samples per cell).  ``X`` (1, n), ``u0``, ``u1`` (n,) and ``status``
    (3,): scratch.  Samples the robot refuses (a loop at its singular stretch) go to no cell.
    Returns how many samples were solved."""
    x = X[0]
    n = x.shape[0]
    nh = height.shape[0]
    C = W[1]
    good = 0
    for i in range(start, stop):
        q = i
        for k in range(n - 1, -1, -1):               # unravel the sample index, last actuator fastest
            x[k] = samples[k, q % lengths[k]]
            q //= lengths[k]
        if check_strokes(geo, X, status) != OK:
            continue
        code, _ = static_row(geo, mats, nud0, A, V, S, W, w, root, x, u0, u1)
        if code != OK:
            continue
        finite = True
        for k in range(n):
            finite = finite and math.isfinite(u0[k]) and math.isfinite(u1[k])
        if not finite:
            continue
        good += 1
        ir = nearest(reach, math.hypot(C[0, 3], C[1, 3]))
        ih = nearest(height, C[2, 3])
        if ir < 0 or ih < 0:
            continue
        cell = ir * nh + ih
        count[cell] += 1
        m = largest_payload(u0, u1, lower, upper, 1.0)
        if m > mass[cell]:                           # NaN never; ties keep the first (smallest) index
            mass[cell], index[cell] = m, i
        m = largest_payload(u0, u1, lower, upper, phi)
        if m > mass_d[cell]:
            mass_d[cell], index_d[cell] = m, i
        r = utilisation(u0, u1, payload, lower, upper)
        if r < util[cell]:
            util[cell] = r
    return good
