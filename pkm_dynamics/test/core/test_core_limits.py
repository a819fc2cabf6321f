"""Actuator limits (core/limits.py): the robot's per-actuator table comes from the URDF
``<limit effort velocity>`` of its actuated joints (read here independently, with
ElementTree), and a motion that drives an actuator beyond its effort or velocity limit is named
(joint, quantity, worst value, limit, point) with the utilisations ``|u| / u_max``,
``|xd| / xd_max`` that the inverse dynamics' own efforts give; the hydraulic hook
(``with_bounds``) keeps the tighter limit. Strokes stay a refusal."""
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from numpy.testing import assert_allclose, assert_array_equal
import pytest

from pkm_dynamics.core import StateError, load_robot
from pkm_dynamics.core.hydraulics.valve_cylinder import hydraulic_state
from pkm_dynamics.core.limits import EFFORT, VELOCITY, violations_message
from pkm_dynamics.testing import without_hydraulics

ROBOTS = Path(__file__).resolve().parents[2] / "robots"
X0 = np.array([0.3, 0.2, 0.25, 0.4])


def with_limits(text, joint, effort, velocity):
    """``text`` with the ``<limit>`` of ``joint`` given ``effort`` and ``velocity``."""
    block = re.search(rf'<joint name="{joint}".*?</joint>', text, re.S)
    new = re.sub(r'effort="[^"]*"', f'effort="{effort}"', block.group(0))
    new = re.sub(r'velocity="[^"]*"', f'velocity="{velocity}"', new)
    return text[:block.start()] + new + text[block.end():]


def urdf_limits(text, joint):
    """(effort, velocity) of ``joint`` as the URDF text says (ElementTree, not the core; no
    ``<limit>``: 0, 0)."""
    limit = next(j for j in ET.fromstring(text).iter("joint") if j.get("name") == joint).find("limit")
    return (0.0, 0.0) if limit is None else (float(limit.get("effort")), float(limit.get("velocity")))


@pytest.fixture(scope="module")
def crane_text():
    text = without_hydraulics(str(ROBOTS / "heavy_duty_4dof.urdf"))     # the URDF's limits alone
    text = with_limits(text, "lift", 100000, 0.05)
    return with_limits(text, "extension", 1e9, 0.2)


@pytest.fixture(scope="module")
def crane(crane_text):
    return load_robot(crane_text)


def test_the_table_is_the_urdf_limits(crane, crane_text):
    lim = crane.limits
    assert lim.joints == crane.actuated_joints
    for k, joint in enumerate(lim.joints):
        effort, velocity = urdf_limits(crane_text, joint)
        assert lim.force_max[k] == (effort if effort > 0 else np.inf), joint
        assert lim.velocity_max[k] == (velocity if velocity > 0 else np.inf), joint
    assert lim.force_source[lim.joints.index("lift")] == "URDF effort"
    assert lim.force_source[lim.joints.index("slew")] == "none"


def test_a_fast_motion_names_the_velocity_beyond_its_limit(crane):
    xd = np.array([0.1, -0.12, 0.04, 0.15])       # lift at 0.12 m/s > 0.05; extension 0.15 < 0.2
    u = crane.inverse_dynamics(X0, xd, np.zeros(4))
    (v,) = [v for v in crane.limits.violations(u, xd) if v.quantity == VELOCITY]
    assert (v.joint, v.value, v.bound, v.point) == ("lift", -0.12, 0.05, 0)
    force, velocity = crane.limits.utilisation(u, xd)
    k = crane.actuated_joints.index("extension")
    assert velocity[k] == pytest.approx(0.15 / 0.2, rel=1e-15) and force[crane.actuated_joints.index("slew")] == 0.0
    assert "joint 'lift' velocity -0.12 beyond its limit 0.05" in violations_message([v])


def test_a_hard_acceleration_names_the_effort_beyond_its_limit(crane):
    xdd = np.zeros((3, 4))
    xdd[2, 1] = 10.0                               # the lift cylinder accelerated hard at point 2
    X, XD = np.tile(X0, (3, 1)), np.zeros((3, 4))
    U = crane.inverse_dynamics(X, XD, xdd)
    k = crane.actuated_joints.index("lift")
    assert abs(U[0, k]) < 100000 < abs(U[2, k])     # the motion reaches the limit only at point 2
    (v,) = crane.limits.violations(U, XD)
    assert (v.joint, v.quantity, v.value, v.bound, v.point) == ("lift", EFFORT, U[2, k], 100000.0, 2)
    force, _ = crane.limits.utilisation(U, XD)
    assert_allclose(force[:, k], np.abs(U[:, k]) / 100000.0, rtol=1e-15)
    assert crane.limits.violations(U[:2], XD[:2]) == []


