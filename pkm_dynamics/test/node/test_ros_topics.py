"""The topic side of the installed node: the feedforward publisher gives one output per
reference, in every configured form, equal to the core's numbers (a JointTrajectory stream for
a module chain, a MultiDOFJointTrajectory stream for a PKM with series-elastic actuators), and
joint-state completion publishes every tree joint from measured actuator positions."""
import numpy as np
from numpy.testing import assert_array_equal
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.core.hoid.higher_order import higher_order_inverse_dynamics
from pkm_dynamics.testing import Collector, matched_publisher, spin_until

OUTPUTS = ['commands', 'joint_state', 'trajectory', 'motor']
CHAIN, PKM = 'heavy_duty_4dof', 'planar_3rrr'
#: references sent back to back: the node's whole queue (feedforward.qos_depth, default 100)
BURST = 100


#: the references carry their index as header stamp (seconds since 1970: no age check)
STREAM = {'feedforward.outputs': OUTPUTS, 'feedforward.max_age': 0.0}


@pytest.fixture(scope='module')
def chain(module_node, example_robot):
    text = example_robot(CHAIN)
    module_node(params={'robot_description': text, **STREAM}, name='ff_chain')
    return load_robot(text)


@pytest.fixture(scope='module')
def pkm(module_node, example_robot):
    text = example_robot(PKM)
    module_node(params={'robot_description': text, **STREAM}, name='ff_pkm')
    return load_robot(text)


