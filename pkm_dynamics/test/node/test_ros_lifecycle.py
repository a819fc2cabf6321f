"""The node is a managed (lifecycle) node: configure builds the model and creates the
streaming publishers and subscriptions, activate serves it; inactive or unconfigured it answers
NOT_ACTIVE and publishes nothing; cleanup destroys the streaming topics; configure without a
description fails with a message; shutdown ends the process (exit code 0). autostart (default)
configures and activates at start-up (topic mode: when the description arrives); mostly it is
off here and the tests drive the transitions through the standard lifecycle services."""
import numpy as np
from numpy.testing import assert_array_equal
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.testing import Client, Collector, matched_publisher, spin_until

X0 = [0.3, 0.2, 0.25, 0.4]
NAMES = ['slew', 'lift', 'tilt', 'extension']


def transition(client, label):
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState
    ids = {'configure': Transition.TRANSITION_CONFIGURE,
           'activate': Transition.TRANSITION_ACTIVATE,
           'deactivate': Transition.TRANSITION_DEACTIVATE,
           'cleanup': Transition.TRANSITION_CLEANUP,
           'shutdown': Transition.TRANSITION_UNCONFIGURED_SHUTDOWN,
           'active shutdown': Transition.TRANSITION_ACTIVE_SHUTDOWN}
    request = ChangeState.Request()
    request.transition.id = ids[label]
    return client.call(ChangeState, 'change_state', request).success


def state(client):
    from lifecycle_msgs.srv import GetState
    return client.call(GetState, 'get_state').current_state.label


def inverse_dynamics(client):
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import JointTrajectoryPoint
    request = InverseDynamics.Request()
    request.trajectory.joint_names = NAMES
    request.trajectory.points = [JointTrajectoryPoint(positions=X0)]
    return client.call(InverseDynamics, 'inverse_dynamics', request)


def test_lifecycle_transitions(start_node, ros_node, example_robot):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import GetModelInfo
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    text = example_robot('heavy_duty_4dof')
    robot = load_robot(text)
    process = start_node(params={'robot_description': text, 'autostart': False})
    client = Client(ros_node)
    assert state(client) == 'unconfigured'
    info = client.call(GetModelInfo, 'get_model_info')
    assert not info.success and info.error_code.val == ErrorCodes.NO_MODEL
    assert 'unconfigured' in info.message
    response = inverse_dynamics(client)
    assert response.error_code.val == ErrorCodes.NOT_ACTIVE and 'configure' in response.message

    assert transition(client, 'configure') and state(client) == 'inactive'
    info = client.call(GetModelInfo, 'get_model_info')
    assert info.success and 'inactive' in info.message
    response = inverse_dynamics(client)
    assert response.error_code.val == ErrorCodes.NOT_ACTIVE and 'activate' in response.message

    states = Collector(ros_node, JointState, '/pkm_dynamics/feedforward/joint_states')
    publisher = matched_publisher(ros_node, JointTrajectory, '/pkm_dynamics/reference', 10)
    assert states.wait_for_publisher(ros_node)
    reference = JointTrajectory(joint_names=NAMES, points=[JointTrajectoryPoint(positions=X0)])
    publisher.publish(reference)
    spin_until(ros_node, lambda: False, timeout=0.5)
    assert states.messages == []                      # inactive: nothing published

    assert transition(client, 'activate') and state(client) == 'active'
    expected = robot.inverse_dynamics(np.array(X0), np.zeros(4), np.zeros(4))
    response = inverse_dynamics(client)
    assert response.success, response.message
    assert_array_equal(response.feedforward.points[0].effort, expected)
    publisher.publish(reference)
    assert states.wait_for(ros_node, 1)
    assert_array_equal(states.messages[0].effort, expected)

    completed = Collector(ros_node, JointState, '/joint_states')
    measured = matched_publisher(ros_node, JointState, '/actuator_states', 10)
    assert completed.wait_for_publisher(ros_node)
    measured.publish(JointState(name=NAMES, position=X0))
    assert completed.wait_for(ros_node, 1)
    assert_array_equal(completed.messages[0].position, robot.tree_state(np.array(X0))[0])

    assert transition(client, 'deactivate') and state(client) == 'inactive'
    response = inverse_dynamics(client)
    assert response.error_code.val == ErrorCodes.NOT_ACTIVE and 'activate' in response.message
    # deactivated: a reference and a measured state get no output. Sent while inactive, then
    # the node activated and the other state sent: the next output (on the same publisher, in
    # order) must be that of the later one -- an output of the inactive one would come first
    X1 = [0.35, 0.22, 0.27, 0.45]
    publisher.publish(JointTrajectory(joint_names=NAMES,
                                      points=[JointTrajectoryPoint(positions=X1)]))
    measured.publish(JointState(name=NAMES, position=X1))
    spin_until(ros_node, lambda: False, timeout=0.5)    # (taken by the node while inactive)
    assert len(states.messages) == 1 and len(completed.messages) == 1
    assert transition(client, 'activate') and state(client) == 'active'
    publisher.publish(reference)
    measured.publish(JointState(name=NAMES, position=X0))
    assert states.wait_for(ros_node, 2) and completed.wait_for(ros_node, 2)
    assert_array_equal(states.messages[1].effort, expected)
    assert_array_equal(completed.messages[1].position, robot.tree_state(np.array(X0))[0])
    assert transition(client, 'deactivate') and state(client) == 'inactive'

    assert transition(client, 'cleanup') and state(client) == 'unconfigured'
    assert client.call(GetModelInfo, 'get_model_info').error_code.val == ErrorCodes.NO_MODEL
    assert process.stop() == 0, process.log()


