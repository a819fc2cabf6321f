"""The lean paths of the node, in this process: a whole trajectory goes to the core in one
batched call (and equals the core point by point); the batch conversion of reference points
gives what the point-by-point conversion gives, and names the same culprit; the streaming
executor delivers every message in order, survives a subscription destroyed while it waits,
and stops when shut down."""
import math
import threading
import time

import numpy as np
from numpy.testing import assert_array_equal
import pytest

from pkm_dynamics.testing import InProcessNode

CHAIN = 'heavy_duty_4dof'
NAMES = ['slew', 'lift', 'tilt', 'extension']


@pytest.fixture(scope='module')
def crane(rclpy_context, example_robot):
    node = InProcessNode(rclpy_context, example_robot(CHAIN), namespace='/streaming_path')
    yield node
    node.destroy()


def trajectory(count, order=NAMES):
    """InverseDynamics request of ``count`` crane points (joints in ``order``), and the
    states (x, xd, xdd) (count, 4) each in the actuated order."""
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import JointTrajectoryPoint
    t = np.linspace(0.0, 1.0, count)[:, None]
    x = np.array([0.0, 0.25, 0.25, 0.5]) + 0.1 * np.sin(2 * np.pi * t + np.arange(4))
    xd = 0.2 * np.cos(2 * np.pi * t + np.arange(4))
    xdd = -0.3 * np.sin(2 * np.pi * t + np.arange(4))
    perm = [NAMES.index(name) for name in order]
    request = InverseDynamics.Request()
    request.trajectory.joint_names = list(order)
    request.trajectory.points = [JointTrajectoryPoint(
        positions=list(a[perm]), velocities=list(b[perm]), accelerations=list(c[perm]))
        for a, b, c in zip(x, xd, xdd)]
    return request, (x, xd, xdd)


def test_a_trajectory_is_one_batched_core_call(crane):
    """1000 points: one call of the core with all of them; each point's effort equal to the
    core's inverse dynamics of that point alone."""
    request, (x, xd, xdd) = trajectory(1000, NAMES[::-1])
    robot = crane.model.robot
    calls = []
    original = robot.inverse_dynamics

    def counted(*args, **kwargs):
        calls.append(np.shape(args[0]))
        return original(*args, **kwargs)
    robot.inverse_dynamics = counted
    try:
        response = crane.call('inverse_dynamics', request)
    finally:
        del robot.inverse_dynamics
    assert response.success, response.message
    assert calls == [(1000, 4)]
    efforts = np.array([p.effort for p in response.feedforward.points])
    expected = np.array([original(*state) for state in zip(x, xd, xdd)])
    np.testing.assert_allclose(efforts, expected, rtol=1e-12, atol=1e-9)
    assert_array_equal([p.positions for p in response.feedforward.points], x)


def test_batch_conversion_equals_point_by_point_and_names_the_culprit():
    from pkm_dynamics.node.messages.conversions import actuator_states, core_error, name_index, ordered
    request, _ = trajectory(7, ['tilt', 'slew', 'extension', 'lift'])
    points = request.trajectory.points
    points[3].velocities = []                                  # empty: zeros
    names = request.trajectory.joint_names
    index = name_index(names, NAMES, 'joint_names')
    X, XD, XDD = actuator_states(points, index, 4)
    for k, p in enumerate(points):
        assert_array_equal(X[k], ordered(p.positions, index, 4, 'x'))
        assert_array_equal(XD[k], ordered(p.velocities, index, 4, 'xd', optional=True))
        assert_array_equal(XDD[k], ordered(p.accelerations, index, 4, 'xdd', optional=True))
    for field, value, words in (('positions', [0.1, math.nan, 0.2, 0.3], 'points[5].positions'),
                                ('velocities', [0.0, 0.0, 1e3, 0.0], 'points[5].velocities'),
                                ('accelerations', [0.0, 1.0], 'points[5].accelerations')):
        bad = list(points)
        original = getattr(bad[5], field)
        setattr(bad[5], field, value)
        try:
            with pytest.raises(Exception) as batch:
                actuator_states(bad, index, 4)
            with pytest.raises(Exception) as single:
                ordered(value, index, 4, f'points[5].{field}', optional=field != 'positions',
                        bound={'positions': None, 'velocities': 'rate 1',
                               'accelerations': 'rate 2'}[field])
        finally:
            setattr(bad[5], field, original)
        assert words in str(batch.value)
        assert core_error(batch.value) == core_error(single.value)


