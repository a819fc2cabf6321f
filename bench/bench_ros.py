"""ROS-side benchmark of the installed node on heavy_duty_4dof (the HIAB crane, 4 actuators).

1. Service round trip, client in this process, node in its own: the inverse dynamics of one
   point (~/inverse_dynamics) next to an empty service (std_srvs/Empty) of the same node kind
   (an rclpy node in its own process, default executor) and next to the node's own
   ~/get_model_info: median and p99 in microseconds, and the ratio ID / empty.
2. Feedforward at 1 kHz for 10 s: a publisher process sends one JointTrajectory reference
   per millisecond (stamped when sent) to ~/reference; this process receives the node's
   ~/feedforward/joint_states (the reference stamp is copied) and counts the outputs lost and
   the latency from sending the reference to the reception of its feedforward (median, p99);
   the receiver polls the raw messages, keeping its own CPU use small.
3. The node's own cost per reference: 1000 references queued for a node in this process,
   drained in one callback, next to the core inverse dynamics of the same states.

    .venv/bin/python bench/bench_ros.py [--calls N] [--seconds S] [--rate HZ]

Table on stdout, the same figures as JSON in bench/results/bench_ros.json.
"""
import argparse
import json
import os
from pathlib import Path
import struct
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

from pkm_dynamics.testing import NodeProcess, loopback_ros_env, use_loopback_ros

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import machine  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ROBOT = REPO / 'pkm_dynamics' / 'robots' / 'heavy_duty_4dof.urdf'
NAMES = ['slew', 'lift', 'tilt', 'extension']
X0 = [0.3, 0.2, 0.25, 0.4]

EMPTY_NODE = textwrap.dedent('''
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from std_srvs.srv import Empty
    try:
        with rclpy.init():
            node = rclpy.create_node('bench_empty')
            node.create_service(Empty, '~/empty', lambda request, response: response)
            rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
''')

REFERENCE_PUBLISHER = textwrap.dedent('''
    import sys, time
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    rate, seconds = float(sys.argv[1]), float(sys.argv[2])
    names = ['slew', 'lift', 'tilt', 'extension']
    with rclpy.init():
        node = rclpy.create_node('bench_reference')
        pub = node.create_publisher(JointTrajectory, '/pkm_dynamics/reference',
                                    QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
        deadline = time.monotonic() + 20
        while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        print('ready', flush=True)
        sys.stdin.readline()                      # go
        count = int(rate * seconds)
        start = time.perf_counter()
        for k in range(count):                    # on a fixed schedule; sleeping, not
            wait = start + k / rate - time.perf_counter()   # spinning, so the load generator
            if wait > 0.0:                        # leaves the CPU to the node under test
                time.sleep(wait)
            s = k / count
            msg = JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(
                positions=[0.3 + 0.1 * s, 0.2 + 0.05 * s, 0.25, 0.4 - 0.1 * s],
                velocities=[0.1, 0.05, 0.0, -0.1], accelerations=[0.0, 0.0, 0.0, 0.0])])
            msg.header.stamp = node.get_clock().now().to_msg()
            pub.publish(msg)
        print(f'sent {count} in {time.perf_counter() - start:.3f} s', flush=True)
        time.sleep(2.0)
''')


#: CDR encapsulation of a little-endian plain CDR payload, and the header stamp after it
CDR_LITTLE_ENDIAN = b'\x00\x01'
STAMP = struct.Struct('<iI')


def stats(samples_s):
    a = np.asarray(samples_s) * 1e6
    return {'median_us': float(np.median(a)), 'p99_us': float(np.percentile(a, 99)),
            'n': int(len(a))}


def round_trips(node, client, request, calls):
    from rclpy.executors import SingleThreadedExecutor
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    times = []
    try:
        for k in range(calls + 20):                  # the first 20 are warm-up
            start = time.perf_counter()
            future = client.call_async(request)
            executor.spin_until_future_complete(future, timeout_sec=10.0)
            elapsed = time.perf_counter() - start
            if not future.done():
                raise TimeoutError(f'{client.srv_name} did not answer')
            if k >= 20:
                times.append(elapsed)
    finally:
        executor.remove_node(node)
        executor.shutdown()
    return times


