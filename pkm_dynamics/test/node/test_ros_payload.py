"""The run-time payload of the installed node (parameters payload.mass, payload.com,
payload.inertia): every service and the feedforward answer the numbers of the same robot whose
URDF text carries the load as an extra link fixed to the end effector / platform (computed
here by the core); GetModelInfo reports it; an invalid payload is refused naming the culprit
and the previous model keeps serving."""
import numpy as np
from numpy.testing import assert_allclose
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.core.description.payload import Payload, payload_link
from pkm_dynamics.testing import Client, Collector, matched_publisher

from payload_links import with_load_link

CHAIN, PKM = 'heavy_duty_4dof', 'planar_3rrr'
LOAD = Payload.from_urdf_inertia(250.0, [0.1, -0.05, 0.3], [4.0, 0.1, -0.2, 3.0, 0.05, 5.0])
PKM_LOAD = Payload.from_urdf_inertia(3.0, [0.02, 0.01, 0.05], [0.02, 0.0, 0.001, 0.03, 0.0,
                                                                0.04])
X0 = np.array([0.3, 0.2, 0.25, 0.4])


def payload_parameters(p):
    return {'payload.mass': float(p.mass), 'payload.com': [float(c) for c in p.com],
            'payload.inertia': [float(p.inertia[i, j]) for i, j in
                                ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))]}