def test_lean_executor_delivers_in_order_and_stops(rclpy_context):
    """Messages to two subscriptions, in order each; one subscription destroyed while the
    executor waits in another thread; then shutdown ends the spinning."""
    import rclpy
    from std_msgs.msg import Int64
    from pkm_dynamics.node.runtime.lean_executor import LeanExecutor
    from pkm_dynamics.testing import matched_publisher
    node = rclpy.create_node('lean_executor_test', context=rclpy_context)
    source = rclpy.create_node('lean_executor_source', context=rclpy_context)
    got = {'a': [], 'b': []}
    subs = {name: node.create_subscription(Int64, f'/stream_test/{name}',
                                           lambda m, name=name: got[name].append(m.data), 100)
            for name in got}
    executor = LeanExecutor(rclpy_context)
    executor.add_node(node)
    stop = threading.Event()
    failures = []

    def spin():
        try:
            while not stop.is_set():
                executor.spin_once(timeout_sec=1.0)
        except Exception as exc:            # reported below
            failures.append(exc)
    thread = threading.Thread(target=spin)
    thread.start()
    try:
        pubs = {name: matched_publisher(source, Int64, f'/stream_test/{name}', 100)
                for name in got}
        for k in range(50):
            pubs['a'].publish(Int64(data=k))
            pubs['b'].publish(Int64(data=-k))
        deadline = time.monotonic() + 10
        while (len(got['a']) < 50 or len(got['b']) < 50) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert got == {'a': list(range(50)), 'b': [-k for k in range(50)]}
        node.destroy_subscription(subs['b'])                # while the executor waits
        pubs['a'].publish(Int64(data=50))
        deadline = time.monotonic() + 10
        while len(got['a']) < 51 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert got['a'][-1] == 50
    finally:
        stop.set()
        executor.shutdown()
        thread.join(10)
        source.destroy_node()
        node.destroy_node()
    assert not thread.is_alive() and not failures, failures


def test_lean_executors_of_callback_groups_run_side_by_side(rclpy_context):
    """One executor per callback group, each spun in a thread of its own (as the node does):
    a service of one group answers while a callback of another group is still running, each
    executor runs only its group's callbacks (the thread that ran each is its group's), and a
    timer of the rest fires."""
    import rclpy
    from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
    from rclpy.executors import SingleThreadedExecutor
    from std_srvs.srv import Trigger
    from pkm_dynamics.node.runtime.lean_executor import LeanExecutor
    node = rclpy.create_node('lean_groups_test', context=rclpy_context)
    client_node = rclpy.create_node('lean_groups_client', context=rclpy_context)
    slow_group, quick_group = MutuallyExclusiveCallbackGroup(), MutuallyExclusiveCallbackGroup()
    release = threading.Event()
    ran = {'slow': [], 'quick': [], 'timer': []}

    def slow(request, response):
        ran['slow'].append(threading.current_thread().name)
        release.wait(10)            # held until the quick service has answered
        response.success = True
        return response

    def quick(request, response):
        ran['quick'].append(threading.current_thread().name)
        response.success = True
        return response
    node.create_service(Trigger, '/lean_groups/slow', slow, callback_group=slow_group)
    node.create_service(Trigger, '/lean_groups/quick', quick, callback_group=quick_group)
    node.create_timer(0.05, lambda: ran['timer'].append(threading.current_thread().name))
    executors = {'slow': LeanExecutor(rclpy_context, groups=[slow_group]),
                 'quick': LeanExecutor(rclpy_context, groups=[quick_group]),
                 'rest': LeanExecutor(rclpy_context, exclude=[slow_group, quick_group])}
    for executor in executors.values():
        executor.add_node(node)
    assert node.executor is executors['rest']
    stop = threading.Event()
    failures = []

    def spin(executor):
        try:
            while not stop.is_set():
                executor.spin_once(timeout_sec=1.0)
        except Exception as exc:            # reported below
            failures.append(exc)
    threads = [threading.Thread(target=spin, args=(e,), name=name) for name, e in executors.items()]
    for thread in threads:
        thread.start()
    client_executor = SingleThreadedExecutor(context=rclpy_context)
    client_executor.add_node(client_node)
    try:
        clients = {name: client_node.create_client(Trigger, f'/lean_groups/{name}')
                   for name in ('slow', 'quick')}
        assert all(c.wait_for_service(timeout_sec=10) for c in clients.values())
        slow_answer = clients['slow'].call_async(Trigger.Request())
        deadline = time.monotonic() + 10
        while not ran['slow'] and time.monotonic() < deadline:
            client_executor.spin_once(timeout_sec=0.05)
        assert ran['slow'] == ['slow'] and not slow_answer.done()
        quick_answer = clients['quick'].call_async(Trigger.Request())
        client_executor.spin_until_future_complete(quick_answer, timeout_sec=10)
        assert quick_answer.done() and quick_answer.result().success
        assert not slow_answer.done()       # the slow callback is still running meanwhile
        release.set()
        client_executor.spin_until_future_complete(slow_answer, timeout_sec=10)
        assert slow_answer.done() and slow_answer.result().success
        assert ran['quick'] == ['quick']
        assert ran['timer'] and set(ran['timer']) == {'rest'}
    finally:
        release.set()
        stop.set()
        for executor in executors.values():
            executor.shutdown()
        for thread in threads:
            thread.join(10)
        client_executor.shutdown()
        client_node.destroy_node()
        node.destroy_node()
    assert not any(t.is_alive() for t in threads) and not failures, failures


