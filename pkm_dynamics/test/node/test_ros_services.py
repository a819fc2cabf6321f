"""Every service of the installed node on every example robot returns exactly the numbers of
the core, computed here by an independent call of `pkm_dynamics.core` on the same inputs.

One node process per robot (module scope); requests name the joints in reverse order, so
matching by name is exercised everywhere. Module chains are served in actuator space, PKMs in
task space (platform pose and body-fixed twist)."""
from types import SimpleNamespace

import numpy as np
from numpy.testing import assert_array_equal
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.core.hoid.higher_order import higher_order_inverse_dynamics
from pkm_dynamics.core.module_chain.chain_ik import chain_jacobian
from pkm_dynamics.testing import Client

MODULE_CHAINS = {'linear_4bar_1dof': [0.2], 'heavy_duty_4dof': [0.3, 0.2, 0.25, 0.4]}
PKMS = {'irsbot2': [0.02, -0.03], 'planar_3rrr': [0.01, -0.01, 0.05],
        'gough_stewart_6ups': [0.02, -0.01, 0.03, 0.01, 0.02, 0.03]}
ROBOTS = [*MODULE_CHAINS, *PKMS]


@pytest.fixture(scope='module', params=ROBOTS)
def served(request, module_node, module_ros_node, example_robot):
    name = request.param
    text = example_robot(name)
    node = module_node(params={'robot_description': text}, name=f'pkm_{name}')
    return SimpleNamespace(name=name, text=text, robot=load_robot(text), node=node,
                           client=Client(module_ros_node, f'/pkm_{name}'),
                           pkm=name in PKMS)


def actuator_motion(robot, x0, count):
    """Positions, velocities, accelerations (count, n) of a smooth actuator motion."""
    t = np.linspace(0.0, 1.0, count)[:, None]
    w = 1.0 + np.arange(robot.n)[None, :] * 0.3
    a = 0.05
    return (x0 + a * np.sin(w * t), a * w * np.cos(w * t), -a * w**2 * np.sin(w * t))


def task_motion(robot, offset, count):
    """Poses (count, 4, 4), twists and accelerations (count, delta) of a platform motion."""
    s = np.linspace(0.2, 1.0, count)[:, None]
    coords = np.asarray(offset) * s
    poses = np.stack([robot.task_pose(c) for c in coords])
    twist = 0.1 * np.cos(3 * s) * np.ones(robot.dof)
    accel = -0.3 * np.sin(3 * s) * np.ones(robot.dof)
    return poses, twist, accel


def trajectory_request(names, X, XD, XDD):
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import JointTrajectoryPoint
    request = InverseDynamics.Request()
    order = list(range(len(names)))[::-1]
    request.trajectory.joint_names = [names[i] for i in order]
    for k, (x, xd, xdd) in enumerate(zip(X, XD, XDD)):
        point = JointTrajectoryPoint(positions=list(x[order]), velocities=list(xd[order]),
                                     accelerations=list(xdd[order]))
        point.time_from_start.nanosec = 1000000 * k
        request.trajectory.points.append(point)
    return request


def task_trajectory_request(robot, poses, twists, accels):
    from geometry_msgs.msg import Accel, Transform, Twist
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import MultiDOFJointTrajectoryPoint
    from pkm_dynamics.node.messages.conversions import matrix_pose, task_message
    request = InverseDynamics.Request()
    request.task_trajectory.joint_names = ['platform']
    for P, V, A in zip(poses, twists, accels):
        pose = matrix_pose(P)
        tf = Transform()
        tf.translation.x, tf.translation.y, tf.translation.z = (
            pose.position.x, pose.position.y, pose.position.z)
        tf.rotation = pose.orientation
        request.task_trajectory.points.append(MultiDOFJointTrajectoryPoint(
            transforms=[tf], velocities=[task_message(V, robot.task_space, Twist)],
            accelerations=[task_message(A, robot.task_space, Accel)]))
    return request


def received_poses(request):
    """The pose matrices the node reads from a task trajectory request."""
    from pkm_dynamics.node.messages.conversions import pose_matrix
    return np.stack([pose_matrix(p.transforms[0]) for p in request.task_trajectory.points])


