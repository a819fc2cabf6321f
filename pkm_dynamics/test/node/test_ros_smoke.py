"""Smoke test of the ROS side: the installed node answers GetModelInfo over real DDS
(loopback only) from another process, survives a bad description, and exits on SIGINT."""
from pathlib import Path
import sys
import xml.etree.ElementTree as ET

from pkm_dynamics.testing import call_service

SERVICE = '/pkm_dynamics/get_model_info'

# A serial chain with every joint kind the summary must tell apart.
CHAIN_URDF = """<?xml version="1.0"?>
<robot name="smoke_chain">
  <link name="base"><inertial><mass value="10.0"/>
    <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <link name="slider"><inertial><mass value="2.5"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.3 0 0"/><mass value="1.25"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.05"/></inertial></link>
  <link name="wrist"><inertial><mass value="0.125"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <link name="flange"/>
  <joint name="lift" type="prismatic"><parent link="base"/><child link="slider"/>
    <axis xyz="0 0 1"/><limit lower="0" upper="1" effort="500" velocity="0.5"/></joint>
  <joint name="swing" type="revolute"><parent link="slider"/><child link="arm"/>
    <origin xyz="0 0 0.2"/><axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="1.5" effort="100" velocity="1"/></joint>
  <joint name="spin" type="continuous"><parent link="arm"/><child link="wrist"/>
    <origin xyz="0.6 0 0"/><axis xyz="1 0 0"/></joint>
  <joint name="flange_mount" type="fixed"><parent link="wrist"/><child link="flange"/>
    <origin xyz="0.05 0 0"/></joint>
  <pkm_dynamics>
    <actuator joint="lift"/><actuator joint="swing"/><actuator joint="spin"/>
    <end_effector link="flange"/>
  </pkm_dynamics>
</robot>
"""


def expected_summary(urdf_text):
    """Robot name, non-fixed joints, link count and total mass, read with plain XML (the
    example's actuators are all of its moving joints)."""
    robot = ET.fromstring(urdf_text)
    joints = [joint.get('name') for joint in robot.findall('joint')
              if joint.get('type') != 'fixed']
    mass = sum(float(m.get('value')) for m in robot.findall('link/inertial/mass'))
    return robot.get('name'), joints, len(robot.findall('link')), mass


def installed_config():
    return Path(sys.prefix) / 'share' / 'pkm_dynamics' / 'config' / 'pkm_dynamics.yaml'


def test_get_model_info_reports_the_description(start_node, ros_node):
    from pkm_dynamics_interfaces.srv import GetModelInfo

    node = start_node(params={'robot_description': CHAIN_URDF},
                      params_files=[installed_config()])
    response = call_service(ros_node, GetModelInfo, SERVICE)

    name, joints, num_links, mass = expected_summary(CHAIN_URDF)
    assert response.success, response.message
    assert response.robot_name == name
    assert list(response.tree_joints) == joints == ['lift', 'swing', 'spin']
    assert list(response.actuated_joints) == joints
    assert response.num_bodies == num_links
    assert abs(response.total_mass - mass) <= 1e-12 * mass
    assert node.running(), node.log()
    assert node.stop() == 0, node.log()
    assert 'Traceback' not in node.log(), node.log()     # both executors stop quietly


def test_bad_description_is_reported_and_node_keeps_serving(start_node, ros_node):
    from pkm_dynamics_interfaces.srv import GetModelInfo

    node = start_node(params={'robot_description': '<robot name="broken"><link name="a">'})
    for _ in range(2):
        response = call_service(ros_node, GetModelInfo, SERVICE)
        assert not response.success
        assert 'not well-formed XML' in response.message
        assert list(response.tree_joints) == []
    assert node.running(), node.log()
    assert node.stop() == 0, node.log()


def test_link_with_two_parents_is_rejected(start_node, ros_node):
    from pkm_dynamics_interfaces.srv import GetModelInfo

    looped = CHAIN_URDF.replace('</robot>', """  <joint name="closure" type="revolute">
    <parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>""")
    node = start_node(params={'robot_description': looped})
    response = call_service(ros_node, GetModelInfo, SERVICE)
    assert not response.success
    assert "'arm'" in response.message and 'closure' in response.message
    assert node.stop() == 0, node.log()
