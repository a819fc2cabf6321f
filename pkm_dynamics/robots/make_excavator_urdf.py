#!/usr/bin/env python3
"""Generate the excavator example robot (reproducible).

    python3 pkm_dynamics/robots/make_excavator_urdf.py

writes ``excavator.urdf`` next to this script.  Source of every number: the hydraulic excavator
of the MuJoCo excavator simulator of K. Vilella (github.com/KennyVilella/excavator_simulator_mujoco,
``model/excavator/README.md`` (pivot coordinates of every body, rod lengths) and
``model/excavator/excavator.xml`` (body masses, centres of mass and inertias, estimated there
from the meshes at 8000 kg/m^3; cylinder strokes)), transcribed in :data:`SOURCE` below.  See
``README.md`` in this directory for what was chosen here.

The model is planar in the vertical plane of the boom: the source's body frames have their x-y
plane in it with hinge axes +z; here the URDF root is z up (REP 103), the source's plane
coordinates (x, y) become (x, z) and its hinge axis +z becomes -y (so a positive joint value
raises the boom, curls the arm and the bucket as in the source).

Zero configuration of the tree (the source's reference pose): boom at 30 deg to the upper
structure, arm at -60 deg to the boom, bucket at +70 deg to the arm.  The cylinders' directions
and extensions at that pose are computed from the pivots (the source's rounded values 72.3
deg, 0.3399 m, ... are the same numbers to 4 digits); the bucket linkage's common pin J is the
intersection of the rocker circle (about K, radius JK) and the coupler circle (about L, radius
JL) on the branch of the source's pose.  Prismatic joint values are the cylinder extensions
minus their values at that pose.
"""
from __future__ import annotations

import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

#: the source's numbers: pivots in body frames (plane coordinates, m), rod lengths (m), reference
#: angles (deg), rod-origin strokes (m, slide ranges of the source), masses (kg), centres of mass
#: (plane coordinates, m) and inertias about them (kg m^2, source frame: ixx iyy izz ixy ixz iyz)
SOURCE = {
    "B": (0.0, 0.76673),                         # swing axis on the undercarriage
    "C": (0.3256, 0.389), "D": (0.8, 0.152),     # upper structure: boom pivot, boom cylinder pivot
    "E": (1.532, 0.686), "F": (2.1653, 0.9437), "H": (3.845, 0.0),   # boom
    "G": (-0.551, 0.147), "I": (0.2402, 0.3782), "K": (1.522, 0.065), "M": (1.996, 0.0),   # arm
    "L": (0.379, 0.0),                           # bucket
    "EE'": 1.336, "GG'": 1.147, "JJ'": 0.866, "JK": 0.4539, "JL": 0.449,
    "angle_boom": 30.0, "angle_arm": -60.0, "angle_bucket": 70.0,
    "stroke_boom": (0.06, 0.56), "stroke_arm": (0.28, 0.93), "stroke_bucket": (0.15, 0.65),
    "inertial": {
        "undercarriage": (12200, (-0.07, 0.386, 0.0), (4896, 10884, 6689, -46, 29, 12)),
        "upper_structure": (20592, (-0.486, 0.480, -0.15), (6958, 17170, 13393, -980, 2311, 677)),
        "boom_cylinder_barrel": (116, (0.397, 0, 0), (2.8, 11, 8.5, 0, 0, 0)),
        "boom_cylinder_rod": (29, (0.787, 0, 0), (0.7, 5.8, 5.1, 0, 0, 0)),
        "boom": (1600, (1.729, 0.463, 0.0), (87, 1690, 1768, -14, 0.2, -0.02)),
        "arm_cylinder_barrel": (63, (0.581, 0, 0), (0.07, 9.6, 9.6, 0, 0, 0)),
        "arm_cylinder_rod": (30, (0.700, 0, 0), (0.03, 4.2, 4.2, 0, 0, 0)),
        "arm": (880, (0.476, 0.119, 0.0), (15, 290, 302, 23, 0.2, -0.02)),
        "bucket_cylinder_barrel": (25, (0.332, 0, 0), (0.02, 1.9, 1.9, 0, 0, 0)),
        "bucket_cylinder_rod": (16, (0.538, 0, 0), (0.02, 1.3, 1.3, 0, 0, 0)),
        "rocker": (17, (0.4539 - 0.227, 0, 0), (0.09, 0.5, 0.5, 0, 0, 0)),   # source frame at J, x to K
        "bucket": (450, (0.231, -0.468, 0.0), (77, 55, 65, -11, 0.2, -0.02)),
        "coupler": (18, (0.112, 0, 0), (0.06, 0.5, 0.5, 0, 0, 0)),
    },
}

#: source plane frame (x, y, z) -> URDF (x, -z, y)... as a rotation: v_urdf = R v_source
R_SOURCE = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])


def rot(phi):
    c, s = math.cos(phi), math.sin(phi)
    return np.array([[c, -s], [s, c]])


def _f(v) -> str:
    return repr(round(float(v), 12))


