"""The installed node stops cleanly: SIGINT (Ctrl-C, the test fixtures) or SIGTERM right after
service calls and while a reference stream is being served ends it with exit code 0 and
without a traceback or an "ignored" warning in its log, every time (the streaming thread and
the service executor's threads are joined before the nodes and the context go)."""
import signal

import numpy as np

from pkm_dynamics.testing import Client, Collector, matched_publisher

ROBOT = 'heavy_duty_4dof'
#: start-stop cycles: the race this guards against showed in about 1 of 25 stops
CYCLES = 12
#: references published just before the stop: the node's whole queue (feedforward.qos_depth)
BURST = 100
#: seconds a stop may take (as NodeProcess.stop)
STOP_TIMEOUT = 10.0


def references(names, count):
    """`count` JointTrajectory references of one point each at the actuated joints `names`."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    msgs = []
    for k in range(count):
        x = 0.3 + 0.05 * np.sin(0.01 * k + np.arange(len(names)))
        msg = JointTrajectory(joint_names=list(names))
        msg.points = [JointTrajectoryPoint(positions=list(x), velocities=[0.0] * len(names),
                                           accelerations=[0.0] * len(names))]
        msgs.append(msg)
    return msgs


def serve_then_signal(start_node, ros_node, text, number, name):
    """Start a node called `name`, call two services, get one burst of references served,
    publish a second burst and at once send signal `number`; return the stopped process and
    its exit code."""
    from pkm_dynamics_interfaces.srv import GetModelInfo, InverseDynamics
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory

    node = start_node(params={'robot_description': text}, name=name)
    client = Client(ros_node, f'/{name}')
    info = client.call(GetModelInfo, 'get_model_info')
    assert info.success, info.message
    client.call(InverseDynamics, 'inverse_dynamics')
    commands = Collector(ros_node, Float64MultiArray, f'/{name}/feedforward/commands')
    publisher = matched_publisher(ros_node, JointTrajectory, f'/{name}/reference', BURST)
    msgs = references(info.actuated_joints, BURST)
    for msg in msgs:
        publisher.publish(msg)
    assert commands.wait_for(ros_node, 1), node.log()       # the stream is being served
    for msg in msgs:                                        # still queued at the signal
        publisher.publish(msg)
    if number == signal.SIGINT:
        code = node.stop()      # SIGINT, then waits for the exit (kills it after a timeout)
    else:
        node.process.send_signal(number)
        node.process.wait(STOP_TIMEOUT)
        code = node.stop()
    ros_node.destroy_publisher(publisher)
    ros_node.destroy_subscription(commands.subscription)
    return node, code


def assert_stopped_cleanly(node, code, cycle):
    log = node.log()
    assert code == 0, f'cycle {cycle}: exit code {code}\n{log}'
    assert 'Traceback' not in log, f'cycle {cycle}:\n{log}'
    assert ' ignored:' not in log, f'cycle {cycle}:\n{log}'


def test_sigint_while_serving_exits_cleanly_every_time(start_node, ros_node, example_robot):
    text = example_robot(ROBOT)
    for cycle in range(CYCLES):
        node, code = serve_then_signal(start_node, ros_node, text, signal.SIGINT,
                                       f'stop_{cycle}')
        assert_stopped_cleanly(node, code, cycle)


def test_sigterm_while_serving_exits_cleanly(start_node, ros_node, example_robot):
    node, code = serve_then_signal(start_node, ros_node, example_robot(ROBOT), signal.SIGTERM,
                                   'stop_term')
    assert_stopped_cleanly(node, code, 0)
