"""The maps of pkm_dynamics.analysis against independent per-point computations through the public
API (DESIGN.md, *Verification policy*): the load chart's payload by bisection on single inverse
dynamics calls of robots that carry the payload (core/description/payload.py, not the wrench the
map uses); kappa(J_IK), the loop kappa(G_y), forces and M_t by cold one-pose calls; the grid, the
errors, and nothing half-written."""
from __future__ import annotations

import os

import numpy as np
import pytest

from pkm_dynamics.analysis import (GridError, LimitError, UnreachableGridError, actuator_force_limits, load_chart,
                                   load_dataset, parse_axis, save_dataset, workspace_map)
from pkm_dynamics.analysis.grids import chunk_bounds, grid_points, serpentine_order
from pkm_dynamics.analysis.workspace import grid_pose, grid_poses
from pkm_dynamics.core import load_robot
from pkm_dynamics.core.description.payload import Payload, robot_with_payload
from pkm_dynamics.core.limb.ik_refinement import loop_conditions
from pkm_dynamics.core.spatial.se3 import rpy_matrix
from pkm_dynamics.testing import without_hydraulics

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "robots")
CRANE_LIMITS = {"lift": 80e3, "tilt": 60e3, "extension": 15e3}


@pytest.fixture(scope="module")
def crane():
    return load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))


@pytest.fixture(scope="module")
def irsbot():
    return load_robot(os.path.join(ROBOTS, "irsbot2.urdf"))


@pytest.fixture(scope="module")
def chart(crane):
    return load_chart(crane, "0:4.5:0.25", "-2:5.5:0.25", samples=14, limits=CRANE_LIMITS, dynamic_factor=1.3,
                      payload=150.0, chunk=700, workers=0)


def within_limits(robot, x, mass, lower, upper) -> bool:
    """One public static ID call of a robot carrying ``mass`` kg at the tool: all forces in limits."""
    r = robot if mass == 0 else robot_with_payload(robot, Payload(mass))
    u = r.inverse_dynamics(x, np.zeros_like(x), np.zeros_like(x))
    return bool(np.all(u >= lower) and np.all(u <= upper))


def bisect_payload(robot, x, lower, upper, hi=1e4, steps=40) -> float:
    lo = 0.0
    assert within_limits(robot, x, lo, lower, upper)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if within_limits(robot, x, mid, lower, upper) else (lo, mid)
    return lo


def test_load_chart_payload_by_bisection_on_single_id_calls(crane, chart):
    lower, upper = actuator_force_limits(crane, CRANE_LIMITS)
    rng = np.random.default_rng(29)
    cells = np.argwhere(np.isfinite(chart["payload"].values))
    assert len(cells) > 20
    for i, j in cells[rng.choice(len(cells), 4, replace=False)]:
        cell = chart.isel(reach=i, height=j)
        x = cell["actuators"].values
        m = float(cell["payload"])
        assert bisect_payload(crane, x, lower, upper) == pytest.approx(m, rel=1e-6, abs=1e-6)
        # the dynamic factor phi = 1.3 multiplies the payload's load: at this configuration the
        # largest mass is m / phi, and the cell's envelope is at least that
        assert float(cell["payload_dynamic"]) >= m / 1.3 * (1 - 1e-9)
        # the configuration puts the tool in its cell
        p = crane.forward_kinematics(x)[:3, 3]
        assert abs(np.hypot(p[0], p[1]) - float(cell["reach"])) <= 0.125 + 1e-9
        assert abs(p[2] - float(cell["height"])) <= 0.125 + 1e-9


def test_load_chart_utilisation_is_one_at_the_largest_payload(crane, chart):
    """Consistency of the two maps: the utilisation under m_max of its configuration is 1."""
    lower, upper = actuator_force_limits(crane, CRANE_LIMITS)
    i, j = np.argwhere(np.isfinite(chart["payload"].values))[5]
    cell = chart.isel(reach=i, height=j)
    x, m = cell["actuators"].values, float(cell["payload"])
    u = robot_with_payload(crane, Payload(m)).inverse_dynamics(x, np.zeros(4), np.zeros(4))
    assert np.max(np.where(u >= 0, u / upper, u / lower)) == pytest.approx(1.0, rel=1e-9)
    assert np.nanmax(chart["utilisation"].values) > 0
    assert ((chart["samples"] > 0) == chart["reachable"]).all()


