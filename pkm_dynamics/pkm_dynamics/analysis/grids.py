"""Grids of the maps: axis specifications ``start:stop:step`` parsed into coordinate arrays, the
points of a grid in a fixed order, and their split into chunks.

A grid is the Cartesian product of named 1-D axes (``{"reach": (n_r,), "height": (n_h,)}``, m or
rad).  Its points are visited in **serpentine order** (boustrophedon: the last axis runs forward
on even rows of the axes before it, backward on odd rows), so consecutive points are always grid
neighbours and an inverse kinematics warm-started from the previous point stays on its working
mode along a chunk (continuation).  Chunks are consecutive runs of ``chunk`` points of that order:
they depend on the grid and the chunk size only, never on the number of workers, so every
execution gives the same chunks and the same results.
"""
from __future__ import annotations

import math

import numpy as np

#: largest number of points of one axis (a spec beyond it is most likely a typo)
MAX_AXIS_POINTS = 1_000_000


class GridError(ValueError):
    """A grid specification that cannot be used: the message names the axis and the value."""


def parse_axis(name: str, spec) -> np.ndarray:
    """The coordinates (n,) of the axis ``name`` from ``spec``: ``"start:stop:step"`` (stop
    included when it lies on the step, to round-off), a single number ``"value"`` (one point),
    a comma list ``"a,b,c"`` or an array-like of numbers.  Raises :class:`GridError` naming the
    axis for a bad spec (not a number, non-finite, step <= 0, stop < start, too many points)."""
    if not isinstance(spec, str):
        values = np.atleast_1d(np.asarray(spec, dtype=float))
        return _checked(name, values, spec)
    text = spec.strip()
    try:
        if ":" in text:
            parts = [float(p) for p in text.split(":")]
            if len(parts) != 3:
                raise GridError(f"axis '{name}': '{spec}' is not start:stop:step")
            start, stop, step = parts
            if not all(math.isfinite(v) for v in parts):
                raise GridError(f"axis '{name}': '{spec}' has a value that is not finite")
            if step <= 0:
                raise GridError(f"axis '{name}': step {step:g} in '{spec}' must be positive")
            if stop < start:
                raise GridError(f"axis '{name}': stop {stop:g} is below start {start:g} in '{spec}'")
            count = int(math.floor((stop - start) / step + 1e-9)) + 1
            if count > MAX_AXIS_POINTS:
                raise GridError(f"axis '{name}': '{spec}' gives {count} points (at most {MAX_AXIS_POINTS})")
            return start + step * np.arange(count)
        values = np.array([float(p) for p in text.split(",")])
    except ValueError as exc:
        if isinstance(exc, GridError):
            raise
        raise GridError(f"axis '{name}': '{spec}' is not start:stop:step, a number or a comma list "
                        "of numbers") from None
    return _checked(name, values, spec)


def _checked(name: str, values: np.ndarray, spec) -> np.ndarray:
    if values.ndim != 1 or values.size == 0:
        raise GridError(f"axis '{name}': {spec!r} gives no points")
    if not np.isfinite(values).all():
        raise GridError(f"axis '{name}': {spec!r} has a value that is not finite")
    if values.size > MAX_AXIS_POINTS:
        raise GridError(f"axis '{name}': {values.size} points (at most {MAX_AXIS_POINTS})")
    return values.astype(float)


def serpentine_order(shape: tuple) -> np.ndarray:
    """Flat (C-order) indices (prod(shape),) of a grid of ``shape`` in serpentine order (module
    docstring): every step moves to a neighbour along one axis.  Step ``t`` has the mixed-radix
    digits ``d_k = (t // s_(k+1)) mod n_k`` (strides ``s_k = n_k ... n_(d-1)``); axis ``k`` runs
    backward where the number of its completed passes ``t // s_k`` is odd."""
    shape = tuple(int(n) for n in shape)
    t = np.arange(int(np.prod(shape)))
    strides = np.cumprod((1,) + shape[::-1])[::-1]          # s_0 .. s_d
    index = []
    for k, n in enumerate(shape):
        d = (t // strides[k + 1]) % n
        index.append(np.where((t // strides[k]) % 2 == 1, n - 1 - d, d))
    return np.ravel_multi_index(index, shape) if shape else t


def grid_points(axes: dict) -> tuple:
    """``(points (N, d), order (N,))``: the coordinates of every grid point in serpentine order
    (columns in the order of ``axes``) and their flat C-order index in the grid of shape
    ``tuple(len(a) for a in axes.values())``."""
    values = list(axes.values())
    shape = tuple(len(v) for v in values)
    order = serpentine_order(shape)
    idx = np.unravel_index(order, shape)
    points = np.stack([v[i] for v, i in zip(values, idx)], axis=1) if values else np.zeros((1, 0))
    return points, order


def chunk_bounds(count: int, chunk: int) -> list:
    """``[(start, stop), ...]``: consecutive runs of at most ``chunk`` of ``count`` items."""
    if int(chunk) != chunk or chunk < 1:
        raise GridError(f"chunk size {chunk} must be a positive integer")
    return [(s, min(s + int(chunk), count)) for s in range(0, count, int(chunk))]