def _xyz(p2) -> str:
    """Plane coordinates (x, y) as the URDF xyz (x, 0, y)."""
    return f"{_f(p2[0])} 0.0 {_f(p2[1])}"


def reference_pose() -> dict:
    """Plane poses (origin (2,), angle) of every body at the reference pose, in the upper
    structure's frame (origin at B), and the cylinder extensions there."""
    S = SOURCE
    P = {"upper_structure": (np.zeros(2), 0.0)}

    def child(parent, point, angle_deg):
        o, a = P[parent]
        return o + rot(a) @ np.asarray(point), a + math.radians(angle_deg)

    P["boom"] = child("upper_structure", S["C"], S["angle_boom"])
    P["arm"] = child("boom", S["H"], S["angle_arm"])
    P["bucket"] = child("arm", S["M"], S["angle_bucket"])

    def world(body, point):
        o, a = P[body]
        return o + rot(a) @ np.asarray(point)

    K, L = world("arm", S["K"]), world("bucket", S["L"])
    d = np.linalg.norm(L - K)
    a = (S["JK"] ** 2 - S["JL"] ** 2 + d ** 2) / (2 * d)
    h = math.sqrt(S["JK"] ** 2 - a ** 2)
    e = (L - K) / d
    n = np.array([-e[1], e[0]])
    I = world("arm", S["I"])
    # the branch of the source's pose: its cylinder I-J is 0.5936 + 0.866 m long
    J = min((K + a * e + s * h * n for s in (1, -1)), key=lambda j: abs(np.linalg.norm(j - I) - 1.4596))
    ends = {"boom": ("upper_structure", S["D"], world("boom", S["E"]), S["EE'"]),
            "arm": ("boom", S["F"], world("arm", S["G"]), S["GG'"]),
            "bucket": ("arm", S["I"], J, S["JJ'"])}
    cyl = {}
    for name, (parent, pivot, end, rod) in ends.items():
        o = world(parent, pivot)
        v = end - o
        cyl[name] = (o, math.atan2(v[1], v[0]), np.linalg.norm(v) - rod)     # pivot, angle, rod origin
    cyl["bucket"] += (bucket_toggle(I, K, world("arm", S["M"]), J, cyl["bucket"][2]),)
    P["rocker"] = (K, math.atan2(*(J - K)[::-1]))
    P["coupler"] = (L, math.atan2(*(J - L)[::-1]))
    return P, cyl, J


#: the bucket cylinder's retraction stops this far (m) before the linkage's dead point (chosen)
TOGGLE_MARGIN = 0.03


def bucket_toggle(I, K, M, J0, r0) -> float:
    """The retracted end of the bucket cylinder's stroke (prismatic value): the source's range
    retracts beyond the dead point of the rocker-coupler four-bar (|JM| = JL + LM, the coupler and
    the bucket in line), so the stroke stops :data:`TOGGLE_MARGIN` before it (bisection on the
    triangle I-J-K: cylinder length |IJ0| + s, rocker JK)."""
    S = SOURCE
    lj = np.linalg.norm(J0 - I)

    def reach(s):                       # |JM| - (JL + LM) at the stroke s (< 0: assembled)
        d = np.linalg.norm(K - I)
        r1 = lj + s
        a = (r1 ** 2 - S["JK"] ** 2 + d ** 2) / (2 * d)
        e = (K - I) / d
        n = np.array([-e[1], e[0]])
        h = math.sqrt(max(r1 ** 2 - a ** 2, 0.0))
        J = min((I + a * e + sg * h * n for sg in (1, -1)), key=lambda j: np.linalg.norm(j - J0))
        return np.linalg.norm(J - M) - (S["JL"] + math.hypot(*S["L"]))

    lo, hi = S["stroke_bucket"][0] - r0, 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if reach(mid) < 0 else (mid, hi)
    return hi + TOGGLE_MARGIN


def inertial(name) -> str:
    m, c, (ixx, iyy, izz, ixy, ixz, iyz) = SOURCE["inertial"][name]
    I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)
    Iu = R_SOURCE @ I @ R_SOURCE.T
    cu = R_SOURCE @ np.asarray(c, dtype=float)
    return (f'    <inertial>\n      <origin xyz="{" ".join(_f(v) for v in cu)}" rpy="0 0 0"/>\n'
            f'      <mass value="{_f(m)}"/>\n'
            f'      <inertia ixx="{_f(Iu[0, 0])}" ixy="{_f(Iu[0, 1])}" ixz="{_f(Iu[0, 2])}" iyy="{_f(Iu[1, 1])}" '
            f'iyz="{_f(Iu[1, 2])}" izz="{_f(Iu[2, 2])}"/>\n    </inertial>\n')


def link(name, comment) -> str:
    return f'  <!-- {comment} -->\n  <link name="{name}">\n{inertial(name)}  </link>\n'


