#!/usr/bin/env python3
"""Generate the two HIAB XS 031 example robots from the crane data (reproducible).

    python3 pkm_dynamics/robots/make_hiab_urdfs.py [path/to/hiab031_model.json]

(default: the copy in ``hiab_xs031/`` beside this script, with its BSD-3 licence).

writes ``linear_4bar_1dof.urdf``, ``heavy_duty_4dof.urdf`` and ``grapple_crane.urdf`` (the 4-DoF
crane with a rotator and a grapple on two passive swing axes, :func:`grapple_crane`) next to this
script, each with
the ``<hydraulics>`` of its cylinders from ``hiab_xs031/hydraulics.json`` (supply, return,
bulk modulus, cylinder bore / rod / stroke / dead volumes, valve nominal flow and spool data).  Every
number comes from ``hiab031_model.json`` (``geometry`` and ``bodies.cad_corrected``); the
recipe is the ``kinematics`` list of that file; the cylinders' friction curves (``<friction>``)
and the loop pivots' damping (``<dynamics damping>``) come from ``hydraulics.json`` beside it.
See ``README.md`` in this directory.

Zero configuration of the URDF tree: every actuator at x = 0 (cylinders fully retracted,
pivot-to-pivot length = x0 = 0.83 m; extension at x3 = 0, slew at 0).  The passive joint
origins carry the loop angles of that assembled pose, so the tree's joint values of the
passive joints are the loop angles *minus* their x = 0 values, while the prismatic joint
values are the actuator coordinates x exactly.
"""
from __future__ import annotations

import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_JSON = os.path.join(HERE, "hiab_xs031", "hiab031_model.json")
#: the crane's hydraulic drive (cylinders, valves, supply, oil; cylinder friction curves, joint
#: damping), same authors (BSD-3)
HYDRAULICS_JSON = os.path.join(HERE, "hiab_xs031", "hydraulics.json")
#: smoothing velocity of the cylinders' Coulomb friction (m/s): the data's curves pass zero
#: velocity through a presliding (bristle) state that this rigid model replaces by tanh(v / v_eps)
CYLINDER_SMOOTHING_VELOCITY = 0.01
#: the data's cylinder names -> the URDF's actuated joints
CYLINDER_JOINTS = {"lift": "lift", "tilt": "tilt", "extension": "extension"}


def _f(v: float) -> str:
    return repr(float(v))


def _vec(v) -> str:
    return " ".join(_f(a) for a in v)


def rpy_from_matrix(R) -> tuple:
    """URDF roll-pitch-yaw of ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (|pitch| < pi/2)."""
    R = np.asarray(R, dtype=float)
    # orthonormalise the transcribed matrix (given to ~1e-14) before extracting angles
    U, _, Vt = np.linalg.svd(R)
    R = U @ Vt
    pitch = math.asin(-R[2, 0])
    roll = math.atan2(R[2, 1], R[2, 2])
    yaw = math.atan2(R[1, 0], R[0, 0])
    return roll, pitch, yaw


def loop_angles(d: float, La: float, Lb: float) -> tuple:
    """Recipe of the data: ``q = -acos((d^2 - La^2 - Lb^2) / (2 La Lb))`` (branch q < 0),
    ``q_cyl = atan2(Lb sin q, La + Lb cos q)``, ``q_rel = q - q_cyl``."""
    q = -math.acos(max(-1.0, min(1.0, (d * d - La * La - Lb * Lb) / (2.0 * La * Lb))))
    qc = math.atan2(Lb * math.sin(q), La + Lb * math.cos(q))
    return q, qc, q - qc


def _inertial(body: dict) -> str:
    I = body["inertia_about_com_in_body_frame_kgm2"]
    return (f'    <inertial>\n      <origin xyz="{_vec(body["com_in_body_frame_m"])}" rpy="0 0 0"/>\n'
            f'      <mass value="{_f(body["mass_kg"])}"/>\n'
            f'      <inertia ixx="{_f(I[0][0])}" ixy="{_f(I[0][1])}" ixz="{_f(I[0][2])}" '
            f'iyy="{_f(I[1][1])}" iyz="{_f(I[1][2])}" izz="{_f(I[2][2])}"/>\n    </inertial>\n')


