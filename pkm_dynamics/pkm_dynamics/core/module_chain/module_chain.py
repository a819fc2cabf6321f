"""Module chains of paper 000 (Paz & Mattila): serial chains of 1-DoF modules, each a linearly
actuated 4-bar *parallel module* (:mod:`.parallel_module`) or a *serial module* (one actuated
revolute or prismatic joint), with the O(n) forward dynamics of Algorithm 1 and the chain's
analytic inverse dynamics.

Recognition (:func:`recognise_modules`) derives every module from the robot description: a
revolute cut joint whose loop is ``base -R- cylinder -P- piston -R(cut)- link -R- base`` with
parallel revolute axes and the prismatic axis through the cylinder pivot and the rod-end pivot
is a parallel module; its roles (q: link pivot, q1: cylinder pivot, x: the prismatic joint, q2:
the cut joint) and lengths L, L1, Lc, Lc0 (x0 = Lc + Lc0) come from the joint positions of the
URDF at its zero configuration, which must be an assembled pose of the loop.  An actuated
revolute/prismatic tree joint outside every loop is a serial module.  The actuated joints must
be listed in chain order, each module's base body being the previous module's output body.

Coordinates: a module's actuator coordinate is the tree value of its actuated joint.  For a
parallel module the paper's ``x`` (eq. 2a) is that value (sign-corrected if the prismatic axis
points from the rod end to the pivot), ``x0`` is the pivot-to-pivot length at the tree's zero
configuration, and the passive tree joints carry the loop angles minus their zero-configuration
values.  Forces are the generalized forces of the actuated tree joints (cylinder force,
positive when extending, for the examples).

By concept: this module (the chain's model and its recognition), :mod:`.module_chain_dynamics`
(the numpy route of Algorithm 1, the chain ID, forward kinematics, tree state),
:mod:`.module_chain_robot` (:class:`ModuleChainRobot`, on the compiled kernels),
:mod:`.chain_ik` (inverse kinematics).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..description.robot_description import RobotDescription
from ..errors import DescriptionError
from .parallel_module import (ParallelModule)
from ..spatial.se3 import (Ad_inv, exp_se3, pose, pose_inv, transform_inertia)
from ..tree.tree_dynamics import forward_kinematics as tree_forward_kinematics

#: geometric tolerance (relative to the loop size) for parallel axes / collinear pivots
GEOMETRY_TOLERANCE = 1e-7


@dataclass(frozen=True)
class SerialModule:
    """Model data of a serial module (paper 000 Sec. 4): one actuated joint with screw ``X``
    (6,) in the frame B4 of its body, ``Bc_C_B4 = B exp(X x)`` (Bc = frame of the base body),
    body inertia ``M_B4`` (6, 6) and the attachment frame ``B4_C_E`` of the next module."""

    name: str
    X: np.ndarray
    B: np.ndarray
    M_B4: np.ndarray
    B4_C_E: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "AE", Ad_inv(self.B4_C_E))   # twists B4 -> E (constant)
        object.__setattr__(self, "AB", Ad_inv(self.B))        # twists Bc -> joint frame (constant)
        object.__setattr__(self, "X_list", self.X.tolist())


@dataclass(frozen=True)
class ModuleInfo:
    """How a module sits in the tree.  ``kind``: 'parallel' or 'serial'; ``joint``: actuated
    tree joint; ``loop``: cut joint name (parallel); ``tree_idx``: tree joints of the module
    (parallel: link, cylinder, piston; serial: the joint); ``signs``/``refs``: tree value =
    sign * (paper angle - ref) for link and cylinder joints; ``sx``: tree value of the actuator
    = sx * paper x; ``base_body``/``out_body``: tree bodies (-1 = fixed base);
    ``Bc_in_base``: pose of the module frame Bc in the base body; ``F_C_out``: pose of the
    output body in the module's output frame (B1 or B4)."""

    kind: str
    name: str
    joint: str
    loop: str | None
    tree_idx: tuple
    signs: tuple
    refs: tuple
    sx: float
    base_body: int
    out_body: int
    Bc_in_base: np.ndarray
    F_C_out: np.ndarray
    lower: float
    upper: float