def test_a_stale_reference_costs_less_than_an_answer(rclpy_context, example_robot):
    """A node ``feedforward.max_age`` behind a 1 kHz stream catches up only if refusing a stale
    reference costs it less than answering one: 100 references queued and drained in one
    callback, stale (stamped long ago: refused, a throttled warning) against unstamped (no age
    check: answered); CPU time of the draining thread, the least of three rounds.  The refusal's
    warning went through rclpy's throttle, which inspects the caller first (~0.5 ms a call, five
    times an answer): a node once behind stayed behind, dropping about half the references."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from rclpy.parameter import Parameter
    from pkm_dynamics.node.runtime.lean_executor import LeanExecutor
    node = InProcessNode(rclpy_context, example_robot(CHAIN), namespace='/stale_references',
                         parameters=[Parameter('feedforward.max_age', value=0.05)])
    dyn = node.node
    executor = LeanExecutor(rclpy_context)
    executor.add_node(dyn.topic_node)
    executor.spin_once(timeout_sec=0.1)                     # the wake of add_node
    publisher = dyn.topic_node.create_publisher(JointTrajectory, dyn._reference_subs['reference'].topic_name, 100)
    point = JointTrajectoryPoint(positions=[0.0, 0.25, 0.25, 0.5], velocities=[0.1] * 4, accelerations=[0.2] * 4)
    cost = {}
    try:
        for kind, sec in (('stale', 1_700_000_000), ('answered', 0)) * 3:
            before = (dyn._diagnostics.refused, dyn._diagnostics.published)
            msg = JointTrajectory(joint_names=NAMES, points=[point])
            msg.header.stamp.sec = sec
            for _ in range(100):
                publisher.publish(msg)
            time.sleep(0.3)                                 # all of them in the queue
            start = time.thread_time()
            executor.spin_once(timeout_sec=1.0)
            cpu = time.thread_time() - start
            counted = (dyn._diagnostics.refused - before[0], dyn._diagnostics.published - before[1])
            assert counted == ((100, 0) if kind == 'stale' else (0, 100)), (kind, counted)
            cost[kind] = min(cost.get(kind, np.inf), cpu / 100)
    finally:
        executor.shutdown()
        dyn.topic_node.destroy_publisher(publisher)
        node.destroy()
    assert cost['stale'] < cost['answered'], {k: f'{v * 1e6:.0f} us' for k, v in cost.items()}
