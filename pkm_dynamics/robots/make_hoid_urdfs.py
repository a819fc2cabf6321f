#!/usr/bin/env python3
"""Generate the two example robots of paper 002 (higher-order inverse dynamics, SEA-PKM):

* ``gough_stewart_6ups.urdf`` -- a 6-UPS Gough-Stewart platform of the size of the torso
  module of an exoskeleton (paper 002 Sec. VI-A uses the GSP in the torso of the
  Recupera-Reha exoskeleton; its URDF is not published, so the numbers below are chosen to
  that scale, not copied): base joint circle radius 0.12 m, platform joint circle radius
  0.08 m, home height 0.22 m, joint pairs 24 deg (base) and 16 deg (platform) apart.
  Limb = U (two R joints; first axis horizontal and normal to the leg) + P (actuated,
  series-elastic) + S.  Spanning tree as paper 002 Fig. 2: the platform hangs from limb 6
  (its S joint is three R joints x, y, z through the joint centre, with massless
  intermediate links), limbs 1-5 close at the platform with spherical cut joints.  21 tree
  joints, 15 independent constraints, as the paper states.  Masses: cylinder housings
  0.30 kg, piston rods 0.12 kg (thin-walled aluminium tubes of the leg length), platform
  1.0 kg (a 0.16 m aluminium disc plate with fittings).
  SEA parameters (illustrative, of the order of a spindle drive with a spring in series):
  k = 1.0e5 N/m, reflected motor mass 10 kg.

* ``planar_3rrr.urdf`` -- the planar 3RRR with series-elastic drives of paper 002 Sec. VI-B,
  taken here with the full 3-DOF task space (vx, vy, wz) (see README_hoid.md for why).
  Base joints on a circle of radius 0.30 m (120 deg apart), proximal and distal links
  0.20 m, platform joint circle radius 0.05 m; all joint axes vertical, the robot works in
  the horizontal plane (gravity normal to it).  The first joint of each limb is actuated
  through a torsion spring: k = 100 N m/rad, reflected motor inertia 0.025 kg m^2
  (1e-5 kg m^2 rotor through a 50:1 gear).  Link masses 0.30 kg and 0.20 kg (aluminium
  bars 20 x 10 mm), platform 0.50 kg.  Limb 3 carries the platform in the tree; limbs 1
  and 2 close at the platform with revolute cut joints.

Run ``python make_hoid_urdfs.py`` in this directory: it (re)writes both files.
"""
from __future__ import annotations

import os

import numpy as np

GSP = dict(r_base=0.12, r_plat=0.08, height=0.22, half_base=np.radians(12.0),
           half_plat=np.radians(8.0), m_housing=0.30, m_rod=0.12, m_platform=1.0,
           r_platform_disc=0.08, stiffness=1.0e5, motor_inertia=10.0)
RRR = dict(r_base=0.30, l1=0.20, l2=0.20, r_plat=0.05, m1=0.30, m2=0.20, m_platform=0.50,
           stiffness=100.0, motor_inertia=0.025)


def _v(x):
    return " ".join(f"{float(c):.12g}" for c in x)


def _inertial(m, com, I):
    return (f'<inertial><origin xyz="{_v(com)}" rpy="0 0 0"/><mass value="{m:.12g}"/>'
            f'<inertia ixx="{I[0,0]:.12g}" ixy="{I[0,1]:.12g}" ixz="{I[0,2]:.12g}" '
            f'iyy="{I[1,1]:.12g}" iyz="{I[1,2]:.12g}" izz="{I[2,2]:.12g}"/></inertial>')


def _rod_inertia(m, length, radius, axis):
    """Inertia about the COM of a thin tube of the given length along the unit ``axis``."""
    axis = np.asarray(axis, dtype=float)
    I_ax = m * radius**2
    I_perp = m * (length**2 / 12.0 + radius**2 / 2.0)
    P = np.outer(axis, axis)
    return I_ax * P + I_perp * (np.eye(3) - P)


def _joint(name, typ, parent, child, xyz, axis, lim=None):
    s = (f'  <joint name="{name}" type="{typ}"><parent link="{parent}"/><child link="{child}"/>'
         f'<origin xyz="{_v(xyz)}" rpy="0 0 0"/>')
    if axis is not None:
        s += f'<axis xyz="{_v(axis)}"/>'
    if lim is not None:
        s += f'<limit lower="{lim[0]}" upper="{lim[1]}" effort="{lim[2]}" velocity="{lim[3]}"/>'
    return s + "</joint>\n"


