"""Where the node's time per feedforward reference goes, piece by piece, in this process.

A DynamicsNode (in this process, its own namespace, the default outputs ``commands`` and
``joint_state``, each with a subscriber) gets ``--count`` references of ``ros_streams`` queued
on its reference topic; then, per reference (medians, microseconds):

- take: ``take_message`` off the subscription: the serialized bytes (what the node takes),
  and for comparison rclpy's conversion to a Python message; then the node's reading of the
  bytes (:func:`~pkm_dynamics.node.messages.cdr_messages.read_reference`);
- check: age, kind, points, joint order, arrays and bounds (PKM: the task point's pose, twist
  and acceleration);
- core: the inverse dynamics (PKM: ``reference_motion``, the inverse kinematics from the
  previous solution, then the inverse dynamics, in one compiled call);
- fill / publish of each output;
- handler: the node's whole handler of one reference (check, core, fill, publish), next to
  the sum of the pieces;
- wake-up: one reference at a time (sent, arrived, then one ``spin_once``): the executor's
  time beyond the handler, for the node's ``LeanExecutor`` (of the subscriptions), one of
  every entity of the companion node and rclpy's ``SingleThreadedExecutor``: wall time
  (with the waits for the CPU of a loaded machine) and CPU time of the thread (the executor's
  own work).

    .venv/bin/python bench/profile_stream.py [--robot crane|irsbot2|gough_stewart] [--count N]

Table on stdout; JSON in bench/results/profile_stream_<robot>.json.
"""
import argparse
import json
import os
from pathlib import Path
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import machine  # noqa: E402
from ros_streams import description, reference_messages, topic  # noqa: E402


def median_us(times):
    return float(np.median(times) * 1e6)


def timed(fn, items, clock=time.perf_counter):
    """(results, times) of ``fn(item)`` for each of ``items``, timed by ``clock``."""
    out, times = [], []
    for item in items:
        t = clock()
        out.append(fn(item))
        times.append(clock() - t)
    return out, times


