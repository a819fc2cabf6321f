"""Actuator limits over ROS: a planner's InverseDynamics / HigherOrderInverseDynamics answer
beyond an actuator's URDF effort or velocity limit still succeeds and names every actuator
beyond one (limit_joints, limit_quantities, limit_values, limit_bounds, limit_points) and says
so in its message; the feedforward keeps publishing and reports the worst utilisation per
actuator on /diagnostics (WARN above 100 %, the joint named). The crane's lift cylinder gets
the limits (effort 100 kN, velocity 0.05 m/s) in the URDF text here, its <hydraulics> left out (the
table is then the URDF's); the expected values are
the core's inverse dynamics of the same motion and the limits as the text says."""
import re

import numpy as np
from numpy.testing import assert_array_equal
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.testing import Client, Collector, matched_publisher, without_hydraulics

from test_ros_diagnostics import wait_for_status

X0 = np.array([0.3, 0.2, 0.25, 0.4])
EFFORT_LIMIT, VELOCITY_LIMIT = 100000.0, 0.05


def with_limits(text, joint, effort, velocity):
    """``text`` with the ``<limit>`` of ``joint`` given ``effort`` and ``velocity``."""
    block = re.search(rf'<joint name="{joint}".*?</joint>', text, re.S)
    new = re.sub(r'effort="[^"]*"', f'effort="{effort}"', block.group(0))
    new = re.sub(r'velocity="[^"]*"', f'velocity="{velocity}"', new)
    return text[:block.start()] + new + text[block.end():]


@pytest.fixture(scope='module')
def limited_crane(module_node, module_ros_node, example_robot):
    text = with_limits(without_hydraulics(example_robot('heavy_duty_4dof')), 'lift', EFFORT_LIMIT, VELOCITY_LIMIT)
    module_node(params={'robot_description': text, 'feedforward.outputs': ['commands'],
                        'completion.enabled': False, 'feedforward.max_age': 0.0},
                name='limited_crane')
    return load_robot(text), Client(module_ros_node, '/limited_crane')


def crane_motion(robot):
    """Three points: at rest, the lift moving at 0.12 m/s (beyond 0.05), the lift accelerated
    at 10 m/s^2 (its force beyond 100 kN)."""
    X, XD, XDD = np.tile(X0, (3, 1)), np.zeros((3, 4)), np.zeros((3, 4))
    k = robot.actuated_joints.index('lift')
    XD[1, k], XDD[2, k] = 0.12, 10.0
    return X, XD, XDD, k


def test_inverse_dynamics_names_the_effort_and_the_velocity_beyond_their_limits(limited_crane):
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import JointTrajectoryPoint
    robot, client = limited_crane
    X, XD, XDD, k = crane_motion(robot)
    U = robot.inverse_dynamics(X, XD, XDD)
    assert abs(U[0, k]) < EFFORT_LIMIT < abs(U[2, k]) and abs(U[1, k]) < EFFORT_LIMIT
    request = InverseDynamics.Request()
    request.trajectory.joint_names = list(robot.actuated_joints)
    request.trajectory.points = [JointTrajectoryPoint(positions=list(x), velocities=list(v),
                                                      accelerations=list(a))
                                 for x, v, a in zip(X, XD, XDD)]
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert response.success, response.message
    assert_array_equal([p.effort for p in response.feedforward.points], U)   # still answered
    assert list(response.limit_joints) == ['lift', 'lift'], response.message
    assert list(response.limit_quantities) == ['effort', 'velocity']
    assert list(response.limit_values) == [U[2, k], 0.12]
    assert list(response.limit_bounds) == [EFFORT_LIMIT, VELOCITY_LIMIT]
    assert list(response.limit_points) == [2, 1]
    assert "joint 'lift' effort" in response.message and 'at point 2' in response.message
    assert "joint 'lift' velocity 0.12 beyond its limit 0.05" in response.message
    # within the limits: nothing named
    request.trajectory.points = request.trajectory.points[:1]
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert response.success and list(response.limit_joints) == [], response.message
    assert 'beyond' not in response.message


def test_higher_order_inverse_dynamics_names_the_velocity_beyond_its_limit(limited_crane):
    from pkm_dynamics_interfaces.srv import HigherOrderInverseDynamics
    robot, client = limited_crane
    X, XD, XDD, k = crane_motion(robot)
    request = HigherOrderInverseDynamics.Request()
    m = request.motion
    m.name = list(robot.actuated_joints)
    m.position, m.velocity = list(X[1]), list(XD[1])
    response = client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics', request)
    assert response.success, response.message
    assert list(response.limit_joints) == ['lift']
    assert list(response.limit_quantities) == ['velocity']
    zero = np.zeros(4)
    expected = robot.higher_order_inverse_dynamics(X[1], XD[1], zero, zero, zero).actuator_motion[1]
    assert abs(expected[k] - 0.12) < 1e-12           # the velocity as the core's HOID has it
    assert list(response.limit_values) == [expected[k]]
    assert list(response.limit_bounds) == [VELOCITY_LIMIT]
    assert "joint 'lift' velocity 0.12 beyond its limit 0.05" in response.message


