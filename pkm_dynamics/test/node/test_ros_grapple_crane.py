"""The grapple crane (robots/grapple_crane.urdf: the HIAB crane with a rotator and a grapple on two
passive swing axes) over DDS: the dynamics services take the passive joints' measured state in
``passive_names`` / ``passive_positions`` / ``passive_velocities`` and answer with the core's
numbers to round-off (computed here on the same inputs: forward dynamics, Featherstone's hybrid
dynamics with the passive accelerations, joint reactions); a passive joint missing or not finite
is refused naming it and the node keeps serving; the joint-state completion reads the swing axes
from the measured joint states and the feedforward uses the latest of them."""
import numpy as np
from numpy.testing import assert_allclose
import pytest

X = np.array([0.3, 0.2, 0.25, 0.4, 0.3])
XD = np.array([0.05, -0.02, 0.03, 0.05, 0.2])
XDD = np.array([0.2, 0.1, -0.1, 0.3, -0.4])
#: the swing axes (grapple_swing_y, grapple_swing_x): positions and velocities
P = np.array([0.2, -0.1])
PD = np.array([0.3, 0.15])


def assert_round_off(got, expected):
    """``got`` equals ``expected`` to round-off (1e-12 of the largest entry, at least 1e-12): the
    node's answer and this process's call of the same robot on the same inputs are not always
    equal bit for bit (seen once: one unit in the last place of an effort in the feedforward)."""
    expected = np.asarray(expected, dtype=float)
    assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * max(np.abs(expected).max(initial=0.0), 1.0))


@pytest.fixture(scope='module')
def grapple(served_robot):
    return served_robot('grapple_crane', 'grapple')


def request_of(srv, robot, x, xd, effort, passive_names=None, passive=P, passive_rates=PD):
    """A ForwardDynamics / JointReactions request, the joints given in reverse order."""
    request = srv.Request()
    state = request.joint_state
    state.name = list(robot.actuated_joints)[::-1]
    state.position, state.velocity, state.effort = (list(np.asarray(v, dtype=float)[::-1]) for v in (x, xd, effort))
    names = list(robot.passive_joints)[::-1] if passive_names is None else passive_names
    request.passive_names = names
    request.passive_positions = [float(passive[robot.passive_joints.index(n)]) for n in names]
    request.passive_velocities = [float(passive_rates[robot.passive_joints.index(n)]) for n in names]
    return request


def test_model_info_names_the_passive_joints(grapple):
    from pkm_dynamics_interfaces.srv import GetModelInfo
    robot, client, _ = grapple
    info = client.call(GetModelInfo, 'get_model_info')
    assert info.success and info.kind == 'loop_chain'
    assert list(info.actuated_joints) == list(robot.actuated_joints)
    assert list(info.passive_joints) == ['grapple_swing_y', 'grapple_swing_x'] == list(robot.passive_joints)


def test_forward_dynamics_and_reactions_take_the_passive_state(grapple):
    from pkm_dynamics_interfaces.srv import ForwardDynamics, JointReactions
    robot, client, _ = grapple
    x, xd = np.concatenate([X, P]), np.concatenate([XD, PD])
    f = robot.inverse_dynamics(x, xd, XDD) + 50.0
    response = client.call(ForwardDynamics, 'forward_dynamics', request_of(ForwardDynamics, robot, X, XD, f))
    assert response.success, response.message
    expected = robot.forward_dynamics(x, xd, f)
    assert_round_off(response.acceleration, expected[:5])
    assert list(response.passive_names) == list(robot.passive_joints)
    assert_round_off(response.passive_accelerations, expected[5:])
    response = client.call(JointReactions, 'joint_reactions', request_of(JointReactions, robot, X, XD, f))
    assert response.success, response.message
    got = [[w.torque.x, w.torque.y, w.torque.z, w.force.x, w.force.y, w.force.z] for w in response.joint_wrenches]
    assert_round_off(got, robot.joint_reactions(x, xd, f).joint_wrenches)