def set_parameters(client, values):
    """Set ``values`` (name: float or list of floats) atomically; the SetParametersResult."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParametersAtomically
    params = []
    for name, v in values.items():
        if isinstance(v, list):
            value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY,
                                   double_array_value=v)
        else:
            value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=v)
        params.append(Parameter(name=name, value=value))
    return client.call(SetParametersAtomically, 'set_parameters_atomically',
                       SetParametersAtomically.Request(parameters=params)).result


def model_info(client):
    from pkm_dynamics_interfaces.srv import GetModelInfo
    return client.call(GetModelInfo, 'get_model_info')


@pytest.fixture(scope='module')
def chain(module_node, module_ros_node, example_robot):
    text = example_robot(CHAIN)
    module_node(params={'robot_description': text}, name='payload_chain')
    plain = load_robot(text)
    loaded = load_robot(with_load_link(text, payload_link(plain.description), LOAD))
    return plain, loaded, Client(module_ros_node, '/payload_chain')


def inverse_dynamics(client, names, x, xd, xdd):
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import JointTrajectoryPoint
    request = InverseDynamics.Request()
    request.trajectory.joint_names = names
    request.trajectory.points = [JointTrajectoryPoint(
        positions=list(x), velocities=list(xd), accelerations=list(xdd))]
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert response.success, response.message
    return np.array(response.feedforward.points[0].effort)


def test_crane_services_and_feedforward_carry_the_payload(chain, module_ros_node):
    from pkm_dynamics_interfaces.srv import ForwardDynamics, HigherOrderInverseDynamics
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    plain, loaded, client = chain
    names = list(plain.actuated_joints)
    x, xd, xdd = X0, np.full(4, 0.05), np.full(4, -0.1)
    assert_allclose(inverse_dynamics(client, names, x, xd, xdd),
                    plain.inverse_dynamics(x, xd, xdd), rtol=1e-12)
    result = set_parameters(client, payload_parameters(LOAD))
    assert result.successful, result.reason
    info = model_info(client)
    assert info.payload_link == payload_link(plain.description) == plain.end_effector
    assert info.payload_mass == LOAD.mass
    assert list(info.payload_com) == list(LOAD.com)
    assert list(info.payload_inertia) == payload_parameters(LOAD)['payload.inertia']
    assert info.total_mass == pytest.approx(loaded.tree.total_mass, rel=1e-14)
    # inverse, forward and higher-order inverse dynamics
    f = loaded.inverse_dynamics(x, xd, xdd)
    assert np.linalg.norm(f - plain.inverse_dynamics(x, xd, xdd)) > 1e-3 * np.linalg.norm(f)
    assert_allclose(inverse_dynamics(client, names, x, xd, xdd), f, rtol=1e-10)
    request = ForwardDynamics.Request()
    request.joint_state.name = names
    request.joint_state.position, request.joint_state.velocity = list(x), list(xd)
    request.joint_state.effort = list(f)
    fd = client.call(ForwardDynamics, 'forward_dynamics', request)
    assert fd.success, fd.message
    assert_allclose(fd.acceleration, xdd, rtol=1e-8, atol=1e-9)
    hoid = HigherOrderInverseDynamics.Request()
    hoid.motion.name = names
    hoid.motion.position, hoid.motion.velocity, hoid.motion.acceleration = (
        list(x), list(xd), list(xdd))
    hoid.motion.jerk = hoid.motion.snap = [0.0] * 4
    h = client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics', hoid)
    assert h.success, h.message
    assert_allclose(h.effort.effort, f, rtol=1e-9)
    # the feedforward topic
    commands = Collector(module_ros_node, Float64MultiArray, '/payload_chain/feedforward/commands')
    publisher = matched_publisher(module_ros_node, JointTrajectory, '/payload_chain/reference',
                                  10)
    assert commands.wait_for_publisher(module_ros_node)
    publisher.publish(JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(
        positions=list(x), velocities=list(xd), accelerations=list(xdd))]))
    assert commands.wait_for(module_ros_node, 1)
    assert_allclose(commands.messages[0].data, f, rtol=1e-10)
    # a description set later is built with the payload too
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    text = plain.description.xml
    result = client.call(SetParameters, 'set_parameters', SetParameters.Request(parameters=[
        Parameter(name='robot_description', value=ParameterValue(
            type=ParameterType.PARAMETER_STRING, string_value=text))])).results[0]
    assert result.successful, result.reason
    assert model_info(client).payload_mass == LOAD.mass
    assert_allclose(inverse_dynamics(client, names, x, xd, xdd), f, rtol=1e-10)


def test_invalid_payload_is_refused_and_the_model_kept(chain):
    plain, loaded, client = chain
    before = model_info(client)
    for values, culprit in (({'payload.mass': -1.0}, 'mass'),
                            ({'payload.com': [0.0, float('nan'), 0.0]}, 'centre of mass'),
                            ({'payload.com': [0.0, 0.0]}, 'centre of mass'),
                            ({'payload.inertia': [1.0, 0.0, 0.0, 1.0, 0.0, -1.0]},
                             'semi-definite'),
                            ({'payload.inertia': [0.1, 0.0, 0.0, 0.1, 0.0, 1.0]}, 'triangle'),
                            ({'payload.inertia': [1.0, 1.0, 1.0]}, '6 numbers')):
        result = set_parameters(client, values)
        assert not result.successful and culprit in result.reason, (values, result.reason)
    after = model_info(client)
    assert after.success and after.payload_mass == before.payload_mass
    assert after.total_mass == before.total_mass
    # removing the payload gives the plain robot back
    assert set_parameters(client, payload_parameters(Payload())).successful
    x = X0
    assert_allclose(inverse_dynamics(client, list(plain.actuated_joints), x, 0 * x, 0 * x),
                    plain.inverse_dynamics(x, 0 * x, 0 * x), rtol=1e-12)
    assert model_info(client).total_mass == plain.tree.total_mass


def test_parallel_robot_started_with_a_payload(module_node, module_ros_node, example_robot):
    """A PKM started with payload parameters: inverse dynamics and M_t (forward kinematics)
    are those of the platform carrying the load."""
    from pkm_dynamics_interfaces.srv import ForwardKinematics, InverseDynamics
    from geometry_msgs.msg import Accel, Transform, Twist
    from pkm_dynamics.node.messages.conversions import matrix_pose, pose_matrix, task_message
    from trajectory_msgs.msg import MultiDOFJointTrajectoryPoint
    text = example_robot(PKM)
    module_node(params={'robot_description': text, **payload_parameters(PKM_LOAD)},
                name='payload_pkm')
    client = Client(module_ros_node, '/payload_pkm')
    plain = load_robot(text)
    loaded = load_robot(with_load_link(text, payload_link(plain.description), PKM_LOAD))
    info = model_info(client)
    assert info.success, info.message
    assert info.payload_link == plain.description.platform.link
    assert info.total_mass == pytest.approx(loaded.tree.total_mass, rel=1e-14)
    P = plain.task_pose(np.array([0.01, -0.01, 0.05]))
    pose = matrix_pose(P)
    tf = Transform(rotation=pose.orientation)
    tf.translation.x, tf.translation.y, tf.translation.z = (
        pose.position.x, pose.position.y, pose.position.z)
    request = InverseDynamics.Request()
    request.task_trajectory.joint_names = ['platform']
    V, A = np.full(plain.dof, 0.2), np.array([0.5, -0.3, 1.0])
    request.task_trajectory.points = [MultiDOFJointTrajectoryPoint(
        transforms=[tf], velocities=[task_message(V, plain.task_space, Twist)],
        accelerations=[task_message(A, plain.task_space, Accel)])]
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert response.success, response.message
    Pr = pose_matrix(tf)
    u = loaded.inverse_dynamics(Pr, V, A)
    assert np.linalg.norm(u - plain.inverse_dynamics(Pr, V, A)) > 1e-3 * np.linalg.norm(u)
    assert_allclose(response.feedforward.points[0].effort, u, rtol=1e-10)
    ik = loaded.inverse_kinematics(Pr)
    fk_request = ForwardKinematics.Request()
    fk_request.actuator_state.name = list(plain.actuated_joints)
    fk_request.actuator_state.position = [float(v) for v in ik.actuators]
    fk = client.call(ForwardKinematics, 'forward_kinematics', fk_request)
    assert fk.success, fk.message
    M_t = loaded.mass_matrix(loaded.inverse_kinematics(pose_matrix(fk.pose.pose)))
    served_M_t = np.reshape(fk.mass_matrix, M_t.shape)
    assert np.linalg.norm(served_M_t - M_t) < 1e-10 * np.linalg.norm(M_t)
    assert not np.allclose(M_t, plain.mass_matrix(plain.inverse_kinematics(Pr)), rtol=1e-3)