def _comment(text: str) -> str:
    """An XML comment line. The text avoids ': ', "'" and ' #': the whole URDF must stay one
    valid YAML scalar for the ROS command line (`-p robot_description:="$(cat ...)"`,
    `ros2 param set`, `ros2 topic pub "{data: '...'}"`)."""
    for bad in (": ", "'", " #", "--"):
        if bad in text:
            raise ValueError(f"comment {text!r} contains {bad!r}")
    return f"  <!-- {text} -->\n" if text else ""


def _link(name: str, body: dict | None = None, comment: str = "") -> str:
    c = _comment(comment)
    if body is None:
        return f'{c}  <link name="{name}"/>\n'
    return f'{c}  <link name="{name}">\n{_inertial(body)}  </link>\n'


def _joint(name, jtype, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=None, limit=None, comment="",
           damping=None):
    c = _comment(comment)
    s = (f'{c}  <joint name="{name}" type="{jtype}">\n    <parent link="{parent}"/>\n    <child link="{child}"/>\n'
         f'    <origin xyz="{_vec(xyz)}" rpy="{_vec(rpy)}"/>\n')
    if axis is not None:
        s += f'    <axis xyz="{_vec(axis)}"/>\n'
    if damping is not None:
        s += f'    <dynamics damping="{_f(damping)}"/>\n'
    if limit is not None:
        # the data gives no effort or velocity limits: 0 = unspecified
        s += f'    <limit lower="{_f(limit[0])}" upper="{_f(limit[1])}" effort="0" velocity="0"/>\n'
    return s + "  </joint>\n"


def _loop(prefix, actuator, base, link, cyl, piston, La, Lb, lc, lc0, x0, stroke, bodies, link_body, damping=None):
    """URDF text of one cylinder loop (tree part) and its <constraint> (cut at the rod end)."""
    q_ref, qc_ref, qr_ref = loop_angles(x0, La, Lb)
    # tree values of the passive joints over the stroke (for their URDF limits)
    # (the lift loop straightens at x = L + L1 - x0 = 0.553 m, before the 0.59 m stroke ends)
    reach = min(stroke, La + Lb - x0)
    qs = np.array([loop_angles(x0 + s, La, Lb) for s in np.linspace(0.0, reach, 2001)])
    lim_link = (float(qs[:, 0].min() - q_ref) - 1e-9, float(qs[:, 0].max() - q_ref) + 1e-9)
    lim_cyl = (float(qs[:, 1].min() - qc_ref) - 1e-9, float(qs[:, 1].max() - qc_ref) + 1e-9)
    t = ""
    t += _joint(f"{prefix}_link_joint", "revolute", base, link, xyz=(La, 0, 0), rpy=(0, 0, q_ref), axis=(0, 0, 1),
                limit=lim_link, comment=f"{prefix} loop, output link pivot (passive q; origin angle = q at x = 0)",
                damping=damping)
    t += _link(link, bodies[link_body], f"data body {link_body}")
    t += _joint(f"{prefix}_cylinder_joint", "revolute", base, cyl, rpy=(0, 0, qc_ref), axis=(0, 0, 1), limit=lim_cyl,
                comment=f"{prefix} loop, cylinder pivot (passive q1; origin angle = q1 at x = 0)", damping=damping)
    t += _link(cyl, bodies[cyl], f"data body {cyl} (cylinder barrel)")
    t += _joint(actuator, "prismatic", cyl, piston, xyz=(lc0, 0, 0), axis=(1, 0, 0), limit=(0.0, stroke),
                comment=f"{prefix} cylinder, value = pivot-to-pivot length - {x0} m")
    t += _link(piston, bodies[piston], f"data body {piston} (piston and rod)")
    cut = (_comment(f"{prefix} loop closure, revolute cut joint at the rod end (passive q2)") +
           f'  <constraint name="{prefix}_rod_end" type="revolute">\n'
           f'    <parent link="{piston}"/>\n    <parent_origin xyz="{_vec((lc, 0, 0))}" rpy="0 0 0"/>\n'
           f'    <parent_axis xyz="0 0 1"/>\n'
           f'    <child link="{link}"/>\n    <child_origin xyz="{_vec((Lb, 0, 0))}" rpy="{_vec((0, 0, -qr_ref))}"/>\n'
           f'    <child_axis xyz="0 0 1"/>\n  </constraint>\n')
    return t, cut


