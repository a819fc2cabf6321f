"""The independent path of the payload tests (core and node): the robot's URDF text with the load
as an extra link fixed to the end effector / platform link (test/core/description/test_core_payload.py,
test/node/test_ros_payload.py)."""
import xml.etree.ElementTree as ET

from pkm_dynamics.core.spatial.se3 import rpy_matrix

LOAD_RPY = (0.3, -0.2, 0.5)


def with_load_link(text, link, payload, rpy=LOAD_RPY):
    """``text`` with a link carrying ``payload`` fixed to ``link``: the joint origin at the
    centre of mass, rotated by ``rpy``; the inertia given in the rotated axes."""
    root = ET.fromstring(text)
    R = rpy_matrix(rpy)
    I = R.T @ payload.inertia @ R
    load = ET.SubElement(root, "link", name="test_load")
    inertial = ET.SubElement(load, "inertial")
    ET.SubElement(inertial, "mass", value=repr(float(payload.mass)))
    ET.SubElement(inertial, "inertia", **{k: repr(float(I[i, j])) for k, (i, j) in (
        ("ixx", (0, 0)), ("ixy", (0, 1)), ("ixz", (0, 2)), ("iyy", (1, 1)), ("iyz", (1, 2)),
        ("izz", (2, 2)))})
    joint = ET.SubElement(root, "joint", name="test_load_joint", type="fixed")
    ET.SubElement(joint, "parent", link=link)
    ET.SubElement(joint, "child", link="test_load")
    ET.SubElement(joint, "origin", xyz=" ".join(repr(float(c)) for c in payload.com),
                  rpy=" ".join(map(repr, rpy)))
    return ET.tostring(root, encoding="unicode")
