"""The chamber pressures as a state along a sampled trajectory (valve_cylinder (H6)).

A map of the present motion alone puts the pressures at the valve's steady-state level (H5),
which jumps when the motion reverses while the real chambers move to the new level only through
their compressibility.  Along a trajectory the level is a state: starting from the steady
level at the first sample (or given pressures), :func:`pressure_trajectory` carries ``p_A`` from
sample to sample with the rate (H6) gives (Heun's method on the samples), and answers the spool
commands that deliver the motion at the pressures the chambers then have."""
from __future__ import annotations

import numpy as np

from ..errors import StateError
from .valve_cylinder import HydraulicLimitError, HydraulicState, hydraulic_limits, hydraulic_state


def pressure_step(m, previous: HydraulicState, dt: float, x, xd, force, force_rate=None) -> HydraulicState:
    """The :class:`~.valve_cylinder.HydraulicState` of the next sample (its motion ``x``, ``xd``,
    forces and force rates (n_act,)) ``dt`` [s] after ``previous`` (one sample): ``p_A`` carried
    by Heun's method, ``p_A + dt/2 (r(previous) + r(next, p_A + dt r(previous)))`` with ``r`` the
    rate (H6), the spool and flows of (H6) there; limits listed, not raised."""
    pa, rate = previous.pressure_a, previous.pressure_rate_a
    guess = hydraulic_state(m, x, xd, force, force_rate, check=False, pressure_a=pa + dt * rate, limits=False)
    return hydraulic_state(m, x, xd, force, force_rate, check=False,
                           pressure_a=pa + 0.5 * dt * (rate + guess.pressure_rate_a))


def pressure_trajectory(m, times, x, xd, force, force_rate=None, pressure_a0=None,
                        check: bool = True) -> HydraulicState:
    """:class:`~.valve_cylinder.HydraulicState` (B, nc) of the samples at ``times`` (B,)
    (increasing [s]) of the motion ``x``, ``xd``, forces and force rates (B, n_act), with ``p_A``
    carried as a state: ``pressure_a0`` (nc,) at the first sample (default: the level of (H5)),
    then :func:`pressure_step` from sample to sample.  ``check``: raise
    :class:`~.valve_cylinder.HydraulicLimitError` naming the first limit passed (else they are
    listed in ``violations``, with their sample)."""
    t = np.asarray(times, dtype=float)
    x, xd, F = (np.asarray(a, dtype=float) for a in (x, xd, force))
    Fd = np.zeros_like(F) if force_rate is None else np.asarray(force_rate, dtype=float)
    if t.ndim != 1 or x.shape[:1] != t.shape or not (np.diff(t) > 0).all():
        raise StateError(f"times has shape {t.shape} for {x.shape[:1]} samples: give increasing times, "
                         "one per sample")
    first = hydraulic_state(m, x[0], xd[0], F[0], Fd[0], check=False)
    if pressure_a0 is not None:
        first = hydraulic_state(m, x[0], xd[0], F[0], Fd[0], check=False, pressure_a=pressure_a0)
    rows = [first]
    for k in range(1, len(t)):
        rows.append(pressure_step(m, rows[-1], t[k] - t[k - 1], x[k], xd[k], F[k], Fd[k]))
    fields = {name: np.stack([getattr(r, name) for r in rows]) for name in
              ("force", "force_rate", "pressure_a", "pressure_b", "flow_a", "flow_b", "spool",
               "hydraulic_power", "volume_a", "volume_b", "pressure_rate_a", "pressure_rate_b")}
    out = HydraulicState(m.joints, **fields)
    sigma = np.sign(out.spool)
    beyond = np.zeros(out.spool.shape, bool)
    for k, r in enumerate(rows):
        for v in r.violations:
            if v.quantity != "spool" and v.limit == m.p_s:
                beyond[k, m.joints.index(v.joint)] = True
    out.violations = hydraulic_limits(m, out, beyond, sigma)
    if check and out.violations:
        raise HydraulicLimitError("the valve cannot deliver the motion: " + "; ".join(map(str, out.violations)))
    return out
