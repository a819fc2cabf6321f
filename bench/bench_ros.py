"""ROS-side benchmark of the installed node: the feedforward stream of the crane
(``heavy_duty_4dof``), the excavator (``excavator``, a chain of loops), the IRSBot-2
(``irsbot2_paths``, task-space references), the Gough-Stewart platform
(``gough_stewart_6ups``) and the grapple crane (``grapple_crane``: passive swing axes, its measured
state published on ``actuator_states`` (in its namespace) before every reference, the joint-state completion on,
no in-process cost figure), and the crane's services.

Per robot, the node in its own process over loopback DDS (``NodeProcess``, default
parameters but ``completion.enabled: false``):

1. feedforward at ``--rate`` (1 kHz) for ``--minutes`` (the issue's 10): a publisher process
   sends one reference of ``ros_streams`` per period (stamped when sent); this process
   receives ``~/feedforward/joint_states`` (the reference stamp is copied) and counts the
   outputs lost and the latency from sending a reference to the reception of its feedforward
   (median, p99); the receiver polls the raw messages, keeping its own CPU use small. The
   node's CPU (user + system time over the stream's wall time, from /proc) is reported;
2. the highest rate without loss: each rate of ``--sweep`` for ``--sweep-seconds`` (60);
3. the node's own cost per reference: ``--count`` references queued for a node in this
   process, drained in one callback (wall time, and CPU time of the spinning thread and of
   the whole process: on a loaded machine the wall time holds the waits for a CPU), next to
   the core of the same references alone.

For the crane also the service round trips (client in this process): ``~/inverse_dynamics``
of one point next to an empty service (std_srvs/Empty) of the same node kind (an rclpy node
in its own process, default executor) and the node's ``~/get_model_info``: median and p99,
the ratio ID / empty; and ``~/inverse_dynamics`` of a 1000-point trajectory, next to the
core's batched inverse dynamics of the same points.

    .venv/bin/python bench/bench_ros.py [--robots crane,excavator,irsbot2,gough_stewart] [--minutes M]
        [--rate HZ] [--sweep HZ,HZ] [--sweep-seconds S] [--calls N] [--count N]
        [--outputs commands,joint_state,pressure,valve]

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

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from common import machine  # noqa: E402
from ros_streams import (ACTUATOR_SPACE, PASSIVE, crane_states, description, reference_messages,  # noqa: E402
                         topic)

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
    sys.path.insert(0, sys.argv[5])
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from ros_streams import PASSIVE, measured_messages, reference_messages
    robot, topic, rate, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    msgs = reference_messages(robot)              # built before: sending costs little
    measured = measured_messages(robot) if robot in PASSIVE else None
    with rclpy.init():
        node = rclpy.create_node('bench_reference', start_parameter_services=False,
                                 enable_rosout=False)
        pub = node.create_publisher(type(msgs[0]), topic,
                                    QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
        if measured:                              # the passive joints' state, alongside
            state_pub = node.create_publisher(type(measured[0]), sys.argv[6],
                                              QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
            state_pub.publish(measured[0])
            time.sleep(0.5)
        deadline = time.monotonic() + 20
        while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        print('ready', flush=True)
        sys.stdin.readline()                      # go
        count = int(rate * seconds)
        clock = node.get_clock()
        start = time.perf_counter()
        for k in range(count):                    # on a fixed schedule; sleeping, not
            wait = start + k / rate - time.perf_counter()   # spinning, so the load generator
            if wait > 0.0:                        # leaves the CPU to the node under test
                time.sleep(wait)
            msg = msgs[k % len(msgs)]
            msg.header.stamp = clock.now().to_msg()
            if measured:
                state = measured[k % len(measured)]
                state.header.stamp = msg.header.stamp
                state_pub.publish(state)
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
            if not getattr(future.result(), 'success', True):
                raise RuntimeError(f'{client.srv_name}: {future.result().message}')
            if k >= 20:
                times.append(elapsed)
    finally:
        executor.remove_node(node)
        executor.shutdown()
    return times


def trajectory_request(points):
    """InverseDynamics request of the crane's ``points`` (x, xd, xdd) (B, 4) each."""
    from pkm_dynamics_interfaces.srv import InverseDynamics
    from trajectory_msgs.msg import JointTrajectoryPoint
    request = InverseDynamics.Request()
    request.trajectory.joint_names = NAMES
    request.trajectory.points = [JointTrajectoryPoint(
        positions=list(x), velocities=list(xd), accelerations=list(xdd))
        for x, xd, xdd in zip(*points)]
    return request