def profile(robot, count):
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from pkm_dynamics.node.messages.cdr_messages import read_reference
    from pkm_dynamics.node.messages.conversions import actuator_states
    from pkm_dynamics.node.dynamics_node import DynamicsNode
    from pkm_dynamics.node.runtime.lean_executor import LeanExecutor
    from pkm_dynamics.testing import Collector, matched_publisher

    ns = f'/profile_{robot}'
    dyn = DynamicsNode(namespace=ns, parameter_overrides=[
        Parameter('robot_description', value=description(robot)),
        Parameter('completion.enabled', value=False),
        Parameter('feedforward.qos_depth', value=count)])
    dyn.trigger_configure()
    dyn.trigger_activate()
    model = dyn._model
    space = model.robot.state_space               # 'actuator' (chains) or 'task' (PKMs)
    task = space == 'task'
    sub = dyn._reference_subs[model.space.reference_role]
    source = rclpy.create_node(f'profile_{robot}_source')
    sinks = [Collector(source, Float64MultiArray, f'{ns}/pkm_dynamics/feedforward/commands', 1),
             Collector(source, JointState, f'{ns}/pkm_dynamics/feedforward/joint_states', 1)]
    msgs = reference_messages(robot, count)
    publisher = matched_publisher(source, type(msgs[0]), f'{ns}/pkm_dynamics/{topic(robot)}',
                                  count)
    for sink in sinks:
        if not sink.wait_for_publisher(source):
            raise TimeoutError('the in-process node\'s outputs were not discovered')
    result = {}

    def queue_all():
        for m in msgs:
            publisher.publish(m)
        time.sleep(1.0)                     # all of them in the node's queue

    # -- take ---------------------------------------------------------------------------------
    # the node takes the serialized bytes and reads them (cdr_messages); rclpy's conversion
    # to a Python message for comparison
    for label, raw in (('take, serialized', True), ('take, as a Python message (rclpy)', False)):
        queue_all()
        taken, times = timed(lambda _: sub.handle.take_message(sub.msg_type, raw), range(count))
        if any(t is None for t in taken):
            raise RuntimeError(f'{sum(t is None for t in taken)} of {count} references not queued')
        result[label] = median_us(times)
        if raw:
            serialized = [t[0] for t in taken]
    taken, times = timed(lambda m: read_reference(m, sub.msg_type), serialized)
    result['read the bytes (cdr_messages)'] = median_us(times)

    # -- the pieces of the handler ------------------------------------------------------------
    outputs = dyn._outputs_of(model)

    def check(m):
        dyn._check_age(m)
        points = dyn._reference_points(model, m, space)
        if task:
            return model.space.point_reader(model, m, what=None)(points[0], 0)
        return tuple(actuator_states(points, outputs.order(m.joint_names, 'joint_names'),
                                     len(m.joint_names))[:, 0])
    states, times = timed(check, taken)
    result['check'] = median_us(times)

    robot_core = model.robot
    warm = [None]

    def core(state):
        if task:
            motion = robot_core.reference_motion(*state, warm[0])
            warm[0] = motion.theta
            return motion.actuators, motion.actuators_d, motion.u
        x, xd, xdd = state
        return x, xd, robot_core.inverse_dynamics(x, xd, xdd)
    answers, times = timed(core, states)
    result['core'] = median_us(times)

    stamp = dyn.get_clock().now().to_msg()
    for kind, fill in (('commands', lambda a: outputs.commands(a[2])),
                       ('joint_state', lambda a: outputs.joint_state(stamp, '', *a))):
        filled, times = timed(fill, answers)
        result[f'fill {kind}'] = median_us(times)
        pub = dyn._pub[kind]
        _, times = timed(pub.publish, [fill(a) for a in answers])
        result[f'publish {kind}'] = median_us(times)
    result['sum of the pieces'] = sum(v for k, v in result.items() if 'rclpy' not in k)

    # -- the whole handler --------------------------------------------------------------------
    handler = dyn._task_feedforward if task else dyn._feedforward
    model.ff_solution = None
    _, times = timed(lambda m: handler(model, m), taken)
    result['handler'] = median_us(times)
    model.ff_solution = None
    _, times = timed(lambda m: handler(model, m), taken, time.thread_time)
    result['handler, CPU time'] = handler_cpu = median_us(times)

    # -- executor wake-up: one reference at a time --------------------------------------------
    # wall time beyond the handler (includes waiting for the CPU on a loaded machine), and
    # the thread's CPU time of one spin_once minus the handler's (the executor's own work)
    for label, executor in (('wake-up, LeanExecutor (subscriptions)',
                             LeanExecutor(dyn.context, kinds=['subscriptions'])),
                            ('wake-up, LeanExecutor (every entity)', LeanExecutor(dyn.context)),
                            ('wake-up, rclpy SingleThreadedExecutor', SingleThreadedExecutor(
                                context=dyn.context))):
        executor.add_node(dyn.topic_node)
        executor.spin_once(timeout_sec=0.1)                 # the wake of add_node
        overheads, cpu = [], []
        for m in msgs[:min(count, 300)]:
            publisher.publish(m)
            time.sleep(0.003)                               # arrived
            before = len(dyn._diagnostics._costs)
            t, c = time.perf_counter(), time.thread_time()
            executor.spin_once(timeout_sec=1.0)
            total, total_cpu = time.perf_counter() - t, time.thread_time() - c
            if len(dyn._diagnostics._costs) == before + 1:
                overheads.append(total - dyn._diagnostics._costs[-1][1])
                cpu.append(total_cpu)
        executor.remove_node(dyn.topic_node)
        executor.shutdown()
        result[f'{label}, wall'] = median_us(overheads)
        result[f'{label}, CPU time'] = median_us(cpu) - handler_cpu
        result[f'{label}: references'] = len(overheads)
    source.destroy_node()
    dyn.topic_node.destroy_node()
    dyn.destroy_node()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--robot', default='crane', choices=('crane', 'irsbot2', 'gough_stewart'))
    parser.add_argument('--count', type=int, default=1000)
    args = parser.parse_args()
    from pkm_dynamics.testing import use_loopback_ros
    use_loopback_ros(int(os.environ['ROS_DOMAIN_ID']) if 'ROS_DOMAIN_ID' in os.environ else None)
    import rclpy
    with rclpy.init():
        result = profile(args.robot, args.count)
    m = machine()
    print(f'machine: {m["cpu"]}, {m["cores"]} cores, Python {m["python"]}')
    print(f'per reference, {args.robot}, {args.count} references (median, us)')
    for label, value in result.items():
        print(f'  {label:46s} {value:10.1f}' if isinstance(value, float) else
              f'  {label:46s} {value:10d}')
    out = Path(__file__).resolve().parent / 'results'
    out.mkdir(parents=True, exist_ok=True)
    path = out / f'profile_stream_{args.robot}.json'
    path.write_text(json.dumps({'machine': m, 'robot': args.robot, 'count': args.count,
                                'median_us': result}, indent=1))
    print(f'written {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
