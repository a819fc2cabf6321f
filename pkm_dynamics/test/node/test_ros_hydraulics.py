"""The hydraulic outputs of the installed node (issue 27 item 6) on the HIAB crane: the
feedforward's ``pressure`` (p_A, p_B per cylinder) and ``valve`` (spool commands) topics in the
cylinder order of ``feedforward.joints``, equal to the core's valve model at the reference with
its exact jerk; a planner's InverseDynamics answer beyond what the valves deliver still
succeeds and names the cylinder, quantity and limit."""
import numpy as np
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.core.hydraulics.hydraulic_feedforward import force_rate
from pkm_dynamics.core.hydraulics.hydraulic_trajectory import pressure_trajectory
from pkm_dynamics.core.hydraulics.valve_cylinder import hydraulic_state
from pkm_dynamics.testing import Client, Collector, matched_publisher

JOINTS = ['extension', 'slew', 'tilt', 'lift']          # the controllers' order
STREAM = {'feedforward.outputs': ['commands', 'pressure', 'valve'], 'feedforward.max_age': 0.0,
          'feedforward.joints': JOINTS}


@pytest.fixture(scope='module')
def crane(module_node, example_robot):
    text = example_robot('heavy_duty_4dof')
    module_node(params={'robot_description': text, **STREAM}, name='hyd_crane')
    return load_robot(text)


def motion(t):
    """A smooth actuator motion: x and its derivatives 1..3 (4, 4)."""
    x0, w = np.array([0.2, 0.2, 0.3, 0.4]), np.array([1.0, 2.0, 1.5, 1.0])
    return np.array([x0 * (k == 0) + 0.05 * w**k * np.sin(w * t + k * np.pi / 2) for k in range(4)])


def test_pressure_and_valve_outputs(crane, module_ros_node):
    """Two-point references 1 ms apart (the jerk of the quintic through both, as for the motor
    output): the pressure and valve topics carry the core's valve model with the chamber
    pressures carried along the stream (its times: stamp + time_from_start) at the reference's
    exact jerk (to 1e-6 of the pressures' and spools' scale), cylinders in the order of
    feedforward.joints, and the commands stay the efforts."""
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    node = module_ros_node
    pressure = Collector(node, Float64MultiArray, '/hyd_crane/feedforward/pressure')
    valve = Collector(node, Float64MultiArray, '/hyd_crane/feedforward/valve_commands')
    commands = Collector(node, Float64MultiArray, '/hyd_crane/feedforward/commands')
    publisher = matched_publisher(node, JointTrajectory, '/hyd_crane/reference', 100)
    assert pressure.wait_for_publisher(node) and valve.wait_for_publisher(node)

    def point(t, offset):
        m = motion(t + offset)
        p = JointTrajectoryPoint(positions=list(m[0]), velocities=list(m[1]), accelerations=list(m[2]))
        p.time_from_start.nanosec = int(round(offset * 1e9))
        return p

    times = 0.1 + 1e-3 * np.arange(30)
    for k, t in enumerate(times):
        msg = JointTrajectory(joint_names=list(crane.actuated_joints))
        msg.header.stamp.sec, msg.header.stamp.nanosec = 1_795_000_000, k * 10**6
        msg.points = [point(t, 0.0), point(t, 1e-3)]
        publisher.publish(msg)
    assert pressure.wait_for(node, len(times)) and valve.wait_for(node, len(times))
    assert commands.wait_for(node, len(times))
    m = crane.hydraulic_model
    order = [m.joints.index(j) for j in JOINTS if j in m.joints]       # tilt, lift after extension
    assert [m.joints[i] for i in order] == ['extension', 'tilt', 'lift']
    M = np.array([motion(t) for t in times])                   # (samples, 4, n)
    u, du = force_rate(crane, M[:, 0], M[:, 1], M[:, 2], M[:, 3])
    h = pressure_trajectory(m, times, M[:, 0], M[:, 1], u, du)
    want_p = np.stack([h.pressure_a[:, order], h.pressure_b[:, order]], -1).reshape(len(times), -1)
    want_s = h.spool[:, order]
    got_p = np.array([msg.data for msg in pressure.messages])
    got_s = np.array([msg.data for msg in valve.messages])
    np.testing.assert_allclose(got_p, want_p, rtol=0, atol=1e-6 * np.abs(want_p).max())
    np.testing.assert_allclose(got_s, want_s, rtol=0, atol=1e-6 * np.abs(want_s).max())
    still = [hydraulic_state(m, mo[0], mo[1], crane.inverse_dynamics(*mo[:3]), None) for mo in map(motion, times)]
    assert np.abs(np.array([h.spool[order] for h in still]) - want_s).max() > 1e-4 * np.abs(want_s).max()
    U = np.array([crane.inverse_dynamics(*motion(t)[:3]) for t in times])
    np.testing.assert_array_equal([msg.data for msg in commands.messages],
                                  U[:, [crane.actuated_joints.index(j) for j in JOINTS]])


def test_inverse_dynamics_beyond_the_valves_names_them(crane, module_ros_node):
    """A point whose extension moves faster than its valve's full opening delivers: answered
    (success), the spool beyond 1 in the hydraulic answer and named in the message."""
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import JointTrajectoryPoint
    request = InverseDynamics.Request()
    request.trajectory.joint_names = list(crane.actuated_joints)
    x = motion(0.3)
    xd = x[1].copy()
    xd[3] = 0.6
    request.trajectory.points = [JointTrajectoryPoint(positions=list(x[0]), velocities=list(xd),
                                                      accelerations=list(x[2]))]
    response = Client(module_ros_node, '/hyd_crane').call(InverseDynamics, 'inverse_dynamics', request)
    assert response.success, response.message
    assert "cylinder 'extension': spool" in response.message and 'beyond the limit 1' in response.message
    h = response.hydraulics[0]
    assert list(h.name) == ['lift', 'tilt', 'extension'] and h.spool[2] > 1.0
