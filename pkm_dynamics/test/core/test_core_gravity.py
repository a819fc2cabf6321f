"""Gravity at run time (core/gravity.py, ``robot.with_gravity``): a crane on a slope and a PKM on
a tilted base.

Independent routes: (1) the robot with its base tilted by a rotation R (gravity
``R^T (0, 0, -g)`` in its root frame, :func:`base_gravity`) answers the inverse dynamics of an
independently built robot whose URDF has its root joint rotated by R under the standard
gravity (the crane's ``world_to_W`` joint turned; the PKM given a new root link ``world`` and a
fixed joint rotated by R to its ``base``); (2) every public call of ``with_gravity(g)`` equals
that of the robot loaded with ``g`` (:func:`load_robot`), which builds every model afresh; (3)
the robot it was made from is unchanged. Bad gravity and quaternions are refused naming the
culprit."""
from pathlib import Path

import numpy as np
from numpy.testing import assert_allclose
import pytest
from scipy.spatial.transform import Rotation

from pkm_dynamics.core import StateError, load_robot
from pkm_dynamics.core.gravity import STANDARD_GRAVITY, base_gravity, check_gravity, quaternion_rotation

ROBOTS = Path(__file__).resolve().parents[2] / "robots"
#: the base tilted 12 degrees about x and 7 about y (a slope, a vehicle on a ramp)
TILT = Rotation.from_euler("xyz", [12.0, 7.0, 0.0], degrees=True)
CRANE_X = np.array([0.3, 0.2, 0.25, 0.4])
CRANE_XD = np.array([0.1, -0.05, 0.08, 0.05])
CRANE_XDD = np.array([0.2, 0.1, -0.3, 0.2])


def rpy(R) -> str:
    """URDF ``rpy`` (fixed axes x, y, z) of the rotation matrix R."""
    return " ".join(repr(float(a)) for a in Rotation.from_matrix(R).as_euler("xyz"))


def tilted_crane_text():
    """The crane's URDF with its root joint ``world_to_W`` (rpy pi/2 0 0) turned by TILT."""
    text = (ROBOTS / "heavy_duty_4dof.urdf").read_text()
    old = '<origin xyz="0.0 0.0 0.0" rpy="1.5707963267948966 0.0 0.0"/>'
    assert text.count(old) == 1
    R = TILT.as_matrix() @ Rotation.from_euler("x", np.pi / 2).as_matrix()
    return text.replace(old, f'<origin xyz="0.0 0.0 0.0" rpy="{rpy(R)}"/>')


def tilted_pkm_text():
    """The Gough-Stewart platform's URDF under a new root link ``world`` holding its ``base``
    by a fixed joint rotated by TILT."""
    text = (ROBOTS / "gough_stewart_6ups.urdf").read_text()
    head = text.index(">", text.index("<robot")) + 1
    root = ('<link name="world"/><joint name="world_to_base" type="fixed"><parent link="world"/>'
            f'<child link="base"/><origin xyz="0 0 0" rpy="{rpy(TILT.as_matrix())}"/></joint>')
    return text[:head] + root + text[head:]


def tilt_gravity():
    """Gravity in the tilted base's frame, from its orientation quaternion (x, y, z, w)."""
    return base_gravity(TILT.as_quat())


def test_base_gravity_is_the_world_gravity_in_the_base_frame():
    g = tilt_gravity()
    assert_allclose(TILT.as_matrix() @ g, [0.0, 0.0, -STANDARD_GRAVITY], atol=1e-14)
    assert_allclose(quaternion_rotation(TILT.as_quat()), TILT.as_matrix(), atol=1e-15)
    assert_allclose(base_gravity([0.0, 0.0, 0.0, 1.0]), [0.0, 0.0, -STANDARD_GRAVITY])


def test_crane_on_a_slope_equals_the_crane_with_its_root_turned():
    flat = load_robot(str(ROBOTS / "heavy_duty_4dof.urdf"))
    turned = load_robot(tilted_crane_text())
    tilted = flat.with_gravity(tilt_gravity())
    expected = turned.inverse_dynamics(CRANE_X, CRANE_XD, CRANE_XDD)
    assert_allclose(tilted.inverse_dynamics(CRANE_X, CRANE_XD, CRANE_XDD), expected, rtol=1e-10, atol=1e-8)
    # the tilt matters: on flat ground the efforts differ by far more than round-off
    assert np.abs(flat.inverse_dynamics(CRANE_X, CRANE_XD, CRANE_XDD) - expected).max() > 1e-3 * np.abs(
        expected).max()
    xdd = np.array([0.3, -0.2, 0.1, 0.4])
    assert_allclose(tilted.higher_order_inverse_dynamics(CRANE_X, CRANE_XD, xdd, 0 * xdd, 0 * xdd).u,
                    turned.inverse_dynamics(CRANE_X, CRANE_XD, xdd), rtol=1e-9, atol=1e-7)


def test_pkm_on_a_tilted_base_equals_the_pkm_with_its_root_turned():
    flat = load_robot(str(ROBOTS / "gough_stewart_6ups.urdf"))
    turned = load_robot(tilted_pkm_text())
    tilted = flat.with_gravity(tilt_gravity())
    T = np.eye(4)
    T[:3, :3] = TILT.as_matrix()
    pose = flat.task_pose(np.array([0.01, -0.02, 0.015, 0.03, -0.02, 0.01]))
    V, A = np.array([0.1, -0.05, 0.08, 0.05, 0.02, -0.1]), np.array([0.3, 0.1, -0.2, 0.4, -0.1, 0.2])
    expected = turned.inverse_dynamics(T @ pose, V, A)
    assert_allclose(tilted.inverse_dynamics(pose, V, A), expected, rtol=1e-10, atol=1e-9)
    assert np.abs(flat.inverse_dynamics(pose, V, A) - expected).max() > 1e-3 * np.abs(expected).max()
    zero = np.zeros(6)
    assert_allclose(tilted.higher_order_inverse_dynamics(pose, V, A, zero, zero).u,
                    turned.inverse_dynamics(T @ pose, V, A), rtol=1e-9, atol=1e-8)