def _platform_and_extension(m, r, cuts, actuated, p, coordinates) -> list:
    """The platform link (a disc of mass ``m``, radius ``r``), the cut joints ``cuts`` and the
    <pkm_dynamics> extension: series-elastic ``actuated`` joints (stiffness and motor inertia
    of ``p``), the platform as end effector and its task-space ``coordinates``."""
    out = ['  <link name="platform">' +
           _inertial(m, [0, 0, 0], np.diag([m * r * r / 4, m * r * r / 4, m * r * r / 2])) + '</link>\n']
    out += cuts
    out.append('  <pkm_dynamics>\n')
    for joint in actuated:
        out.append(f'    <actuator joint="{joint}"><series_elastic stiffness="{p["stiffness"]:.12g}" '
                   f'motor_inertia="{p["motor_inertia"]:.12g}"/></actuator>\n')
    out.append('    <end_effector link="platform"/>\n')
    out.append('    <platform link="platform"><origin xyz="0 0 0" rpy="0 0 0"/>'
               f'<task_space coordinates="{coordinates}"/></platform>\n')
    out.append('  </pkm_dynamics>\n</robot>\n')
    return out


def gough_stewart() -> str:
    p = GSP
    # pair the legs: leg 2k and 2k+1 start at the base pair k and end at neighbouring platform
    # joints of two different platform pairs (the classic 6-6 zig-zag)
    b_ang = []
    p_ang = []
    for k in range(3):
        c = np.radians(120.0 * k)
        b_ang += [c - p["half_base"], c + p["half_base"]]
        p_ang += [c - np.radians(60.0) + p["half_plat"], c + np.radians(60.0) - p["half_plat"]]
    h = p["height"]
    centre = np.array([0.0, 0.0, h])
    out = ['<?xml version="1.0"?>\n',
           '<!-- Generated by make_hoid_urdfs.py (see its docstring and README_hoid.md). Do not edit by hand. -->\n',
           '<robot name="gough_stewart_6ups">\n',
           '  <link name="base">' + _inertial(2.0, [0, 0, -0.01], np.diag([0.01, 0.01, 0.02])) + '</link>\n']
    cuts = []
    for leg in range(6):
        i = leg + 1
        b = p["r_base"] * np.array([np.cos(b_ang[leg]), np.sin(b_ang[leg]), 0.0])
        a = centre + p["r_plat"] * np.array([np.cos(p_ang[leg]), np.sin(p_ang[leg]), 0.0])
        L0 = np.linalg.norm(a - b)
        d = (a - b) / L0
        e1 = np.cross(d, [0.0, 0.0, 1.0])
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(d, e1)
        e2 /= np.linalg.norm(e2)
        # U joint: two R joints at b; housing; P joint along d; rod frame at the S centre a
        out.append(f'  <link name="leg{i}_cardan"/>\n')
        out.append(f'  <link name="leg{i}_housing">' +
                   _inertial(p["m_housing"], 0.3 * L0 * d, _rod_inertia(p["m_housing"], 0.6 * L0, 0.02, d))
                   + '</link>\n')
        out.append(f'  <link name="leg{i}_rod">' +
                   _inertial(p["m_rod"], -0.3 * L0 * d, _rod_inertia(p["m_rod"], 0.6 * L0, 0.012, d)) + '</link>\n')
        out.append(_joint(f"leg{i}_u1", "revolute", "base", f"leg{i}_cardan", b, e1, (-1.2, 1.2, 50, 5)))
        out.append(_joint(f"leg{i}_u2", "revolute", f"leg{i}_cardan", f"leg{i}_housing", [0, 0, 0], e2,
                          (-1.2, 1.2, 50, 5)))
        out.append(_joint(f"leg{i}_p", "prismatic", f"leg{i}_housing", f"leg{i}_rod", L0 * d, d,
                          (-0.08, 0.08, 500, 0.5)))
        if leg < 5:
            rel = a - centre
            cuts.append(f'  <constraint name="leg{i}_s" type="spherical"><parent link="leg{i}_rod"/>'
                        f'<parent_origin xyz="0 0 0"/><child link="platform"/>'
                        f'<child_origin xyz="{_v(rel)}"/></constraint>\n')
        else:
            out.append(f'  <link name="leg{i}_s1"/>\n  <link name="leg{i}_s2"/>\n  <link name="leg{i}_s3"/>\n')
            s_limit = (-1.5, 1.5, 50, 5)
            out.append(_joint(f"leg{i}_sx", "revolute", f"leg{i}_rod", f"leg{i}_s1", [0, 0, 0], [1, 0, 0], s_limit))
            out.append(_joint(f"leg{i}_sy", "revolute", f"leg{i}_s1", f"leg{i}_s2", [0, 0, 0], [0, 1, 0], s_limit))
            out.append(_joint(f"leg{i}_sz", "revolute", f"leg{i}_s2", f"leg{i}_s3", [0, 0, 0], [0, 0, 1], s_limit))
            out.append(f'  <joint name="leg{i}_to_platform" type="fixed"><parent link="leg{i}_s3"/>'
                       f'<child link="platform"/><origin xyz="{_v(centre - a)}" rpy="0 0 0"/></joint>\n')
    out += _platform_and_extension(p["m_platform"], p["r_platform_disc"], cuts,
                                   [f"leg{leg + 1}_p" for leg in range(6)], p, "wx wy wz vx vy vz")
    return "".join(out)


