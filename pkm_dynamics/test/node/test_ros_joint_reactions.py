"""~/joint_reactions over DDS: the installed node answers with exactly the core's wrenches
(`robot.joint_reactions`, checked against the KKT multipliers in test_core_reactions.py) for
a module chain (by joint name, in reverse order) and a PKM (pose, twist, platform wrench); a
state beyond a stroke gets INVALID_STATE naming the joint, and the next request is served."""
import numpy as np
from numpy.testing import assert_array_equal
import pytest

X = [0.3, 0.2, 0.25, 0.4]


@pytest.fixture(scope='module')
def chain(served_robot):
    return served_robot('heavy_duty_4dof', 'reactions_chain')[:2]


@pytest.fixture(scope='module')
def pkm(served_robot):
    return served_robot('planar_3rrr', 'reactions_pkm')[:2]


def wrench_rows(wrenches):
    return np.array([[w.torque.x, w.torque.y, w.torque.z, w.force.x, w.force.y, w.force.z]
                     for w in wrenches])


def chain_request(robot, x, xd, f):
    from pkm_dynamics_interfaces.srv import JointReactions
    request = JointReactions.Request()
    request.joint_state.name = list(robot.actuated_joints)[::-1]
    request.joint_state.position = list(np.asarray(x, dtype=float)[::-1])
    request.joint_state.velocity = list(np.asarray(xd, dtype=float)[::-1])
    request.joint_state.effort = list(np.asarray(f, dtype=float)[::-1])
    return request


def test_module_chain_reactions(chain):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import JointReactions
    robot, client = chain
    xd = np.array([0.2, 0.0, -0.05, 0.1])
    f = robot.inverse_dynamics(X, xd, np.zeros(4)) + 500.0
    expected = robot.joint_reactions(np.array(X), xd, f)
    response = client.call(JointReactions, 'joint_reactions', chain_request(robot, X, xd, f))
    assert response.success, response.message
    assert list(response.joint_names) == list(robot.tree_joints)
    assert list(response.cut_joint_names) == ['lift_rod_end', 'tilt_rod_end']
    assert_array_equal(wrench_rows(response.joint_wrenches), expected.joint_wrenches)
    assert_array_equal(wrench_rows(response.cut_joint_wrenches), expected.cut_wrenches)
    # beyond the lift's stroke: named, then the node still serves
    beyond = chain_request(robot, [0.3, 0.9, 0.25, 0.4], xd, f)
    bad = client.call(JointReactions, 'joint_reactions', beyond)
    assert not bad.success and bad.error_code.val == ErrorCodes.INVALID_STATE
    assert "'lift'" in bad.message
    again = client.call(JointReactions, 'joint_reactions', chain_request(robot, X, xd, f))
    assert again.success and again.joint_wrenches == response.joint_wrenches


def test_parallel_robot_reactions(pkm):
    from geometry_msgs.msg import Twist, Wrench
    from pkm_dynamics_interfaces.srv import JointReactions
    from pkm_dynamics.node.messages.conversions import matrix_pose, pose_matrix, task_message
    robot, client = pkm
    V = np.array([0.05, -0.02, 0.1])
    u = np.array([0.3, -0.2, 0.1])
    request = JointReactions.Request()
    request.pose.pose = matrix_pose(robot.task_pose([0.01, -0.01, 0.05]))
    request.twist = task_message(V, robot.task_space, Twist)
    request.joint_state.name = list(robot.actuated_joints)
    request.joint_state.effort = list(u)
    w = Wrench()
    w.force.x, w.torque.z = 2.0, 0.1
    request.wrench = [w]
    expected = robot.joint_reactions(pose_matrix(request.pose.pose), V, u,
                                     wrench=np.array([0, 0, 0.1, 2.0, 0, 0]))
    response = client.call(JointReactions, 'joint_reactions', request)
    assert response.success, response.message
    assert list(response.joint_names) == list(robot.tree_joints)
    assert list(response.cut_joint_names) == [c.name for c in robot.description.cut_joints]
    assert_array_equal(wrench_rows(response.joint_wrenches), expected.joint_wrenches)
    assert_array_equal(wrench_rows(response.cut_joint_wrenches), expected.cut_wrenches)
