"""Bad input never kills the node: each bad request gets success = false, the error code and a
message naming the problem, and the next good request is answered with the core's numbers;
bad references and measured states give a warning and no output, and the next good one is
served. One module-chain node (heavy_duty_4dof) and one PKM node (planar_3rrr)."""
import math

import numpy as np
from numpy.testing import assert_array_equal
import pytest

from pkm_dynamics.testing import Collector, matched_publisher, spin_until

X0 = [0.3, 0.2, 0.25, 0.4]


@pytest.fixture(scope='module')
def chain(served_robot):
    return served_robot('heavy_duty_4dof', 'bad_chain', warning_period=0.0)


@pytest.fixture(scope='module')
def pkm(served_robot):
    return served_robot('planar_3rrr', 'bad_pkm')


def id_request(names, points):
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import JointTrajectoryPoint
    request = InverseDynamics.Request()
    request.trajectory.joint_names = list(names)
    request.trajectory.points = [JointTrajectoryPoint(positions=list(p[0]),
                                                      velocities=list(p[1]))
                                 for p in points]
    return request


def good_id(robot, client):
    """A good request after a bad one: answered, equal to the core."""
    from pkm_dynamics_interfaces.srv import InverseDynamics
    x, xd = np.array(X0), np.array([0.1, 0.0, -0.1, 0.05])
    response = client.call(InverseDynamics, 'inverse_dynamics',
                           id_request(robot.actuated_joints, [(x, xd)]))
    assert response.success, response.message
    assert_array_equal(response.feedforward.points[0].effort,
                       robot.inverse_dynamics(x, xd, np.zeros(4)))


NAMES = ['slew', 'lift', 'tilt', 'extension']
BAD_ID = {
    'wrong size': ([(X0[:3], [])], 'INVALID_SIZE', ['points[0].positions', '3 entries']),
    'NaN': ([(X0, [0.0, math.nan, 0.0, 0.0])], 'NON_FINITE', ['points[0].velocities', 'nan']),
    'Inf': ([(X0, []), ([0.3, 0.2, math.inf, 0.4], [])], 'NON_FINITE',
            ['points[1].positions', 'inf']),
    'beyond the stroke': ([(X0, []), ([0.3, 0.7, 0.25, 0.4], [])], 'INVALID_STATE',
                          ['point 1', "'lift'", 'stroke']),
    'singular': ([(X0, []), (X0, []), ([0.3, 0.56, 0.25, 0.4], [])], 'SINGULAR',
                 ['point 2', 'lift', 'loop closes']),
    'empty': ([], 'INVALID_REQUEST', ['no points']),
}


@pytest.mark.parametrize('case', sorted(BAD_ID))
def test_bad_inverse_dynamics_request(chain, case):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import InverseDynamics
    robot, client, process = chain
    points, code, words = BAD_ID[case]
    response = client.call(InverseDynamics, 'inverse_dynamics', id_request(NAMES, points))
    assert not response.success
    assert response.error_code.val == getattr(ErrorCodes, code), response.message
    for word in words:
        assert word in response.message.lower() or word in response.message, response.message
    if case in ('beyond the stroke', 'singular', 'Inf'):
        assert response.failed_point == len(points) - 1
    assert list(response.feedforward.points) == []
    assert process.running()
    good_id(robot, client)


@pytest.mark.parametrize('names, word', [(['slew', 'lift', 'tilt', 'telescope'], 'telescope'),
                                         (['slew', 'lift', 'tilt'], 'extension'),
                                         (['slew', 'lift', 'lift', 'tilt'], 'twice')])
def test_unknown_missing_or_repeated_joint(chain, names, word):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import InverseDynamics
    robot, client, _ = chain
    response = client.call(InverseDynamics, 'inverse_dynamics',
                           id_request(names, [(X0[:len(names)], [])]))
    assert not response.success
    assert response.error_code.val in (ErrorCodes.UNKNOWN_JOINT, ErrorCodes.INVALID_REQUEST)
    assert word in response.message
    good_id(robot, client)