def bench_services(node, calls):
    from pkm_dynamics_interfaces.srv import GetModelInfo, InverseDynamics
    from std_srvs.srv import Empty
    from trajectory_msgs.msg import JointTrajectoryPoint
    request = InverseDynamics.Request()
    request.trajectory.joint_names = NAMES
    request.trajectory.points = [JointTrajectoryPoint(
        positions=X0, velocities=[0.1, 0.05, 0.0, -0.1], accelerations=[0.2, 0.1, 0.0, 0.0])]
    results = {}
    for label, srv, name, req in (
            ('empty service (std_srvs/Empty, rclpy node)', Empty, '/bench_empty/empty',
             Empty.Request()),
            ('~/get_model_info', GetModelInfo, '/pkm_dynamics/get_model_info',
             GetModelInfo.Request()),
            ('~/inverse_dynamics, one point', InverseDynamics, '/pkm_dynamics/inverse_dynamics',
             request)):
        client = node.create_client(srv, name)
        if not client.wait_for_service(timeout_sec=20.0):
            raise TimeoutError(f'{name} did not appear')
        results[label] = stats(round_trips(node, client, req, calls))
    return results


def bench_feedforward(rate, seconds):
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    topic = '/pkm_dynamics/feedforward/joint_states'
    # The receiver must not take the CPU from the node under test: a lean node (no services,
    # no rosout), no executor (an rclpy wake-up per message cost ~0.4 ms here), raw messages.
    # Every few milliseconds it takes what has arrived; the latency of each output runs from
    # the reference's stamp to the middleware's reception time of the output (message info
    # 'received_timestamp', system clock like the stamp), so the polling does not enter it.
    node = rclpy.create_node('bench_ros_receiver', start_parameter_services=False,
                             enable_rosout=False)
    sub = node.create_subscription(JointState, topic, lambda raw: None,
                                   QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE),
                                   raw=True)
    latencies = []

    def take_arrived():
        while True:
            with sub.handle:
                taken = sub.handle.take_message(sub.msg_type, True)
            if taken is None:
                return
            raw, info = taken
            # the stamp leads the CDR payload of a JointState: header.stamp (int32 sec,
            # uint32 nanosec) after the 4-byte encapsulation header
            if raw[:2] != CDR_LITTLE_ENDIAN:
                raise RuntimeError(f'unexpected CDR encapsulation {raw[:4]!r}')
            sec, nanosec = STAMP.unpack_from(raw, 4)
            latencies.append((info['received_timestamp'] - (sec * 10**9 + nanosec)) * 1e-9)

    env = dict(os.environ)
    publisher = subprocess.Popen([sys.executable, '-c', REFERENCE_PUBLISHER, str(rate),
                                  str(seconds)], env=env, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
    try:
        line = publisher.stdout.readline()
        if line.strip() != 'ready':
            raise RuntimeError(f'reference publisher: {line!r}')
        deadline = time.monotonic() + 10
        while not node.count_publishers(topic) and time.monotonic() < deadline:
            time.sleep(0.05)                        # discovery of the output topic
        time.sleep(0.5)
        publisher.stdin.write('go\n')
        publisher.stdin.flush()
        sent = int(rate * seconds)
        end = time.monotonic() + seconds + 30.0
        quiet_since = None
        while time.monotonic() < end:
            before = len(latencies)
            time.sleep(0.005)
            take_arrived()
            if len(latencies) >= sent:
                break
            if publisher.poll() is not None and len(latencies) == before:
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since > 2.0:
                    break
            else:
                quiet_since = None
        report = publisher.communicate(timeout=30)[0].strip()
    finally:
        node.destroy_node()
        if publisher.poll() is None:
            publisher.kill()
    result = {'rate_hz': rate, 'seconds': seconds, 'sent': sent, 'received': len(latencies),
              'lost': sent - len(latencies), 'publisher': report}
    if latencies:
        result.update({f'latency_{k}': v for k, v in stats(latencies).items() if k != 'n'})
    return result


def bench_node_cost(count):
    """The node's own cost per reference, apart from the other processes: a DynamicsNode in
    this process (its own namespace), ``count`` references queued on its reference topic, then
    one executor step of its streaming topics, which drains them all (one output each); next to
    the median of the core inverse dynamics of the same states in the same process."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from pkm_dynamics.core import load_robot
    from pkm_dynamics.dynamics_node import DynamicsNode
    from pkm_dynamics.testing import Collector, matched_publisher
    text = ROBOT.read_text()
    dyn = DynamicsNode(namespace='node_cost', parameter_overrides=[
        Parameter('robot_description', value=text), Parameter('completion.enabled', value=False),
        Parameter('feedforward.qos_depth', value=count)])
    dyn.trigger_configure()
    dyn.trigger_activate()
    source = rclpy.create_node('bench_node_cost_source')
    outputs = Collector(source, JointState, '/node_cost/pkm_dynamics/feedforward/joint_states',
                        depth=count)
    topics = SingleThreadedExecutor()
    topics.add_node(dyn.topic_node)
    try:
        publisher = matched_publisher(source, JointTrajectory, '/node_cost/pkm_dynamics/reference',
                                      count)
        if not outputs.wait_for_publisher(source):
            raise TimeoutError('the in-process node\'s output was not discovered')
        states = []
        for k in range(count):
            s = k / count
            x = [0.3 + 0.1 * s, 0.2 + 0.05 * s, 0.25, 0.4 - 0.1 * s]
            xd, xdd = [0.1, 0.05, 0.0, -0.1], [0.0, 0.0, 0.0, 0.0]
            publisher.publish(JointTrajectory(joint_names=NAMES, points=[JointTrajectoryPoint(
                positions=x, velocities=xd, accelerations=xdd)]))
            states.append((np.array(x), np.array(xd), np.array(xdd)))
        time.sleep(1.0)                                   # all of them in the node's queue
        start = time.perf_counter()
        topics.spin_once(timeout_sec=5.0)
        drain = time.perf_counter() - start
        if not outputs.wait_for(source, count):
            raise RuntimeError(f'{len(outputs.messages)} of {count} outputs after one drain')
    finally:
        topics.shutdown()
        source.destroy_node()
        dyn.destroy_node()
    robot = load_robot(text)
    times = []
    for x, xd, xdd in states:
        t = time.perf_counter()
        robot.inverse_dynamics(x, xd, xdd)
        times.append(time.perf_counter() - t)
    return {'references': count, 'node_us_per_reference': drain / count * 1e6,
            'core_inverse_dynamics_median_us': float(np.median(times)) * 1e6}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--calls', type=int, default=1000)
    parser.add_argument('--seconds', type=float, default=10.0)
    parser.add_argument('--rate', type=float, default=1000.0)
    args = parser.parse_args()
    use_loopback_ros(int(os.environ['ROS_DOMAIN_ID']) if 'ROS_DOMAIN_ID' in os.environ else None)
    import rclpy

    with tempfile.TemporaryDirectory(prefix='pkm_dynamics_bench_') as workdir:
        dyn = NodeProcess(workdir, name='node', params={
            'robot_description': ROBOT.read_text(), 'completion.enabled': False})
        env = dict(os.environ)
        env.update(loopback_ros_env(int(os.environ['ROS_DOMAIN_ID'])))
        empty = subprocess.Popen([sys.executable, '-c', EMPTY_NODE], env=env)
        try:
            with rclpy.init():
                node = rclpy.create_node('bench_ros_client')
                services = bench_services(node, args.calls)
                feedforward = bench_feedforward(args.rate, args.seconds)
                node_cost = bench_node_cost(1000)
        finally:
            empty.send_signal(2)
            empty.wait(10)
            code = dyn.stop()
    if code != 0:
        print(dyn.log())
        return 1

    m = machine()
    empty_label = next(iter(services))
    id_label = '~/inverse_dynamics, one point'
    ratio = {k: services[id_label][k] / services[empty_label][k]
             for k in ('median_us', 'p99_us')}
    print(f'machine: {m["cpu"]}, {m["cores"]} cores, Python {m["python"]}\n')
    print(f'service round trip (heavy_duty_4dof, {args.calls} calls each)')
    print(f'  {"service":46s} {"median us":>10s} {"p99 us":>10s}')
    for label, s in services.items():
        print(f'  {label:46s} {s["median_us"]:10.0f} {s["p99_us"]:10.0f}')
    print(f'  ratio ID / empty: median {ratio["median_us"]:.2f}, p99 {ratio["p99_us"]:.2f}\n')
    f = feedforward
    print(f'feedforward at {f["rate_hz"]:.0f} Hz for {f["seconds"]:g} s '
          f'(~/reference -> ~/feedforward/joint_states)')
    print(f'  sent {f["sent"]}, received {f["received"]}, lost {f["lost"]} '
          f'({100.0 * f["lost"] / max(f["sent"], 1):.2f} %); publisher: {f["publisher"]}')
    if 'latency_median_us' in f:
        print(f'  latency median {f["latency_median_us"]:.0f} us, '
              f'p99 {f["latency_p99_us"]:.0f} us')
    c = node_cost
    print(f'\nnode cost per reference ({c["references"]} references queued, drained in one '
          f'callback, in this process): {c["node_us_per_reference"]:.0f} us, of which core '
          f'inverse dynamics {c["core_inverse_dynamics_median_us"]:.0f} us (median), message '
          f'handling {c["node_us_per_reference"] - c["core_inverse_dynamics_median_us"]:.0f} us')
    out = REPO / 'bench' / 'results'
    out.mkdir(parents=True, exist_ok=True)
    (out / 'bench_ros.json').write_text(json.dumps(
        {'machine': m, 'robot': 'heavy_duty_4dof', 'services': services,
         'ratio_id_to_empty': ratio, 'feedforward': feedforward, 'node_cost': node_cost},
        indent=1))
    print(f'\nwritten {out / "bench_ros.json"}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