def test_feedforward_keeps_publishing_and_reports_the_utilisation(limited_crane, module_ros_node):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    robot, _ = limited_crane
    node = module_ros_node
    X, XD, XDD, k = crane_motion(robot)
    diagnostics = Collector(node, DiagnosticArray, '/diagnostics')
    commands = Collector(node, Float64MultiArray, '/limited_crane/feedforward/commands')
    publisher = matched_publisher(node, JointTrajectory, '/limited_crane/reference', 100)
    assert commands.wait_for_publisher(node)
    for row in (1, 0):
        msg = JointTrajectory(joint_names=list(robot.actuated_joints))
        msg.points = [JointTrajectoryPoint(positions=list(X[row]), velocities=list(XD[row]),
                                           accelerations=list(XDD[row]))]
        publisher.publish(msg)
    assert commands.wait_for(node, 2), len(commands.messages)
    assert_array_equal(commands.messages[0].data, robot.inverse_dynamics(X[1], XD[1], XDD[1]))
    name = 'limited_crane: actuator limits'
    share = 100.0 * 0.12 / VELOCITY_LIMIT
    level, message, values = wait_for_status(
        node, diagnostics, name, lambda lv, m, v: v['lift velocity [%]'] != '0.0')
    assert level == DiagnosticStatus.WARN and 'lift velocity' in message, message
    assert values['lift velocity [%]'] == f'{share:.1f}'
    force = 100.0 * np.abs(robot.inverse_dynamics(X[:2], XD[:2], XDD[:2])[:, k]).max() / EFFORT_LIMIT
    assert values['lift effort [%]'] == f'{force:.1f}'
    assert values['slew effort [%]'] == ''                     # no limit in the URDF
    # the next second without references: back to OK
    level, message, values = wait_for_status(
        node, diagnostics, name, lambda lv, m, v: lv == DiagnosticStatus.OK)
    assert values['lift velocity [%]'] == '0.0', values


def test_pkm_inverse_dynamics_names_its_legs_beyond_their_limits(module_node, module_ros_node,
                                                                 example_robot):
    """The Gough-Stewart platform (its legs limited to 5 N and 0.5 m/s here) rising at 0.8 m/s
    and accelerating at 30 m/s^2: each leg beyond a limit named with the effort of the core's
    inverse dynamics and the leg velocity of its inverse kinematics."""
    from geometry_msgs.msg import Accel, Transform, Twist
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import MultiDOFJointTrajectoryPoint
    from pkm_dynamics.node.messages.conversions import matrix_quaternion, pose_matrix, task_message
    text = example_robot('gough_stewart_6ups')
    for leg in range(1, 7):
        text = with_limits(text, f'leg{leg}_p', 5, 0.5)
    module_node(params={'robot_description': text}, name='limited_pkm')
    robot, client = load_robot(text), Client(module_ros_node, '/limited_pkm')
    V = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.8])
    A = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 30.0])
    pose = robot.task_pose(np.zeros(6))
    t = Transform()
    t.translation.x, t.translation.y, t.translation.z = pose[:3, 3].tolist()
    t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w = matrix_quaternion(pose[:3, :3]).tolist()
    request = InverseDynamics.Request()
    request.task_trajectory.points = [MultiDOFJointTrajectoryPoint(
        transforms=[t], velocities=[task_message(V, robot.task_space, Twist)],
        accelerations=[task_message(A, robot.task_space, Accel)])]
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert response.success, response.message
    sol = robot.joint_motion(pose_matrix(t), V, A)
    u = robot.inverse_dynamics(sol, V, A)
    expected = [(j, q, float(values[k]), bound, 0)
                for q, values, bound in (('effort', u, 5.0), ('velocity', sol.actuators_d, 0.5))
                for k, j in enumerate(robot.actuated_joints) if abs(values[k]) > bound]
    assert {q for _, q, *_ in expected} == {'effort', 'velocity'}     # both kinds reached
    got = list(zip(response.limit_joints, response.limit_quantities, response.limit_values,
                   response.limit_bounds, response.limit_points))
    assert [g[:2] + g[3:] for g in got] == [e[:2] + e[3:] for e in expected]
    np.testing.assert_allclose([g[2] for g in got], [e[2] for e in expected], rtol=1e-12)
    assert response.message.count('beyond its limit') == len(expected)