def test_bad_forward_and_higher_order_requests(chain):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import (ForwardDynamics, HigherOrderInverseDynamics,
                                             InverseDynamics, InverseKinematics)
    robot, client, _ = chain
    fd = ForwardDynamics.Request()
    fd.joint_state.name = NAMES
    fd.joint_state.position = X0
    fd.joint_state.effort = [1.0, 2.0]
    response = client.call(ForwardDynamics, 'forward_dynamics', fd)
    assert response.error_code.val == ErrorCodes.INVALID_SIZE and 'effort' in response.message
    fd.joint_state.effort = [1.0, 2.0, math.nan, 4.0]
    response = client.call(ForwardDynamics, 'forward_dynamics', fd)
    assert response.error_code.val == ErrorCodes.NON_FINITE and 'effort' in response.message
    hoid = HigherOrderInverseDynamics.Request()
    hoid.motion.name = NAMES
    hoid.motion.position = X0
    hoid.motion.snap = [0.0, 0.0, math.inf, 0.0]
    response = client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics', hoid)
    assert response.error_code.val == ErrorCodes.NON_FINITE and 'snap' in response.message
    task = InverseDynamics.Request()
    task.task_trajectory.joint_names = ['platform']
    task.task_trajectory.points = [_multidof_point()]
    response = client.call(InverseDynamics, 'inverse_dynamics', task)
    assert response.error_code.val == ErrorCodes.INVALID_REQUEST
    assert 'module chain' in response.message
    response = client.call(InverseKinematics, 'inverse_kinematics')   # the root frame: out of reach
    assert response.error_code.val == ErrorCodes.NO_IK_SOLUTION
    assert 'did not reach the pose' in response.message
    good_id(robot, client)


def test_extreme_values_are_refused_and_answered_at_once(chain):
    """Finite but extreme values: every field 1e308 answered success with inf/NaN; HOID of
    1e10 hung the node (an unbounded continuation), of 1e308 raised FAILURE (OverflowError).
    Each is now refused with the field named, and the next good request is right."""
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import ForwardDynamics, HigherOrderInverseDynamics
    robot, client, process = chain
    fd = ForwardDynamics.Request()
    fd.joint_state.name = NAMES
    fd.joint_state.position = X0
    fd.joint_state.velocity = [1e308] * 4
    fd.joint_state.effort = [1e308] * 4
    response = client.call(ForwardDynamics, 'forward_dynamics', fd)
    assert response.error_code.val == ErrorCodes.INVALID_STATE, response.message
    assert 'joint_state.effort[0] = 1e+308 is beyond the bound' in response.message
    fd.joint_state.effort = [0.0] * 4
    response = client.call(ForwardDynamics, 'forward_dynamics', fd)
    assert response.error_code.val == ErrorCodes.INVALID_STATE, response.message
    assert 'joint_state.velocity[0]' in response.message
    hoid = HigherOrderInverseDynamics.Request()
    hoid.motion.name = NAMES
    for value, code, words in ((1e10, 'INVALID_STATE', ["'lift'", 'stroke']),
                               (1e308, 'INVALID_STATE', ["'lift'", 'stroke']),
                               (-1e155, 'INVALID_STATE', ['stroke'])):
        hoid.motion.position = [value] * 4
        response = client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics',
                               hoid)
        assert response.error_code.val == getattr(ErrorCodes, code), response.message
        assert all(w in response.message for w in words), response.message
    hoid.motion.position = [0.3, 0.7, 0.25, 0.4]        # beyond the stroke: as ID answers it
    response = client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics', hoid)
    assert response.error_code.val == ErrorCodes.INVALID_STATE, response.message
    good_id(robot, client)
    assert process.running()


