"""The installed parameter files: each example robot's config/<robot>.yaml (on top of the
defaults in config/pkm_dynamics.yaml, as the launch file loads them) starts the node with
that robot; invalid parameter values are refused with a message that names them."""
from pathlib import Path
import sys
import time

from pkm_dynamics.testing import Client

SHARE = Path(sys.prefix) / 'share' / 'pkm_dynamics'
EXAMPLES = sorted(p.stem for p in (SHARE / 'robots').glob('*.urdf'))


def test_every_example_has_a_config():
    assert EXAMPLES, f'no example robots installed in {SHARE}'
    missing = [name for name in EXAMPLES if not (SHARE / 'config' / f'{name}.yaml').is_file()]
    assert not missing, missing


def test_example_configs_start_the_node(start_node, ros_node):
    """One node per example (started together, each under its own name), with the defaults
    and the example's parameter file, as the launch file loads them."""
    from pkm_dynamics_interfaces.srv import GetModelInfo
    from rcl_interfaces.srv import GetParameters
    processes = {}
    for robot in EXAMPLES:
        text = (SHARE / 'robots' / f'{robot}.urdf').read_text()
        processes[robot] = start_node(
            params={'robot_description': text},
            params_files=[SHARE / 'config' / 'pkm_dynamics.yaml',
                          SHARE / 'config' / f'{robot}.yaml'],
            name=f'config_{robot}')
    for robot, process in processes.items():
        client = Client(ros_node, f'/config_{robot}')
        info = client.call(GetModelInfo, 'get_model_info')
        assert info.success, info.message + process.log()
        outputs = client.call(GetParameters, 'get_parameters', GetParameters.Request(
            names=['feedforward.outputs'])).values[0].string_array_value
        assert set(outputs) <= {'commands', 'joint_state', 'trajectory', 'motor'}
        assert ('motor' in outputs) == bool(info.series_elastic_joints), robot
    for process in processes.values():
        assert process.stop() == 0, process.log()


INVALID = [
    ({'feedforward.outputs': ['commands', 'torque']}, ['feedforward.outputs', 'torque']),
    ({'gravity': [0.0, -9.81]}, ['gravity', '3 finite values']),
    ({'ik.scheme': 'fastest'}, ['ik.scheme', 'fastest']),
    ({'payload.com': [0.0, 0.1]}, ['payload', 'centre of mass must hold 3 numbers']),
    ({'payload.mass': 1.0, 'payload.inertia': [0.1, 0.0, 0.0, 0.1, 0.0, 1.0]},
     ['payload', 'triangle inequality']),
]


def test_invalid_parameters_are_refused(start_node):
    processes = [start_node(params=params) for params, _ in INVALID]
    deadline = time.monotonic() + 20
    while any(p.running() for p in processes) and time.monotonic() < deadline:
        time.sleep(0.05)
    for process, (_, words) in zip(processes, INVALID):
        assert not process.running()
        assert process.stop() != 0
        for word in words:
            assert word in process.log(), process.log()