def cylinder_friction(hydraulics: dict, cylinder: str) -> str:
    """The ``<friction>`` element of one cylinder from its curve in ``hydraulics.json`` (Zhu and
    Piedboeuf's parameters: Coulomb FC, viscous b, Stribeck FS, equal in both directions in the
    data; the law is symmetric, so unequal ones are refused)."""
    c = hydraulics["friction"][hydraulics["cylinders"][cylinder]["friction"]]
    for a, b in (("FCp", "FCn"), ("bp", "bn"), ("FSp", "FSn")):
        if c[a] != c[b]:
            raise ValueError(f"cylinder {cylinder}: {a} != {b}; the friction law is symmetric")
    return (f'    <friction joint="{cylinder}" coulomb="{_f(c["FCp"])}" viscous="{_f(c["bp"])}" '
            f'stribeck="{_f(c["FSp"])}" smoothing_velocity="{_f(CYLINDER_SMOOTHING_VELOCITY)}"/>\n')


def _hydraulics(hyd: dict, joints) -> str:
    """The ``<hydraulics>`` element of the cylinders on ``joints`` from ``hydraulics.json``
    (its cylinders, valves, supply, return, bulk modulus and dead volumes; the friction curves
    are not part of this element).  The data's x is the joint value (x = 0 fully retracted)."""
    out = [_comment("hydraulic drive from hydraulics.json (HydraulicManipulatorVDC, Petrovic, BSD-3), SI units"),
           f'    <hydraulics supply_pressure="{_f(hyd["supply_pressure"])}" '
           f'return_pressure="{_f(hyd["return_pressure"])}" bulk_modulus="{_f(hyd["oil_bulk_modulus"])}">\n']
    for name, joint in CYLINDER_JOINTS.items():
        if joint not in joints:
            continue
        c = hyd["cylinders"][name]
        v = hyd["valves"][c["valve"]]
        low, high = v["spool_limits"]
        if low != -high:
            raise ValueError(f"valve {c['valve']}: spool limits {v['spool_limits']} are not symmetric")
        out.append(f'      <cylinder joint="{joint}" bore="{_f(c["piston_diameter"])}" rod="{_f(c["rod_diameter"])}" '
                   f'stroke="{_f(c["stroke"])}" retracted="0.0" dead_volume_a="{_f(c["dead_volume_A"])}" '
                   f'dead_volume_b="{_f(c["dead_volume_B"])}"/>\n')
        out.append(f'      <valve joint="{joint}" nominal_flow="{_f(v["nominal_flow"])}" '
                   f'nominal_pressure_drop="{_f(v["nominal_pressure_drop"])}" spool_limit="{_f(high)}" '
                   f'spool_natural_frequency="{_f(v["spool_natural_frequency"])}" '
                   f'spool_damping="{_f(v["spool_damping"])}" spool_slew_rate="{_f(v["spool_slew_rate"])}"/>\n')
    out.append("    </hydraulics>\n")
    return "".join(out).replace("  <!--", "    <!--", 1)


