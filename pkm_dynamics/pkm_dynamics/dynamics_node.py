"""The pkm_dynamics ROS 2 node.

For now it loads the `robot_description` parameter and serves `~/get_model_info`
(pkm_dynamics_interfaces/srv/GetModelInfo). The dynamics services will be added on top of
the core (`pkm_dynamics.core`); this module only converts between ROS and plain data.
"""
from dataclasses import dataclass, field
import xml.etree.ElementTree as ET

from pkm_dynamics_interfaces.srv import GetModelInfo
from rcl_interfaces.msg import ParameterDescriptor, ParameterType
import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import qos_profile_services_default
from urdf_parser_py.urdf import URDF


@dataclass
class DescriptionSummary:
    """What GetModelInfo reports about a robot description."""

    robot_name: str
    tree_joints: list = field(default_factory=list)
    actuated_joints: list = field(default_factory=list)
    num_bodies: int = 0
    total_mass: float = 0.0


def summarize_description(text):
    """Summarize a URDF string: robot name, non-fixed joints, number of links, total mass.

    Raises ValueError with a message a user can act on when the text is not a usable URDF.
    Until the description extension (loops, actuation) is read, every non-fixed joint of
    the tree is reported as actuated.
    """
    if not text.strip():
        raise ValueError('robot_description is empty: pass the URDF text as the '
                         'robot_description parameter')
    try:
        ET.fromstring(text)
    except ET.ParseError as exc:
        raise ValueError(f'robot_description is not well-formed XML: {exc}') from exc
    try:
        robot = URDF.from_xml_string(text)
    except Exception as exc:  # urdf_parser_py raises assorted types
        raise ValueError(f'robot_description is not a valid URDF: {exc}') from exc
    parents = {}
    for joint in robot.joints:
        if joint.child in parents:
            raise ValueError(
                f'link "{joint.child}" is the child of joints "{parents[joint.child]}" and '
                f'"{joint.name}": a closed loop must be cut explicitly, the URDF must be a tree')
        parents[joint.child] = joint.name
    moving = [joint.name for joint in robot.joints if joint.type != 'fixed']
    mass = sum(link.inertial.mass for link in robot.links
               if link.inertial is not None and link.inertial.mass is not None)
    return DescriptionSummary(robot_name=robot.name or '', tree_joints=moving,
                              actuated_joints=list(moving), num_bodies=len(robot.links),
                              total_mass=float(mass))


class DynamicsNode(Node):
    """Serves the dynamics of the robot given by `robot_description`."""

    def __init__(self, **kwargs):
        super().__init__('pkm_dynamics', **kwargs)
        self.declare_parameter('robot_description', '', ParameterDescriptor(
            type=ParameterType.PARAMETER_STRING,
            description='URDF of the robot (spanning tree plus pkm_dynamics extension)',
            read_only=True))
        self._summary = None
        self._error = ''
        self._load(self.get_parameter('robot_description').value)
        self._info_service = self.create_service(
            GetModelInfo, '~/get_model_info', self._on_get_model_info,
            qos_profile=qos_profile_services_default)

    def _load(self, text):
        try:
            self._summary = summarize_description(text)
        except ValueError as exc:
            self._summary = None
            self._error = str(exc)
            self.get_logger().error(f'no model loaded: {exc}')
            return
        self.get_logger().info(
            f'loaded robot "{self._summary.robot_name}": {len(self._summary.tree_joints)} '
            f'joints, {self._summary.num_bodies} links, {self._summary.total_mass:.6g} kg')

    def _on_get_model_info(self, request, response):
        summary = self._summary
        if summary is None:
            response.success = False
            response.message = self._error
            return response
        response.success = True
        response.message = 'model loaded'
        response.robot_name = summary.robot_name
        response.tree_joints = list(summary.tree_joints)
        response.actuated_joints = list(summary.actuated_joints)
        response.num_bodies = summary.num_bodies
        response.total_mass = summary.total_mass
        return response


def main(args=None):
    try:
        with rclpy.init(args=args):
            node = DynamicsNode()
            rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


if __name__ == '__main__':
    main()