def test_bad_ik_seeds(chain):
    """A seed of 1e308 rad for the slew (a joint without limits) answered FAILURE (a math
    domain error); a seed naming a passive joint was ignored silently. Each is now refused
    naming the culprit: the bound, the joints the seed takes. A seed naming some actuators is
    answered as the core's IK from the others at mid-stroke (the documented partial seed)."""
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import InverseKinematics
    from pkm_dynamics.node.messages.conversions import matrix_pose, pose_matrix
    robot, client, process = chain
    request = InverseKinematics.Request()
    request.pose.pose = matrix_pose(robot.forward_kinematics(np.array(X0)))
    request.seed.name = NAMES
    for huge in (1e155, 1e308, -1e308):
        request.seed.position = [huge, 0.2, 0.25, 0.4]
        response = client.call(InverseKinematics, 'inverse_kinematics', request)
        assert response.error_code.val == ErrorCodes.INVALID_STATE, response.message
        assert f'seed.position[0] = {huge:.6g} is beyond the bound' in response.message
    passive = [n for n in robot.tree_joints if n not in robot.actuated_joints][0]
    for names in (['slwe'], ['slew', passive]):
        request.seed.name, request.seed.position = names, [0.1] * len(names)
        response = client.call(InverseKinematics, 'inverse_kinematics', request)
        assert response.error_code.val == ErrorCodes.UNKNOWN_JOINT, response.message
        assert str(names[-1:]) in response.message, response.message
        assert str(list(robot.actuated_joints)) in response.message, response.message
    request.seed.name, request.seed.position = ['slew'], [0.3]
    response = client.call(InverseKinematics, 'inverse_kinematics', request)
    assert response.success, response.message
    start = robot.seed_reference.copy()
    start[0] = 0.3
    assert_array_equal(response.actuator_state.position, robot.inverse_kinematics(
        pose_matrix(request.pose.pose), initial=start).actuators)
    assert process.running()


def test_model_info_is_answered_during_a_long_call(pkm, module_ros_node):
    """A long trajectory request used to hold the node: every get_model_info sent meanwhile
    waited for it (and beyond the queue depth of 10 was dropped). Now get_model_info has a
    thread of its own: it is answered while the long call still runs, and the long call is
    answered too (every point, the core's numbers)."""
    from pkm_dynamics_interfaces.srv import GetModelInfo, InverseDynamics
    from pkm_dynamics.node.messages.conversions import matrix_quaternion
    from trajectory_msgs.msg import MultiDOFJointTrajectoryPoint
    from geometry_msgs.msg import Transform
    robot, client, process = pkm
    assert client.call(GetModelInfo, 'get_model_info').success
    poses = [robot.task_pose(np.array([0.01 * math.sin(k / 50), 0.0, 0.0]))
             for k in range(1000)]
    request = InverseDynamics.Request()
    for C in poses:
        t = Transform()
        t.translation.x, t.translation.y, t.translation.z = C[:3, 3].tolist()
        t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w = matrix_quaternion(
            C[:3, :3]).tolist()
        request.task_trajectory.points.append(MultiDOFJointTrajectoryPoint(transforms=[t]))
    long_call = module_ros_node.create_client(InverseDynamics, '/bad_pkm/inverse_dynamics')
    assert long_call.wait_for_service(timeout_sec=20.0)
    future = long_call.call_async(request)
    answered_meanwhile = 0
    while not future.done():
        info = client.call(GetModelInfo, 'get_model_info')
        assert info.success and info.robot_name == robot.description.name
        answered_meanwhile += not future.done()
    assert answered_meanwhile > 0
    response = future.result()
    assert response.success, response.message
    efforts = np.array([p.effort for p in response.feedforward.points])
    zero = np.zeros(robot.dof)
    assert_array_equal(efforts[[0, -1]], [robot.inverse_dynamics(poses[0], zero, zero),
                                          robot.inverse_dynamics(poses[-1], zero, zero)])
    module_ros_node.destroy_client(long_call)
    assert process.running()


def _multidof_point():
    from geometry_msgs.msg import Transform
    from trajectory_msgs.msg import MultiDOFJointTrajectoryPoint
    return MultiDOFJointTrajectoryPoint(transforms=[Transform()])


