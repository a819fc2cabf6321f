"""The node is a managed (lifecycle) node: configure builds the model, activate serves it;
inactive or unconfigured it answers NOT_ACTIVE and publishes nothing. autostart (default)
configures and activates at start-up; here it is off and the test drives the transitions
through the standard lifecycle services."""
import numpy as np
from numpy.testing import assert_array_equal

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
           'cleanup': Transition.TRANSITION_CLEANUP}
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

    assert transition(client, 'deactivate') and state(client) == 'inactive'
    assert inverse_dynamics(client).error_code.val == ErrorCodes.NOT_ACTIVE
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
