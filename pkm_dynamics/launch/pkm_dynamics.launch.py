"""Start the pkm_dynamics node for one robot.

ros2 launch pkm_dynamics pkm_dynamics.launch.py [robot:=<example name or URDF path>]
    [config:=<params.yaml>] [remappings:=<remappings.yaml>] [namespace:=<ns>]
    [use_sim_time:=true|false]

robot: an example name is looked up in this package's share/pkm_dynamics/robots/ as
<name>.urdf or <name>/<name>.urdf; anything else is taken as a path to a URDF file. Left out
(the default, empty), the robot_description parameter stays empty and the node reads the
robot_description topic (e.g. from robot_state_publisher): topic mode. The command line
cannot pass an empty value (ros2 launch rejects `robot:=`); an including launch file can.
config: a parameter file loaded on top of config/pkm_dynamics.yaml (the defaults); by default
config/<robot>.yaml when the example has one.
remappings: a YAML mapping of topic remappings, `from: to` (e.g. `~/feedforward/commands:
/effort_controller/commands`), given to the node as its remappings=, as `--ros-args -r from:=to`
would; by default config/<robot>.remappings.yaml when the example has one.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
import yaml

SHARE = get_package_share_directory('pkm_dynamics')


def robot_description_file(robot):
    robots = os.path.join(SHARE, 'robots')
    for candidate in (os.path.join(robots, robot + '.urdf'),
                      os.path.join(robots, robot, robot + '.urdf'),
                      os.path.expanduser(robot)):
        if os.path.isfile(candidate):
            return candidate
    raise RuntimeError(f'robot:={robot} is neither an example in {robots} nor a URDF file')


def parameter_files(robot, config):
    files = [os.path.join(SHARE, 'config', 'pkm_dynamics.yaml')]
    if config:
        if not os.path.isfile(os.path.expanduser(config)):
            raise RuntimeError(f'config:={config} is not a file')
        files.append(os.path.expanduser(config))
    else:
        name = os.path.splitext(os.path.basename(robot))[0] if robot else ''
        example = os.path.join(SHARE, 'config', name + '.yaml')
        if name and os.path.isfile(example):
            files.append(example)
    return files


def remappings(robot, remappings_file):
    """The (from, to) topic remappings of ``remappings_file`` (a YAML mapping), by default of
    the example's config/<robot>.remappings.yaml (none if it has none)."""
    if not remappings_file:
        name = os.path.splitext(os.path.basename(robot))[0] if robot else ''
        example = os.path.join(SHARE, 'config', name + '.remappings.yaml')
        if not (name and os.path.isfile(example)):
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


def dynamics_node(context):
    robot = LaunchConfiguration('robot').perform(context)
    config = LaunchConfiguration('config').perform(context)
    remappings_file = LaunchConfiguration('remappings').perform(context)
    robot_description = ''
    if robot:
        with open(robot_description_file(robot)) as description:
            robot_description = description.read()
    return [Node(
        package='pkm_dynamics',
        executable='pkm_dynamics_node',
        name='pkm_dynamics',
        namespace=LaunchConfiguration('namespace'),
        output='screen',
        remappings=remappings(robot, remappings_file),
        parameters=[
            *parameter_files(robot, config),
            {
                'robot_description': ParameterValue(robot_description, value_type=str),
                'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'),
                                               value_type=bool),
            },
        ],
    )]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('robot', default_value='',
                              description='example robot name or URDF file path; '
                              'default (empty): read the robot_description topic'),
        DeclareLaunchArgument('config', default_value='',
                              description='parameter file on top of config/pkm_dynamics.yaml '
                              '(default: config/<robot>.yaml of an example)'),
        DeclareLaunchArgument('remappings', default_value='',
                              description='YAML file of topic remappings (from: to) '
                              '(default: config/<robot>.remappings.yaml of an example)'),
        DeclareLaunchArgument('namespace', default_value='', description='node namespace'),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='use /clock as time source'),
        OpaqueFunction(function=dynamics_node),
    ])