def make(data: dict, four_dof: bool, hyd: dict | None = None) -> str:
    g = data["geometry"]
    damping = None if hyd is None else hyd["revolute_joint_damping"]
    bodies = data["bodies"]["cad_corrected"]
    a1, a2 = g["alpha1"], g["alpha2"]
    name = "hiab_xs031_4dof" if four_dof else "hiab_xs031_lift_loop"
    out = [f'<?xml version="1.0"?>\n<!-- Generated by make_hiab_urdfs.py from hiab031_model.json '
           f'(HIAB XS 031, Petrovic & Mattila; cad_corrected inertias). Do not edit by hand. -->\n'
           f'<robot name="{name}">\n']
    out.append(_link("world", None, "URDF root, z up (REP 103)"))
    out.append(_joint("world_to_W", "fixed", "world", "W", rpy=(math.pi / 2, 0, 0),
                      comment="world frame W of the data is y-up, Rx(+90 deg) maps its y to the root z"))
    out.append(_link("W", None, "data frame W (y up)"))
    if four_dof:
        out.append(_joint("slew", "continuous", "W", "slew_link", axis=(0, 1, 0),
                          comment="slew, vertical axis through the W origin (assumed by the model; see data README)"))
        out.append(_link("slew_link", None, "slewing frame S (massless, the data has no slew bearing)"))
        base_parent = "slew_link"
    else:
        base_parent = "W"
    out.append(_joint("Bc1_mount", "fixed", base_parent, "Bc1", xyz=g["W_r_WBc1"], rpy=(0, 0, a1),
                      comment="Bc1 at p = W_r_WBc1, R = Rz(alpha1)"))
    out.append(_link("Bc1", bodies["Bc1"], "data body Bc1 (crane base / column)"))
    cuts = []
    t, c = _loop("lift", "lift", "Bc1", "B11", "B31", "B41", g["L1"], g["L11"], g["lc1"], g["lc01"], g["x10"], 0.59,
                 bodies, "B11", damping)
    out.append(t)
    cuts.append(c)
    Tc1_r = np.array([g["L11"], 0.0, 0.0]) + np.array(g["Tc1_r_Tc1Bc2"])
    out.append(_joint("Bc2_mount", "fixed", "B11", "Bc2", xyz=Tc1_r, rpy=(0, 0, a2),
                      comment="Bc2 rigid on B11 (lift link = B11 + Bc2) at Tc1 + Tc1_r_Tc1Bc2, R = Rz(alpha2)"))
    out.append(_link("Bc2", bodies["Bc2"], "data body Bc2 (rest of the lift link)"))
    ee = "Bc2"
    if four_dof:
        t, c = _loop("tilt", "tilt", "Bc2", "B12", "B32", "B42", g["L2"], g["L21"], g["lc2"], g["lc02"], g["x20"],
                     0.59, bodies, "B12", damping)
        out.append(t)
        cuts.append(c)
        p22 = np.array([g["L21"], 0.0, 0.0]) + np.array(g["Tc2_r_Tc2P22"])
        out.append(_joint("P22_mount", "fixed", "B12", "P22", xyz=p22, rpy=rpy_from_matrix(g["Tc2_Rot_P22"]),
                          comment="P22 (extension cylinder) rigid on B12 at Tc2 + Tc2_r_Tc2P22, R = Tc2_Rot_P22"))
        out.append(_link("P22", bodies["P22"], "data body P22 (extension cylinder)"))
        out.append(_joint("extension", "prismatic", "P22", "B52", xyz=(0.041, 0, 0), axis=(1, 0, 0),
                          limit=(0.0, 1.1), comment="extension, B52 = P22 + [0.041 + x3, 0, 0]"))
        out.append(_link("B52", bodies["B52"], "data body B52 (extension boom)"))
        out.append(_joint("P32_mount", "fixed", "B52", "P32", xyz=g["B52_r_B52P32"],
                          comment="P32 (end object) rigid on B52 at B52_r_B52P32"))
        out.append(_link("P32", bodies["P32"], "data body P32 (end object)"))
        out.append(_joint("tcp_mount", "fixed", "P32", "tcp", xyz=g["P32_r_P32D22_TCP"],
                          rpy=rpy_from_matrix(g["P32_Rot_D22"]), comment="TCP frame D22"))
        out.append(_link("tcp", None, "tool centre point D22"))
        ee = "tcp"
    out.extend(cuts)
    acts = ["slew", "lift", "tilt", "extension"] if four_dof else ["lift"]
    out.append("  <pkm_dynamics>\n")
    for a in acts:
        out.append(f'    <actuator joint="{a}"/>\n')
    if hyd is not None:                         # the cylinders' friction curves (hydraulics.json)
        out.extend(cylinder_friction(hyd, a) for a in acts if a in hyd["cylinders"])
    out.append(f'    <end_effector link="{ee}"/>\n')
    if hyd is not None:
        out.append(_hydraulics(hyd, acts))
    out.append('  </pkm_dynamics>\n</robot>\n')
    return "".join(out)


#: the grapple below the crane tip (illustrative: the data has no grapple; the scale of a small timber
#: grapple on a crane of this size): (mass kg, centre of mass m, inertia about it kg m^2 (ixx, iyy,
#: izz), joint offset below the previous axis m) of the hanger link between the two swing axes, the
#: rotator housing (stator) and the grapple (rotor, head and jaws)
GRAPPLE = {
    "grapple_link": (10.0, (0.0, 0.0, -0.1), (0.04, 0.04, 0.01), 0.0),
    "rotator_housing": (25.0, (0.0, 0.0, -0.08), (0.06, 0.06, 0.05), 0.2),
    "grapple": (150.0, (0.0, 0.0, -0.45), (8.0, 7.0, 3.0), 0.15),
}
#: limits of the swing axes (rad; the hanger stops on the crane tip beyond them)
SWING_LIMIT = 1.5


