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


def pressure_trajectory(m, times, x, xd, force, force_rate=None, pressure_a0=None,
                        check: bool = True) -> HydraulicState:
    """:class:`~.valve_cylinder.HydraulicState` (B, nc) of the samples at ``times`` (B,)
    (increasing [s]) of the motion ``x``, ``xd``, forces and force rates (B, n_act), with ``p_A``
    carried as a state: ``pressure_a0`` (nc,) at the first sample (default: the level of (H5)),
    then ``p_A[k+1] = p_A[k] + dt/2 (r(k, p_A[k]) + r(k+1, p_A[k] + dt r(k, p_A[k])))`` with
    ``r`` the rate (H6).  ``check``: raise :class:`~.valve_cylinder.HydraulicLimitError` naming
    the first limit passed (else they are listed in ``violations``, with their sample)."""
    t = np.asarray(times, dtype=float)
    x, xd, F = (np.asarray(a, dtype=float) for a in (x, xd, force))
    Fd = np.zeros_like(F) if force_rate is None else np.asarray(force_rate, dtype=float)
    if t.ndim != 1 or x.shape[:1] != t.shape or not (np.diff(t) > 0).all():
        raise StateError(f"times has shape {t.shape} for {x.shape[:1]} samples: give increasing times, one per sample")
    rows = []
    pa = hydraulic_state(m, x[0], xd[0], F[0], Fd[0], check=False).pressure_a if pressure_a0 is None \
        else np.asarray(pressure_a0, dtype=float)
    for k in range(len(t)):
        h = hydraulic_state(m, x[k], xd[k], F[k], Fd[k], check=False, pressure_a=pa)
        rows.append(h)
        if k + 1 < len(t):
            dt = t[k + 1] - t[k]
            guess = hydraulic_state(m, x[k + 1], xd[k + 1], F[k + 1], Fd[k + 1], check=False,
                                    pressure_a=pa + dt * h.pressure_rate_a)
            pa = pa + 0.5 * dt * (h.pressure_rate_a + guess.pressure_rate_a)
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
