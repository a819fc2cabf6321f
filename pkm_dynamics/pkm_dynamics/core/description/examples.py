"""Generated example robots (ROS-free): chains of n linearly actuated 4-bar modules (paper 000).

:func:`module_chain_urdf` writes a robot description (URDF spanning tree + ``<constraint>`` cut
joints + ``<pkm_dynamics>`` actuators, see doc/description_format.rst) of ``n`` identical parallel
modules in series, for the O(n) scaling benchmark and tests.  Each module: output link pivot at
``L`` from the cylinder pivot, rod-end pivot at ``L1`` on the link, piston frame ``Lc0`` from the
cylinder pivot at x = 0 and rod end ``Lc`` beyond it (pivot distance x + x0, x0 = Lc + Lc0); the
next module's base frame sits on the link, its plane turned by ``twist`` about the link's x axis
(so the chain is spatial for twist != 0).  The zero configuration of the tree is the assembled
pose at x = 0 of every cylinder; the prismatic joint values are the actuator coordinates x.
"""
from __future__ import annotations

import math

#: default module geometry (m) and inertial data (kg, kg m^2; about the COM, link axes)
GEOMETRY = dict(L=1.0, L1=0.4, Lc=0.7, Lc0=0.1, stroke=0.5, mount=(0.9, 0.2, 0.0), mount_yaw=0.9)
BODIES = {
    "link": (40.0, (0.5, 0.05, 0.0), (0.2, 3.0, 3.1, 0.05, 0.0, 0.0)),
    "cylinder": (15.0, (0.35, 0.0, 0.0), (0.02, 0.7, 0.7, 0.0, 0.0, 0.0)),
    "piston": (8.0, (0.3, 0.0, 0.0), (0.005, 0.4, 0.4, 0.0, 0.0, 0.0)),
}


def _r(v: float) -> str:
    return repr(float(v))


def _inertial(mass, com, I) -> str:
    ixx, iyy, izz, ixy, ixz, iyz = I
    return (f'<inertial><origin xyz="{_r(com[0])} {_r(com[1])} {_r(com[2])}"/><mass value="{_r(mass)}"/>'
            f'<inertia ixx="{_r(ixx)}" ixy="{_r(ixy)}" ixz="{_r(ixz)}" iyy="{_r(iyy)}" iyz="{_r(iyz)}" '
            f'izz="{_r(izz)}"/></inertial>')


def _angles(d: float, L: float, L1: float) -> tuple:
    """Loop angles on the branch q < 0 (paper 000 eq. 2): link q, cylinder q1, rod end q2."""
    q = -math.acos((d * d - L * L - L1 * L1) / (2 * L * L1))
    q1 = math.atan2(L1 * math.sin(q), L + L1 * math.cos(q))
    return q, q1, q - q1


def module_chain_urdf(n: int, twist: float = 0.5, name: str | None = None) -> str:
    """Robot description (str) of a chain of ``n`` parallel modules (1 <= n <= 256).

    Actuated joints ``m1_x, ..., mn_x`` (chain order), end effector link ``tool``.  The base
    ``base`` is fixed to the root ``world``; gravity acts along -z of ``world``."""
    if not 1 <= int(n) <= 256:
        raise ValueError(f"n = {n}: a generated chain has 1 to 256 modules")
    n = int(n)
    g = GEOMETRY
    L, L1, Lc, Lc0 = g["L"], g["L1"], g["Lc"], g["Lc0"]
    q, q1, q2 = _angles(Lc + Lc0, L, L1)
    out = [f'<?xml version="1.0"?>\n<robot name="{name or f"module_chain_{n}"}">\n',
           '  <link name="world"/>\n',
           '  <joint name="base_mount" type="fixed"><parent link="world"/><child link="base"/>'
           '<origin xyz="0 0 0.5" rpy="0 0 0"/></joint>\n',
           '  <link name="base"/>\n']
    cuts, acts = [], []
    base = "base"
    for k in range(1, n + 1):
        p = f"m{k}"
        if k > 1:
            mx, my, mz = g["mount"]
            out.append(f'  <joint name="{p}_mount" type="fixed"><parent link="{base}"/><child link="{p}_base"/>'
                       f'<origin xyz="{_r(mx)} {_r(my)} {_r(mz)}" rpy="{_r(twist)} 0 {_r(g["mount_yaw"])}"/></joint>\n'
                       f'  <link name="{p}_base"/>\n')
            base = f"{p}_base"
        m, c, I = BODIES["link"]
        out.append(f'  <joint name="{p}_q" type="revolute"><parent link="{base}"/><child link="{p}_link"/>'
                   f'<origin xyz="{_r(L)} 0 0" rpy="0 0 {_r(q)}"/><axis xyz="0 0 1"/>'
                   f'<limit lower="-3.2" upper="3.2" effort="0" velocity="0"/></joint>\n'
                   f'  <link name="{p}_link">{_inertial(m, c, I)}</link>\n')
        m, c, I = BODIES["cylinder"]
        out.append(f'  <joint name="{p}_q1" type="revolute"><parent link="{base}"/><child link="{p}_cylinder"/>'
                   f'<origin xyz="0 0 0" rpy="0 0 {_r(q1)}"/><axis xyz="0 0 1"/>'
                   f'<limit lower="-3.2" upper="3.2" effort="0" velocity="0"/></joint>\n'
                   f'  <link name="{p}_cylinder">{_inertial(m, c, I)}</link>\n')
        m, c, I = BODIES["piston"]
        out.append(f'  <joint name="{p}_x" type="prismatic"><parent link="{p}_cylinder"/><child link="{p}_piston"/>'
                   f'<origin xyz="{_r(Lc0)} 0 0" rpy="0 0 0"/><axis xyz="1 0 0"/>'
                   f'<limit lower="0" upper="{_r(g["stroke"])}" effort="0" velocity="0"/></joint>\n'
                   f'  <link name="{p}_piston">{_inertial(m, c, I)}</link>\n')
        cuts.append(f'  <constraint name="{p}_rod_end" type="revolute">\n'
                    f'    <parent link="{p}_piston"/><parent_origin xyz="{_r(Lc)} 0 0" rpy="0 0 0"/>'
                    f'<parent_axis xyz="0 0 1"/>\n'
                    f'    <child link="{p}_link"/><child_origin xyz="{_r(L1)} 0 0" rpy="0 0 {_r(-q2)}"/>'
                    f'<child_axis xyz="0 0 1"/>\n  </constraint>\n')
        acts.append(f'    <actuator joint="{p}_x"/>\n')
        base = f"{p}_link"
    out.append(f'  <joint name="tool_mount" type="fixed"><parent link="{base}"/><child link="tool"/>'
               f'<origin xyz="1.2 0 0" rpy="0 0 0"/></joint>\n  <link name="tool"/>\n')
    out.extend(cuts)
    out.append("  <pkm_dynamics>\n")
    out.extend(acts)
    out.append('    <end_effector link="tool"/>\n  </pkm_dynamics>\n</robot>\n')
    return "".join(out)
