"""The excavator (robots/excavator.urdf, a chain of loops served on the constraint-embedding
route) over DDS: the installed node loads it, reports its kind, answers every service with
exactly the core's numbers (computed here on the same inputs), completes the joint states with
every link of the bucket linkage (rocker, coupler, cylinders) for RViz, refuses a state beyond a
stroke naming the cylinder and keeps serving."""
import numpy as np
from numpy.testing import assert_array_equal
import pytest

X = np.array([0.4, 0.05, 0.2, -0.15])
XD = np.array([0.1, -0.02, 0.03, 0.05])
XDD = np.array([0.2, 0.1, -0.1, 0.3])


@pytest.fixture(scope='module')
def excavator(served_robot):
    return served_robot('excavator', 'excavator')[:2]


def actuator_request(srv, names, **fields):
    request = srv.Request()
    state = request.joint_state
    state.name = list(names)[::-1]
    for key, value in fields.items():
        setattr(state, key, list(np.asarray(value, dtype=float)[::-1]))
    return request


def test_model_info(excavator):
    from pkm_dynamics_interfaces.srv import GetModelInfo
    robot, client = excavator
    info = client.call(GetModelInfo, 'get_model_info')
    assert info.success and info.kind == 'loop_chain'
    assert list(info.actuated_joints) == list(robot.actuated_joints)
    assert list(info.tree_joints) == list(robot.tree_joints)


def test_dynamics_services(excavator):
    from pkm_dynamics_interfaces.srv import ForwardDynamics, HigherOrderInverseDynamics, InverseDynamics
    from trajectory_msgs.msg import JointTrajectoryPoint
    robot, client = excavator
    names = list(robot.actuated_joints)
    request = InverseDynamics.Request()
    request.trajectory.joint_names = names[::-1]
    rows = [(X + 0.01 * k, XD, XDD) for k in range(3)]
    for x, xd, xdd in rows:
        request.trajectory.points.append(JointTrajectoryPoint(
            positions=list(x[::-1]), velocities=list(xd[::-1]), accelerations=list(xdd[::-1])))
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert response.success, response.message
    assert_array_equal([p.effort for p in response.feedforward.points],
                       [robot.inverse_dynamics(*r) for r in rows])
    f = robot.inverse_dynamics(X, XD, XDD) + 100.0
    response = client.call(ForwardDynamics, 'forward_dynamics',
                           actuator_request(ForwardDynamics, names, position=X, velocity=XD, effort=f))
    assert response.success, response.message
    assert_array_equal(response.acceleration, robot.forward_dynamics(X, XD, f))
    hoid = HigherOrderInverseDynamics.Request()
    ders = [XD, XDD, np.full(4, 0.5), np.full(4, -0.7)]
    m = hoid.motion
    m.name, m.position = names[::-1], list(X[::-1])
    m.velocity, m.acceleration, m.jerk, m.snap = (list(v[::-1]) for v in ders)
    response = client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics', hoid)
    assert response.success, response.message
    expected = robot.higher_order_inverse_dynamics(X, *ders)
    assert_array_equal(response.effort.effort, expected.u)
    assert_array_equal(response.effort.effort_rate, expected.du)


def test_kinematics_and_reactions(excavator):
    from pkm_dynamics_interfaces.srv import InverseKinematics, JointReactions
    from pkm_dynamics.node.messages.conversions import matrix_pose, pose_matrix
    robot, client = excavator
    request = InverseKinematics.Request()
    request.pose.pose = matrix_pose(robot.forward_kinematics(X))
    response = client.call(InverseKinematics, 'inverse_kinematics', request)
    assert response.success, response.message
    expected = robot.inverse_kinematics(pose_matrix(request.pose.pose))
    assert_array_equal(response.actuator_state.position, expected.actuators)
    assert_array_equal(response.joint_state.position, expected.q)
    f = robot.inverse_dynamics(X, XD, np.zeros(4))
    response = client.call(JointReactions, 'joint_reactions',
                           actuator_request(JointReactions, robot.actuated_joints, position=X, velocity=XD,
                                            effort=f))
    assert response.success, response.message
    assert list(response.cut_joint_names) == ['boom_rod_end', 'arm_rod_end', 'bucket_rod_end', 'coupler_end']
    got = [[w.torque.x, w.torque.y, w.torque.z, w.force.x, w.force.y, w.force.z] for w in response.joint_wrenches]
    assert_array_equal(got, robot.joint_reactions(X, XD, f).joint_wrenches)


def test_a_state_beyond_a_stroke_is_named_and_the_node_serves(excavator):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import ForwardDynamics
    robot, client = excavator
    names = robot.actuated_joints
    beyond = X.copy()
    beyond[3] = 0.5
    bad = client.call(ForwardDynamics, 'forward_dynamics',
                      actuator_request(ForwardDynamics, names, position=beyond, velocity=XD, effort=np.zeros(4)))
    assert not bad.success and bad.error_code.val == ErrorCodes.INVALID_STATE
    assert "'bucket_cylinder'" in bad.message
    good = client.call(ForwardDynamics, 'forward_dynamics',
                       actuator_request(ForwardDynamics, names, position=X, velocity=XD, effort=np.zeros(4)))
    assert good.success, good.message


def test_joint_state_completion_shows_the_linkage(excavator, module_ros_node):
    """From the measured actuators, every tree joint (the rocker, the coupler, the cylinders'
    pivots and rods) for robot_state_publisher / RViz."""
    from sensor_msgs.msg import JointState
    from pkm_dynamics.testing import Collector, matched_publisher, spin_until
    robot, _ = excavator
    node = module_ros_node
    completed = Collector(node, JointState, '/joint_states')
    publisher = matched_publisher(node, JointState, '/actuator_states', 10)
    msg = JointState(name=list(robot.actuated_joints)[::-1], position=list(X[::-1]), velocity=list(XD[::-1]))
    publisher.publish(msg)
    assert spin_until(node, lambda: any(len(m.name) == len(robot.tree_joints) for m in completed.messages))
    out = completed.messages[-1]
    assert {'rocker_joint', 'coupler_joint', 'bucket_cylinder_pivot'} <= set(out.name)
    q, qd, _ = robot.tree_state(X, XD)
    assert list(out.name) == list(robot.tree_joints)
    assert_array_equal(out.position, q)
    assert_array_equal(out.velocity, qd)
