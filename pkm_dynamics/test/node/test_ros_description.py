"""Where the node gets its robot description: the robot_description topic (transient local, as
robot_state_publisher publishes it; the node joins late and still gets it) when the parameter
is empty, or the parameter, which can be set at run time. A new description rebuilds the model;
a bad one is reported and the previous model keeps serving."""
from numpy.testing import assert_array_equal
import numpy as np

from pkm_dynamics.core import load_robot
from pkm_dynamics.testing import Client, spin_until


def description_publisher(node):
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String
    return node.create_publisher(String, '/robot_description', QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
        reliability=ReliabilityPolicy.RELIABLE))


def model_info(client):
    from pkm_dynamics_interfaces.srv import GetModelInfo
    return client.call(GetModelInfo, 'get_model_info')


def robot_name(text):
    return load_robot(text).description.name


def wait_for_model(node, client, name, timeout=20.0):
    """The model info once the node serves the robot ``name`` (with autostart the model is
    reported from configure on, 'not serving' until the node is active)."""
    state = {}

    def loaded():
        state['info'] = info = model_info(client)
        return info.success and info.robot_name == name and 'not serving' not in info.message
    assert spin_until(node, loaded, timeout), state['info'].message
    return state['info']


def test_description_from_the_topic(start_node, ros_node, example_robot):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from std_msgs.msg import String
    from trajectory_msgs.msg import JointTrajectoryPoint
    publisher = description_publisher(ros_node)
    chain_text = example_robot('linear_4bar_1dof')
    publisher.publish(String(data=chain_text))       # before the node exists: it joins late
    process = start_node(params={'robot_description': ''})
    client = Client(ros_node)
    info = wait_for_model(ros_node, client, robot_name(chain_text))
    assert list(info.actuated_joints) == ['lift']

    request = InverseDynamics.Request()
    request.trajectory.joint_names = ['lift']
    request.trajectory.points = [JointTrajectoryPoint(positions=[0.2])]
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert response.success, response.message
    assert_array_equal(response.feedforward.points[0].effort,
                       load_robot(chain_text).inverse_dynamics([0.2], [0.0], [0.0]))

    # a bad description: reported, the previous model keeps serving
    publisher.publish(String(data='<robot name="broken"><link name="a">'))
    assert spin_until(ros_node, lambda: 'rejected' in model_info(client).message)
    info = model_info(client)
    assert info.success and info.robot_name == robot_name(chain_text)
    assert 'not well-formed XML' in info.message
    assert client.call(InverseDynamics, 'inverse_dynamics', request).success

    # a new description rebuilds the model
    heavy = example_robot('heavy_duty_4dof')
    publisher.publish(String(data=heavy))
    info = wait_for_model(ros_node, client, robot_name(heavy))
    assert list(info.actuated_joints) == ['slew', 'lift', 'tilt', 'extension']
    assert info.message == 'model loaded'
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert response.error_code.val == ErrorCodes.UNKNOWN_JOINT and 'slew' in response.message
    assert process.running()
    assert 'rejected' in process.log()


def test_no_description_yet(start_node, ros_node):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import InverseDynamics
    process = start_node()
    client = Client(ros_node)
    info = model_info(client)
    assert not info.success and info.error_code.val == ErrorCodes.NO_MODEL
    assert 'waiting for the robot_description topic' in info.message
    response = client.call(InverseDynamics, 'inverse_dynamics')   # autostart waits for one
    assert response.error_code.val == ErrorCodes.NOT_ACTIVE
    assert 'unconfigured' in response.message
    assert 'waiting for the robot_description topic' in response.message
    assert process.stop() == 0, process.log()


def test_description_parameter_set_at_run_time(start_node, ros_node, example_robot):
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    def set_description(text):
        request = SetParameters.Request(parameters=[Parameter(
            name='robot_description',
            value=ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=text))])
        return client.call(SetParameters, 'set_parameters', request).results[0]

    heavy = example_robot('heavy_duty_4dof')
    process = start_node(params={'robot_description': heavy})
    client = Client(ros_node)
    assert model_info(client).robot_name == robot_name(heavy)
    result = set_description('<robot name="x"><link name="a"/></robot>')
    assert not result.successful and 'rejected' in result.reason
    assert 'no actuated joint' in result.reason
    assert model_info(client).robot_name == robot_name(heavy)
    text = example_robot('irsbot2')
    result = set_description(text)
    assert result.successful, result.reason
    info = model_info(client)
    assert info.robot_name == robot_name(text) and info.kind == 'parallel'
    assert list(info.task_space) == ['vx', 'vz']
    assert np.isclose(info.total_mass, load_robot(text).tree.total_mass)
    assert process.stop() == 0, process.log()