def joint(name, kind, parent, child, origin_parent, pose_parent, pose_child, limit=None, axis="0 -1 0"):
    """A joint whose child frame sits at ``pose_child`` (plane origin, angle) when the parent
    frame is at ``pose_parent``: origin in the parent frame, pitch = -(relative angle)."""
    (op, ap), (oc, ac) = pose_parent, pose_child
    rel = rot(ap).T @ (oc - op) if origin_parent is None else np.asarray(origin_parent)
    lim = "" if limit is None else \
        f'\n    <limit lower="{_f(limit[0])}" upper="{_f(limit[1])}" effort="0" velocity="0"/>'
    return (f'  <joint name="{name}" type="{kind}">\n    <parent link="{parent}"/>\n'
            f'    <child link="{child}"/>\n    <origin xyz="{_xyz(rel)}" rpy="0.0 {_f(-(ac - ap))} 0.0"/>\n'
            f'    <axis xyz="{axis}"/>{lim}\n  </joint>\n')


def cut(name, parent, p_point, child, c_point) -> str:
    return (f'  <constraint name="{name}" type="revolute">\n    <parent link="{parent}"/>\n'
            f'    <parent_origin xyz="{_xyz(p_point)}" rpy="0 0 0"/>\n    <parent_axis xyz="0 -1 0"/>\n'
            f'    <child link="{child}"/>\n    <child_origin xyz="{_xyz(c_point)}" rpy="0 0 0"/>\n'
            f'    <child_axis xyz="0 -1 0"/>\n  </constraint>\n')


def excavator_urdf() -> str:
    S = SOURCE
    P, cyl, J = reference_pose()
    passive = (-math.pi, math.pi)
    out = ['<?xml version="1.0"?>\n',
           '<!-- Generated by make_excavator_urdf.py from the excavator of excavator_simulator_mujoco '
           '(K. Vilella). Do not edit by hand. -->\n<robot name="excavator">\n',
           link("undercarriage", "undercarriage, the fixed root, z up"),
           '  <joint name="swing" type="continuous">\n    <parent link="undercarriage"/>\n'
           '    <child link="upper_structure"/>\n'
           f'    <origin xyz="0.0 0.0 {_f(S["B"][1])}" rpy="0 0 0"/>\n    <axis xyz="0 0 1"/>\n  </joint>\n',
           link("upper_structure", "upper structure (cab, engine, counterweight), swung by a motor")]
    parents = {"boom": "upper_structure", "arm": "boom", "bucket": "arm"}
    for body in ("boom", "arm", "bucket"):
        par = parents[body]
        out.append(joint(f"{body}_joint", "revolute", par, body, None, P[par], P[body], passive))
        out.append(link(body, body))
        o, ang, r0 = cyl[body][:3]
        lo, hi = S[f"stroke_{body}"]
        lo = max(lo - r0, cyl[body][3]) + r0 if body == "bucket" else lo
        barrel, rod = f"{body}_cylinder_barrel", f"{body}_cylinder_rod"
        out.append(joint(f"{body}_cylinder_pivot", "revolute", par, barrel, None, P[par], (o, ang), passive))
        out.append(link(barrel, f"{body} cylinder barrel"))
        out.append(joint(f"{body}_cylinder", "prismatic", barrel, rod, (r0, 0.0), (o, ang), (o, ang),
                         (lo - r0, hi - r0), axis="1 0 0"))
        out.append(link(rod, f"{body} cylinder rod, its origin {r0:.4f} m from the pivot at zero"))
    out.append(joint("rocker_joint", "revolute", "arm", "rocker", None, P["arm"], P["rocker"], passive))
    out.append(link("rocker", "rocker (the source H link), pinned to the arm at K"))
    out.append(joint("coupler_joint", "revolute", "bucket", "coupler", None, P["bucket"], P["coupler"], passive))
    out.append(link("coupler", "coupler (the source side link), pinned to the bucket at L"))
    out.append(cut("boom_rod_end", "boom_cylinder_rod", (S["EE'"], 0.0), "boom", S["E"]))
    out.append(cut("arm_rod_end", "arm_cylinder_rod", (S["GG'"], 0.0), "arm", S["G"]))
    out.append(cut("bucket_rod_end", "bucket_cylinder_rod", (S["JJ'"], 0.0), "rocker", (S["JK"], 0.0)))
    out.append(cut("coupler_end", "coupler", (S["JL"], 0.0), "rocker", (S["JK"], 0.0)))
    out.append('  <pkm_dynamics>\n    <actuator joint="swing"/>\n    <actuator joint="boom_cylinder"/>\n'
               '    <actuator joint="arm_cylinder"/>\n    <actuator joint="bucket_cylinder"/>\n'
               '    <end_effector link="bucket"/>\n  </pkm_dynamics>\n</robot>\n')
    return "".join(out)


if __name__ == "__main__":
    path = os.path.join(HERE, "excavator.urdf")
    with open(path, "w", encoding="utf-8") as f:
        f.write(excavator_urdf())
    _, cyl, _ = reference_pose()
    print(f"wrote {path}; rod origins at zero: " + ", ".join(f"{k} {v[2]:.4f} m, {math.degrees(v[1]):.2f} deg"
                                                            for k, v in cyl.items()))
