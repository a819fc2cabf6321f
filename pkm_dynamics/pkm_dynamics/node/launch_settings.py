"""What ``launch/pkm_dynamics.launch.py`` starts, from its arguments: the node's executable,
parameter files, robot description and topic remappings (:func:`node_settings`).

Plain Python (no ROS ``launch`` import), so that the argument handling of the launch file is
executed and checked by the test suite, where ``launch`` / ``launch_ros`` are not installed;
the launch file only wraps the result in a ``launch_ros.actions.Node``.

``share`` is the package's installed share directory (``get_package_share_directory``):
``robots/`` (the example robots), ``config/`` (``pkm_dynamics.yaml``, the defaults, and per
example ``<name>.yaml`` and ``<name>.remappings.yaml``)."""
from dataclasses import dataclass
import os

import yaml

#: the package and executable the launch file starts (``ros2 run pkm_dynamics pkm_dynamics_node``)
PACKAGE = 'pkm_dynamics'
EXECUTABLE = 'pkm_dynamics_node'


@dataclass(frozen=True)
class NodeSettings:
    """The node a launch starts: ``executable`` of ``package``, ROS name ``name``; its
    ``parameter_files`` (in loading order), ``robot_description`` (URDF text; empty: topic
    mode) and ``remappings`` ((from, to) pairs)."""
    package: str
    executable: str
    name: str
    parameter_files: list
    robot_description: str
    remappings: list


def example_name(robot):
    """The example name of ``robot:=`` (the file name without its extension); '' for none."""
    return os.path.splitext(os.path.basename(robot))[0] if robot else ''


def robot_description_file(share, robot):
    """The URDF file of ``robot:=``: an example ``share/robots/<robot>.urdf`` or
    ``share/robots/<robot>/<robot>.urdf``, else the path ``robot``; RuntimeError otherwise."""
    robots = os.path.join(share, 'robots')
    for candidate in (os.path.join(robots, robot + '.urdf'),
                      os.path.join(robots, robot, robot + '.urdf'),
                      os.path.expanduser(robot)):
        if os.path.isfile(candidate):
            return candidate
    raise RuntimeError(f'robot:={robot} is neither an example in {robots} nor a URDF file')


def parameter_files(share, robot, config):
    """The defaults ``config/pkm_dynamics.yaml``, then ``config:=`` (RuntimeError if it is no
    file) or, by default, the example's ``config/<robot>.yaml`` when it has one."""
    files = [os.path.join(share, 'config', 'pkm_dynamics.yaml')]
    if config:
        if not os.path.isfile(os.path.expanduser(config)):
            raise RuntimeError(f'config:={config} is not a file')
        files.append(os.path.expanduser(config))
    else:
        example = os.path.join(share, 'config', example_name(robot) + '.yaml')
        if example_name(robot) and os.path.isfile(example):
            files.append(example)
    return files


def remappings(share, robot, remappings_file):
    """The (from, to) topic remappings of ``remappings_file`` (a YAML mapping), by default of
    the example's config/<robot>.remappings.yaml (none if it has none); RuntimeError naming a
    file that is missing or no mapping of topic names."""
    if not remappings_file:
        example = os.path.join(share, 'config', example_name(robot) + '.remappings.yaml')
        if not (example_name(robot) and os.path.isfile(example)):
            return []
        remappings_file = example
    path = os.path.expanduser(remappings_file)
    if not os.path.isfile(path):
        raise RuntimeError(f'remappings:={remappings_file} is not a file')
    with open(path) as f:
        rules = yaml.safe_load(f) or {}
    if not isinstance(rules, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in rules.items()):
        raise RuntimeError(f'remappings:={remappings_file} must be a YAML mapping of topic '
                           'names, from: to')
    return list(rules.items())


def node_settings(share, robot='', config='', remappings_file=''):
    """The :class:`NodeSettings` of the launch arguments ``robot``, ``config`` and
    ``remappings`` (see the launch file's docstring); RuntimeError naming a bad argument."""
    description = ''
    if robot:
        with open(robot_description_file(share, robot)) as f:
            description = f.read()
    return NodeSettings(package=PACKAGE, executable=EXECUTABLE, name='pkm_dynamics',
                        parameter_files=parameter_files(share, robot, config),
                        robot_description=description,
                        remappings=remappings(share, robot, remappings_file))
