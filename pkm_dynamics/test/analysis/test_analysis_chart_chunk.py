"""The load chart's compiled chunk (``load_chart_chunk``: static recursion, payload, cell and
reduction in one call) against the numpy route of the same chart (``load_chart_chunk_reference``:
the robot's batched forward kinematics, numpy payload formula, ``np.maximum.at`` reduction): the
same cells, masses to round-off and the same configuration per cell, ties included (to the
smallest sample index), for any split into chunks."""
from __future__ import annotations

import os

import numpy as np
import pytest

from pkm_dynamics.analysis import actuator_force_limits
from pkm_dynamics.analysis.chart import (LoadChartSetup, chart_setup, combine_parts, load_chart_chunk,
                                         load_chart_chunk_reference)
from pkm_dynamics.analysis.grids import parse_axis
from pkm_dynamics.core import load_robot

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "robots")
CRANE_LIMITS = {"lift": 80e3, "tilt": 60e3, "extension": 15e3}
FIELDS = ("mass", "index", "mass_dynamic", "index_dynamic", "utilisation", "count")


@pytest.fixture(scope="module")
def crane():
    return load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))


def assert_same_chart(a, b):
    """Same cells and configurations (exactly), masses and utilisation to round-off."""
    for f in ("index", "index_dynamic", "count"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)
    for f in ("mass", "mass_dynamic", "utilisation"):
        x, y = getattr(a, f), getattr(b, f)
        finite = np.isfinite(y)
        np.testing.assert_array_equal(x[~finite], y[~finite], err_msg=f)
        np.testing.assert_allclose(x[finite], y[finite], rtol=1e-12, atol=0, err_msg=f)


def test_compiled_chunk_is_the_numpy_chart(crane):
    lower, upper = actuator_force_limits(crane, CRANE_LIMITS)
    setup = chart_setup(crane, parse_axis("reach", "0:6:0.1"), parse_axis("height", "-2:5:0.1"), 12, lower,
                        upper, 1.3, 150.0)
    a = load_chart_chunk(crane, setup, 0, setup.count)
    b = load_chart_chunk_reference(crane, setup, 0, setup.count)
    assert (a.count > 0).sum() > 50 and np.isfinite(a.mass).sum() > 50
    assert_same_chart(a, b)
    parts = [load_chart_chunk(crane, setup, s, min(s + 333, setup.count)) for s in range(0, setup.count, 333)]
    assert_same_chart(combine_parts(parts[::-1]), b)            # any split, any order


def test_ties_go_to_the_smallest_sample_index(crane):
    """Each configuration twice in the sample grid (a repeated slew value, the first actuator:
    the copies are a block of samples apart): equal payloads, the cell keeps the first copy."""
    lower, upper = actuator_force_limits(crane, CRANE_LIMITS)
    base = chart_setup(crane, parse_axis("reach", "0:6:0.25"), parse_axis("height", "-2:5:0.25"), 6, lower,
                       upper, 1.0, 0.0)
    samples = (np.array([0.3, 0.3]),) + base.samples[1:]
    setup = LoadChartSetup(samples, base.reach, base.height, base.lower, base.upper, 1.0, 0.0)
    block = setup.count // 2
    a = load_chart_chunk(crane, setup, 0, setup.count)
    b = load_chart_chunk_reference(crane, setup, 0, setup.count)
    assert_same_chart(a, b)
    hit = a.index >= 0
    assert hit.sum() > 10 and (a.index[hit] < block).all() and (a.count[hit] % 2 == 0).all()
    first = load_chart_chunk(crane, setup, 0, block)
    np.testing.assert_array_equal(a.mass, first.mass)
    second = load_chart_chunk(crane, setup, block, setup.count)    # the copies alone: the same masses
    np.testing.assert_array_equal(second.mass, first.mass)
    assert_same_chart(combine_parts([second, first]), a)