def test_model_info(served):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import GetModelInfo
    robot = served.robot
    info = served.client.call(GetModelInfo, 'get_model_info')
    assert info.success, info.message
    assert info.error_code.val == ErrorCodes.SUCCESS
    assert info.robot_name == robot.description.name
    assert info.kind == ('parallel' if served.pkm else 'module_chain')
    assert list(info.actuated_joints) == list(robot.actuated_joints)
    assert list(info.tree_joints) == list(robot.tree_joints)
    assert list(info.series_elastic_joints) == [
        a.joint for a in robot.description.actuators if a.series_elastic]
    assert list(info.task_space) == (list(robot.task_space) if served.pkm else [])
    assert info.total_mass == robot.tree.total_mass
    assert list(info.gravity) == list(robot.tree.gravity)


def test_inverse_dynamics_one_point_and_trajectory(served):
    from pkm_dynamics_interfaces.srv import InverseDynamics
    robot = served.robot
    for count in (1, 12):
        if served.pkm:
            poses, V, A = task_motion(robot, PKMS[served.name], count)
            request = task_trajectory_request(robot, poses, V, A)
            P = received_poses(request)
            expected = robot.inverse_dynamics(P, V, A)
            ik = robot.inverse_kinematics(P, V, A)
            X, XD, XDD = ik.actuators, ik.actuators_d, ik.actuators_dd
        else:
            X, XD, XDD = actuator_motion(robot, MODULE_CHAINS[served.name], count)
            request = trajectory_request(robot.actuated_joints, X, XD, XDD)
            expected = robot.inverse_dynamics(X, XD, XDD)
        response = served.client.call(InverseDynamics, 'inverse_dynamics', request)
        assert response.success, response.message
        assert response.failed_point == -1
        out = response.feedforward
        assert list(out.joint_names) == list(robot.actuated_joints)
        assert len(out.points) == count
        assert_array_equal([p.effort for p in out.points], expected)
        assert_array_equal([p.positions for p in out.points], X)
        assert_array_equal([p.velocities for p in out.points], XD)
        assert_array_equal([p.accelerations for p in out.points], XDD)
        if not served.pkm:
            assert [p.time_from_start.nanosec for p in out.points] == [
                1000000 * k for k in range(count)]
        assert_hydraulics(response.hydraulics, robot, X, XD, expected, None)


HYDRAULIC_FIELDS = ('pressure_a', 'pressure_b', 'flow_a', 'flow_b', 'spool', 'hydraulic_power')


def assert_hydraulics(messages, robot, X, XD, u, du):
    """The hydraulic answer (a HydraulicState per point, or one) is the core's valve model at
    the answered motion and forces; a robot without hydraulics: none (empty arrays)."""
    from pkm_dynamics.core.hydraulics.valve_cylinder import hydraulic_state
    m = robot.hydraulic_model
    single = not isinstance(messages, (list, tuple))
    if not m.n:
        assert (not messages.name and not messages.spool) if single else list(messages) == []
        return
    h = hydraulic_state(m, X, XD, u, du, check=False)
    rows = [messages] if single else list(messages)
    assert len(rows) == (1 if single else len(X))
    for k, msg in enumerate(rows):
        assert list(msg.name) == list(m.joints)
        for field in HYDRAULIC_FIELDS:
            want = getattr(h, field)
            assert_array_equal(getattr(msg, field), want if single else want[k])


def test_inverse_dynamics_with_wrench(served):
    from geometry_msgs.msg import Wrench
    from pkm_dynamics_interfaces.srv import InverseDynamics
    robot = served.robot
    wrench = Wrench()
    wrench.force.x, wrench.force.z, wrench.torque.y = 30.0, -120.0, 4.0
    w = np.array([0.0, 4.0, 0.0, 30.0, 0.0, -120.0])
    if served.pkm:
        poses, V, A = task_motion(robot, PKMS[served.name], 2)
        request = task_trajectory_request(robot, poses, V, A)
        expected = robot.inverse_dynamics(received_poses(request), V, A,
                                          wrench=np.tile(w, (2, 1)))
    else:
        X, XD, XDD = actuator_motion(robot, MODULE_CHAINS[served.name], 2)
        request = trajectory_request(robot.actuated_joints, X, XD, XDD)
        expected = robot.inverse_dynamics(X, XD, XDD, wrench=w)
    request.wrenches = [wrench]
    response = served.client.call(InverseDynamics, 'inverse_dynamics', request)
    assert response.success, response.message
    assert_array_equal([p.effort for p in response.feedforward.points], expected)