def test_inverse_dynamics_is_the_hybrid_dynamics(grapple):
    """A trajectory with the passive joints' state at every point: the actuator efforts and the
    passive accelerations of robot.hybrid_dynamics, point by point."""
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import JointTrajectoryPoint
    robot, client, _ = grapple
    names = list(robot.actuated_joints)
    request = InverseDynamics.Request()
    request.trajectory.joint_names = names[::-1]
    rows = [(X + 0.01 * k, XD, XDD, P + 0.05 * k, PD - 0.1 * k) for k in range(3)]
    for x, xd, xdd, _, _ in rows:
        request.trajectory.points.append(JointTrajectoryPoint(
            positions=list(x[::-1]), velocities=list(xd[::-1]), accelerations=list(xdd[::-1])))
    request.passive_names = list(robot.passive_joints)[::-1]
    request.passive_positions = [float(v) for r in rows for v in r[3][::-1]]
    request.passive_velocities = [float(v) for r in rows for v in r[4][::-1]]
    response = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert response.success, response.message
    expected = [robot.hybrid_dynamics(np.concatenate([x, p]), np.concatenate([xd, pd]), xdd)
                for x, xd, xdd, p, pd in rows]
    assert_round_off([p.effort for p in response.feedforward.points], [u for u, _ in expected])
    assert list(response.passive_names) == list(robot.passive_joints)
    assert_round_off(response.passive_accelerations, np.concatenate([a for _, a in expected]))


def test_a_bad_passive_state_is_named_and_the_node_serves(grapple):
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import ForwardDynamics, InverseDynamics
    from trajectory_msgs.msg import JointTrajectoryPoint
    robot, client, process = grapple
    f = np.zeros(5)
    missing = client.call(ForwardDynamics, 'forward_dynamics',
                          request_of(ForwardDynamics, robot, X, XD, f, passive_names=['grapple_swing_y']))
    assert not missing.success and missing.error_code.val == ErrorCodes.INVALID_STATE
    assert '"grapple_swing_x"' in missing.message
    bad = np.array([P[0], np.nan])
    nan = client.call(ForwardDynamics, 'forward_dynamics', request_of(ForwardDynamics, robot, X, XD, f, passive=bad))
    assert not nan.success and nan.error_code.val == ErrorCodes.NON_FINITE
    assert '"grapple_swing_x"' in nan.message
    request = InverseDynamics.Request()
    request.trajectory.joint_names = list(robot.actuated_joints)
    request.trajectory.points.append(JointTrajectoryPoint(positions=list(X)))
    none = client.call(InverseDynamics, 'inverse_dynamics', request)
    assert not none.success and none.error_code.val == ErrorCodes.INVALID_STATE
    assert '"grapple_swing_y"' in none.message
    good = client.call(ForwardDynamics, 'forward_dynamics', request_of(ForwardDynamics, robot, X, XD, f))
    assert good.success, good.message
    assert process.running()


def test_completion_and_feedforward_use_the_measured_swing(grapple, module_ros_node):
    """The measured joint state (actuators and swing axes) completes every tree joint; a measured
    state without the swing axes is refused naming one; the feedforward of a reference is the
    hybrid dynamics' efforts at the latest measured swing state."""
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from pkm_dynamics.testing import Collector, matched_publisher, spin_until
    robot, _, process = grapple
    node = module_ros_node
    completed = Collector(node, JointState, '/joint_states')
    feedforward = Collector(node, JointState, '/grapple/feedforward/joint_states')
    measured = matched_publisher(node, JointState, '/actuator_states', 10)
    reference = matched_publisher(node, JointTrajectory, '/grapple/reference', 10)
    measured.publish(JointState(name=list(robot.actuated_joints), position=list(X), velocity=list(XD)))
    assert spin_until(node, lambda: 'no measured state of passive joint "grapple_swing_y"' in process.log())
    names = list(robot.actuated_joints) + list(robot.passive_joints)
    measured.publish(JointState(name=names[::-1], position=list(np.concatenate([X, P])[::-1]),
                                velocity=list(np.concatenate([XD, PD])[::-1])))
    assert spin_until(node, lambda: any(len(m.name) == len(robot.tree_joints) for m in completed.messages))
    out = [m for m in completed.messages if len(m.name) == len(robot.tree_joints)][-1]
    q, qd, _ = robot.tree_state(np.concatenate([X, P]), np.concatenate([XD, PD]))
    assert list(out.name) == list(robot.tree_joints)
    assert_round_off(out.position, q)
    assert_round_off(out.velocity, qd)
    point = JointTrajectoryPoint(positions=list(X), velocities=list(XD), accelerations=list(XDD))
    ref = JointTrajectory(joint_names=list(robot.actuated_joints), points=[point])
    reference.publish(ref)
    assert spin_until(node, lambda: feedforward.messages)
    u = robot.inverse_dynamics(np.concatenate([X, P]), np.concatenate([XD, PD]), XDD)
    assert list(feedforward.messages[-1].name) == list(robot.actuated_joints)
    assert_round_off(feedforward.messages[-1].effort, u)


