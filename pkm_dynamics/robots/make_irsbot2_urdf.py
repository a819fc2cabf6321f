#!/usr/bin/env python3
"""Generate ``irsbot2.urdf``: the 2-DOF IRSBot-2 of paper 001 (A. Mueller, constraint
embedding for PKM with hybrid limbs), Sec. 6, geometry of eq. 47, bodies as the geometric
primitives of Sec. 6.4.2 in aluminium (rho = 2700 kg/m^3).

Run ``python make_irsbot2_urdf.py > irsbot2.urdf`` and
``python make_irsbot2_urdf.py --paths > irsbot2_paths.urdf`` (see ``PAPER_PATH_LENGTHS``).  The description is the
URDF of a spanning tree of the whole PKM plus the loop closures and the ``<pkm_dynamics>`` block:

* limb 1 (right, x > 0) and limb 2 (limb 1 turned by pi about the vertical z axis, so both
  limbs are "structurally identical" with the same joint sign conventions);
* per limb: R joint 1 (actuated, base-arm), R joint 2 (arm-elbow plate), R joint 3
  (base-parallel rod), U joints 4 and 5 (elbow-distal rods, two R joints each: first axis
  fixed in the elbow, second axis = the rod's x axis), U joint 6 (distal rod 4-platform);
  cut joints: R joint 7 (parallel rod-elbow, closes the planar proximal parallelogram) and
  U joint 8 (distal rod 5-platform, closes the spatial 4U distal loop) -- Fig. 2c;
* the platform hangs from limb 1 in the tree; limb 2's U joints 6 and 8 are both cut joints
  (the whole-PKM tree of Fig. 3 has 13 tree joints... here 18 1-DOF joints, since U joints
  are two R joints, and 2 R + 3 U cut joints = 22 constraint rows, 7 of them redundant).

Corrections to the printed text of paper 001 (typos that contradict its own figures and
the other equations): y_{4} and y_{5} of eq. 48 are swapped (body 4 runs from (x, -d2) to the
platform point (p1, -p2), as r_{4,0}, R_{4,0} and tan(beta) = (d2-p2)/u require); the third
component of e_{4,2} and e_{5,2} is -sin(psi0) (the rods' x axes; the printed +sin(psi0) is not
perpendicular to the rods); r_{6,0} uses c3 + d3 (as y_6 does), not c3 + d1.

Masses from the primitives (eq. 47 lengths; Sec. 6.4.2's "L1 = 1/2 m", "L2 = 3/4 m"
contradict eq. 47 and the paper's own masses, which follow from L1 = 1/4 m, L2 = 1/2 m):
m1 = rho L1 (L1/6)^2 = 1.171875, m2 = rho 2(c1+d1) 2 d2 (c3+d3) = 8.11899,
m4 = m5 = rho pi (L2/30)^2 L2 = 1.178097, m6 = rho 4p1 3p2 p2/4 = 1.977539 kg.
Body 3 (the parallel rod) would weigh rho L1 (L1/10)^2 = 0.421875 kg; the paper states
m3 = 21.1875 kg, which does not follow from its description.  The paper's mass is used, with
the inertia of the described homogeneous beam (length L1, square side L1/10) scaled to it.
"""
from __future__ import annotations

import sys

import numpy as np

RHO = 2700.0                        # aluminium, kg/m^3
PAPER_M3 = 21.1875                  # kg, paper 001 Sec. 6.4.2 (see module docstring)


def parameters(a: float = 1 / 8, b: float = 1 / 12, L1: float = 1 / 4, L2: float = 1 / 2) -> dict:
    """Geometric parameters of eq. 47 and the derived quantities of eq. 46 (SI units)."""
    alpha, phi0 = np.pi / 6, np.pi / 4
    b1, b3 = b * np.cos(alpha), b * np.sin(alpha)
    c1, c3 = b1 / 2, b3
    d1, d2, d3 = b1 / 2, a, c3
    p1, p2, p3 = a / 2, d2 / 2, 0.0
    u = a + c1 + d1 - p1 + L1 * np.sin(phi0)
    beta = np.arctan2(d2 - p2, u)
    sin_psi0 = np.hypot(d2 - p2, u) / L2
    psi0 = np.arcsin(sin_psi0)
    h0 = -c3 - d3 - p3 - L1 * np.cos(phi0) - L2 * np.cos(psi0)
    return dict(a=a, b=b, alpha=alpha, phi0=phi0, b1=b1, b3=b3, c1=c1, c3=c3, d1=d1, d2=d2,
                d3=d3, L1=L1, L2=L2, p1=p1, p2=p2, p3=p3, u=u, beta=beta, psi0=psi0, h0=h0)


