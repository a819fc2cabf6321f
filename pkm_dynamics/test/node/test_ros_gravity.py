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


# -- gravity at run time: ~/base_imu (sensor_msgs/Imu) and ~/gravity (Vector3Stamped) ---------

#: the base tilted 12 degrees about x and 7 about y, as a quaternion (x, y, z, w) (scipy, not
#: the core's conversion)
def tilt_quaternion():
    from scipy.spatial.transform import Rotation
    return Rotation.from_euler('xyz', [12.0, 7.0, 0.0], degrees=True)


def model_gravity(client):
    from pkm_dynamics_interfaces.srv import GetModelInfo
    info = client.call(GetModelInfo, 'get_model_info')
    assert info.success, info.message
    return list(info.gravity)


def wait_for_gravity(node, client, condition, publish, timeout=20.0):
    """``publish()`` (again every 0.2 s: the topics are best effort, and a message sent right
    after discovery may be lost) until GetModelInfo's gravity satisfies ``condition``; returns
    that gravity (or the last one seen)."""
    import time
    from pkm_dynamics.testing import spin_until
    end = time.monotonic() + timeout
    while True:
        publish()
        spin_until(node, lambda: False, 0.2)
        g = model_gravity(client)
        if condition(g) or time.monotonic() > end:
            return g


@pytest.fixture(scope='module')
def running_crane(served_robot, example_robot, module_ros_node):
    _, client, process = served_robot('heavy_duty_4dof', 'running_crane',
                                      **{'feedforward.outputs': ['commands'],
                                         'feedforward.max_age': 0.0, 'warning_period': 0.0})
    return example_robot('heavy_duty_4dof'), client, process


@pytest.fixture(scope='module')
def running_pkm(served_robot, example_robot):
    _, client, process = served_robot('gough_stewart_6ups', 'running_pkm')
    return example_robot('gough_stewart_6ups'), client, process


def imu_publisher(node, topic, quaternion, frame=''):
    """A ``publish()`` of an Imu message with ``quaternion`` (x, y, z, w) on ``topic``."""
    from sensor_msgs.msg import Imu
    from pkm_dynamics.testing import matched_publisher
    publisher = matched_publisher(node, Imu, topic, 1)
    msg = Imu()
    msg.header.frame_id = frame
    msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = (
        float(v) for v in quaternion)
    return lambda: publisher.publish(msg)


def vector_publisher(node, topic, g):
    """A ``publish()`` of a Vector3Stamped ``g`` on ``topic``."""
    from geometry_msgs.msg import Vector3Stamped
    from pkm_dynamics.testing import matched_publisher
    publisher = matched_publisher(node, Vector3Stamped, topic, 1)
    msg = Vector3Stamped()
    msg.vector.x, msg.vector.y, msg.vector.z = (float(v) for v in g)
    return lambda: publisher.publish(msg)


def expected_tilt_gravity():
    """R^T (0, 0, -g) of the tilt, by scipy (independent of core/gravity.py)."""
    return tilt_quaternion().inv().apply([0.0, 0.0, -9.80665])


@pytest.mark.parametrize('which', ['running_crane', 'running_pkm'])
def test_imu_orientation_tilts_the_gravity_of_every_answer(which, request, module_ros_node):
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from pkm_dynamics.node.messages.conversions import pose_matrix
    text, client, process = request.getfixturevalue(which)
    name = 'heavy_duty_4dof' if which == 'running_crane' else 'gough_stewart_6ups'
    g = expected_tilt_gravity()
    publish = imu_publisher(module_ros_node, f'/{which}/base_imu', tilt_quaternion().as_quat())
    got = wait_for_gravity(module_ros_node, client, lambda v: np.allclose(v, g, atol=1e-12),
                           publish)
    np.testing.assert_allclose(got, g, atol=1e-12)
    robot = load_robot(text, gravity=got)          # every model built afresh with that gravity
    req, (x, xd, xdd) = inverse_dynamics_request(name, robot)
    if name != 'heavy_duty_4dof':
        x = pose_matrix(req.task_trajectory.points[0].transforms[0])
    response = client.call(InverseDynamics, 'inverse_dynamics', req)
    assert response.success, response.message
    np.testing.assert_allclose(response.feedforward.points[0].effort,
                               robot.inverse_dynamics(x, xd, xdd), rtol=1e-12, atol=1e-9)
    # zero gravity (in space), by the gravity vector topic
    publish = vector_publisher(module_ros_node, f'/{which}/gravity', [0.0, 0.0, 0.0])
    assert wait_for_gravity(module_ros_node, client, lambda v: v == [0.0] * 3, publish) == [0.0] * 3
    response = client.call(InverseDynamics, 'inverse_dynamics', req)
    np.testing.assert_allclose(response.feedforward.points[0].effort,
                               load_robot(text, gravity=[0.0, 0.0, 0.0]).inverse_dynamics(x, xd, xdd),
                               rtol=1e-12, atol=1e-9)
    assert process.running()


