"""The motion of a recorded window: time-stamped samples of positions, velocities and efforts
(a ``joint_states`` stream, a rosbag converted to arrays) made the ``(x, xd, xdd, u)`` that
:func:`.payload_estimation.estimate_payload` and :func:`.least_squares.identify` take.

Sensors give no accelerations; they are the velocities' derivative by a Savitzky-Golay filter
(a least-squares polynomial of degree :data:`POLYNOMIAL_ORDER` over a sliding window of
``smoothing`` seconds, differentiated at its centre: ``scipy.signal.savgol_filter`` with
``deriv=1``; the window's ends use the polynomial fitted to the first / last window).  The
filter needs uniform samples: the stamps' jitter is taken out first by linear interpolation
onto the uniform grid of the median sampling period (the samples of a uniformly stamped stream
are kept as they are).  Without velocities they are the positions' derivative, the same way.

Refusals (:class:`.least_squares.IdentificationError`, naming why): stamps not increasing, a
gap of more than :data:`MAX_GAP_PERIODS` sampling periods (the motion in it is unknown), fewer
samples than the filter's window.
"""
from __future__ import annotations

import numpy as np

from .least_squares import IdentificationError

#: degree of the Savitzky-Golay polynomial
POLYNOMIAL_ORDER = 3
#: default span of the Savitzky-Golay window [s]
SMOOTHING = 0.1
#: largest gap between two samples, in median sampling periods
MAX_GAP_PERIODS = 5.0


def uniform_grid(t) -> np.ndarray:
    """The uniform grid (M,) of the median sampling period of the stamps ``t`` (N,) from the
    first to the last; refused if the stamps do not increase or leave a gap (module docstring)."""
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or len(t) < 2 or not np.isfinite(t).all():
        raise IdentificationError(f"the stamps must be at least 2 finite times, got shape {t.shape}")
    step = np.diff(t)
    if not (step > 0).all():
        k = int(np.argmax(step <= 0))
        raise IdentificationError(f"the stamps do not increase: sample {k + 1} at {t[k + 1]:.6f} s follows "
                                  f"{t[k]:.6f} s")
    dt = float(np.median(step))
    if step.max() > MAX_GAP_PERIODS * dt:
        k = int(np.argmax(step))
        raise IdentificationError(f"the samples have a gap of {step[k]:.4g} s after {t[k]:.6f} s (more than "
                                  f"{MAX_GAP_PERIODS:g} sampling periods of {dt:.4g} s): the motion in it is "
                                  "unknown; use a window without it")
    count = int(np.floor((t[-1] - t[0]) / dt + 1e-9)) + 1
    return t[0] + dt * np.arange(count)


def resampled(t, grid, y) -> np.ndarray:
    """``y`` (N, n) sampled at ``t`` (N,), linearly interpolated to ``grid`` (M,) (M, n)."""
    y = np.asarray(y, dtype=float)
    return np.stack([np.interp(grid, t, y[:, j]) for j in range(y.shape[1])], axis=1)


def savgol_rate(y, dt: float, smoothing: float = SMOOTHING) -> np.ndarray:
    """The time derivative (M, n) of ``y`` (M, n) sampled every ``dt`` by the Savitzky-Golay
    filter (module docstring) over the odd number of samples nearest ``smoothing`` seconds
    (at least the smallest odd count above ``POLYNOMIAL_ORDER``)."""
    from scipy.signal import savgol_filter      # here: importing scipy.signal adds ~1 s to every node start
    window = max(2 * int(round(smoothing / dt / 2)) + 1, POLYNOMIAL_ORDER + 1 + POLYNOMIAL_ORDER % 2)
    if len(y) < window:
        raise IdentificationError(f"{len(y)} samples are fewer than the {window} of the differentiating "
                                  f"filter's window ({smoothing:g} s at {dt:.4g} s per sample)")
    return savgol_filter(y, window, POLYNOMIAL_ORDER, deriv=1, delta=dt, axis=0, mode="interp")


def sampled_motion(t, x, xd=None, u=None, smoothing: float = SMOOTHING) -> tuple:
    """``(t, x, xd, xdd, u)`` on the uniform grid of the stamps ``t`` (N,) from positions ``x``
    (N, n), velocities ``xd`` (N, n) (None: the positions' derivative) and efforts ``u`` (N, m)
    or None (module docstring); ``xdd`` the velocities' Savitzky-Golay derivative."""
    t = np.asarray(t, dtype=float)
    grid = uniform_grid(t)
    dt = float(grid[1] - grid[0])
    x = resampled(t, grid, x)
    xd = savgol_rate(x, dt, smoothing) if xd is None else resampled(t, grid, xd)
    xdd = savgol_rate(xd, dt, smoothing)
    return grid, x, xd, xdd, None if u is None else resampled(t, grid, u)