def test_bad_pkm_requests(pkm, module_ros_node):
    from geometry_msgs.msg import Twist
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import InverseKinematics
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import GetParameters, SetParameters
    from pkm_dynamics.node.messages.conversions import matrix_pose, pose_matrix
    robot, client, process = pkm

    def ik(pose, twist=None):
        request = InverseKinematics.Request()
        request.pose.pose = pose
        if twist is not None:
            request.has_twist, request.twist = True, twist
        return client.call(InverseKinematics, 'inverse_kinematics', request)

    good = matrix_pose(robot.task_pose(np.array([0.01, -0.01, 0.05])))
    far = matrix_pose(robot.task_pose(np.array([3.0, 0.0, 0.0])))
    response = ik(far)
    assert response.error_code.val == ErrorCodes.NO_IK_SOLUTION, response.message
    assert 'out of reach' in response.message
    bad = matrix_pose(robot.reference_pose)
    bad.orientation.w = 2.0
    response = ik(bad)
    assert response.error_code.val == ErrorCodes.INVALID_REQUEST and 'norm' in response.message
    bad.orientation.w = math.nan
    response = ik(bad)
    assert response.error_code.val == ErrorCodes.NON_FINITE
    twist = Twist()
    twist.linear.z = 0.1           # planar_3rrr's task space is vx vy wz
    response = ik(good, twist)
    assert response.error_code.val == ErrorCodes.INVALID_REQUEST
    assert 'linear.z' in response.message
    # a singular configuration: every pose is, with a threshold of 1 on kappa(F)
    before = client.call(GetParameters, 'get_parameters', GetParameters.Request(
        names=['ik.singularity_threshold'])).values[0].double_value
    set_threshold = SetParameters.Request(parameters=[Parameter(
        name='ik.singularity_threshold',
        value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=1.0))])
    result = client.call(SetParameters, 'set_parameters', set_threshold)
    try:        # restored whatever happens: the module's node serves the other tests too
        assert result.results[0].successful, result.results[0].reason
        response = ik(good)
        assert response.error_code.val == ErrorCodes.SINGULAR and 'kappa' in response.message
    finally:
        set_threshold.parameters[0].value.double_value = before
        assert client.call(SetParameters, 'set_parameters', set_threshold).results[0].successful
    # out-of-range tolerance is refused by the parameter's range
    set_tol = SetParameters.Request(parameters=[Parameter(
        name='ik.tolerance',
        value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=1.0))])
    assert not client.call(SetParameters, 'set_parameters', set_tol).results[0].successful
    # the next good request
    response = ik(good)
    assert response.success, response.message
    assert_array_equal(response.actuator_state.position,
                       robot.inverse_kinematics(pose_matrix(good)).actuators)
    assert process.running()


def test_bad_references_give_no_output(chain, module_ros_node):
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    robot, _, process = chain
    node = module_ros_node
    states = Collector(node, JointState, '/bad_chain/feedforward/joint_states')
    publisher = matched_publisher(node, JointTrajectory, '/bad_chain/reference', 100)
    assert states.wait_for_publisher(node)

    def reference(names, positions, velocities=()):
        return JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(
            positions=list(positions), velocities=list(velocities))])

    for bad in (reference(NAMES, X0[:3]),
                reference(NAMES, X0, [0.0, math.nan, 0.0, 0.0]),
                reference(['slew', 'lift', 'tilt', 'telescope'], X0),
                reference(NAMES, [0.3, 0.56, 0.25, 0.4]),
                reference(NAMES, X0, [1e155, 0.0, -1e155, 1e6]),
                JointTrajectory(joint_names=NAMES)):
        publisher.publish(bad)
    publisher.publish(reference(NAMES, X0))
    assert states.wait_for(node, 1)
    spin_until(node, lambda: False, timeout=0.5)
    assert len(states.messages) == 1
    assert_array_equal(states.messages[0].effort,
                       robot.inverse_dynamics(np.array(X0), np.zeros(4), np.zeros(4)))
    log = process.log()
    for word in ('positions has 3 entries', 'NaN', 'telescope', 'loop closes', 'no points',
                 'points[0].velocities[0] = 1e+155 is beyond the bound'):
        assert word in log, log
    assert process.running()


def test_bad_actuator_states_give_no_output(chain, module_ros_node):
    from sensor_msgs.msg import JointState
    robot, _, process = chain
    node = module_ros_node
    completed = Collector(node, JointState, '/joint_states')
    publisher = matched_publisher(node, JointState, '/actuator_states', 10)
    publisher.publish(JointState(name=NAMES[:3], position=X0[:3]))          # one missing
    publisher.publish(JointState(name=NAMES, position=[0.3, math.inf, 0.25, 0.4]))
    publisher.publish(JointState(name=NAMES, position=[0.3, 0.9, 0.25, 0.4]))  # beyond stroke
    publisher.publish(JointState(name=NAMES, position=X0))
    assert completed.wait_for(node, 1)
    spin_until(node, lambda: False, timeout=0.5)
    assert len(completed.messages) == 1
    assert_array_equal(completed.messages[0].position, robot.tree_state(np.array(X0))[0])
    assert 'missing joint' in process.log() and process.running()