def test_the_pkm_names_its_legs_beyond_effort_and_velocity():
    text = (ROBOTS / "gough_stewart_6ups.urdf").read_text()
    for leg in range(1, 7):
        text = with_limits(text, f"leg{leg}_p", 5, 0.5)
    robot = load_robot(text)
    pose = robot.task_pose(np.zeros(6))
    V = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.8])       # the platform rising at 0.8 m/s
    A = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 30.0])
    sol = robot.joint_motion(pose, V, A)
    u = robot.inverse_dynamics(sol, V, A)
    found = robot.limits.violations(u, sol.actuators_d)
    for quantity, values, bound in ((EFFORT, u, 5.0), (VELOCITY, sol.actuators_d, 0.5)):
        beyond = [robot.actuated_joints[k] for k in np.flatnonzero(np.abs(values) > bound)]
        assert beyond, quantity                      # the motion reaches the limit kind
        named = [v for v in found if v.quantity == quantity]
        assert [v.joint for v in named] == beyond
        assert_array_equal([v.value for v in named], [values[robot.actuated_joints.index(j)] for j in beyond])


def test_the_hydraulic_hook_keeps_the_tighter_limit(crane):
    lim = crane.limits.with_bounds("lift", force_max=80000.0, velocity_max=0.08, source="supply pressure x area")
    k = lim.joints.index("lift")
    assert (lim.force_max[k], lim.velocity_max[k]) == (80000.0, 0.05)
    assert (lim.force_source[k], lim.velocity_source[k]) == ("supply pressure x area", "URDF velocity")
    assert crane.limits.force_max[k] == 100000.0          # the robot's table unchanged
    with pytest.raises(StateError, match="'boom' is not an actuated joint"):
        lim.with_bounds("boom", force_max=1.0)
    with pytest.raises(StateError, match="force_max of joint"):
        lim.with_bounds("lift", force_max=-1.0)


def test_the_cylinders_tighten_the_table_to_supply_pressure_and_valve_flow():
    """The crane example's cylinders (``<hydraulics>``): each force limit the smaller of the URDF
    effort and the stall force at full supply ``max(A_A p_s - A_B p_t, A_B p_s - A_A p_t)`` (areas
    from the bore and rod read here with ElementTree); each velocity limit the rate at which the
    valve model (:func:`hydraulic_state`, a different code path) needs its full spool opening to
    move the cylinder without load."""
    text = (ROBOTS / "heavy_duty_4dof.urdf").read_text()
    robot = load_robot(text)
    hyd = ET.fromstring(text).find("pkm_dynamics").find("hydraulics")
    ps, pt = float(hyd.get("supply_pressure")), float(hyd.get("return_pressure"))
    lim, m = robot.limits, robot.hydraulic_model
    cylinders = list(hyd.iter("cylinder"))
    assert {c.get("joint") for c in cylinders} == set(m.joints) == {"lift", "tilt", "extension"}
    for c in cylinders:
        joint = c.get("joint")
        a = np.pi / 4 * float(c.get("bore")) ** 2
        b = a - np.pi / 4 * float(c.get("rod")) ** 2
        effort = urdf_limits(text, joint)[0] or np.inf
        k = lim.joints.index(joint)
        assert lim.force_max[k] == pytest.approx(min(effort, max(a * ps - b * pt, b * ps - a * pt)), rel=1e-12)
        xd = np.zeros(robot.n)
        xd[k] = lim.velocity_max[k]
        h = hydraulic_state(m, X0[None], xd[None], np.zeros((1, robot.n)), None, check=False)
        j = m.joints.index(joint)
        assert h.spool[0, j] == pytest.approx(m.spool_limit[j], rel=1e-12)


def test_a_position_beyond_a_stroke_is_still_refused(crane):
    x = X0.copy()
    x[crane.actuated_joints.index("lift")] = 5.0
    with pytest.raises(StateError, match="lift"):
        crane.inverse_dynamics(x, np.zeros(4), np.zeros(4))
