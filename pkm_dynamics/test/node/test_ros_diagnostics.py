"""/diagnostics over DDS: the node's DiagnosticArray arrives once a second and its values track
a short stream of good and bad task references on the 3-RRR (outputs published, references
refused, last error, the worst condition number against the core's IK of the same poses, the
level going WARN with the refusals and back to OK); a node without a model reports ERROR."""
import numpy as np
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.testing import Collector, matched_publisher, spin_until

from test_ros_topics import task_stream


def statuses(collector, name):
    """(level, message, values by key) of every status named ``name`` received so far."""
    return [(s.level, s.message, {kv.key: kv.value for kv in s.values})
            for array in collector.messages for s in array.status if s.name == name]


def wait_for_status(node, collector, name, condition, timeout=20.0):
    """The first status ``name`` satisfying ``condition(level, message, values)``, spinning
    until one arrives; fails the test naming the last status seen otherwise."""
    def found():
        return next((s for s in statuses(collector, name) if condition(*s)), None)
    spin_until(node, lambda: found() is not None, timeout)
    status = found()
    assert status is not None, statuses(collector, name)[-1:]
    return status


@pytest.fixture(scope='module')
def diagnostics(module_ros_node):
    from diagnostic_msgs.msg import DiagnosticArray
    collector = Collector(module_ros_node, DiagnosticArray, '/diagnostics')
    return collector


def test_values_track_good_and_bad_references(module_node, module_ros_node, example_robot,
                                               diagnostics):
    from diagnostic_msgs.msg import DiagnosticStatus
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import MultiDOFJointTrajectory
    text = example_robot('planar_3rrr')
    module_node(params={'robot_description': text, 'feedforward.outputs': ['commands'],
                        'completion.enabled': False, 'warning_period': 0.0,
                        'feedforward.max_age': 0.0},      # task_stream: synthetic stamps
                name='diag_pkm')
    robot = load_robot(text)
    node, name = module_ros_node, 'diag_pkm: dynamics'
    commands = Collector(node, Float64MultiArray, '/diag_pkm/feedforward/commands')
    publisher = matched_publisher(node, MultiDOFJointTrajectory, '/diag_pkm/task_reference',
                                  100)
    assert commands.wait_for_publisher(node)
    level, message, values = wait_for_status(node, diagnostics, name, lambda *s: True)
    assert values['model loaded'] == 'true' and values['kind'] == 'parallel'
    assert values['lifecycle state'] == 'active'
    assert values['outputs published'] == '0' and values['references refused'] == '0'

    msgs, motion = task_stream(robot, 12)
    for msg in msgs:
        publisher.publish(msg)
    assert commands.wait_for(node, len(msgs)), len(commands.messages)
    level, message, values = wait_for_status(
        node, diagnostics, name, lambda lv, m, v: v['outputs published'] == str(len(msgs)))
    assert level == DiagnosticStatus.OK, message
    assert values['references refused'] == '0' and values['last error'] == ''
    # the worst kappa(F) the feedforward's IK met: the core's IK of the same poses
    kappa = max(np.max(robot.inverse_kinematics(P, V, A).condition) for P, V, A in motion)
    assert abs(float(values['worst condition number (since model load)']) - kappa) <= 1e-5 * kappa
    # the report that first counts them covers at least the last one's cost
    assert float(values['cost per reference, median of the last second [ms]']) > 0

    bad = msgs[0]
    bad.points[0].transforms[0].translation.x = float('nan')
    for _ in range(3):
        publisher.publish(bad)
    level, message, values = wait_for_status(
        node, diagnostics, name, lambda lv, m, v: v['references refused'] == '3')
    assert level == DiagnosticStatus.WARN and 'refused' in message, message
    assert values['outputs published'] == str(len(msgs))
    assert 'task reference' in values['last error'] and 'NaN' in values['last error']
    assert len(commands.messages) == len(msgs)
    # a second later, with no new refusal, OK again; the counts stay
    level, message, values = wait_for_status(
        node, diagnostics, name, lambda lv, m, v: v['references refused'] == '3'
        and lv == DiagnosticStatus.OK)
    assert values['outputs published'] == str(len(msgs)) and 'NaN' in values['last error']


def test_no_model_is_an_error(module_node, module_ros_node, diagnostics):
    from diagnostic_msgs.msg import DiagnosticStatus
    module_node(params={}, name='diag_empty')       # topic mode, no description published
    level, message, values = wait_for_status(module_ros_node, diagnostics,
                                             'diag_empty: dynamics', lambda *s: True)
    assert level == DiagnosticStatus.ERROR, message
    assert 'no robot description' in message and values['model loaded'] == 'false'