def test_forward_kinematics_takes_the_passive_state(grapple):
    """ForwardKinematics with the swing axes' measured state: the grapple's pose, body twist and
    every tree joint are the core's at the whole state; without the swing axes: INVALID_STATE
    naming one, the node serving."""
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import ForwardKinematics
    from pkm_dynamics.core.forward_state import forward_state
    robot, client, process = grapple

    def request_with(passive: bool):
        request = ForwardKinematics.Request()
        request.actuator_state.name = list(robot.actuated_joints)[::-1]
        request.actuator_state.position = list(X[::-1])
        request.actuator_state.velocity = list(XD[::-1])
        if passive:
            request.passive_names = list(robot.passive_joints)[::-1]
            request.passive_positions = list(P[::-1])
            request.passive_velocities = list(PD[::-1])
        return request
    response = client.call(ForwardKinematics, 'forward_kinematics', request_with(True))
    assert response.success, response.message
    missing = client.call(ForwardKinematics, 'forward_kinematics', request_with(False))
    assert not missing.success and missing.error_code.val == ErrorCodes.INVALID_STATE
    assert '"grapple_swing_y"' in missing.message
    state = forward_state(robot, np.concatenate([X, P]), np.concatenate([XD, PD]))
    p, o = response.pose.pose.position, response.pose.pose.orientation
    assert_round_off([p.x, p.y, p.z], state.pose[:3, 3])
    from scipy.spatial.transform import Rotation
    assert_allclose(Rotation.from_quat([o.x, o.y, o.z, o.w]).as_matrix(), state.pose[:3, :3], atol=1e-12)
    t = response.twist
    assert_round_off([t.angular.x, t.angular.y, t.angular.z, t.linear.x, t.linear.y, t.linear.z], state.twist)
    assert_round_off(response.joint_state.position, state.q)
    assert_round_off(response.joint_state.velocity, state.qd)
    assert process.running()


