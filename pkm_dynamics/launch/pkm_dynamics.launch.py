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
from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from pkm_dynamics.node.launch_settings import node_settings


def dynamics_node(context):
    """The node of the launch arguments: what to run comes from
    :func:`pkm_dynamics.node.launch_settings.node_settings` (plain Python, tested by the suite)."""
    settings = node_settings(get_package_share_directory('pkm_dynamics'),
                             LaunchConfiguration('robot').perform(context),
                             LaunchConfiguration('config').perform(context),
                             LaunchConfiguration('remappings').perform(context))
    return [Node(
        package=settings.package,
        executable=settings.executable,
        name=settings.name,
        namespace=LaunchConfiguration('namespace'),
        output='screen',
        remappings=settings.remappings,
        parameters=[
            *settings.parameter_files,
            {
                'robot_description': ParameterValue(settings.robot_description,
                                                    value_type=str),
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
