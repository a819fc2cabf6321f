"""Every example robot description survives the three ROS command-line routes of the documentation
(doc/running.rst, doc/description_format.rst): the
`--ros-args -p robot_description:="$(cat robot.urdf)"` override (rcl parses the value as a
YAML scalar), `ros2 param set <node> robot_description "$(cat robot.urdf)"` (rclpy's
`get_parameter_value` guesses the type with yaml.safe_load) and
`ros2 topic pub /robot_description std_msgs/msg/String "{data: '$(cat robot.urdf)'}"` (the
values are loaded with yaml.safe_load).

YAML folds the line breaks of a multi-line scalar into spaces, so what arrives is the file
with its whitespace between lines changed: the tests compare the whitespace-separated
tokens. The node test checks what the node loaded against the file read with ElementTree.
"""
from pathlib import Path
import xml.etree.ElementTree as ET

import pytest
import yaml

from pkm_dynamics.testing import Client, spin_until

ROBOTS = Path(__file__).resolve().parents[2] / 'robots'
EXAMPLES = sorted(path.stem for path in ROBOTS.glob('*.urdf'))


def shell_argument(name):
    """The word "$(cat NAME.urdf)" gives: the file without its trailing newlines."""
    return (ROBOTS / f'{name}.urdf').read_text().rstrip('\n')


def test_every_example_is_covered():
    assert {'heavy_duty_4dof', 'linear_4bar_1dof', 'planar_3rrr'} <= set(EXAMPLES)


@pytest.mark.parametrize('name', EXAMPLES)
def test_param_set_reads_the_description_as_one_string(name):
    from rcl_interfaces.msg import ParameterType
    from rclpy.parameter import get_parameter_value
    text = shell_argument(name)
    value = get_parameter_value(string_value=text)      # what `ros2 param set` sends
    assert value.type == ParameterType.PARAMETER_STRING
    assert value.string_value.split() == text.split()


@pytest.mark.parametrize('name', EXAMPLES)
def test_topic_pub_reads_the_description_as_one_string(name):
    text = shell_argument(name)
    values = yaml.safe_load("{data: '" + text + "'}")   # what `ros2 topic pub` loads
    assert list(values) == ['data']
    assert values['data'].split() == text.split()


def expected_model(text):
    """Robot name, non-fixed joints (sorted) and total mass, read with ElementTree."""
    robot = ET.fromstring(text)
    joints = sorted(j.get('name') for j in robot.findall('joint') if j.get('type') != 'fixed')
    mass = sum(float(m.get('value')) for m in robot.findall('link/inertial/mass'))
    return robot.get('name'), joints, mass


@pytest.mark.parametrize('name', EXAMPLES)
def test_node_takes_the_description_as_a_parameter_override(name, start_node, ros_node):
    from pkm_dynamics_interfaces.srv import GetModelInfo
    text = shell_argument(name)
    process = start_node(ros_args=['-p', f'robot_description:={text}'])
    service = ros_node.create_client(GetModelInfo, '/pkm_dynamics/get_model_info')
    spin_until(ros_node, lambda: not process.running() or service.service_is_ready(), 30.0)
    assert process.running(), f'the node exited; log:\n{process.log()}'
    info = Client(ros_node).call(GetModelInfo, 'get_model_info')
    assert info.success, info.message
    robot_name, joints, mass = expected_model(text)
    assert info.robot_name == robot_name
    assert sorted(info.tree_joints) == joints
    assert info.total_mass == pytest.approx(mass, rel=1e-12)