def test_forward_dynamics(served):
    from geometry_msgs.msg import Twist
    from pkm_dynamics_interfaces.srv import ForwardDynamics
    from pkm_dynamics.node.messages.conversions import matrix_pose, pose_matrix, spatial_vector, task_message
    robot = served.robot
    names = list(robot.actuated_joints)
    request = ForwardDynamics.Request()
    request.joint_state.name = names[::-1]
    if served.pkm:
        poses, V, _ = task_motion(robot, PKMS[served.name], 3)
        u = np.linspace(-2.0, 3.0, len(names))
        request.pose.pose = matrix_pose(poses[-1])
        request.twist = task_message(V[-1], robot.task_space, Twist)
        request.joint_state.effort = list(u[::-1])
        expected = robot.forward_dynamics(pose_matrix(request.pose.pose), V[-1], u)
    else:
        X, XD, XDD = actuator_motion(robot, MODULE_CHAINS[served.name], 3)
        f = robot.inverse_dynamics(X[-1], XD[-1], XDD[-1]) + 10.0
        request.joint_state.position = list(X[-1][::-1])
        request.joint_state.velocity = list(XD[-1][::-1])
        request.joint_state.effort = list(f[::-1])
        expected = robot.forward_dynamics(X[-1], XD[-1], f)
    response = served.client.call(ForwardDynamics, 'forward_dynamics', request)
    assert response.success, response.message
    assert list(response.joint_names) == names
    if served.pkm:
        got = spatial_vector(response.platform_acceleration, 'a')
        picked = [got[('wx', 'wy', 'wz', 'vx', 'vy', 'vz').index(c)] for c in robot.task_space]
        assert_array_equal(picked, expected)
    else:
        assert_array_equal(response.acceleration, expected)


def test_higher_order_inverse_dynamics(served):
    from geometry_msgs.msg import Accel, Twist
    from pkm_dynamics_interfaces.srv import HigherOrderInverseDynamics
    from pkm_dynamics.node.messages.conversions import matrix_pose, pose_matrix, task_message
    robot = served.robot
    names = list(robot.actuated_joints)
    request = HigherOrderInverseDynamics.Request()
    if served.pkm:
        poses, V, A = task_motion(robot, PKMS[served.name], 2)
        d = robot.dof
        ders = [V[-1], A[-1], np.full(d, 0.5), np.full(d, -0.7)]
        request.pose.pose = matrix_pose(poses[-1])
        request.twist = task_message(ders[0], robot.task_space, Twist)
        request.acceleration, request.jerk, request.snap = (
            task_message(v, robot.task_space, Accel) for v in ders[1:])
        x = pose_matrix(request.pose.pose)
    else:
        X, XD, XDD = actuator_motion(robot, MODULE_CHAINS[served.name], 2)
        x = X[-1]
        ders = [XD[-1], XDD[-1], np.full(robot.n, 0.5), np.full(robot.n, -0.7)]
        m = request.motion
        m.name = names[::-1]
        m.position = list(x[::-1])
        m.velocity, m.acceleration, m.jerk, m.snap = (list(v[::-1]) for v in ders)
    expected = higher_order_inverse_dynamics(robot, x, *ders)
    response = served.client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics',
                                  request)
    assert response.success, response.message
    assert list(response.effort.name) == names
    assert_array_equal(response.effort.effort, expected.u)
    assert_array_equal(response.effort.effort_rate, expected.du)
    assert_array_equal(response.effort.effort_acceleration, expected.ddu)
    motion = response.actuator_motion
    assert_array_equal([motion.position, motion.velocity, motion.acceleration, motion.jerk,
                        motion.snap], expected.actuator_motion)
    assert response.method == expected.method
    assert response.series_elastic == (expected.motor_position is not None)
    if response.series_elastic:
        assert list(response.motor.name) == names
        assert_array_equal(response.motor.position, expected.motor_position)
        assert_array_equal(response.motor.velocity, expected.motor_velocity)
        assert_array_equal(response.motor.acceleration, expected.motor_acceleration)
        assert_array_equal(response.motor.torque, expected.motor_torque)
    am = expected.actuator_motion
    assert_hydraulics(response.hydraulics, robot, am[0], am[1], expected.u, expected.du)