def calls(robot, f):
    """Every public call's answer that gravity enters, at one state in the robot's space
    (``f``: the efforts of the forward dynamics and the reactions)."""
    if robot.state_space == "actuator":
        x, xd, xdd = CRANE_X, CRANE_XD, CRANE_XDD
        third = np.array([1.0, -0.5, 0.3, 0.2])
    else:
        x = robot.task_pose(np.array([0.01, -0.02, 0.015, 0.03, -0.02, 0.01]))
        xd, xdd = np.array([0.1, -0.05, 0.08, 0.05, 0.02, -0.1]), np.array([0.3, 0.1, -0.2, 0.4, -0.1, 0.2])
        third = np.array([1.0, -0.5, 0.3, 0.2, 0.1, -0.2])
    u = robot.inverse_dynamics(x, xd, xdd)
    batch = robot.inverse_dynamics(np.stack([x, x]), np.stack([xd, 0 * xd]), np.stack([xdd, xdd]))
    hoid = robot.higher_order_inverse_dynamics(x, xd, xdd, third, 0 * third)
    taylor = robot.higher_order_inverse_dynamics(x, xd, xdd, third, 0 * third, method="taylor")
    reactions = robot.joint_reactions(x, xd, f)
    idd = robot.inverse_dynamics_derivatives(x, xd, xdd)
    fdd = robot.forward_dynamics_derivatives(x, xd, f)
    sim = robot.simulate(x, xd, 0.01)
    return {"u": u, "batch": batch, "fd": robot.forward_dynamics(x, xd, f),
            "hoid u": hoid.u, "hoid du": hoid.du, "hoid ddu": hoid.ddu, "taylor ddu": taylor.ddu,
            "joint wrenches": reactions.joint_wrenches, "cut wrenches": reactions.cut_wrenches,
            "id d_x": idd.d_x, "fd d_x": fdd.d_x,
            "simulated": np.asarray(sim.xd[-1])}


@pytest.mark.parametrize("name", ["heavy_duty_4dof", "gough_stewart_6ups"])
def test_with_gravity_answers_as_the_robot_loaded_with_that_gravity(name):
    path = str(ROBOTS / f"{name}.urdf")
    g = tilt_gravity()
    robot = load_robot(path)
    f = 10.0 + (robot.inverse_dynamics(CRANE_X, CRANE_XD, CRANE_XDD) if robot.state_space == "actuator" else
                np.linspace(50.0, 80.0, 6))
    before = calls(robot, f)
    copied = calls(robot.with_gravity(g), f)
    loaded = calls(load_robot(path, gravity=g), f)
    for key, value in loaded.items():
        assert_allclose(copied[key], value, rtol=1e-12, atol=1e-9, err_msg=key)
        assert np.abs(before[key] - value).max() > 1e-6, key          # gravity reaches it
    for key, value in calls(robot, f).items():                           # the original unchanged
        assert_allclose(value, before[key], rtol=0, atol=0, err_msg=key)
    assert_allclose(robot.with_gravity(g).gravity, g)


@pytest.mark.parametrize("bad, culprit", [([np.nan, 0.0, -9.8], "NaN"), ([0.0, 0.0], "3 numbers"),
                                          ([0.0, 0.0, -1e6], "magnitude"), ("down", "3 numbers")])
def test_bad_gravity_is_refused_naming_it(bad, culprit):
    robot = load_robot(str(ROBOTS / "heavy_duty_4dof.urdf"))
    with pytest.raises(StateError, match="gravity") as err:
        robot.with_gravity(bad)
    assert culprit in str(err.value)
    with pytest.raises(StateError, match=culprit):
        check_gravity(bad)


@pytest.mark.parametrize("bad, culprit", [([0.0, 0.0, 0.0, 0.0], "norm 0"),
                                          ([np.nan, 0.0, 0.0, 1.0], "NaN"), ([0.0, 0.0, 1.0], "quaternion")])
def test_bad_orientation_is_refused_naming_it(bad, culprit):
    with pytest.raises(StateError, match="base orientation") as err:
        base_gravity(bad, what="base orientation")
    assert culprit in str(err.value)


def test_a_solution_of_the_robot_on_flat_ground_is_not_reused_on_the_slope():
    """A PKM inverse kinematics solution carries the limb forces and efforts of its motion
    (computed under its robot's gravity); the robot under another gravity recomputes them."""
    flat = load_robot(str(ROBOTS / "gough_stewart_6ups.urdf"))
    tilted = flat.with_gravity(tilt_gravity())
    pose = flat.task_pose(np.array([0.01, -0.02, 0.015, 0.03, -0.02, 0.01]))
    V, A = np.array([0.1, -0.05, 0.08, 0.05, 0.02, -0.1]), np.array([0.3, 0.1, -0.2, 0.4, -0.1, 0.2])
    solution = flat.joint_motion(pose, V, A)
    expected = tilted.inverse_dynamics(pose, V, A)
    assert_allclose(tilted.inverse_dynamics(solution, V, A), expected, rtol=1e-12, atol=1e-9)
    assert_allclose(flat.inverse_dynamics(solution, V, A), flat.inverse_dynamics(pose, V, A), rtol=1e-12)
