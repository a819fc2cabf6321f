"""ros2_control fit of the installed node: the ``commands`` output follows the joint order of
``feedforward.joints`` (the ``joints`` list of the forward_command_controller that consumes
it), a list that is not the robot's actuated joints each once is refused with a message naming
the joints, and the streaming topics are remapped the ROS way (``--ros-args -r``) instead of
through parameters — by fully qualified name and by ``~/`` name, which resolve against the main
node although the topics live on its companion node ``<name>_topics``."""
import numpy as np
from numpy.testing import assert_array_equal
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.testing import Client, Collector, matched_publisher, spin_until
from test_ros_lifecycle import state

X0 = {'slew': 0.3, 'lift': 0.2, 'tilt': 0.25, 'extension': 0.4}
XD = {'slew': 0.1, 'lift': 0.05, 'tilt': 0.0, 'extension': -0.1}
#: a controller's joints list in an order other than the description's
CONTROLLER_JOINTS = ['extension', 'slew', 'tilt', 'lift']


def test_commands_in_controller_order_on_a_remapped_topic(start_node, ros_node, example_robot):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    text = example_robot('heavy_duty_4dof')
    robot = load_robot(text)
    process = start_node(
        params={'robot_description': text, 'feedforward.joints': CONTROLLER_JOINTS},
        ros_args=['-r', '/pkm_dynamics/feedforward/commands:=/effort_controller/commands',
                  '-r', '~/reference:=/planner/reference'])
    commands = Collector(ros_node, Float64MultiArray, '/effort_controller/commands')
    states = Collector(ros_node, JointState, '/pkm_dynamics/feedforward/joint_states')
    publisher = matched_publisher(ros_node, JointTrajectory, '/planner/reference', 10)
    assert commands.wait_for_publisher(ros_node) and states.wait_for_publisher(ros_node)
    names = ['tilt', 'lift', 'slew', 'extension']          # a reference matched by name
    reference = JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(
        positions=[X0[n] for n in names], velocities=[XD[n] for n in names])])

    def answered():
        # the node's publishers may match this node's subscriptions a little after this node
        # sees them: send the same reference again until both outputs have arrived
        publisher.publish(reference)
        return spin_until(ros_node, lambda: commands.messages and states.messages, 0.5)

    assert any(answered() for _ in range(40)), process.log()

    actuated = list(robot.actuated_joints)
    effort = robot.inverse_dynamics(np.array([X0[n] for n in actuated]),
                                    np.array([XD[n] for n in actuated]), np.zeros(4))
    by_name = dict(zip(actuated, effort))
    assert_array_equal(commands.messages[0].data, [by_name[n] for n in CONTROLLER_JOINTS])
    # the named outputs keep the description's order
    assert list(states.messages[0].name) == actuated
    assert_array_equal(states.messages[0].effort, effort)
    # the remapped names replace the default ones
    assert ros_node.count_publishers('/pkm_dynamics/feedforward/commands') == 0
    assert ros_node.count_subscribers('/pkm_dynamics/reference') == 0
    assert process.stop() == 0, process.log()


@pytest.mark.parametrize('joints, culprit', [
    (['slew', 'lift', 'tilt', 'slew'], 'joint "slew" is given twice'),
    (['slew', 'lift', 'tilt', 'extension', 'lift_link_joint'], "unknown joint(s) "
     "['lift_link_joint']"),                              # a passive joint of a loop
    (['slew', 'lift', 'tilt'], "missing joint(s) ['extension']"),
])
def test_a_bad_joint_list_is_refused(start_node, ros_node, example_robot, joints, culprit):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import GetModelInfo
    process = start_node(params={'robot_description': example_robot('heavy_duty_4dof'),
                                 'feedforward.joints': joints})
    client = Client(ros_node)
    assert spin_until(ros_node, lambda: 'feedforward.joints' in process.log(), timeout=20.0)
    assert state(client) == 'unconfigured'                # configure failed
    info = client.call(GetModelInfo, 'get_model_info')   # and the node still answers
    assert not info.success and info.error_code.val == ErrorCodes.INVALID_DESCRIPTION
    assert 'parameter feedforward.joints' in info.message and culprit in info.message
    assert culprit in process.log()
    assert process.running()
    assert process.stop() == 0, process.log()
