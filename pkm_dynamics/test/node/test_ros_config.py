"""The installed parameter files: each example robot's config/<robot>.yaml (on top of the
defaults in config/pkm_dynamics.yaml, as the launch file loads them) starts the node with
that robot, its config/<robot>.remappings.yaml (remappings, as the launch file passes them)
moves its streaming topics; invalid parameter values are refused with a one-line FATAL message
that names them (no traceback)."""
from pathlib import Path
import sys
import time

import yaml

from pkm_dynamics.testing import Client, spin_until

SHARE = Path(sys.prefix) / 'share' / 'pkm_dynamics'
EXAMPLES = sorted(p.stem for p in (SHARE / 'robots').glob('*.urdf'))


def test_every_example_has_a_config():
    assert EXAMPLES, f'no example robots installed in {SHARE}'
    missing = [name for name in EXAMPLES if not (SHARE / 'config' / f'{name}.yaml').is_file()]
    assert not missing, missing


def example_remappings(robot):
    """The (from, to) remappings of the example's config/<robot>.remappings.yaml."""
    path = SHARE / 'config' / f'{robot}.remappings.yaml'
    return list(yaml.safe_load(path.read_text()).items()) if path.is_file() else []


def resolved(topic, node_name):
    """``topic`` resolved for the node ``/node_name``."""
    if topic.startswith('~'):
        return f'/{node_name}{topic[1:]}'
    return topic if topic.startswith('/') else '/' + topic


def streaming_topics(node, node_name):
    """The topics of the node's streaming companion (``<name>_topics``), once discovered."""
    from rclpy.node import NodeNameNonExistentError
    try:
        return ({t for t, _ in node.get_publisher_names_and_types_by_node(
                    f'{node_name}_topics', '/')} |
                {t for t, _ in node.get_subscriber_names_and_types_by_node(
                    f'{node_name}_topics', '/')})
    except NodeNameNonExistentError:
        return set()


def test_example_configs_start_the_node(start_node, ros_node):
    """One node per example (started together, each under its own name), with the defaults
    and the example's parameter file and remappings, as the launch file passes them."""
    from pkm_dynamics_interfaces.srv import GetModelInfo
    from rcl_interfaces.srv import GetParameters
    processes = {}
    for robot in EXAMPLES:
        text = (SHARE / 'robots' / f'{robot}.urdf').read_text()
        processes[robot] = start_node(
            params={'robot_description': text},
            params_files=[SHARE / 'config' / 'pkm_dynamics.yaml',
                          SHARE / 'config' / f'{robot}.yaml'],
            name=f'config_{robot}',
            ros_args=[arg for rule in example_remappings(robot)
                      for arg in ('-r', ':='.join(rule))])
    for robot, process in processes.items():
        client = Client(ros_node, f'/config_{robot}')
        info = client.call(GetModelInfo, 'get_model_info')
        assert info.success, info.message + process.log()
        outputs = client.call(GetParameters, 'get_parameters', GetParameters.Request(
            names=['feedforward.outputs'])).values[0].string_array_value
        assert set(outputs) <= {'commands', 'joint_state', 'trajectory', 'motor'}
        assert ('motor' in outputs) == bool(info.series_elastic_joints), robot
        name = f'config_{robot}'
        rules = [(resolved(a, name), resolved(b, name)) for a, b in example_remappings(robot)]
        assert spin_until(ros_node, lambda: all(b in streaming_topics(ros_node, name)
                                                for _, b in rules)), \
            (robot, rules, streaming_topics(ros_node, name))
        moved = {a for a, _ in rules} - {b for _, b in rules}   # (/joint_states is both)
        assert not moved & streaming_topics(ros_node, name), robot
    for process in processes.values():
        assert process.stop() == 0, process.log()


INVALID = [
    ({'feedforward.outputs': ['commands', 'torque']}, ['feedforward.outputs', 'torque']),
    ({'gravity': [0.0, -9.81]}, ['gravity', '3 finite values']),
    ({'ik.scheme': 'fastest'}, ['ik.scheme', 'fastest']),
    ({'feedforward.reliability': 'sometimes'}, ['feedforward.reliability', 'sometimes']),
    ({'payload.com': [0.0, 0.1]}, ['payload', 'centre of mass must hold 3 numbers']),
    ({'payload.mass': 1.0, 'payload.inertia': [0.1, 0.0, 0.0, 0.1, 0.0, 1.0]},
     ['payload', 'triangle inequality']),
    # refused by rclpy (a descriptor's range, the declared type): the same one-line message
    ({'ik.tolerance': 0.5}, ['ik.tolerance', '0.5']),
    ({'warning_period': 'often'}, ['warning_period', 'often']),
]


def test_invalid_parameters_are_refused(start_node):
    processes = [start_node(params=params) for params, _ in INVALID]
    deadline = time.monotonic() + 60     # all start at once: slow on a loaded machine
    while any(p.running() for p in processes) and time.monotonic() < deadline:
        time.sleep(0.05)
    for process, (_, words) in zip(processes, INVALID):
        assert not process.running()
        assert process.stop() != 0
        log = process.log()
        for word in words:
            assert word in log, log
        assert '[FATAL]' in log and 'Traceback' not in log, log
