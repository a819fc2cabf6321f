"""The launch file, without ROS ``launch`` (it has no PyPI wheel: never installed here).

What ``ros2 launch pkm_dynamics pkm_dynamics.launch.py robot:=... config:=... remappings:=...``
starts is decided by :func:`pkm_dynamics.node.launch_settings.node_settings`: it is executed here
on the installed share directory for every example, a URDF path, topic mode and bad
arguments; the executable it names is checked to be where launch_ros looks for it, and the
node is started with exactly those settings. The launch file itself is executed with a
recorder of the launch API it uses (its constructors only note their arguments): that shows
it declares the documented arguments and hands ``node_settings``' result to
``launch_ros.actions.Node`` unchanged -- not that ``ros2 launch`` runs it."""
import importlib.util
import os
from pathlib import Path
import sys
import types

import pytest
import yaml

from pkm_dynamics.node.launch_settings import node_settings
from pkm_dynamics.testing import Client

SHARE = Path(sys.prefix) / 'share' / 'pkm_dynamics'
EXAMPLES = sorted(p.stem for p in (SHARE / 'robots').glob('*.urdf'))
LAUNCH_FILE = Path(__file__).resolve().parents[2] / 'launch' / 'pkm_dynamics.launch.py'


@pytest.mark.parametrize('robot', EXAMPLES)
def test_an_example_gives_its_description_config_and_remappings(robot):
    settings = node_settings(str(SHARE), robot)
    assert settings.robot_description == (SHARE / 'robots' / f'{robot}.urdf').read_text()
    assert settings.parameter_files == [str(SHARE / 'config' / 'pkm_dynamics.yaml'),
                                        str(SHARE / 'config' / f'{robot}.yaml')]
    assert all(Path(f).is_file() for f in settings.parameter_files)
    rules = SHARE / 'config' / f'{robot}.remappings.yaml'
    assert settings.remappings == (list(yaml.safe_load(rules.read_text()).items())
                                   if rules.is_file() else [])


def test_the_executable_is_where_launch_ros_looks():
    """launch_ros runs <package prefix>/lib/<package>/<executable>; the embedded environment's
    package prefix is the venv."""
    settings = node_settings(str(SHARE), '')
    executable = Path(sys.prefix) / 'lib' / settings.package / settings.executable
    assert executable.is_file() and os.access(executable, os.X_OK), executable


def test_a_path_topic_mode_and_bad_arguments(tmp_path):
    urdf = tmp_path / 'my_crane.urdf'
    urdf.write_text((SHARE / 'robots' / 'heavy_duty_4dof.urdf').read_text())
    config = tmp_path / 'my.yaml'
    config.write_text('/**:\n  ros__parameters:\n    warning_period: 2.0\n')
    defaults = str(SHARE / 'config' / 'pkm_dynamics.yaml')
    # a URDF path: its text, the defaults only (no example of that name)
    settings = node_settings(str(SHARE), str(urdf))
    assert settings.robot_description == urdf.read_text()
    assert settings.parameter_files == [defaults] and settings.remappings == []
    # topic mode: no description, the defaults; config:= replaces the example's file
    settings = node_settings(str(SHARE), '', str(config))
    assert settings.robot_description == '' and settings.parameter_files == [defaults,
                                                                             str(config)]
    assert node_settings(str(SHARE), 'planar_3rrr', str(config)).parameter_files == [
        defaults, str(config)]
    with pytest.raises(RuntimeError, match='robot:=no_such_robot is neither an example'):
        node_settings(str(SHARE), 'no_such_robot')
    with pytest.raises(RuntimeError, match='config:=.*missing.yaml is not a file'):
        node_settings(str(SHARE), 'planar_3rrr', str(tmp_path / 'missing.yaml'))
    config.write_text('- a list\n')
    with pytest.raises(RuntimeError, match='must be a YAML mapping'):
        node_settings(str(SHARE), 'planar_3rrr', '', str(config))


class Recorded:
    """A launch API object: its constructor's arguments, kept."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class LaunchConfiguration(Recorded):
    def perform(self, context):
        return context[self.args[0]]


def launch_recorder():
    """Modules named as the launch API the launch file imports, whose classes record their
    arguments (``LaunchConfiguration.perform`` reads a dict of argument values)."""
    modules = {name: types.ModuleType(name) for name in (
        'launch', 'launch.actions', 'launch.substitutions', 'launch_ros', 'launch_ros.actions',
        'launch_ros.parameter_descriptions')}
    for module, names in (('launch', ['LaunchDescription']),
                          ('launch.actions', ['DeclareLaunchArgument', 'OpaqueFunction']),
                          ('launch_ros.actions', ['Node']),
                          ('launch_ros.parameter_descriptions', ['ParameterValue'])):
        for name in names:
            setattr(modules[module], name, type(name, (Recorded,), {}))
    modules['launch.substitutions'].LaunchConfiguration = LaunchConfiguration
    return modules


def test_the_launch_file_starts_what_node_settings_gives(monkeypatch):
    for name, module in launch_recorder().items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setenv('AMENT_PREFIX_PATH', sys.prefix)
    spec = importlib.util.spec_from_file_location('pkm_dynamics_launch', LAUNCH_FILE)
    launch_file = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch_file)
    description = launch_file.generate_launch_description()
    *arguments, opaque = description.args[0]
    defaults = {a.args[0]: a.kwargs['default_value'] for a in arguments}
    assert defaults == {'robot': '', 'config': '', 'remappings': '', 'namespace': '',
                        'use_sim_time': 'false'}
    context = {**defaults, 'robot': 'heavy_duty_4dof', 'namespace': 'crane'}
    (node,) = opaque.kwargs['function'](context)
    settings = node_settings(str(SHARE), 'heavy_duty_4dof')
    kwargs = node.kwargs
    assert (kwargs['package'], kwargs['executable'], kwargs['name']) == (
        settings.package, settings.executable, settings.name)
    assert kwargs['namespace'].perform(context) == 'crane'
    assert kwargs['remappings'] == settings.remappings
    *files, values = kwargs['parameters']
    assert files == settings.parameter_files
    assert values['robot_description'].args == (settings.robot_description,)
    assert values['robot_description'].kwargs == {'value_type': str}
    assert values['use_sim_time'].args[0].perform(context) == 'false'


def test_the_node_starts_with_the_settings_of_an_example(start_node, ros_node):
    """The node as the launch file starts it for robot:=heavy_duty_4dof (parameter files, the
    description, the remappings) serves that robot."""
    from pkm_dynamics_interfaces.srv import GetModelInfo

    from pkm_dynamics.core import load_robot
    settings = node_settings(str(SHARE), 'heavy_duty_4dof')
    process = start_node(params={'robot_description': settings.robot_description},
                         params_files=settings.parameter_files, name='launched',
                         ros_args=[arg for rule in settings.remappings
                                   for arg in ('-r', ':='.join(rule))])
    info = Client(ros_node, '/launched').call(GetModelInfo, 'get_model_info')
    robot = load_robot(settings.robot_description)
    assert info.success, info.message + process.log()
    assert info.robot_name == robot.name
    assert list(info.actuated_joints) == list(robot.actuated_joints)
    assert process.stop() == 0, process.log()
