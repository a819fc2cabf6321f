"""A test robot for the re-selection of a loop's coordinates (paper 001 Remarks 2-3): the
planar 3RRR of ``robots/planar_3rrr.urdf`` whose first limb's passive elbow ``limb1_b`` is
replaced by a passive 4-bar (crank ``limb1_b1`` and rocker ``limb1_b3`` on the proximal link,
the distal link as coupler on ``limb1_b2``, closed by the revolute cut joint ``limb1_b4``).

The limb keeps three DOF (the actuator, the 4-bar, the platform joint); the 4-bar's coordinates
chosen at the zero configuration become singular where its crank and coupler align (a dead
point of the rocker as input), which the platform's motion reaches, while the loop's Jacobian
``G`` keeps full rank there."""
import os

ROBOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "robots")
#: the elbow of limb 1 in planar_3rrr.urdf (in the proximal link's frame)
ELBOW = (0.15612494996, -0.125)
#: the 4-bar on the proximal link, relative to the elbow: crank pivot, coupler point, rocker pivot (m)
CRANK_PIVOT = (-0.04, 0.0)
COUPLER_POINT = (0.02, 0.06)
ROCKER_PIVOT = (0.03, 0.03)

_INERTIAL = ('<inertial><origin xyz="0 0 0" rpy="0 0 0"/><mass value="0.05"/><inertia ixx="1e-5" '
             'ixy="0" ixz="0" iyy="1e-5" iyz="0" izz="2e-5"/></inertial>')
_LIMIT = '<limit lower="-3.14" upper="3.14" effort="20" velocity="10"/>'


def _xyz(p):
    return f"{p[0]:.12g} {p[1]:.12g} 0"


def fourbar_3rrr_urdf() -> str:
    """The URDF text of the test robot (name ``planar_3rrr_fourbar``)."""
    with open(os.path.join(ROBOTS, "planar_3rrr.urdf"), encoding="utf-8") as f:
        text = f.read()
    old = ('<joint name="limb1_b" type="revolute"><parent link="limb1_proximal"/><child link="limb1_distal"/>'
           '<origin xyz="0.15612494996 -0.125 0" rpy="0 0 0"/><axis xyz="0 0 1"/>' + _LIMIT + '</joint>')
    assert old in text
    ex, ey = ELBOW
    p1 = (ex + CRANK_PIVOT[0], ey + CRANK_PIVOT[1])
    p3 = (ex + ROCKER_PIVOT[0], ey + ROCKER_PIVOT[1])
    c = (ex + COUPLER_POINT[0], ey + COUPLER_POINT[1])
    new = (f'<link name="limb1_crank">{_INERTIAL}</link>\n  <link name="limb1_rocker">{_INERTIAL}</link>\n'
           f'  <joint name="limb1_b1" type="revolute"><parent link="limb1_proximal"/><child link="limb1_crank"/>'
           f'<origin xyz="{_xyz(p1)}" rpy="0 0 0"/><axis xyz="0 0 1"/>{_LIMIT}</joint>\n'
           f'  <joint name="limb1_b2" type="revolute"><parent link="limb1_crank"/><child link="limb1_distal"/>'
           f'<origin xyz="{_xyz((-CRANK_PIVOT[0], -CRANK_PIVOT[1]))}" rpy="0 0 0"/>'
           f'<axis xyz="0 0 1"/>{_LIMIT}</joint>\n'
           f'  <joint name="limb1_b3" type="revolute"><parent link="limb1_proximal"/><child link="limb1_rocker"/>'
           f'<origin xyz="{_xyz(p3)}" rpy="0 0 0"/><axis xyz="0 0 1"/>{_LIMIT}</joint>\n'
           f'  <constraint name="limb1_b4" type="revolute"><parent link="limb1_rocker"/>'
           f'<parent_origin xyz="{_xyz((c[0] - p3[0], c[1] - p3[1]))}"/><parent_axis xyz="0 0 1"/>'
           f'<child link="limb1_distal"/><child_origin xyz="{_xyz(COUPLER_POINT)}"/></constraint>')
    return text.replace(old, new).replace('<robot name="planar_3rrr">', '<robot name="planar_3rrr_fourbar">')