def test_the_feedforward_uses_the_latest_gravity(running_crane, module_ros_node):
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from pkm_dynamics.testing import Collector, matched_publisher
    text, client, _ = running_crane
    node = module_ros_node
    commands = Collector(node, Float64MultiArray, '/running_crane/feedforward/commands')
    reference = matched_publisher(node, JointTrajectory, '/running_crane/reference', 10)
    assert commands.wait_for_publisher(node)
    msg = JointTrajectory(joint_names=list(load_robot(text).actuated_joints))
    msg.points = [JointTrajectoryPoint(positions=list(X0), velocities=list(XD))]
    for k, g in enumerate(([0.0, 2.0, -9.5], [1.0, 0.0, -9.7])):
        publish = vector_publisher(node, '/running_crane/gravity', g)
        assert wait_for_gravity(node, client, lambda v, g=g: v == g, publish) == g
        reference.publish(msg)
        assert commands.wait_for(node, k + 1)
        np.testing.assert_allclose(commands.messages[k].data,
                                   load_robot(text, gravity=g).inverse_dynamics(X0, XD, 0 * XD),
                                   rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize('topic, values, culprit', [
    ('base_imu', [0.0, 0.0, 0.0, 0.0], 'norm 0'),
    ('base_imu', [float('nan'), 0.0, 0.0, 1.0], 'NaN'),
    ('gravity', [float('nan'), 0.0, -9.81], 'NaN'),
    ('base_imu_frame', [0.0, 0.0, 0.0, 1.0], 'not the root link')])
def test_bad_gravity_input_is_refused_naming_it(running_crane, module_ros_node, topic, values,
                                                culprit):
    from diagnostic_msgs.msg import DiagnosticArray
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from pkm_dynamics.testing import Collector
    from test_ros_diagnostics import wait_for_status
    text, client, process = running_crane
    node = module_ros_node
    before = model_gravity(client)
    diagnostics = Collector(node, DiagnosticArray, '/diagnostics')
    if topic == 'gravity':
        publish = vector_publisher(node, '/running_crane/gravity', values)
    else:
        publish = imu_publisher(node, '/running_crane/base_imu', values,
                                'tool0' if topic == 'base_imu_frame' else '')
    what = topic.split('_frame')[0] + ':'

    def refused(level, message, values):
        publish()                                    # best effort: again until it arrives
        return values['last error'].startswith(what) and culprit in values['last error']
    _, _, seen = wait_for_status(node, diagnostics, 'running_crane: dynamics', refused)
    assert 'the gravity stays' in seen['last error']
    assert model_gravity(client) == before           # the previous gravity stays
    req, (x, xd, xdd) = inverse_dynamics_request('heavy_duty_4dof', load_robot(text))
    response = client.call(InverseDynamics, 'inverse_dynamics', req)
    assert response.success, response.message        # and the node serves
    np.testing.assert_allclose(response.feedforward.points[0].effort,
                               load_robot(text, gravity=before).inverse_dynamics(x, xd, xdd),
                               rtol=1e-12, atol=1e-9)
    assert process.running()


def test_a_model_rebuilt_later_keeps_the_latest_gravity(running_crane, module_ros_node):
    """A payload set after a gravity update rebuilds the model: with that gravity, not the
    parameter's."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    text, client, _ = running_crane
    g = [0.5, -1.5, -9.6]
    publish = vector_publisher(module_ros_node, '/running_crane/gravity', g)
    assert wait_for_gravity(module_ros_node, client, lambda v: v == g, publish) == g
    request = SetParameters.Request(parameters=[Parameter(
        name='payload.mass', value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                  double_value=50.0))])
    try:
        result = client.call(SetParameters, 'set_parameters', request)
        assert result.results[0].successful, result.results[0].reason
        assert model_gravity(client) == g
    finally:               # the module's node serves the other tests too
        request.parameters[0].value.double_value = 0.0
        assert client.call(SetParameters, 'set_parameters', request).results[0].successful
