"""The installed parameter files: each example robot's config/<robot>.yaml (on top of the
defaults in config/pkm_dynamics.yaml, as the launch file loads them) starts the node with
that robot; invalid parameter values are refused with a message that names them."""
from pathlib import Path
import sys
import time

import pytest

from pkm_dynamics.testing import Client

SHARE = Path(sys.prefix) / 'share' / 'pkm_dynamics'
EXAMPLES = sorted(p.stem for p in (SHARE / 'robots').glob('*.urdf'))


def test_every_example_has_a_config():
    assert EXAMPLES, f'no example robots installed in {SHARE}'
    missing = [name for name in EXAMPLES if not (SHARE / 'config' / f'{name}.yaml').is_file()]
    assert not missing, missing


@pytest.mark.parametrize('robot', EXAMPLES)
def test_example_config_starts_the_node(robot, start_node, ros_node):
    from pkm_dynamics_interfaces.srv import GetModelInfo
    from rcl_interfaces.srv import GetParameters
    text = (SHARE / 'robots' / f'{robot}.urdf').read_text()
    files = [SHARE / 'config' / 'pkm_dynamics.yaml', SHARE / 'config' / f'{robot}.yaml']
    process = start_node(params={'robot_description': text},
                         params_files=[f for f in files if f.is_file()])
    client = Client(ros_node)
    info = client.call(GetModelInfo, 'get_model_info')
    assert info.success, info.message + process.log()
    outputs = client.call(GetParameters, 'get_parameters', GetParameters.Request(
        names=['feedforward.outputs'])).values[0].string_array_value
    assert set(outputs) <= {'commands', 'joint_state', 'trajectory', 'motor'}
    assert ('motor' in outputs) == bool(info.series_elastic_joints)
    assert process.stop() == 0, process.log()


@pytest.mark.parametrize('params, words', [
    ({'feedforward.outputs': ['commands', 'torque']}, ['feedforward.outputs', 'torque']),
    ({'gravity': [0.0, -9.81]}, ['gravity', '3 finite values']),
    ({'ik.scheme': 'fastest'}, ['ik.scheme', 'fastest']),
])
def test_invalid_parameters_are_refused(params, words, start_node):
    process = start_node(params=params)
    deadline = time.monotonic() + 20
    while process.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process.running()
    assert process.stop() != 0
    for word in words:
        assert word in process.log(), process.log()