@dataclass(frozen=True)
class ModuleChain:
    """Model of a module chain: ``modules`` (ParallelModule | SerialModule), their ``info``,
    the pose ``root_C_Bc`` of the first module frame in the root link, the end-effector frame
    ``out_C_ee`` in the last module's output frame, and gravity (root-link frame)."""

    name: str
    modules: tuple
    info: tuple
    root_C_Bc: np.ndarray
    out_C_ee: np.ndarray
    end_effector: str
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.80665]))

    def __post_init__(self):
        # twists root link -> Bc of the first module (constant), and -nu_dot_g in Bc (line 1)
        A = Ad_inv(self.root_C_Bc)
        nud_0 = A[:, 3:] @ -self.gravity
        nud_0.setflags(write=False)                  # shared by every call
        object.__setattr__(self, "A_root", A)
        object.__setattr__(self, "nud_0", nud_0)

    def with_gravity(self, gravity) -> "ModuleChain":
        """This chain under ``gravity`` (3,) (root link frame): the same modules, ``nud_0``
        recomputed."""
        return replace(self, gravity=np.asarray(gravity, dtype=float).reshape(3))

    @property
    def n(self) -> int:
        return len(self.modules)


def _unit(v):
    return v / np.linalg.norm(v)


def _parallel_geometry(desc: RobotDescription, cut, C0: np.ndarray, actuated: set) -> dict:
    """Roles and lengths of the 4-bar closed by ``cut`` from the tree at its zero configuration."""
    tree = desc.tree
    what = f"loop '{cut.name}'"
    shape = ("expected a planar 4-bar: base -R- cylinder -P- piston -R(cut)- link -R- base with "
             "parallel revolute axes (paper 000 Fig. 1)")
    if cut.type != "revolute":
        raise DescriptionError(f"{what} is not a supported module: its cut joint is {cut.type}; {shape}")
    pb, cb = tree.frame(cut.parent_link)[0], tree.frame(cut.child_link)[0]
    sp, sc = tree.support(pb) if pb >= 0 else [], tree.support(cb) if cb >= 0 else []
    m = 0
    while m < min(len(sp), len(sc)) and sp[m] == sc[m]:
        m += 1
    base = sp[m - 1] if m > 0 else -1
    bp, bc = sp[m:], sc[m:]
    if sorted((len(bp), len(bc))) != [1, 2]:
        raise DescriptionError(f"{what} is not a supported module: it has {len(bp) + len(bc) + 1} joints; {shape}")
    if len(bp) == 2:
        (jc, jp), (jl,), pist_side = bp, bc, "parent"
    else:
        (jc, jp), (jl,), pist_side = bc, bp, "child"
    types = tree.joint_types
    if not (types[jc] == "revolute" and types[jp] == "prismatic" and types[jl] == "revolute"):
        raise DescriptionError(f"{what} is not a supported module: joints {tree.joint_names[jc]} "
                               f"({types[jc]}), {tree.joint_names[jp]} ({types[jp]}), "
                               f"{tree.joint_names[jl]} ({types[jl]}); {shape}")
    names = tree.joint_names
    if names[jp] not in actuated:
        raise DescriptionError(f"{what}: its prismatic joint '{names[jp]}' is not declared actuated; "
                               "a parallel module is driven by its cylinder (paper 000 Sec. 2)")
    for j in (jc, jl):
        if names[j] in actuated:
            raise DescriptionError(f"{what} is not a supported module: the passive joint '{names[j]}' is "
                                   "declared actuated (only the prismatic joint of a 4-bar can be)")
    for body, role in ((jc, "cylinder"), (jp, "piston")):
        extra = [names[k] for k in range(tree.nq) if tree.parent[k] == body and k != jp]
        if extra:
            raise DescriptionError(f"{what}: joint(s) {extra} hang from the {role} body; only the output "
                                   "link of a parallel module may carry further modules")
    Cb = np.eye(4) if base < 0 else C0[base]
    Cbi = pose_inv(Cb)
    rel = {j: Cbi @ C0[j] for j in (jc, jp, jl)}
    n = rel[jl][:3, :3] @ tree.X[jl][:3]
    nc = rel[jc][:3, :3] @ tree.X[jc][:3]
    link_name, origin, axis = ((cut.parent_link, cut.parent_origin, cut.parent_axis) if pist_side == "parent"
                               else (cut.child_link, cut.child_origin,
                                     cut.child_axis if cut.child_axis is not None else cut.parent_axis))
    body, off = tree.frame(link_name)
    F = Cbi @ C0[body] @ off @ origin
    ncut = F[:3, :3] @ axis
    O3, O1, T = rel[jc][:3, 3], rel[jl][:3, 3], F[:3, 3]
    size = max(np.linalg.norm(O1 - O3), np.linalg.norm(T - O3), 1e-12)
    tol = GEOMETRY_TOLERANCE
    for a, nm in ((nc, names[jc]), (ncut, f"cut joint {cut.name}")):
        if np.linalg.norm(np.cross(a, n)) > tol:
            raise DescriptionError(f"{what} is not a supported module: the axis of {nm} is not parallel to "
                                   f"the axis of {names[jl]}; {shape}")
    ap = rel[jp][:3, :3] @ tree.X[jp][3:]
    if abs(ap @ n) > tol:
        raise DescriptionError(f"{what} is not a supported module: the prismatic axis of {names[jp]} is not "
                               f"perpendicular to the revolute axes; {shape}")

    def inplane(v):
        return v - n * (n @ v)

    u, w, v = inplane(O1 - O3), inplane(T - O1), inplane(T - O3)
    L, L1, d0 = np.linalg.norm(u), np.linalg.norm(w), np.linalg.norm(v)
    if min(L, L1, d0) < tol * size:
        raise DescriptionError(f"{what}: two of its pivots coincide (L = {L:.3g}, L1 = {L1:.3g}, "
                               f"x0 = {d0:.3g} m)")
    ex = u / L
    turn = n @ np.cross(ex, w) / L1
    if abs(turn) < 1e-9:
        raise DescriptionError(f"{what}: the loop is straight (singular, q = 0 or pi) at the zero "
                               "configuration; choose another assembled pose for the URDF")
    ez = -n if turn > 0 else n          # paper branch q < 0 (eq. 2)
    ey = np.cross(ez, ex)
    Rb = np.column_stack([ex, ey, ez])
    ecyl = v / d0
    if np.linalg.norm(np.cross(ap, ecyl)) > tol:
        raise DescriptionError(f"{what} is not a supported module: the prismatic axis of {names[jp]} does not "
                               f"point from the cylinder pivot to the rod-end pivot; {shape}")
    sx = float(np.sign(ap @ ecyl))
    q_ref = float(np.arctan2(w @ ey, w @ ex))
    q1_ref = float(np.arctan2(v @ ey, v @ ex))
    Lc0 = float((rel[jp][:3, 3] - O3) @ ecyl)
    Lc = float(d0 - Lc0)
    h = float((O1 - O3) @ ez)
    Bc = pose(Rb, O3)

    def rz(t):
        return exp_se3(np.array([0, 0, 1.0, 0, 0, 0]), t)

    C_B1 = Bc @ pose(None, [L, 0.0, h]) @ rz(q_ref)
    C_B3 = Bc @ rz(q1_ref)
    C_B4 = C_B3 @ pose(None, [Lc0, 0.0, 0.0])
    B1_C_link = pose_inv(C_B1) @ rel[jl]
    return dict(
        what=what, base=base, jc=jc, jp=jp, jl=jl, L=float(L), L1=float(L1), Lc=Lc, Lc0=Lc0, h=h, sx=sx,
        refs=(q_ref, q1_ref), signs=(float(np.sign(n @ ez)), float(np.sign(nc @ ez))), Bc=Bc,
        B1_C_link=B1_C_link,
        M_B1=transform_inertia(tree.M[jl], B1_C_link),
        M_B3=transform_inertia(tree.M[jc], pose_inv(C_B3) @ rel[jc]),
        M_B4=transform_inertia(tree.M[jp], pose_inv(C_B4) @ rel[jp]),
    )