def test_configure_fails_on_a_bad_description(start_node, ros_node):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import GetModelInfo
    process = start_node(params={'robot_description': '<robot name="x"><link name="a"/></robot>',
                                 'autostart': False})
    client = Client(ros_node)
    assert not transition(client, 'configure')
    assert state(client) == 'unconfigured'
    info = client.call(GetModelInfo, 'get_model_info')
    assert info.error_code.val == ErrorCodes.INVALID_DESCRIPTION
    assert 'no actuated joint' in info.message
    assert process.stop() == 0, process.log()


#: the streaming topics of a node named pkm_dynamics with default names and outputs
PUBLISHED = ['/pkm_dynamics/feedforward/commands', '/pkm_dynamics/feedforward/joint_states',
             '/joint_states']
SUBSCRIBED = ['/pkm_dynamics/reference', '/pkm_dynamics/task_reference', '/actuator_states']


def streaming_endpoints(node):
    """How many publishers / subscriptions each streaming topic has (one node under test)."""
    return ([node.count_publishers(t) for t in PUBLISHED] +
            [node.count_subscribers(t) for t in SUBSCRIBED])


def test_streaming_topics_exist_from_configure_to_cleanup(start_node, ros_node, example_robot):
    process = start_node(params={'robot_description': example_robot('heavy_duty_4dof'),
                                 'autostart': False})
    client = Client(ros_node)
    assert state(client) == 'unconfigured'
    # the node's /diagnostics publisher is discovered: its other endpoints would be by now
    assert spin_until(ros_node, lambda: ros_node.count_publishers('/diagnostics') == 1)
    spin_until(ros_node, lambda: False, timeout=1.0)
    assert streaming_endpoints(ros_node) == [0] * 6
    assert transition(client, 'configure')
    assert spin_until(ros_node, lambda: streaming_endpoints(ros_node) == [1] * 6), \
        streaming_endpoints(ros_node)
    assert transition(client, 'cleanup') and state(client) == 'unconfigured'
    assert spin_until(ros_node, lambda: streaming_endpoints(ros_node) == [0] * 6), \
        streaming_endpoints(ros_node)
    assert transition(client, 'configure') and transition(client, 'activate')
    assert spin_until(ros_node, lambda: streaming_endpoints(ros_node) == [1] * 6)
    assert process.stop() == 0, process.log()


def test_configure_without_a_description_fails(start_node, ros_node, example_robot):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import GetModelInfo
    from std_msgs.msg import String
    from test_ros_description import description_publisher
    process = start_node(params={'robot_description': '', 'autostart': False})
    client = Client(ros_node)
    assert not transition(client, 'configure')
    assert state(client) == 'unconfigured'
    info = client.call(GetModelInfo, 'get_model_info')
    assert info.error_code.val == ErrorCodes.NO_MODEL
    assert 'configure failed: no robot description' in info.message
    assert '/robot_description' in info.message
    assert 'configure failed: no robot description' in process.log()
    # without autostart a description that arrives waits for the next configure
    description_publisher(ros_node).publish(String(data=example_robot('linear_4bar_1dof')))
    assert spin_until(ros_node, lambda: 'received and checked' in process.log(), timeout=20.0)
    assert state(client) == 'unconfigured'
    assert transition(client, 'configure') and state(client) == 'inactive'
    assert process.stop() == 0, process.log()


def test_autostart_in_topic_mode_configures_when_the_description_arrives(
        start_node, ros_node, example_robot):
    from std_msgs.msg import String
    from test_ros_description import description_publisher
    process = start_node(params={'robot_description': ''})
    client = Client(ros_node)
    assert state(client) == 'unconfigured'
    assert 'configure failed' not in process.log()        # waiting is no failure
    description_publisher(ros_node).publish(String(data=example_robot('linear_4bar_1dof')))
    assert spin_until(ros_node, lambda: state(client) == 'active', timeout=20.0), process.log()
    assert process.stop() == 0, process.log()


@pytest.mark.parametrize('label', ['shutdown', 'active shutdown'])
def test_shutdown_ends_the_process(start_node, ros_node, example_robot, label):
    process = start_node(params={'robot_description': example_robot('linear_4bar_1dof'),
                                 'autostart': label == 'active shutdown'})
    client = Client(ros_node)
    assert state(client) == ('active' if label == 'active shutdown' else 'unconfigured')
    assert transition(client, label)
    assert process.process.wait(timeout=20.0) == 0, process.log()