def test_workspace_map_against_cold_one_pose_calls(irsbot):
    W = np.array([0.0, 0.3, 0.0, 5.0, 0.0, -20.0])
    ds = workspace_map(irsbot, {"x": "-0.06:0.06:0.02", "z": "-0.04:0.04:0.02"}, wrench=W, chunk=10, workers=0)
    assert ds["reachable"].values.all()
    rng = np.random.default_rng(3)
    for i, j in zip(rng.integers(0, ds.sizes["x"], 4), rng.integers(0, ds.sizes["z"], 4)):
        pt = ds.isel(x=i, z=j)
        pose = irsbot.reference_pose.copy()
        pose[:3, 3] += pose[:3, :3] @ np.array([float(pt["x"]), 0.0, float(pt["z"])])
        sol = irsbot.inverse_kinematics(pose)                       # cold, from the reference
        assert float(pt["kappa_J"]) == pytest.approx(np.linalg.cond(sol.J_IK), rel=1e-8)
        worst = max([1.0] + [loop_conditions(lb, st).max() for lb, st in zip(irsbot.limbs, sol.limb_states)
                             if lb.loops])
        assert float(pt["kappa_G"]) == pytest.approx(worst, rel=1e-8)
        z2 = np.zeros(2)
        np.testing.assert_allclose(pt["forces"].values, irsbot.inverse_dynamics(pose, z2, z2, W), rtol=1e-8,
                                   atol=1e-9)
        assert float(pt["mass_max"]) == pytest.approx(np.linalg.eigvalsh(irsbot.mass_matrix(sol))[-1], rel=1e-8)


def test_workspace_payload_is_a_robot_carrying_it(irsbot):
    ds = workspace_map(irsbot, {"x": "-0.02:0.02:0.02"}, payload=0.7, workers=0)
    loaded = robot_with_payload(irsbot, Payload(0.7))
    pose = irsbot.reference_pose.copy()
    pose[:3, 3] += pose[:3, :3] @ np.array([0.02, 0.0, 0.0])
    z2 = np.zeros(2)
    np.testing.assert_allclose(ds["forces"].isel(x=2).values, loaded.inverse_dynamics(pose, z2, z2), rtol=1e-8)


def test_grid_poses_are_the_displaced_and_rotated_reference_pose(irsbot):
    """``(R_ref R, p_ref + R_ref d)`` with ``R`` the URDF roll-pitch-yaw matrix, for every point of
    a batch and for one point (``grid_pose``); coordinates a grid does not name are 0."""
    names = ["yaw", "x", "roll", "z", "pitch", "y"]
    pts = np.random.default_rng(5).uniform(-0.4, 0.4, (7, 6))
    C = irsbot.reference_pose
    for p, got in zip(pts, grid_poses(irsbot, names, pts)):
        c = dict(zip(names, p))
        want = C.copy()
        want[:3, :3] = C[:3, :3] @ rpy_matrix([c["roll"], c["pitch"], c["yaw"]])
        want[:3, 3] += C[:3, :3] @ np.array([c["x"], c["y"], c["z"]])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
        np.testing.assert_allclose(grid_pose(irsbot, c), want, rtol=0, atol=1e-15)
    want = C.copy()
    want[:3, 3] += C[:3, 2] * 0.03
    np.testing.assert_allclose(grid_poses(irsbot, ["z"], [[0.03]])[0], want, rtol=0, atol=1e-15)


def test_serpentine_order_steps_to_neighbours_and_covers_the_grid():
    for shape in ((5,), (3, 4), (2, 3, 4)):
        order = serpentine_order(shape)
        assert sorted(order) == list(range(int(np.prod(shape))))
        idx = np.array(np.unravel_index(order, shape)).T
        assert (np.abs(np.diff(idx, axis=0)).sum(axis=1) == 1).all()
    pts, order = grid_points({"a": np.arange(3.0), "b": np.arange(2.0)})
    assert pts.tolist() == [[0, 0], [0, 1], [1, 1], [1, 0], [2, 0], [2, 1]]
    assert chunk_bounds(5, 2) == [(0, 2), (2, 4), (4, 5)]


@pytest.mark.parametrize("spec", ["0:1", "a:b:c", "1:0:0.1", "0:1:0", "0:1:-1", "nan", "", "0:inf:1", "0:1e9:1e-3"])
def test_bad_grid_spec_names_the_axis(spec):
    with pytest.raises(GridError, match="axis 'reach'"):
        parse_axis("reach", spec)


def test_grid_spec_includes_its_stop():
    assert parse_axis("h", "-2:5:0.05").size == 141 and parse_axis("h", "-2:5:0.05")[-1] == pytest.approx(5.0)