def assert_ik_positions(response, robot, expected):
    """An InverseKinematics response carries the core's actuator and tree-joint positions."""
    assert list(response.actuator_state.name) == list(robot.actuated_joints)
    assert list(response.joint_state.name) == list(robot.tree_joints)
    assert_array_equal(response.actuator_state.position, expected.actuators)
    assert_array_equal(response.joint_state.position, expected.q)


def test_inverse_kinematics(served):
    from geometry_msgs.msg import Accel, Twist
    from pkm_dynamics_interfaces.srv import InverseKinematics
    from pkm_dynamics.node.messages.conversions import matrix_pose, pose_matrix, task_message
    robot = served.robot
    request = InverseKinematics.Request()
    if not served.pkm:
        request.pose.pose = matrix_pose(robot.forward_kinematics(MODULE_CHAINS[served.name]))
        P = pose_matrix(request.pose.pose)
        response = served.client.call(InverseKinematics, 'inverse_kinematics', request)
        assert response.success, response.message
        expected = robot.inverse_kinematics(P)
        assert_ik_positions(response, robot, expected)
        assert list(response.iterations) == list(expected.iterations)
        assert response.residual == expected.residual <= 1e-9
        # several configurations reach the pose: the message says so (heavy_duty_4dof's pose)
        several = len(expected.solutions) > 1
        assert ('solutions within the strokes' in response.message) == several, response.message
        assert several == (served.name == 'heavy_duty_4dof')
        # with the twist of the chain's own motion, seeded by the actuators
        J = chain_jacobian(robot, expected.actuators)[0]
        V = J @ np.full(robot.n, 0.1)
        request.has_twist = True
        request.twist.angular.x, request.twist.angular.y, request.twist.angular.z = V[:3]
        request.twist.linear.x, request.twist.linear.y, request.twist.linear.z = V[3:]
        request.seed.name = list(robot.actuated_joints)
        request.seed.position = list(expected.actuators)
        response = served.client.call(InverseKinematics, 'inverse_kinematics', request)
        assert response.success, response.message
        expected = robot.inverse_kinematics(P, V, initial=expected.actuators)
        assert_array_equal(response.actuator_state.velocity, expected.actuators_d)
        assert_array_equal(response.joint_state.velocity, expected.qd)
        # a seed naming one actuator: the others start at mid-stroke (robot.seed_reference)
        named = robot.actuated_joints[-1]
        request.seed.name, request.seed.position = [named], [expected.actuators[-1]]
        response = served.client.call(InverseKinematics, 'inverse_kinematics', request)
        assert response.success, response.message
        start = robot.seed_reference.copy()
        start[-1] = expected.actuators[-1]
        assert_array_equal(response.actuator_state.position,
                           robot.inverse_kinematics(P, V, initial=start).actuators)
        return
    poses, V, A = task_motion(robot, PKMS[served.name], 2)
    request.pose.pose = matrix_pose(poses[-1])
    P = pose_matrix(request.pose.pose)
    # pose only
    response = served.client.call(InverseKinematics, 'inverse_kinematics', request)
    assert response.success, response.message
    expected = robot.inverse_kinematics(P)
    assert_ik_positions(response, robot, expected)
    assert list(response.actuator_state.velocity) == []
    assert_array_equal(response.iterations, expected.iterations)
    assert_array_equal(response.condition, expected.condition)
    assert response.residual == expected.residual <= 1e-9
    assert list(response.limb_names) == [limb.name for limb in robot.limbs]
    # with twist and acceleration, from a seed
    request.has_twist = request.has_acceleration = True
    request.twist = task_message(V[-1], robot.task_space, Twist)
    request.acceleration = task_message(A[-1], robot.task_space, Accel)
    request.seed.name = list(robot.tree_joints)
    request.seed.position = list(expected.q)
    response = served.client.call(InverseKinematics, 'inverse_kinematics', request)
    assert response.success, response.message
    expected = robot.inverse_kinematics(P, V[-1], A[-1], initial=expected.q)
    assert_array_equal(response.actuator_state.position, expected.actuators)
    assert_array_equal(response.actuator_state.velocity, expected.actuators_d)
    assert_array_equal(response.actuator_acceleration, expected.actuators_dd)
    assert_array_equal(response.joint_state.position, expected.q)
    assert_array_equal(response.joint_state.velocity, expected.qd)
    assert_array_equal(response.joint_acceleration, expected.qdd)
    assert_array_equal(response.iterations, expected.iterations)