def primitive_masses(P: dict | None = None) -> dict:
    """Masses of the geometric primitives of Sec. 6.4.2 with the lengths of eq. 47."""
    P = parameters() if P is None else P
    L1, L2 = P["L1"], P["L2"]
    return {
        "m1": RHO * L1 * (L1 / 6) ** 2,
        "m2": RHO * 2 * (P["c1"] + P["d1"]) * 2 * P["d2"] * (P["c3"] + P["d3"]),
        "m3_primitive": RHO * L1 * (L1 / 10) ** 2,
        "m4": RHO * np.pi * (L2 / 30) ** 2 * L2,
        "m5": RHO * np.pi * (L2 / 30) ** 2 * L2,
        "m6": RHO * 4 * P["p1"] * 3 * P["p2"] * P["p2"] / 4,
    }


def _Ry(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _Rz(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _rpy(R):
    """URDF roll-pitch-yaw of R = Rz(y) Ry(p) Rx(r)."""
    p = np.arcsin(np.clip(-R[2, 0], -1.0, 1.0))
    if abs(np.cos(p)) > 1e-9:
        r = np.arctan2(R[2, 1], R[2, 2])
        y = np.arctan2(R[1, 0], R[0, 0])
    else:  # gimbal lock: put everything in yaw
        r = 0.0
        y = np.arctan2(-R[0, 1], R[1, 1])
    return np.array([r, p, y])


def _f(v):
    return " ".join(f"{x:.17g}" if abs(x) > 1e-15 else "0" for x in np.asarray(v, dtype=float))


def _box(m, sx, sy, sz):
    return np.diag([sy**2 + sz**2, sx**2 + sz**2, sx**2 + sy**2]) * m / 12.0


def _cylinder_z(m, r, L):
    return np.diag([m * (3 * r**2 + L**2) / 12, m * (3 * r**2 + L**2) / 12, m * r**2 / 2])


def _link(name, mass=None, com=(0, 0, 0), inertia=None):
    if mass is None:
        return f'  <link name="{name}"/>\n'
    I = inertia
    return (f'  <link name="{name}">\n    <inertial>\n      <origin xyz="{_f(com)}" rpy="0 0 0"/>\n'
            f'      <mass value="{mass:.17g}"/>\n'
            f'      <inertia ixx="{I[0, 0]:.17g}" ixy="0" ixz="0" iyy="{I[1, 1]:.17g}" iyz="0" '
            f'izz="{I[2, 2]:.17g}"/>\n    </inertial>\n  </link>\n')


def _joint(name, parent, child, xyz, R, axis, typ="revolute"):
    lim = '    <limit lower="-3.14159" upper="3.14159" effort="1000" velocity="100"/>\n'
    return (f'  <joint name="{name}" type="{typ}">\n    <parent link="{parent}"/>\n'
            f'    <child link="{child}"/>\n    <origin xyz="{_f(xyz)}" rpy="{_f(_rpy(R))}"/>\n'
            f'    <axis xyz="{_f(axis)}"/>\n{lim}  </joint>\n')


def _cut(name, typ, parent, p_xyz, p_R, p_axis, child, c_xyz, c_R, c_axis):
    return (f'  <constraint name="{name}" type="{typ}">\n'
            f'    <parent link="{parent}"/>\n'
            f'    <parent_origin xyz="{_f(p_xyz)}" rpy="{_f(_rpy(p_R))}"/>\n'
            f'    <parent_axis xyz="{_f(p_axis)}"/>\n'
            f'    <child link="{child}"/>\n'
            f'    <child_origin xyz="{_f(c_xyz)}" rpy="{_f(_rpy(c_R))}"/>\n'
            f'    <child_axis xyz="{_f(c_axis)}"/>\n  </constraint>\n')


def irsbot2_urdf(name: str = "irsbot2", masses: dict | None = None, **lengths) -> str:
    """The robot description text (URDF of the spanning tree + extension).

    ``lengths``: optional ``a``, ``b``, ``L1``, ``L2`` overriding eq. 47; ``masses``: body
    masses ``m1, m2, m4, m5, m6`` to use instead of rho times the primitives' volumes (the
    inertias are then those of the primitives scaled to these masses)."""
    P = parameters(**lengths)
    m = primitive_masses(P)
    if masses is not None:
        m.update(masses)
    a, b1, b3, c1, c3, d1, d2, d3 = (P[k] for k in ("a", "b1", "b3", "c1", "c3", "d1", "d2", "d3"))
    L1, L2, p1, p2, p3, phi0, beta, psi0, h0 = (P[k] for k in ("L1", "L2", "p1", "p2", "p3", "phi0",
                                                               "beta", "psi0", "h0"))
    I3 = np.eye(3)
    # limb 1 in the base frame (z up, platform below the base), reference configuration
    y1 = np.array([a, 0, 0])
    y2 = y1 + L1 * np.array([np.sin(phi0), 0, -np.cos(phi0)])
    y3 = np.array([a + b1, 0, b3])
    y4 = y2 + np.array([c1 + d1, -d2, -(c3 + d3)])
    y5 = y2 + np.array([c1 + d1, +d2, -(c3 + d3)])
    y6 = np.array([p1, -p2, h0 + p3])
    y8 = np.array([p1, +p2, h0 + p3])
    R1 = R3 = _Ry(-phi0)
    R4 = _Rz(-beta) @ _Ry(psi0)
    R5 = _Rz(beta) @ _Ry(psi0)
    assert np.allclose(y4 + R4 @ [0, 0, -L2], y6) and np.allclose(y5 + R5 @ [0, 0, -L2], y8)
    e41 = np.array([np.sin(beta), np.cos(beta), 0.0])      # first axis of U 4 and second of U 6
    e51 = np.array([-np.sin(beta), np.cos(beta), 0.0])
    m3 = PAPER_M3

    out = ['<?xml version="1.0"?>\n',
           '<!-- IRSBot-2 of A. Mueller, "A constraint embedding approach for dynamics modeling of\n'
           '     parallel kinematic manipulators with hybrid limbs", Sec. 6 (eq. 47 geometry).\n'
           '     Generated by make_irsbot2_urdf.py; see robots/README.md. -->\n',
           f'<robot name="{name}">\n', '  <link name="base_link"/>\n']
    platform_plate = _box(m["m6"], 4 * p1, 3 * p2, p2 / 4)
    # the platform link frame sits on U joint 6 of limb 1 (a URDF joint frame lies on its axis),
    # axes parallel to the base frame; its centre frame is the fixed child link platform_center
    out.append(_link("platform", m["m6"], [-p1, p2, -p3], platform_plate))
    out.append(_link("platform_center"))
    out.append('  <joint name="platform_center_joint" type="fixed">\n    <parent link="platform"/>\n'
               '    <child link="platform_center"/>\n'
               f'    <origin xyz="{_f([-p1, p2, -p3])}" rpy="0 0 0"/>\n  </joint>\n')
    cuts = []
    for l, yaw in ((1, 0.0), (2, np.pi)):
        T = _Rz(yaw)
        n = f"l{l}_"
        out.append(_link(n + "arm", m["m1"], [0, 0, -L1 / 2], _box(m["m1"], L1 / 6, L1 / 6, L1)))
        out.append(_link(n + "elbow", m["m2"], [c1, 0, -(c3 + d3) / 2],
                         _box(m["m2"], 2 * (c1 + d1), 2 * d2, c3 + d3)))
        # body 3: the paper's mass, inertia of the described beam scaled to that mass
        out.append(_link(n + "rod", m3, [0, 0, -L1 / 2], _box(m3, L1 / 10, L1 / 10, L1)))
        for k in ("4", "5"):
            out.append(_link(n + f"u{k}_cross"))
            out.append(_link(n + f"rod{k}", m[f"m{k}"], [0, 0, -L2 / 2],
                             _cylinder_z(m[f"m{k}"], L2 / 30, L2)))
        out.append(_joint(n + "j1", "base_link", n + "arm", T @ y1, T @ R1, [0, 1, 0]))
        out.append(_joint(n + "j2", n + "arm", n + "elbow", R1.T @ (y2 - y1), R1.T, [0, 1, 0]))
        out.append(_joint(n + "j3", "base_link", n + "rod", T @ y3, T @ R3, [0, 1, 0]))
        for k, yk, Rk in (("4", y4, R4), ("5", y5, R5)):
            out.append(_joint(n + f"j{k}_1", n + "elbow", n + f"u{k}_cross", yk - y2, Rk,
                              Rk.T @ (e41 if k == "4" else e51)))
            out.append(_joint(n + f"j{k}_2", n + f"u{k}_cross", n + f"rod{k}", [0, 0, 0], I3, [1, 0, 0]))
        # R joint 7: parallel rod - elbow, cut frames parallel to the limb frame T
        cuts.append(_cut(n + "j7", "revolute", n + "rod", [0, 0, -L1], R3.T, [0, 1, 0],
                         n + "elbow", [b1, 0, b3], I3, [0, 1, 0]))
        # U joints 6 and 8 at the platform: first axis = rod x axis, second fixed in the platform
        p_ref = y6                                    # platform link origin (base frame)
        if l == 1:
            out.append(_link(n + "u6_cross"))
            out.append(_joint(n + "j6_1", n + "rod4", n + "u6_cross", [0, 0, -L2], I3, [1, 0, 0]))
            out.append(_joint(n + "j6_2", n + "u6_cross", "platform", [0, 0, 0], R4.T, e41))
        else:
            cuts.append(_cut(n + "j6", "universal", n + "rod4", [0, 0, -L2], I3, [1, 0, 0],
                             "platform", T @ y6 - p_ref, T @ R4, [0, 1, 0]))
        cuts.append(_cut(n + "j8", "universal", n + "rod5", [0, 0, -L2], I3, [1, 0, 0],
                         "platform", T @ y8 - p_ref, T @ R5, [0, 1, 0]))
    out.extend(cuts)
    out.append('  <pkm_dynamics>\n    <actuator joint="l1_j1"/>\n    <actuator joint="l2_j1"/>\n'
               '    <platform link="platform_center">\n      <origin xyz="0 0 0" rpy="0 0 0"/>\n'
               '      <task_space coordinates="vx vz"/>\n    </platform>\n  </pkm_dynamics>\n')
    out.append('</robot>\n')
    return "".join(out)


#: geometry behind the paper's numerical results (Sec. 6.4): the printed reference height
#: r_{6,0} = -(4 + 6 sqrt2 + sqrt6 sqrt(37 - 6 sqrt2 - 2 sqrt3 - 4 sqrt6))/24 m is exactly eq. 46
#: with these lengths (eq. 47 with a, b, L1 doubled and L2 = 3/4 m), and only with them are
#: the paper's paths inside the workspace (with eq. 47 the limbs reach 0.35 m up, 0.17 m down).
PAPER_PATH_LENGTHS = dict(a=1 / 4, b=1 / 6, L1=1 / 2, L2=3 / 4)


def irsbot2_paths_urdf() -> str:
    """IRSBot-2 with :data:`PAPER_PATH_LENGTHS` and the paper's masses m1..m6 (eq. 47
    primitives), for the trajectories of Sec. 6.4."""
    m = primitive_masses()
    return irsbot2_urdf("irsbot2_paths", masses={k: m[k] for k in ("m1", "m2", "m4", "m5", "m6")},
                        **PAPER_PATH_LENGTHS)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--paths":
        sys.stdout.write(irsbot2_paths_urdf())
    else:
        sys.stdout.write(irsbot2_urdf())