def reference_stream(robot, count):
    """`count` JointTrajectory references (one point each, joints in reverse order) and the
    (x, xd, xdd) of each."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    names = list(robot.actuated_joints)[::-1]
    t = np.linspace(0.0, 1.0, count)
    x0 = np.array([0.3, 0.2, 0.25, 0.4])
    msgs, states = [], []
    for k, tk in enumerate(t):
        x = x0 + 0.05 * np.sin(tk + np.arange(4))
        xd = 0.05 * np.cos(tk + np.arange(4))
        xdd = -x + x0
        msg = JointTrajectory(joint_names=names)
        msg.header.stamp.sec = 100 + k
        msg.points = [JointTrajectoryPoint(positions=list(x[::-1]), velocities=list(xd[::-1]),
                                           accelerations=list(xdd[::-1]))]
        msgs.append(msg)
        states.append((x, xd, xdd))
    return msgs, states


def test_feedforward_module_chain(chain, module_ros_node):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory
    node = module_ros_node
    commands = Collector(node, Float64MultiArray, '/ff_chain/feedforward/commands')
    states = Collector(node, JointState, '/ff_chain/feedforward/joint_states')
    trajectories = Collector(node, JointTrajectory, '/ff_chain/feedforward/trajectory')
    motor = Collector(node, JointState, '/ff_chain/feedforward/motor_commands')
    publisher = matched_publisher(node, JointTrajectory, '/ff_chain/reference', 100)
    assert commands.wait_for_publisher(node) and states.wait_for_publisher(node)
    assert trajectories.wait_for_publisher(node)
    msgs, motion = reference_stream(chain, BURST)
    for msg in msgs:                  # faster than the node handles them: it drains its queue
        publisher.publish(msg)
    assert states.wait_for(node, len(msgs)), len(states.messages)
    assert commands.wait_for(node, len(msgs)) and trajectories.wait_for(node, len(msgs))
    spin_until(node, lambda: False, timeout=0.3)        # nothing more may come
    assert len(commands.messages) == len(states.messages) == len(trajectories.messages) == BURST
    names = list(chain.actuated_joints)
    X, XD, XDD = (np.array(v) for v in zip(*motion))
    expected = chain.inverse_dynamics(X, XD, XDD)
    assert_array_equal([m.data for m in commands.messages], expected)
    assert all(list(m.name) == names for m in states.messages)
    assert_array_equal([m.effort for m in states.messages], expected)
    assert_array_equal([m.position for m in states.messages], X)
    assert [m.header.stamp.sec for m in states.messages] == [100 + k for k in range(BURST)]
    assert_array_equal([m.points[0].effort for m in trajectories.messages], expected)
    # module chains without series-elastic actuators publish no motor commands
    assert motor.messages == []


def task_stream(robot, count):
    from geometry_msgs.msg import Accel, Transform, Twist
    from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint
    from pkm_dynamics.node.messages.conversions import matrix_pose, pose_matrix, task_message
    msgs, motion = [], []
    for k, s in enumerate(np.linspace(0.0, 1.0, count)):
        P = robot.task_pose(np.array([0.01, -0.01, 0.05]) * s)
        V, A = np.full(robot.dof, 0.1 * s), np.full(robot.dof, -0.2)
        pose = matrix_pose(P)
        tf = Transform()
        tf.translation.x, tf.translation.y, tf.translation.z = (
            pose.position.x, pose.position.y, pose.position.z)
        tf.rotation = pose.orientation
        msg = MultiDOFJointTrajectory(joint_names=['platform'])
        msg.header.stamp.sec = 200 + k
        msg.points = [MultiDOFJointTrajectoryPoint(
            transforms=[tf], velocities=[task_message(V, robot.task_space, Twist)],
            accelerations=[task_message(A, robot.task_space, Accel)])]
        msgs.append(msg)
        motion.append((pose_matrix(tf), V, A))
    return msgs, motion


def test_feedforward_pkm_with_series_elastic_actuators(pkm, module_ros_node):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import MultiDOFJointTrajectory
    node = module_ros_node
    commands = Collector(node, Float64MultiArray, '/ff_pkm/feedforward/commands')
    states = Collector(node, JointState, '/ff_pkm/feedforward/joint_states')
    motor = Collector(node, JointState, '/ff_pkm/feedforward/motor_commands')
    publisher = matched_publisher(node, MultiDOFJointTrajectory, '/ff_pkm/task_reference', 100)
    assert commands.wait_for_publisher(node) and motor.wait_for_publisher(node)
    msgs, motion = task_stream(pkm, 8)
    for msg in msgs:
        publisher.publish(msg)
    assert motor.wait_for(node, len(msgs)), len(motor.messages)
    assert commands.wait_for(node, len(msgs)) and states.wait_for(node, len(msgs))
    spin_until(node, lambda: False, timeout=0.3)
    assert len(commands.messages) == len(states.messages) == len(motor.messages) == 8
    # the core along the same stream: IK of each reference starts from the previous solution
    previous = None
    for (P, V, A), cmd, js, mj in zip(motion, commands.messages, states.messages,
                                      motor.messages):
        sol = pkm.inverse_kinematics(P, V, A, initial=previous)
        u = pkm.inverse_dynamics(sol, V, A)
        previous = sol
        assert_array_equal(cmd.data, u)
        assert_array_equal(js.effort, u)
        assert_array_equal(js.position, sol.actuators)
        assert_array_equal(js.velocity, sol.actuators_d)
        # references 1 s apart: beyond the stream's gap (no jerk and snap estimate), zero
        zero = np.zeros(pkm.dof)
        hoid = higher_order_inverse_dynamics(pkm, P, V, A, zero, zero, q_guess=sol.q)
        assert_array_equal(mj.position, hoid.motor_position)
        assert_array_equal(mj.velocity, hoid.motor_velocity)
        assert_array_equal(mj.effort, hoid.motor_torque)


def pick_and_place_references(robot, times, spacing=None, stamp=1_795_000_000):
    """MultiDOFJointTrajectory references of the pick-and-place path (paper 002 Sec. VI-B) at
    ``times``, stamped ``stamp + t`` (``stamp``: whole seconds since 1970, as ROS clocks
    stamp): one point each, or (``spacing``) two points, at t and ``t + spacing``
    (``time_from_start`` 0 and ``spacing``)."""
    from geometry_msgs.msg import Accel, Transform, Twist
    from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint
    from pkm_dynamics.node.messages.conversions import matrix_pose, task_message
    from pkm_dynamics.core.hoid.hoid_motions import pick_and_place

    def point(t, offset):
        C, V = pick_and_place(t + offset)
        pose = matrix_pose(C)
        tf = Transform()
        tf.translation.x, tf.translation.y, tf.translation.z = (
            pose.position.x, pose.position.y, pose.position.z)
        tf.rotation = pose.orientation
        p = MultiDOFJointTrajectoryPoint(
            transforms=[tf], velocities=[task_message(V[0], robot.task_space, Twist)],
            accelerations=[task_message(V[1], robot.task_space, Accel)])
        p.time_from_start.nanosec = int(round(offset * 1e9))
        return p

    msgs = []
    for t in times:
        msg = MultiDOFJointTrajectory(joint_names=['platform'])
        ns = int(round(t * 1e9))
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp + ns // 10**9, ns % 10**9
        msg.points = [point(t, 0.0)] + ([point(t, spacing)] if spacing else [])
        msgs.append(msg)
    return msgs


def test_motor_feedforward_with_the_reference_jerk_and_snap(pkm, module_ros_node):
    """The series-elastic motor torque of the topic on the pick-and-place path (references 1 ms
    apart, where the jerk pulses start) against the core's higher-order inverse dynamics with
    the path's exact jerk and snap: a stream of single-point references (the causal estimate
    from the previous reference, the first of the stream without), then references of two
    points 1 ms apart (the spline through them). Taking jerk = snap = 0 is off by 11 % of the
    largest torque of this stretch (8.8 % of the whole path's); the estimates by 0.4 %."""
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import MultiDOFJointTrajectory
    from pkm_dynamics.core.hoid.hoid_motions import pick_and_place
    node = module_ros_node
    motor = Collector(node, JointState, '/ff_pkm/feedforward/motor_commands')
    publisher = matched_publisher(node, MultiDOFJointTrajectory, '/ff_pkm/task_reference', 100)
    assert motor.wait_for_publisher(node)
    times = 0.01 + 1e-3 * np.arange(60)
    single = pick_and_place_references(pkm, times)
    double = pick_and_place_references(pkm, times[::3], spacing=1e-3, stamp=1_795_000_100)
    for msg in single + double:
        publisher.publish(msg)
    assert motor.wait_for(node, len(single) + len(double)), len(motor.messages)
    exact, zero, q = [], [], None
    for t in np.concatenate([times, times[::3]]):
        C, V = pick_and_place(t)
        r = higher_order_inverse_dynamics(pkm, C, *V, q_guess=q)
        q = r.tree_motion[0]
        exact.append(r.motor_torque)
        zero.append(higher_order_inverse_dynamics(pkm, C, V[0], V[1], 0 * V[0], 0 * V[0],
                                                  q_guess=q).motor_torque)
    exact, zero = np.array(exact), np.array(zero)
    got = np.array([m.effort for m in motor.messages])
    scale = np.abs(exact).max()
    assert np.abs(zero - exact).max() > 0.05 * scale                  # what is at stake
    np.testing.assert_allclose(got[0], zero[0], rtol=0, atol=1e-12 * scale)   # stream start
    assert np.abs(got[1:] - exact[1:]).max() < 5e-3 * scale


@pytest.fixture(scope='module')
def sea_chain(module_node, example_robot):
    """The heavy-duty crane with a series-elastic drive at each actuator (node ff_sea_chain)."""
    text = example_robot(CHAIN)
    for joint in ('slew', 'lift', 'tilt', 'extension'):
        text = text.replace(f'<actuator joint="{joint}"/>', f'<actuator joint="{joint}">'
                            '<series_elastic stiffness="2000" motor_inertia="5"/></actuator>')
    module_node(params={'robot_description': text, **STREAM}, name='ff_sea_chain')
    return load_robot(text)


def test_motor_feedforward_of_a_module_chain_with_jerk_and_snap(sea_chain, module_ros_node):
    """JointTrajectory references of a smooth actuator motion, 1 ms apart: the motor torque of
    the topic against the core's with the exact jerk and snap, for a stream of single-point
    references (the quintic through the previous point and this one) and references of two
    points (the quintic through both, as the joint trajectory controller interpolates)."""
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    node = module_ros_node
    motor = Collector(node, JointState, '/ff_sea_chain/feedforward/motor_commands')
    publisher = matched_publisher(node, JointTrajectory, '/ff_sea_chain/reference', 100)
    assert motor.wait_for_publisher(node)
    x0, w = np.array([0.3, 0.2, 0.25, 0.4]), np.array([3.0, 4.0, 5.0, 6.0])

    def motion(t):                      # x and its derivatives 1..4 (5, 4)
        return np.array([x0 * (k == 0) + 0.05 * w ** k * np.sin(w * t + k * np.pi / 2)
                         for k in range(5)])

    def point(t, offset):
        m = motion(t + offset)
        p = JointTrajectoryPoint(positions=list(m[0]), velocities=list(m[1]),
                                 accelerations=list(m[2]))
        p.time_from_start.nanosec = int(round(offset * 1e9))
        return p

    msgs, times = [], []
    for spacing, stamp in ((None, 1_795_000_000), (1e-3, 1_795_000_100)):
        for k in range(30):
            t = 0.1 + 1e-3 * k
            msg = JointTrajectory(joint_names=list(sea_chain.actuated_joints))
            msg.header.stamp.sec, msg.header.stamp.nanosec = stamp, k * 10**6
            msg.points = [point(t, 0.0)] + ([point(t, spacing)] if spacing else [])
            msgs.append(msg)
            times.append(t)
    for msg in msgs:
        publisher.publish(msg)
    assert motor.wait_for(node, len(msgs)), len(motor.messages)
    exact = np.array([higher_order_inverse_dynamics(sea_chain, *motion(t)).motor_torque
                      for t in times])
    zero = np.array([higher_order_inverse_dynamics(sea_chain, *motion(t)[:3], np.zeros(4),
                                                   np.zeros(4)).motor_torque for t in times])
    got = np.array([m.effort for m in motor.messages])
    scale = np.abs(exact).max()
    assert np.abs(zero - exact).max() > 0.03 * scale                  # what is at stake
    np.testing.assert_allclose(got[0], zero[0], rtol=0, atol=1e-12 * scale)   # stream start
    assert np.abs(got[1:] - exact[1:]).max() < 1e-3 * scale


def test_joint_state_completion_module_chain(chain, module_ros_node):
    from sensor_msgs.msg import JointState
    node = module_ros_node
    completed = Collector(node, JointState, '/joint_states')
    publisher = matched_publisher(node, JointState, '/actuator_states', 10, subscribers=2)
    x, xd = np.array([0.3, 0.2, 0.25, 0.4]), np.array([0.1, -0.05, 0.02, 0.0])
    # measured states may carry other joints too: they are ignored
    msg = JointState(name=['gripper', *chain.actuated_joints[::-1]],
                     position=[9.0, *x[::-1]], velocity=[0.0, *xd[::-1]])
    msg.header.stamp.sec = 7
    publisher.publish(msg)
    # two nodes listen on /actuator_states (the chain and the PKM node): keep the chain's answer
    assert spin_until(node, lambda: any(len(m.name) == len(chain.tree_joints)
                                        for m in completed.messages))
    out = [m for m in completed.messages if list(m.name) == list(chain.tree_joints)][0]
    q, qd, _ = chain.tree_state(x, xd)
    assert_array_equal(out.position, q)
    assert_array_equal(out.velocity, qd)
    assert out.header.stamp.sec == 7


def test_joint_state_completion_pkm(pkm, module_ros_node):
    from sensor_msgs.msg import JointState
    node = module_ros_node
    completed = Collector(node, JointState, '/joint_states')
    publisher = matched_publisher(node, JointState, '/actuator_states', 10)
    ik = [pkm.inverse_kinematics(pkm.task_pose(np.array([0.01, -0.01, 0.05]) * s))
          for s in (0.5, 1.0)]
    for sol in ik:
        publisher.publish(JointState(name=list(pkm.actuated_joints),
                                     position=list(sol.actuators)))
        spin_until(node, lambda: False, timeout=0.2)
    assert spin_until(node, lambda: len([m for m in completed.messages
                                         if list(m.name) == list(pkm.tree_joints)]) >= 2)
    got = [m for m in completed.messages if list(m.name) == list(pkm.tree_joints)]
    previous = None
    for sol, m in zip(ik, got):
        _, fk = pkm.forward_kinematics(sol.actuators, initial=previous, return_solution=True)
        previous = fk
        assert_array_equal(m.position, fk.q)
        np.testing.assert_allclose(m.position, sol.q, atol=1e-8)   # the loops are closed


def test_queued_takes_what_waits_up_to_one_queue_depth():
    """The streaming callbacks' drain: the delivered message, then what waits in the queue,
    oldest first, never more than the queue depth in one callback."""
    from types import SimpleNamespace
    from pkm_dynamics.node.streaming.streaming import queued

    class Handle:
        def __init__(self, waiting):
            self.waiting = waiting

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def take_message(self, msg_type, raw):
            return (self.waiting.pop(0), {}) if self.waiting else None

    def subscription(waiting, depth):
        return SimpleNamespace(handle=Handle(waiting), msg_type=object, raw=False,
                               qos_profile=SimpleNamespace(depth=depth))

    waiting = list(range(1, 10))
    assert list(queued(subscription(waiting, 4), 0)) == [0, 1, 2, 3]
    assert waiting == [4, 5, 6, 7, 8, 9]                  # left for the next callback
    assert list(queued(subscription(waiting, 100), 3)) == [3, 4, 5, 6, 7, 8, 9]
    assert waiting == []
