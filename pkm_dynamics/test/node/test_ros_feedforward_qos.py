"""The feedforward's QoS over DDS, for a controller that wants the newest reference and no
backlog: a reference older than ``feedforward.max_age`` gets no output (the others do, in
order, equal to the core); a burst the node cannot keep up with, into a queue of depth 1,
is answered with the newest references only, in order, the last one included; with
``feedforward.reliability: best_effort`` a best-effort reference stream (which a reliable
subscription refuses as incompatible) is answered to a best-effort subscriber."""
import time

import numpy as np
from numpy.testing import assert_array_equal
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.testing import Collector, matched_publisher, spin_until

CHAIN = 'heavy_duty_4dof'
X0 = np.array([0.3, 0.2, 0.25, 0.4])
#: references sent back to back into a queue of depth 1: far more than the node can take
#: while they arrive (its per-reference cost is many times a publish)
BURST = 1000


@pytest.fixture(scope='module')
def crane(module_node, example_robot):
    text = example_robot(CHAIN)
    module_node(params={'robot_description': text, 'feedforward.max_age': 1.0},
                name='ff_age')
    # no age check here: this node is about the queue, and on a loaded machine the newest
    # reference of a burst can be taken more than the default 0.1 s after it was sent
    module_node(params={'robot_description': text, 'feedforward.qos_depth': 1,
                        'feedforward.max_age': 0.0}, name='ff_newest')
    module_node(params={'robot_description': text, 'feedforward.reliability': 'best_effort',
                        'feedforward.max_age': 0.0}, name='ff_best_effort')
    return load_robot(text)


def reference(robot, k, stamp_ns):
    """JointTrajectory of state k (positions vary with k), stamped ``stamp_ns``; its state."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    x = X0 + 1e-4 * np.sin(k + np.arange(4))
    xd = 0.05 * np.cos(k + np.arange(4))
    msg = JointTrajectory(joint_names=list(robot.actuated_joints), points=[
        JointTrajectoryPoint(positions=list(x), velocities=list(xd))])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 10**9)
    return msg, (x, xd, np.zeros(4))


def stamp_ns(m):
    return m.header.stamp.sec * 10**9 + m.header.stamp.nanosec


def test_references_older_than_max_age_get_no_output(crane, module_ros_node):
    """Every other reference is stamped 10 s ago (a stall upstream, max_age 1 s): only the
    current ones are answered, each once, in order, with the core's efforts."""
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory
    node = module_ros_node
    states = Collector(node, JointState, '/ff_age/feedforward/joint_states')
    publisher = matched_publisher(node, JointTrajectory, '/ff_age/reference', 100)
    assert states.wait_for_publisher(node)
    current = {}
    for k in range(40):
        now = time.time_ns()
        stale = k % 2 == 1
        msg, state = reference(crane, k, now - 10**10 if stale else now)
        if not stale:
            current[stamp_ns(msg)] = state
        publisher.publish(msg)
    assert states.wait_for(node, len(current)), len(states.messages)
    spin_until(node, lambda: False, timeout=0.3)                # nothing more may come
    got = [stamp_ns(m) for m in states.messages]
    assert got == list(current)                                  # the current ones, in order
    X, XD, XDD = (np.array(v) for v in zip(*current.values()))
    assert_array_equal([m.effort for m in states.messages], crane.inverse_dynamics(X, XD, XDD))


def test_a_burst_beyond_the_queue_gives_the_newest_references(crane, module_ros_node):
    """``feedforward.qos_depth`` 1, a burst of BURST references: the node answers a few of
    them, in order, the newest last (keep-last keeps the newest; nothing old is queued)."""
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory
    node = module_ros_node
    states = Collector(node, JointState, '/ff_newest/feedforward/joint_states')
    publisher = matched_publisher(node, JointTrajectory, '/ff_newest/reference', BURST)
    assert states.wait_for_publisher(node)
    msgs = [reference(crane, k, 0) for k in range(BURST)]
    sent, stamp = {}, 0
    for msg, state in msgs:
        stamp = max(time.time_ns(), stamp + 1)               # the send time, increasing
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
        sent[stamp] = state
        publisher.publish(msg)
    last = stamp
    assert spin_until(node, lambda: any(stamp_ns(m) == last for m in states.messages))
    spin_until(node, lambda: False, timeout=0.3)
    got = [stamp_ns(m) for m in states.messages]
    assert got == sorted(set(got)) and got[-1] == last         # in order, each once, newest
    assert len(got) < BURST / 2, len(got)                      # the backlog was dropped
    X, XD, XDD = (np.array(v) for v in zip(*(sent[s] for s in got)))
    assert_array_equal([m.effort for m in states.messages], crane.inverse_dynamics(X, XD, XDD))


def best_effort_qos(depth=100):
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=depth, reliability=ReliabilityPolicy.BEST_EFFORT)


def test_best_effort_references_need_the_best_effort_parameter(crane, module_ros_node):
    """A best-effort reference publisher: the default node's reliable subscription refuses it
    (an incompatible QoS event), the one of ``feedforward.reliability: best_effort`` takes it,
    and its outputs reach a best-effort subscriber with the core's efforts."""
    from rclpy.event_handler import PublisherEventCallbacks
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory
    node = module_ros_node
    incompatible = []
    refused = node.create_publisher(
        JointTrajectory, '/ff_age/reference', best_effort_qos(),
        event_callbacks=PublisherEventCallbacks(incompatible_qos=incompatible.append))
    assert spin_until(node, lambda: incompatible, timeout=20.0)
    assert refused.get_subscription_count() == 0
    node.destroy_publisher(refused)

    received = []
    subscription = node.create_subscription(
        JointState, '/ff_best_effort/feedforward/joint_states', received.append,
        best_effort_qos(1000))
    publisher = node.create_publisher(JointTrajectory, '/ff_best_effort/reference',
                                      best_effort_qos())
    assert spin_until(node, lambda: publisher.get_subscription_count() == 1 and
                      subscription.get_publisher_count() == 1, timeout=20.0)
    sent = {}
    for k in range(20):         # best effort may lose one: every one received is checked
        msg, state = reference(crane, k, time.time_ns())
        sent[stamp_ns(msg)] = state
        publisher.publish(msg)
        spin_until(node, lambda: False, timeout=0.01)
    assert spin_until(node, lambda: len(received) >= 10, timeout=20.0), len(received)
    got = [stamp_ns(m) for m in received]
    assert got == sorted(set(got)) and set(got) <= set(sent)
    X, XD, XDD = (np.array(v) for v in zip(*(sent[s] for s in got)))
    assert_array_equal([m.effort for m in received], crane.inverse_dynamics(X, XD, XDD))
    node.destroy_publisher(publisher)
    node.destroy_subscription(subscription)