def test_bad_limits_and_axes_raise_named_errors(crane, irsbot):
    bare = load_robot(without_hydraulics(os.path.join(ROBOTS, "heavy_duty_4dof.urdf")))   # no URDF effort either
    with pytest.raises(LimitError, match="no actuator .* has a force limit"):
        load_chart(bare, "0:1:0.5", "0:1:0.5", samples=3, workers=0)
    with pytest.raises(LimitError, match="'boom'"):
        actuator_force_limits(crane, {"boom": 1.0})
    with pytest.raises(LimitError, match="'lift'"):
        actuator_force_limits(crane, {"lift": (5.0, 10.0)})
    with pytest.raises(GridError, match="'y' moves vy"):
        workspace_map(irsbot, {"y": "0:0.1:0.05"}, workers=0)
    with pytest.raises(GridError, match="samples"):
        load_chart(crane, "0:1:0.5", "0:1:0.5", samples=1, limits=CRANE_LIMITS, workers=0)


def test_unreachable_grids_raise_and_write_nothing(crane, irsbot, tmp_path):
    from pkm_dynamics.analysis.cli import main
    with pytest.raises(UnreachableGridError, match="tool spans reach"):
        load_chart(crane, "50:60:1", "50:60:1", samples=4, limits=CRANE_LIMITS, workers=0)
    with pytest.raises(UnreachableGridError, match="no point of the grid"):
        workspace_map(irsbot, {"x": "3:4:0.5"}, workers=0)
    out = tmp_path / "chart.nc"
    code = main(["load-chart", os.path.join(ROBOTS, "heavy_duty_4dof.urdf"), "--reach", "50:60:1", "--height",
                 "-60:-50:1", "--samples", "4", "--force-limit", "lift=80000", "--workers", "0", "--no-progress",
                 "--out", str(out)])
    assert code == 2 and list(tmp_path.iterdir()) == []


def test_saved_dataset_round_trip_and_atomic_write(chart, tmp_path):
    path = save_dataset(chart, tmp_path / "c.nc")
    back = load_dataset(path)
    np.testing.assert_array_equal(back["payload"].values, chart["payload"].values)
    assert back.attrs["robot"] == chart.attrs["robot"] and back["payload"].attrs["units"] == "kg"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.nc"]
    with pytest.raises(ValueError, match="unknown format"):
        save_dataset(chart, tmp_path / "c.txt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.nc"]


def test_the_command_line_examples_on_small_grids(tmp_path):
    """The README's examples (doc/analysis.rst) with coarse grids, in this process."""
    from pkm_dynamics.analysis.cli import main
    crane = ["load-chart", os.path.join(ROBOTS, "heavy_duty_4dof.urdf"), "--reach", "0:6:0.5", "--height", "-2:5:0.5",
             "--samples", "8", "--force-limit", "lift=80000", "--force-limit", "tilt=60000", "--force-limit",
             "extension=15000", "--dynamic-factor", "1.3", "--payload", "200", "--workers", "0", "--no-progress",
             "--out", str(tmp_path / "chart.nc"), "--plot", str(tmp_path / "chart.png")]
    assert main(crane) == 0
    chart = load_dataset(tmp_path / "chart.nc")
    assert chart.attrs["robot"] == "hiab_xs031_4dof" and chart.sizes == {"reach": 13, "height": 15, "actuator": 4}
    assert float(chart["payload_dynamic"].max()) < float(chart["payload"].max())
    ws = ["workspace", os.path.join(ROBOTS, "irsbot2.urdf"), "--x", "-0.1:0.1:0.05", "--z", "-0.1:0.1:0.05",
          "--payload", "0.5", "--workers", "0", "--no-progress", "--out", str(tmp_path / "irsbot2.nc"),
          "--plot", str(tmp_path / "irsbot2.png")]
    assert main(ws) == 0
    irs = load_dataset(tmp_path / "irsbot2.nc")
    assert irs["kappa_J"].dims == ("x", "z") and irs.attrs["payload_kg"] == 0.5
    assert (tmp_path / "chart.png").stat().st_size > 10_000 and (tmp_path / "irsbot2.png").stat().st_size > 10_000
    assert main(["load-chart", os.path.join(ROBOTS, "heavy_duty_4dof.urdf"), "--reach", "0:6:-1", "--height", "0",
                 "--workers", "0", "--out", str(tmp_path / "bad.nc")]) == 2
    assert not (tmp_path / "bad.nc").exists()