def planar_3rrr() -> str:
    p = RRR
    out = ['<?xml version="1.0"?>\n',
           '<!-- Generated by make_hoid_urdfs.py (see its docstring and README_hoid.md). Do not edit by hand. -->\n',
           '<robot name="planar_3rrr">\n',
           '  <link name="base">' + _inertial(5.0, [0, 0, -0.02], np.diag([0.1, 0.1, 0.2])) + '</link>\n']
    z = np.array([0.0, 0.0, 1.0])
    cuts = []
    for leg in range(3):
        i = leg + 1
        al = np.radians(90.0 + 120.0 * leg)
        u = np.array([np.cos(al), np.sin(al), 0.0])
        A = p["r_base"] * u
        Cp = p["r_plat"] * u
        dAC = np.linalg.norm(Cp - A)
        mid = 0.5 * (A + Cp)
        perp = np.cross(z, (Cp - A) / dAC)
        B = mid + perp * np.sqrt(p["l1"] ** 2 - (dAC / 2) ** 2)
        e1 = (B - A) / p["l1"]
        e2 = (Cp - B) / p["l2"]
        out.append(f'  <link name="limb{i}_proximal">' +
                   _inertial(p["m1"], 0.5 * p["l1"] * e1, _rod_inertia(p["m1"], p["l1"], 0.008, e1)) + '</link>\n')
        out.append(f'  <link name="limb{i}_distal">' +
                   _inertial(p["m2"], 0.5 * p["l2"] * e2, _rod_inertia(p["m2"], p["l2"], 0.008, e2)) + '</link>\n')
        out.append(_joint(f"limb{i}_a", "revolute", "base", f"limb{i}_proximal", A, z, (-3.14, 3.14, 20, 10)))
        out.append(_joint(f"limb{i}_b", "revolute", f"limb{i}_proximal", f"limb{i}_distal", B - A, z,
                          (-3.14, 3.14, 20, 10)))
        if leg < 2:
            cuts.append(f'  <constraint name="limb{i}_c" type="revolute"><parent link="limb{i}_distal"/>'
                        f'<parent_origin xyz="{_v(Cp - B)}"/><parent_axis xyz="0 0 1"/>'
                        f'<child link="platform"/><child_origin xyz="{_v(Cp)}"/></constraint>\n')
        else:
            out.append(f'  <link name="limb{i}_end"/>\n')
            out.append(_joint(f"limb{i}_c", "revolute", f"limb{i}_distal", f"limb{i}_end", Cp - B, z,
                              (-3.14, 3.14, 20, 10)))
            out.append(f'  <joint name="limb{i}_to_platform" type="fixed"><parent link="limb{i}_end"/>'
                       f'<child link="platform"/><origin xyz="{_v(-Cp)}" rpy="0 0 0"/></joint>\n')
    out += _platform_and_extension(p["m_platform"], 0.06, cuts,
                                   [f"limb{leg + 1}_a" for leg in range(3)], p, "vx vy wz")
    return "".join(out)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    for name, fn in (("gough_stewart_6ups.urdf", gough_stewart), ("planar_3rrr.urdf", planar_3rrr)):
        with open(os.path.join(here, name), "w", encoding="utf-8") as f:
            f.write(fn())