def bench_services(node, prefix, calls):
    from pkm_dynamics_interfaces.srv import GetModelInfo, InverseDynamics
    from std_srvs.srv import Empty
    one = trajectory_request([np.array([X0]), np.array([[0.1, 0.05, 0.0, -0.1]]),
                              np.array([[0.2, 0.1, 0.0, 0.0]])])
    results = {}
    for label, srv, name, req, n in (
            ('empty service (std_srvs/Empty, rclpy node)', Empty, '/bench_empty/empty',
             Empty.Request(), calls),
            ('~/get_model_info', GetModelInfo, f'{prefix}/get_model_info',
             GetModelInfo.Request(), calls),
            ('~/inverse_dynamics, one point', InverseDynamics, f'{prefix}/inverse_dynamics',
             one, calls),
            ('~/inverse_dynamics, 1000 points', InverseDynamics, f'{prefix}/inverse_dynamics',
             trajectory_request(crane_states(1000)), max(calls // 20, 10))):
        client = node.create_client(srv, name)
        if not client.wait_for_service(timeout_sec=20.0):
            raise TimeoutError(f'{name} did not appear')
        results[label] = stats(round_trips(node, client, req, n))
    return results


def core_trajectory_us(repeats=50):
    """Median time of the core's batched inverse dynamics of the 1000 crane points."""
    from pkm_dynamics.core import load_robot
    robot = load_robot(description('crane'))
    X, XD, XDD = crane_states(1000)
    robot.inverse_dynamics(X, XD, XDD)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        robot.inverse_dynamics(X, XD, XDD)
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e6


def cpu_seconds(pid):
    """User + system CPU time [s] of process ``pid`` so far (/proc/<pid>/stat)."""
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def bench_feedforward(robot, prefix, rate, seconds, node_pid):
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    output = f'{prefix}/feedforward/joint_states'
    # The receiver must not take the CPU from the node under test: a lean node (no services,
    # no rosout), no executor (an rclpy wake-up per message cost ~0.4 ms here), raw messages.
    # Every few milliseconds it takes what has arrived; the latency of each output runs from
    # the reference's stamp to the middleware's reception time of the output (message info
    # 'received_timestamp', system clock like the stamp), so the polling does not enter it.
    node = rclpy.create_node('bench_ros_receiver', start_parameter_services=False,
                             enable_rosout=False)
    sub = node.create_subscription(JointState, output, lambda raw: None,
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
    publisher = subprocess.Popen(
        [sys.executable, '-c', REFERENCE_PUBLISHER, robot, f'{prefix}/{topic(robot)}',
         str(rate), str(seconds), str(BENCH), f'/{robot}/actuator_states'], env=env, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True)
    try:
        line = publisher.stdout.readline()
        if line.strip() != 'ready':
            raise RuntimeError(f'reference publisher: {line!r}')
        deadline = time.monotonic() + 10
        while not node.count_publishers(output) and time.monotonic() < deadline:
            time.sleep(0.05)                        # discovery of the output topic
        time.sleep(0.5)
        cpu0, wall0 = cpu_seconds(node_pid), time.monotonic()
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
        cpu = (cpu_seconds(node_pid) - cpu0) / min(time.monotonic() - wall0, seconds)
        report = publisher.communicate(timeout=30)[0].strip()
    finally:
        node.destroy_node()
        if publisher.poll() is None:
            publisher.kill()
    result = {'rate_hz': rate, 'seconds': seconds, 'sent': sent, 'received': len(latencies),
              'lost': sent - len(latencies), 'node_cpu_share': cpu, 'publisher': report}
    if latencies:
        result.update({f'latency_{k}': v for k, v in stats(latencies).items() if k != 'n'})
    return result


def bench_node_cost(robot, count, outputs):
    """The node's own cost per reference, apart from the other processes: a DynamicsNode in
    this process (its own namespace), ``count`` references queued on its reference topic, then
    one step of its streaming executor, which drains them all (one output each); next to the
    median of the core alone on the same references (IK + ID for a PKM)."""
    import rclpy
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from pkm_dynamics.node.messages.conversions import pose_matrix, task_vector
    from pkm_dynamics.core import load_robot
    from pkm_dynamics.node.dynamics_node import DynamicsNode
    from pkm_dynamics.node.runtime.lean_executor import LeanExecutor
    from pkm_dynamics.testing import Collector, matched_publisher
    text = description(robot)
    ns = f'/node_cost_{robot}'
    dyn = DynamicsNode(namespace=ns, parameter_overrides=[
        Parameter('robot_description', value=text), Parameter('completion.enabled', value=False),
        Parameter('feedforward.qos_depth', value=count), Parameter('feedforward.outputs', value=outputs)])
    dyn.trigger_configure()
    dyn.trigger_activate()
    source = rclpy.create_node(f'bench_node_cost_source_{robot}')
    outputs = Collector(source, JointState, f'{ns}/pkm_dynamics/feedforward/joint_states',
                        depth=count)
    topics = LeanExecutor(dyn.context)
    topics.add_node(dyn.topic_node)
    topics.spin_once(timeout_sec=0.1)                   # the wake of add_node
    msgs = reference_messages(robot, count)
    try:
        publisher = matched_publisher(source, type(msgs[0]),
                                      f'{ns}/pkm_dynamics/{topic(robot)}', count)
        if not outputs.wait_for_publisher(source):
            raise TimeoutError('the in-process node\'s output was not discovered')
        for msg in msgs:
            publisher.publish(msg)
        time.sleep(1.0)                                   # all of them in the node's queue
        start, thread, process = time.perf_counter(), time.thread_time(), time.process_time()
        topics.spin_once(timeout_sec=5.0)
        drain = time.perf_counter() - start
        drain_thread, drain_process = time.thread_time() - thread, time.process_time() - process
        if not outputs.wait_for(source, count):
            raise RuntimeError(f'{len(outputs.messages)} of {count} outputs after one drain')
    finally:
        topics.shutdown()
        source.destroy_node()
        dyn.topic_node.destroy_node()
        dyn.destroy_node()
    core = load_robot(text)
    times, warm = [], None
    for msg in msgs:
        p = msg.points[0]
        if robot in ACTUATOR_SPACE:
            x, xd, xdd = (np.array(v) for v in (p.positions, p.velocities, p.accelerations))
            t = time.perf_counter()
            core.inverse_dynamics(x, xd, xdd)
        else:
            pose = pose_matrix(p.transforms[0])
            twist = task_vector(p.velocities[0], core.task_space, 'twist')
            accel = task_vector(p.accelerations[0], core.task_space, 'accel')
            t = time.perf_counter()
            warm = core.reference_motion(pose, twist, accel, warm).theta    # IK + ID
        times.append(time.perf_counter() - t)
    return {'references': count, 'node_us_per_reference': drain / count * 1e6,
            'node_thread_cpu_us_per_reference': drain_thread / count * 1e6,
            'node_process_cpu_us_per_reference': drain_process / count * 1e6,
            'core_median_us': float(np.median(times)) * 1e6}


def bench_robot(robot, args, workdir, client_node):
    """Every figure of one robot: its node process, stream, sweep and in-process cost."""
    name = f'node_{robot}'
    dyn = NodeProcess(workdir, name=name, params={
        'robot_description': description(robot), 'completion.enabled': robot in PASSIVE,
        'feedforward.outputs': args.outputs}, ros_args=['-r', f'__ns:=/{robot}'])
    prefix = f'/{robot}/pkm_dynamics'
    result = {}
    try:
        if robot == 'crane':
            result['services'] = bench_services(client_node, prefix, args.calls)
            result['core_1000_points_us'] = core_trajectory_us()
        result['feedforward'] = bench_feedforward(robot, prefix, args.rate, args.minutes * 60,
                                                  dyn.process.pid)
        result['sweep'] = [bench_feedforward(robot, prefix, rate, args.sweep_seconds,
                                             dyn.process.pid) for rate in args.sweep]
    finally:
        try:                    # the figures are kept whatever the exit: it is reported
            code = dyn.stop(timeout=30.0)
        except TimeoutError as exc:
            code = f'killed: {exc}'
    result['node_exit'] = code
    if code != 0:
        print(f'the {robot} node did not exit cleanly: {code}\n{dyn.log()[-3000:]}')
    if robot not in PASSIVE:          # the in-process drain has no measured passive state
        result['node_cost'] = bench_node_cost(robot, args.count, args.outputs)
    return result


def report(robot, r):
    if 'services' in r:
        services = r['services']
        empty, one = services['empty service (std_srvs/Empty, rclpy node)'], \
            services['~/inverse_dynamics, one point']
        r['ratio_id_to_empty'] = {k: one[k] / empty[k] for k in ('median_us', 'p99_us')}
        print(f'service round trip ({robot})')
        print(f'  {"service":46s} {"median us":>10s} {"p99 us":>10s}')
        for label, s in services.items():
            print(f'  {label:46s} {s["median_us"]:10.0f} {s["p99_us"]:10.0f}')
        print(f'  ratio ID / empty: median {r["ratio_id_to_empty"]["median_us"]:.2f}, '
              f'p99 {r["ratio_id_to_empty"]["p99_us"]:.2f}')
        print(f'  core batched inverse dynamics of the 1000 points: '
              f'{r["core_1000_points_us"]:.0f} us')
    for f in [r['feedforward'], *r['sweep']]:
        print(f'feedforward ({robot}) at {f["rate_hz"]:.0f} Hz for {f["seconds"]:g} s: sent '
              f'{f["sent"]}, received {f["received"]}, lost {f["lost"]} '
              f'({100.0 * f["lost"] / max(f["sent"], 1):.2f} %); node CPU '
              f'{100 * f["node_cpu_share"]:.0f} % of a core')
        if 'latency_median_us' in f:
            print(f'  latency median {f["latency_median_us"]:.0f} us, '
                  f'p99 {f["latency_p99_us"]:.0f} us; publisher: {f["publisher"]}')
    lossless = [f['rate_hz'] for f in [r['feedforward'], *r['sweep']] if f['lost'] == 0]
    r['highest_lossless_rate_hz'] = max(lossless) if lossless else None
    c = r.get('node_cost')
    if c is None:
        return
    print(f'node cost per reference ({robot}, {c["references"]} queued, drained in one '
          f'callback, in this process): {c["node_us_per_reference"]:.0f} us wall, CPU '
          f'{c["node_thread_cpu_us_per_reference"]:.0f} us of the spinning thread '
          f'({c["node_process_cpu_us_per_reference"]:.0f} us of all threads); the core alone '
          f'{c["core_median_us"]:.0f} us (median)\n')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--robots', default='crane,irsbot2,gough_stewart')
    parser.add_argument('--minutes', type=float, default=10.0)
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--sweep', default='1500',
                        help='rates [Hz] to try for --sweep-seconds each (empty: none)')
    parser.add_argument('--sweep-seconds', type=float, default=60.0)
    parser.add_argument('--calls', type=int, default=1000)
    parser.add_argument('--count', type=int, default=1000)
    parser.add_argument('--outputs', default='commands,joint_state',
                        help='the feedforward outputs (feedforward.outputs; joint_state is the one '
                             'timed): the crane\'s hydraulic side with commands,joint_state,pressure,valve')
    args = parser.parse_args()
    args.outputs = [o for o in args.outputs.split(',') if o]
    if 'joint_state' not in args.outputs:
        parser.error('--outputs must include joint_state (the output whose latency is measured)')
    args.sweep = [float(r) for r in args.sweep.split(',') if r]
    use_loopback_ros(int(os.environ['ROS_DOMAIN_ID']) if 'ROS_DOMAIN_ID' in os.environ else None)
    import rclpy

    results = {}
    with tempfile.TemporaryDirectory(prefix='pkm_dynamics_bench_') as workdir:
        env = dict(os.environ)
        env.update(loopback_ros_env(int(os.environ['ROS_DOMAIN_ID'])))
        empty = subprocess.Popen([sys.executable, '-c', EMPTY_NODE], env=env)
        try:
            with rclpy.init():
                node = rclpy.create_node('bench_ros_client')
                for robot in args.robots.split(','):
                    results[robot] = bench_robot(robot, args, workdir, node)
        finally:
            empty.send_signal(2)
            empty.wait(10)

    m = machine()
    print(f'machine: {m["cpu"]}, {m["cores"]} cores, Python {m["python"]}\n')
    for robot, r in results.items():
        report(robot, r)
    out = BENCH / 'results'
    out.mkdir(parents=True, exist_ok=True)
    (out / 'bench_ros.json').write_text(json.dumps(
        {'machine': m, 'arguments': vars(args), 'robots': results}, indent=1))
    print(f'written {out / "bench_ros.json"}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
