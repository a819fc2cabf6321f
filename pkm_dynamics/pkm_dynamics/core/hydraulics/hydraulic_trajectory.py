"""The chamber pressures as a state along a sampled trajectory (valve_cylinder (H6)).

A map of the present motion alone puts the pressures at the valve's steady-state level (H5),
which jumps when the motion reverses while the real chambers move to the new level only through
their compressibility.  Along a trajectory the level is a state: starting from the steady
level at the first sample (or given pressures), :func:`pressure_trajectory` carries ``p_A`` from
sample to sample with the rate (H6) gives (Heun's method on the samples), and answers the spool
commands that deliver the motion at the pressures the chambers then have.  Both are one compiled
call (:func:`~.valve_kernels.pressure_step_state`, :func:`~.valve_kernels.pressure_steps`)."""
from __future__ import annotations

import numpy as np

from ..errors import StateError
from .valve_cylinder import (HydraulicState, actuator_samples, cylinder_samples, hydraulic_answer,
                             new_answer)
from .valve_kernels import pressure_step_state, pressure_steps


def pressure_step(m, previous: HydraulicState, dt: float, x, xd, force, force_rate=None,
                  restart: bool = False, limits: bool = True) -> HydraulicState:
    """The :class:`~.valve_cylinder.HydraulicState` of the next sample (its motion ``x``, ``xd``,
    forces and force rates (n_act,)) ``dt`` [s] after ``previous`` (one sample): ``p_A`` carried
    by Heun's method, ``p_A + dt/2 (r(previous) + r(next, p_A + dt r(previous)))`` with ``r`` the
    rate (H6), the spool and flows of (H6) there; limits listed, not raised.  ``restart``: where
    a carried pressure is not finite or beyond what the valve holds (a pressure limit of
    ``violations``), the sample at the steady level of (H5) instead (a stream that starts anew).
    ``limits`` False: ``violations`` left empty (not listed; ``restart`` still sees them)."""
    lead, (x, xd, F, Fd) = actuator_samples(m, x, xd, force, force_rate)
    if lead != ():
        raise StateError(f"pressure_step takes one sample (n_act,), not {lead + (m.actuators,)}")
    pa, rate = cylinder_samples(m, previous.pressure_a, ())[0], cylinder_samples(m, previous.pressure_rate_a, ())[0]
    out, flags = new_answer(1, m)
    count = pressure_step_state(m.table, m.fluid, m.index, x, xd, F, Fd, 0, pa, rate, float(dt), bool(restart),
                                out, flags)
    return hydraulic_answer(m, out, flags, count, lead, check=False, limits=limits)


def pressure_trajectory(m, times, x, xd, force, force_rate=None, pressure_a0=None,
                        check: bool = True) -> HydraulicState:
    """:class:`~.valve_cylinder.HydraulicState` (B, nc) of the samples at ``times`` (B,)
    (increasing [s]) of the motion ``x``, ``xd``, forces and force rates (B, n_act), with ``p_A``
    carried as a state: ``pressure_a0`` (nc,) at the first sample (default: the level of (H5)),
    then :func:`pressure_step` from sample to sample.  ``check``: raise
    :class:`~.valve_cylinder.HydraulicLimitError` naming the first limit passed (else they are
    listed in ``violations``, with their sample)."""
    t = np.ascontiguousarray(times, dtype=float)
    lead, (x, xd, F, Fd) = actuator_samples(m, x, xd, force, force_rate)
    if t.ndim != 1 or lead != t.shape or not (np.diff(t) > 0).all():
        raise StateError(f"times has shape {t.shape} for {lead[:1]} samples: give increasing times, "
                         "one per sample")
    carried = pressure_a0 is not None
    pa = cylinder_samples(m, pressure_a0, ()) if carried else np.empty((0, 0))
    out, flags = new_answer(len(t), m)
    count = pressure_steps(m.table, m.fluid, m.index, t, x, xd, F, Fd, pa, carried, out, flags)
    return hydraulic_answer(m, out, flags, count, lead, check)