def zero_pose_rotation(text: str, link: str) -> np.ndarray:
    """Rotation (3, 3) of ``link`` in the root frame at the zero configuration of every tree joint
    (the fixed origins' rotations composed along the tree path from the root)."""
    import xml.etree.ElementTree as ET
    joints = {j.find("child").get("link"): j for j in ET.fromstring(text).findall("joint")}
    R = np.eye(3)
    while link in joints:
        j = joints[link]
        roll, pitch, yaw = (float(v) for v in j.find("origin").get("rpy").split())
        cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch),
                                  math.cos(yaw), math.sin(yaw))
        Rj = (np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]]) @ np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
              @ np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]]))
        R = Rj @ R
        link = j.find("parent").get("link")
    return R


def _grapple_body(name: str) -> dict:
    m, com, (ixx, iyy, izz), _ = GRAPPLE[name]
    return {"mass_kg": m, "com_in_body_frame_m": com,
            "inertia_about_com_in_body_frame_kgm2": [[ixx, 0.0, 0.0], [0.0, iyy, 0.0], [0.0, 0.0, izz]]}


def grapple_crane(crane: str) -> str:
    """The 4-DoF crane text ``crane`` with a grapple hung below its tool point: a massless mount
    frame at the tcp whose axes are the root's at the crane's zero configuration (z up), a hanger
    link on the passive swing axis ``grapple_swing_y`` (the mount's y: parallel to the boom
    pivots, horizontal in every crane pose; a swing in the boom plane), the rotator housing on
    the passive ``grapple_swing_x`` below it, and the grapple turned by the actuated
    ``rotator`` (continuous, about the housing's z).  The end effector becomes the grapple."""
    R = zero_pose_rotation(crane, "tcp")
    lim = (-SWING_LIMIT, SWING_LIMIT)
    _, _, _, link_drop = GRAPPLE["grapple_link"]
    _, _, _, housing_drop = GRAPPLE["rotator_housing"]
    _, _, _, grapple_drop = GRAPPLE["grapple"]
    tree = (_joint("grapple_mount", "fixed", "tcp", "grapple_mount", xyz=(0, 0, link_drop), rpy=rpy_from_matrix(R.T),
                   comment="grapple mount at the tcp, axes of the root at the crane zero configuration (z up)")
            + _link("grapple_mount", None, "grapple mount frame (massless)")
            + _joint("grapple_swing_y", "revolute", "grapple_mount", "grapple_link", axis=(0, 1, 0), limit=lim,
                     comment="passive swing axis parallel to the boom pivots (swing in the boom plane)")
            + _link("grapple_link", _grapple_body("grapple_link"), "hanger link between the swing axes (illustrative)")
            + _joint("grapple_swing_x", "revolute", "grapple_link", "rotator_housing", xyz=(0, 0, -housing_drop),
                     axis=(1, 0, 0), limit=lim, comment="passive swing axis across the boom plane")
            + _link("rotator_housing", _grapple_body("rotator_housing"), "rotator housing (illustrative)")
            + _joint("rotator", "continuous", "rotator_housing", "grapple", xyz=(0, 0, -grapple_drop), axis=(0, 0, 1),
                     comment="rotator, hydraulic motor turning the grapple about the hanging axis")
            + _link("grapple", _grapple_body("grapple"), "grapple head and jaws with the rotor (illustrative)"))
    out = crane.replace('<robot name="hiab_xs031_4dof">', '<robot name="hiab_xs031_grapple">')
    out = out.replace("  <!-- lift loop closure", tree + "  <!-- lift loop closure", 1)
    out = out.replace('    <actuator joint="extension"/>\n',
                      '    <actuator joint="extension"/>\n    <actuator joint="rotator"/>\n'
                      '    <passive joint="grapple_swing_y"/>\n    <passive joint="grapple_swing_x"/>\n', 1)
    out = out.replace('<end_effector link="tcp"/>', '<end_effector link="grapple"/>')
    return out.replace("from hiab031_model.json (HIAB XS 031", "from hiab031_model.json and its GRAPPLE "
                       "(HIAB XS 031 with a grapple", 1)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    path = argv[0] if argv else DEFAULT_JSON
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    with open(HYDRAULICS_JSON, encoding="utf-8") as f:
        hyd = json.load(f)
    texts = {"linear_4bar_1dof.urdf": make(data, False, hyd), "heavy_duty_4dof.urdf": make(data, True, hyd)}
    texts["grapple_crane.urdf"] = grapple_crane(texts["heavy_duty_4dof.urdf"])
    for fname, text in texts.items():
        with open(os.path.join(HERE, fname), "w", encoding="utf-8") as f:
            f.write(text)
        print("wrote", os.path.join(HERE, fname))


if __name__ == "__main__":
    main()