class ChainOrderError(DescriptionError):
    """A module chain whose actuators are not listed in chain order (base first): every module is
    recognised, only their order is wrong (:func:`~..robot.load_robot` keeps this refusal rather
    than serving the chain on a slower route)."""


def recognise_modules(desc: RobotDescription) -> ModuleChain:
    """Build the :class:`ModuleChain` of a description (see the module docstring).

    Raises :class:`DescriptionError` naming the loop / joint for a loop that is not a supported
    module, an actuated joint that is neither a serial joint nor the actuator of a loop, actuators
    not in chain order, tree joints belonging to no module, or an end effector off the last module."""
    tree = desc.tree
    C0 = tree_forward_kinematics(tree, np.zeros(tree.nq))
    actuated = list(desc.actuated_joints)
    act_set = set(actuated)
    loops = {}
    owner = {}
    for cut in desc.cut_joints:
        g = _parallel_geometry(desc, cut, C0, act_set)
        for j in (g["jc"], g["jp"], g["jl"]):
            if j in owner:
                raise DescriptionError(f"loop '{cut.name}' shares joint '{tree.joint_names[j]}' with loop "
                                       f"'{owner[j]}': coupled loops are not a module chain")
            owner[j] = cut.name
        loops[tree.joint_names[g["jp"]]] = (cut, g)
    raw = []
    for name in actuated:
        j = tree.joint_index(name)
        if name in loops:
            cut, g = loops[name]
            raw.append(("parallel", name, cut.name, g))
        else:
            if j in owner:
                raise DescriptionError(f"actuator '{name}' is a passive joint of loop '{owner[j]}'")
            raw.append(("serial", name, None, j))
    covered = set(owner)
    covered.update(r[3] for r in raw if r[0] == "serial")
    missing = [tree.joint_names[j] for j in range(tree.nq) if j not in covered]
    if missing:
        raise DescriptionError(f"joint(s) {missing} belong to no module: every moving joint must be an actuated "
                               "serial joint or a joint of an actuated 4-bar loop")
    # base/output bodies and module frames
    parts = []
    for kind, name, loop, g in raw:
        if kind == "parallel":
            parts.append(dict(kind=kind, name=name, loop=loop, g=g, base=g["base"], out=g["jl"], Bc=g["Bc"],
                              F_C_out=g["B1_C_link"]))
        else:
            j = g
            parts.append(dict(kind=kind, name=name, loop=None, g=j, base=int(tree.parent[j]), out=j,
                              Bc=np.eye(4), F_C_out=np.eye(4)))
    prev = -1
    for p in parts:
        if p["base"] != prev:
            where = ("the fixed base" if prev < 0 else
                     f"the output body of the previous module ('{tree.body_names[prev]}')")
            raise ChainOrderError(
                f"module '{p['name']}' does not sit on {where}: list the actuators in chain order, base first "
                f"(order given: {', '.join(actuated)})")
        prev = p["out"]
    ee = desc.end_effector
    if ee is None:
        out_C_ee_body = np.eye(4)
        ee = tree.body_names[prev]
    else:
        body, out_C_ee_body = tree.frame(ee)
        if body != prev:
            raise DescriptionError(f"end effector link '{ee}' is not on the output body of the last module "
                                   f"('{tree.body_names[prev]}')")
    modules, infos = [], []
    for k, p in enumerate(parts):
        nxt = parts[k + 1]["Bc"] if k + 1 < len(parts) else out_C_ee_body
        out_C_E = p["F_C_out"] @ nxt
        j_act = tree.joint_index(p["name"])
        lo, hi = float(tree.lower[j_act]), float(tree.upper[j_act])
        if p["kind"] == "parallel":
            g = p["g"]
            mname = f"{p['name']} (loop {p['loop']})"
            modules.append(ParallelModule(name=mname, L=g["L"], L1=g["L1"], Lc=g["Lc"], Lc0=g["Lc0"], h=g["h"],
                                          M_B1=g["M_B1"], M_B3=g["M_B3"], M_B4=g["M_B4"], B1_C_E=out_C_E,
                                          x_lower=lo, x_upper=hi))
            infos.append(ModuleInfo("parallel", mname, p["name"], p["loop"], (g["jl"], g["jc"], g["jp"]),
                                    g["signs"], g["refs"], g["sx"], p["base"], p["out"], p["Bc"], p["F_C_out"],
                                    lo, hi))
        else:
            j = p["g"]
            modules.append(SerialModule(name=p["name"], X=tree.X[j].copy(), B=tree.B[j].copy(),
                                        M_B4=tree.M[j].copy(), B4_C_E=out_C_E))
            infos.append(ModuleInfo("serial", p["name"], p["name"], None, (j,), (1.0,), (0.0,), 1.0, p["base"],
                                    p["out"], p["Bc"], p["F_C_out"], lo, hi))
    root_C_Bc = parts[0]["Bc"]
    return ModuleChain(desc.name, tuple(modules), tuple(infos), root_C_Bc, parts[-1]["F_C_out"] @ out_C_ee_body,
                       ee, tree.gravity.copy())

