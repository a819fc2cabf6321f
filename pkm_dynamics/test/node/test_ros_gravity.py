"""The ``gravity`` parameter reaches the dynamics: a node started on a slope (gravity tilted by
15 degrees about the root x axis, a crane on uneven ground) answers the inverse and forward
dynamics of the core's robot loaded with that gravity, which differ from those under the
default gravity (so a node ignoring the parameter fails here); ``GetModelInfo`` reports it."""
import math

import numpy as np
from numpy.testing import assert_array_equal
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.node.model import STANDARD_GRAVITY

SLOPE = math.radians(15.0)
#: gravity on the slope, in the root link frame [m/s^2]
GRAVITY = [0.0, 9.80665 * math.sin(SLOPE), -9.80665 * math.cos(SLOPE)]
X0 = np.array([0.3, 0.2, 0.25, 0.4])
XD = np.array([0.1, 0.0, -0.1, 0.05])
TASK = np.array([0.02, -0.01, 0.03, 0.01, 0.02, 0.03])


def serve_on_the_slope(served_robot, example_robot, name):
    """(name, the core's robot under GRAVITY, under the default gravity, client, process) of
    a node serving the example ``name`` with the gravity parameter GRAVITY."""
    _, client, process = served_robot(name, f'sloped_{name}', gravity=GRAVITY)
    text = example_robot(name)
    return (name, load_robot(text, gravity=GRAVITY), load_robot(text, gravity=STANDARD_GRAVITY),
            client, process)


@pytest.fixture(scope='module')
def sloped_crane(served_robot, example_robot):
    return serve_on_the_slope(served_robot, example_robot, 'heavy_duty_4dof')


@pytest.fixture(scope='module')
def sloped_pkm(served_robot, example_robot):
    return serve_on_the_slope(served_robot, example_robot, 'gough_stewart_6ups')


@pytest.fixture(params=['sloped_crane', 'sloped_pkm'])
def sloped(request):
    return request.getfixturevalue(request.param)


def test_model_info_reports_the_gravity(sloped):
    from pkm_dynamics_interfaces.srv import GetModelInfo
    _, robot, _, client, _ = sloped
    info = client.call(GetModelInfo, 'get_model_info')
    assert info.success, info.message
    assert list(info.gravity) == GRAVITY


def inverse_dynamics_request(name, robot):
    """One point of InverseDynamics in the robot's space, and the core's (x, xd, xdd)."""
    from geometry_msgs.msg import Transform, Twist
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import JointTrajectoryPoint, MultiDOFJointTrajectoryPoint
    from pkm_dynamics.node.messages.conversions import matrix_quaternion, task_message
    request = InverseDynamics.Request()
    if name == 'heavy_duty_4dof':
        request.trajectory.joint_names = list(robot.actuated_joints)
        request.trajectory.points = [JointTrajectoryPoint(positions=list(X0),
                                                          velocities=list(XD))]
        return request, (X0, XD, np.zeros(4))
    pose = robot.task_pose(TASK)
    V = 0.1 * np.ones(robot.dof)
    t = Transform()
    t.translation.x, t.translation.y, t.translation.z = pose[:3, 3].tolist()
    t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w = matrix_quaternion(
        pose[:3, :3]).tolist()
    request.task_trajectory.points = [MultiDOFJointTrajectoryPoint(
        transforms=[t], velocities=[task_message(V, robot.task_space, Twist)])]
    return request, (pose, V, np.zeros(robot.dof))


def test_inverse_dynamics_under_the_gravity_of_the_parameter(sloped):
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from pkm_dynamics.node.messages.conversions import pose_matrix
    name, robot, flat, client, process = sloped
    request, (x, xd, xdd) = inverse_dynamics_request(name, robot)
    if name != 'heavy_duty_4dof':       # the pose as the node reads it from the message
        t = request.task_trajectory.points[0].transforms[0]
        x = pose_matrix(t)
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert response.success, response.message
    expected = robot.inverse_dynamics(x, xd, xdd)
    assert_array_equal(response.feedforward.points[0].effort, expected)
    # the slope matters: under the default gravity the efforts differ by far more than round-off
    assert np.abs(expected - flat.inverse_dynamics(x, xd, xdd)).max() > 1e-3 * np.abs(
        expected).max()
    assert process.running()


def test_forward_dynamics_under_the_gravity_of_the_parameter(sloped_crane):
    """The crane held by the efforts that balance it on flat ground accelerates on the
    slope, as the core's forward dynamics under that gravity says."""
    from pkm_dynamics_interfaces.srv import ForwardDynamics
    name, robot, flat, client, _ = sloped_crane
    request = ForwardDynamics.Request()
    request.joint_state.name = list(robot.actuated_joints)
    request.joint_state.position, request.joint_state.velocity = list(X0), list(XD)
    u = flat.inverse_dynamics(X0, XD, np.zeros(4))
    request.joint_state.effort = list(u)
    response = client.call(ForwardDynamics, 'forward_dynamics', request)
    assert response.success, response.message
    xdd = robot.forward_dynamics(X0, XD, u)
    assert_array_equal(response.acceleration, xdd)
    assert np.abs(xdd).max() > 1e-3