def test_pressure_and_valve_outputs_follow_the_hybrid_dynamics(served_robot, module_ros_node):
    """The feedforward's pressure and valve outputs of the grapple crane: the core's valve model
    at the hybrid dynamics' forces (the latest measured swing state) and their rate along the
    motion (``force_rate`` at the jerk of the two-point reference's spline), cylinders in the
    actuators' order."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from pkm_dynamics.core.hoid.reference_derivatives import hermite_rates
    from pkm_dynamics.core.hydraulics.hydraulic_feedforward import force_rate
    from pkm_dynamics.core.hydraulics.valve_cylinder import hydraulic_state
    from pkm_dynamics.testing import Collector, matched_publisher, spin_until
    robot, _, process = served_robot('grapple_crane', 'grapple_hyd', **{
        'feedforward.outputs': ['commands', 'pressure', 'valve'], 'feedforward.max_age': 0.0})
    node = module_ros_node
    pressure = Collector(node, Float64MultiArray, '/grapple_hyd/feedforward/pressure')
    valve = Collector(node, Float64MultiArray, '/grapple_hyd/feedforward/valve_commands')
    measured = matched_publisher(node, JointState, '/actuator_states', 10)
    reference = matched_publisher(node, JointTrajectory, '/grapple_hyd/reference', 10)
    names = list(robot.actuated_joints) + list(robot.passive_joints)
    later = (X + 1e-3 * XD, XD + 1e-3 * XDD, XDD + 1e-3 * np.array([1.0, -2.0, 0.5, 1.5, -1.0]))
    first, second = JointTrajectoryPoint(positions=list(X), velocities=list(XD), accelerations=list(XDD)), \
        JointTrajectoryPoint(positions=list(later[0]), velocities=list(later[1]), accelerations=list(later[2]))
    second.time_from_start.nanosec = 10**6
    msg = JointTrajectory(joint_names=list(robot.actuated_joints), points=[first, second])

    import time
    last = [0.0]

    def sent():                     # a measured state, then the reference, every 0.2 s
        if time.monotonic() - last[0] < 0.2:
            return bool(pressure.messages) and bool(valve.messages)
        last[0] = time.monotonic()
        measured.publish(JointState(name=names, position=list(np.concatenate([X, P])),
                                    velocity=list(np.concatenate([XD, PD]))))
        reference.publish(msg)
        return bool(pressure.messages) and bool(valve.messages)
    assert spin_until(node, sent), process.log()[-2000:]
    jerk = hermite_rates(1e-3, np.stack([X, XD, XDD]), np.stack(later))[0]
    u, du = force_rate(robot, np.concatenate([X, P]), np.concatenate([XD, PD]), XDD, jerk)
    m = robot.hydraulic_model
    h = hydraulic_state(m, X, XD, u, du, check=False)
    order = [m.joints.index(j) for j in robot.actuated_joints if j in m.joints]
    want_p = np.stack([h.pressure_a[order], h.pressure_b[order]], -1).reshape(-1)
    np.testing.assert_allclose(pressure.messages[-1].data, want_p, rtol=0, atol=1e-6 * np.abs(want_p).max())
    np.testing.assert_allclose(valve.messages[-1].data, h.spool[order], rtol=0,
                               atol=1e-6 * np.abs(h.spool).max())
    assert process.running()


def test_higher_order_inverse_dynamics_takes_the_passive_state(grapple):
    """HigherOrderInverseDynamics of the grapple crane: the passive joints' measured state in the
    request (reverse order), the core's HOID to round-off out (efforts and their rates, the
    passive accelerations, jerks and snaps, the hydraulics at ``u, du``); a missing passive
    joint is INVALID_STATE naming it and the node serves."""
    from pkm_dynamics_interfaces.msg import ErrorCodes
    from pkm_dynamics_interfaces.srv import HigherOrderInverseDynamics
    from pkm_dynamics.core.hydraulics.valve_cylinder import hydraulic_state
    robot, client, process = grapple
    jerk, snap = np.array([0.3, -0.2, 0.5, 0.1, -0.4]), np.array([1.0, 0.5, -0.5, 0.2, 2.0])

    def request_with(names):
        request = HigherOrderInverseDynamics.Request()
        m = request.motion
        m.name = list(robot.actuated_joints)
        m.position, m.velocity, m.acceleration, m.jerk, m.snap = (list(v) for v in (X, XD, XDD, jerk, snap))
        request.passive_names = names
        request.passive_positions = [float(P[robot.passive_joints.index(n)]) for n in names]
        request.passive_velocities = [float(PD[robot.passive_joints.index(n)]) for n in names]
        return request

    response = client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics',
                           request_with(list(robot.passive_joints)[::-1]))
    assert response.success, response.message
    ref = robot.higher_order_inverse_dynamics(np.concatenate([X, P]), np.concatenate([XD, PD]), XDD, jerk, snap)
    assert_round_off(response.effort.effort, ref.u)
    assert_round_off(response.effort.effort_rate, ref.du)
    assert_round_off(response.effort.effort_acceleration, ref.ddu)
    assert list(response.passive_names) == list(robot.passive_joints)
    assert_round_off(response.passive_accelerations, robot.hybrid_dynamics(np.concatenate([X, P]),
                                                                           np.concatenate([XD, PD]), XDD)[1])
    assert_round_off(response.passive_jerks, ref.passive_motion[3])
    assert_round_off(response.passive_snaps, ref.passive_motion[4])
    h = hydraulic_state(robot.hydraulic_model, X, XD, ref.u, ref.du, check=False)
    assert_round_off(response.hydraulics.pressure_a, h.pressure_a)
    missing = client.call(HigherOrderInverseDynamics, 'higher_order_inverse_dynamics',
                          request_with(['grapple_swing_y']))
    assert not missing.success and missing.error_code.val == ErrorCodes.INVALID_STATE
    assert '"grapple_swing_x"' in missing.message
    assert process.running()
