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
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .bounds import check_bound, check_effort, check_position, check_rate
from .compiled import ChainModel
from .compiled.chain_reactions_model import ReactionsModel, chain_joint_reactions
from .compiled.warmup import load_kernels
from .compiled import chain_forward_dynamics as compiled_forward_dynamics
from .compiled import chain_forward_kinematics as compiled_forward_kinematics
from .compiled import chain_inverse_dynamics as compiled_inverse_dynamics
from .compiled import chain_tree_state as compiled_tree_state
from .description import RobotDescription, as_description
from .errors import DescriptionError, StateError
from .interface import IKSolution, SolverOptions
from .parallel_module import (ParallelModule, alpha_beta_terms, assembled_base_inertia,
                              assembled_link_inertia, closure, forward_dynamics_base_frame,
                              module_accelerations, module_adjoints, module_kinematics, module_poses,
                              parallel_inverse_dynamics)
from .spatial import (Ad_inv, Ad_inv_exp, bracket_list, exp_se3, pose, pose_inv, transform_inertia,
                      wrench_bias_list)
from .tree_dynamics import forward_kinematics as tree_forward_kinematics

_asc, _empty = np.ascontiguousarray, np.empty

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
            raise DescriptionError(
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


# ----------------------------------------------------------------------------------------------
# per-state helpers


def _check_actuators(chain: ModuleChain, x: np.ndarray) -> None:
    for mod, info, v in zip(chain.modules, chain.info, x):
        if v < info.lower - 1e-12 or v > info.upper + 1e-12:
            unit = "rad" if info.kind == "serial" and np.any(mod.X[:3]) else "m"
            raise StateError(f"module '{info.name}': x = {v:.6g} {unit} is beyond the limits "
                             f"[{info.lower:.6g}, {info.upper:.6g}] of joint '{info.joint}' (its stroke)")


def _serial_first_pass(mod: SerialModule, x: float, xd: float, nu_Bc: np.ndarray) -> dict:
    """Serial module, Algorithm 1 lines 8-10: pose, twist, bias c_B4 (eq. 10), p_B4 (eq. 12)."""
    A = Ad_inv_exp(mod.X, x) @ mod.AB             # Ad_inv(B exp(X x))
    nu = A @ nu_Bc
    nu += mod.X * xd
    nu_list = nu.tolist()
    c, p = np.array([bracket_list(nu_list, [s * xd for s in mod.X_list]),      # ad(nu) X xd
                     wrench_bias_list(nu_list, (mod.M_B4 @ nu).tolist())])     # -ad*(nu) M nu
    AE = mod.AE
    return {"A": A, "nu": nu, "c": c, "p": p, "AE": AE, "nuE": AE @ nu}


def _first_forward_pass(chain: ModuleChain, x, xd) -> list:
    """First forward recursion of Algorithm 1 (lines 2-10): closure, poses, twists, biases."""
    nu = np.zeros(6)
    out = []
    x, xd = np.asarray(x, dtype=float).tolist(), np.asarray(xd, dtype=float).tolist()
    for mod, info, xi, xdi in zip(chain.modules, chain.info, x, xd):
        if info.kind == "parallel":
            st = closure(mod, info.sx * xi, info.sx * xdi)
            module_adjoints(mod, st)
            module_kinematics(mod, st, nu)
            out.append(st)
            nu = st.nu["E"]
        else:
            s = _serial_first_pass(mod, xi, xdi, nu)
            out.append(s)
            nu = s["nuE"]
    return out


def _base_acceleration(chain: ModuleChain, gravity) -> np.ndarray:
    if gravity is None:
        return chain.nud_0
    g = np.asarray(gravity, dtype=float).reshape(3)
    return chain.A_root[:, 3:] @ -g                                     # nu_dot_0 = -nu_dot_g


def _ee_wrench(chain: ModuleChain, f_ext) -> np.ndarray:
    """``F_E`` of the last module (eq. 20): minus the external wrench acting at the end effector,
    carried from the end-effector frame to the last module's E frame (identity: E is the
    end-effector frame)."""
    if f_ext is None:
        return np.zeros(6)
    return -np.asarray(f_ext, dtype=float).reshape(6)


def parallel_serial_forward_dynamics(chain: ModuleChain, x, xd, f, f_ext=None, gravity=None) -> np.ndarray:
    """Algorithm 1 of paper 000 (ParallelSerialManipulatorDynamics): actuator accelerations
    ``xdd`` (n,) from positions ``x``, velocities ``xd`` and forces ``f`` (n,), O(n).

    First forward recursion: eqs. 2, 5, 28 (closure), 6, 10, 12, 30.  Backward recursion:
    parallel modules eqs. 23-24, 62-64, 32, 34, 26, 42-45, 48, 49; serial modules eqs. 50-52; the
    base-frame wrench of module k is the input wrench F_E of module k-1 (line 24).  Second
    forward recursion: eq. 46 and eqs. 29/9 (parallel), ABA line 30-32 (serial).  ``f_ext``
    (6,): wrench (moment, force) acting on the end effector, in the end-effector frame (eq. 20)."""
    first = _first_forward_pass(chain, x, xd)
    n = chain.n
    M_E = np.zeros((6, 6))
    p_E = _ee_wrench(chain, f_ext)
    back = [None] * n
    for k in range(n - 1, -1, -1):                      # backward recursion
        mod, info, s = chain.modules[k], chain.info[k], first[k]
        # (the first module sits on the fixed base: its assembled inertia at Bc is not needed)
        if info.kind == "parallel":
            fk = info.sx * f[k]
            Mt, pt = assembled_link_inertia(mod, s, M_E, p_E)          # eqs. 23-24
            ab = alpha_beta_terms(mod, s, Mt, pt)                      # eqs. 32, 34, 26, 42-45
            if k > 0:
                M_E, p_E = assembled_base_inertia(mod, s, ab, Mt, pt, fk)  # eqs. 48-49
            back[k] = (ab, fk)
        else:
            AE = s["AE"]
            MA = mod.M_B4 + AE.T @ M_E @ AE                            # eq. 50a
            pA = s["p"] + AE.T @ p_E                                   # eq. 50b
            U = MA @ mod.X                                             # psi^T, eq. 51
            D = mod.X @ U                                              # alpha
            u = f[k] - mod.X @ pA                                      # u
            if k > 0:
                Ma = MA - np.outer(U, U) / D                           # eq. 52a
                pa = pA + Ma @ s["c"] + U * (u / D)                    # eq. 52b
                A = s["A"]
                M_E, p_E = A.T @ Ma @ A, A.T @ pa                      # eqs. 52c-d (M_Bc = 0)
            back[k] = (U, D, u)
    xdd = np.empty(n)
    nud = _base_acceleration(chain, gravity)
    for k in range(n):                                  # second forward recursion
        mod, info, s = chain.modules[k], chain.info[k], first[k]
        if info.kind == "parallel":
            ab, fk = back[k]
            a = forward_dynamics_base_frame(ab, fk, nud)               # eq. 46
            xdd[k] = info.sx * a
            nud = s.AE @ (s.A1 @ nud + s.xi[1] * a + s.xi[2])          # eqs. 29a, 9b
        else:
            U, D, u = back[k]
            a = s["A"] @ nud + s["c"]
            xdd[k] = (u - U @ a) / D
            nud = s["AE"] @ (a + mod.X * xdd[k])
    return xdd


def chain_inverse_dynamics(chain: ModuleChain, x, xd, xdd, f_ext=None, gravity=None) -> np.ndarray:
    """Analytic inverse dynamics of the chain: actuator forces ``f`` (n,) for ``(x, xd, xdd)``.

    Forward recursion of accelerations (eqs. 7, 9 / 27, 29) from the base, backward recursion of
    wrenches: each parallel module by eqs. 11, 19, 65, 16 (App. A-B) and its base wrench eq. 38;
    each serial module by Newton-Euler (eq. 11) projected on its screw.  ``f_ext`` as in
    :func:`parallel_serial_forward_dynamics`."""
    first = _first_forward_pass(chain, x, xd)
    nud = _base_acceleration(chain, gravity)
    acc = []
    for mod, info, s, xdd_k in zip(chain.modules, chain.info, first, np.asarray(xdd, dtype=float).tolist()):
        if info.kind == "parallel":
            a = module_accelerations(mod, s, nud, info.sx * xdd_k)       # B1, B3, B4 (eq. 29)
            nud = s.AE @ a[0]                                            # E, eq. 9b
        else:
            a = s["A"] @ nud                                             # eq. 9
            a += s["c"]
            a += mod.X * xdd_k
            nud = s["AE"] @ a
        acc.append(a)
    f = [0.0] * chain.n
    F_E = _ee_wrench(chain, f_ext)
    for k in range(chain.n - 1, -1, -1):
        mod, info, s = chain.modules[k], chain.info[k], first[k]
        if info.kind == "parallel":
            fk, F_E, _ = parallel_inverse_dynamics(mod, s, acc[k], F_E)
            f[k] = info.sx * fk
        else:
            F = mod.M_B4 @ acc[k]                                        # eq. 11
            F += s["p"]
            F += F_E @ s["AE"]                                           # Ad*: wrench E -> B4
            f[k] = float(mod.X @ F)
            F_E = F @ s["A"]                                             # Ad*: wrench B4 -> Bc
    return np.array(f)


def chain_forward_kinematics(chain: ModuleChain, x) -> np.ndarray:
    """End-effector pose (4, 4) in the root link: product of the module poses (eqs. 2-3)."""
    C = chain.root_C_Bc.copy()
    for mod, info, xi in zip(chain.modules, chain.info, x):
        if info.kind == "parallel":
            st = closure(mod, info.sx * xi, 0.0)
            module_poses(mod, st)
            C = C @ st.P1
            E = mod.B1_C_E
        else:
            C = C @ mod.B @ exp_se3(mod.X, xi)
            E = mod.B4_C_E
        C = C @ E
    return C


def chain_tree_state(chain: ModuleChain, nq: int, x, xd, xdd) -> tuple:
    """Positions, velocities and accelerations (each (nq,)) of every tree joint with all loops
    closed: eqs. 2 (q, q1), 4-5 (rates) and 7, 27-28 (accelerations) per parallel module."""
    Q, QD, QDD = np.zeros(nq), np.zeros(nq), np.zeros(nq)
    for mod, info, xi, xdi, xddi in zip(chain.modules, chain.info, x, xd, xdd):
        if info.kind == "parallel":
            st = closure(mod, info.sx * xi, info.sx * xdi)
            a = info.sx * xddi
            jl, jc, jp = info.tree_idx
            (sl, sc), (rl, rc) = info.signs, info.refs
            k = st.k
            Q[jl], QD[jl], QDD[jl] = sl * (st.q - rl), sl * k[1] * st.xd, sl * (k[4] + k[1] * a)
            Q[jc], QD[jc], QDD[jc] = sc * (st.q1 - rc), sc * k[2] * st.xd, sc * (k[5] + k[2] * a)
            Q[jp], QD[jp], QDD[jp] = xi, xdi, xddi
        else:
            (j,) = info.tree_idx
            Q[j], QD[j], QDD[j] = xi, xdi, xddi
    return Q, QD, QDD


# ----------------------------------------------------------------------------------------------
# public robot object


#: the bound (core.bounds) of each named state array; positions are bounded by the strokes
#: and, for a joint without limits (continuous), by MAX_POSITION
_STATE_BOUNDS = {"x": lambda a, name: check_position(a, name, "m or rad"),
                 "xd": lambda a, name: check_rate(a, name, 1),
                 "xdd": lambda a, name: check_rate(a, name, 2),
                 "twist": lambda a, name: check_rate(a, name, 1),
                 "acceleration": lambda a, name: check_rate(a, name, 2),
                 "f": check_effort, "f_ext": check_effort}


def _as_state(name: str, v, n: int) -> np.ndarray:
    """``v`` as a float array (n,) or (batch, n), finite and within the bound of ``name``
    (:data:`_STATE_BOUNDS`); else :class:`StateError` naming it."""
    a = np.asarray(v, dtype=float)
    if a.shape[-1:] != (n,) or a.ndim not in (1, 2):
        raise StateError(f"{name} has shape {a.shape}, expected ({n},) or (batch, {n})")
    _STATE_BOUNDS.get(name, lambda a, name: check_bound(a, np.inf, name))(a, name)
    return a


class ModuleChainRobot:
    """A heavy-duty parallel-serial manipulator (module chain of paper 000) built from a robot
    description; see :func:`pkm_dynamics.core.load_robot`.  It follows the robot interface of
    :mod:`.interface` in actuator space: ``x``, ``xd``, ``xdd`` are the actuator positions,
    rates and accelerations (n,).

    Attributes: those of :class:`~.interface.Robot` (``actuated_joints`` in chain order,
    ``tree_joints`` the order of :meth:`tree_state`, ``options``, ...), ``modules`` (model
    data), ``chain``, ``gravity`` (3,), ``compiled`` and ``reactions`` (the flat models of the
    compiled calls, built here, read-only).

    Every method takes one state (arrays of shape ``(n,)``) or a batch (leading axis,
    ``(batch, n)``) and returns arrays of matching leading shape.  Singular or infeasible
    states raise :class:`~pkm_dynamics.core.errors.SingularityError` /
    :class:`~pkm_dynamics.core.errors.StateError` naming the module and the value."""

    kind = "module_chain"
    state_space = "actuator"
    task_space = ()
    twist_components = ("wx", "wy", "wz", "vx", "vy", "vz")

    def __init__(self, description, gravity=None, options: SolverOptions | None = None):
        desc = as_description(description, gravity)
        self._options = SolverOptions() if options is None else options
        self.description = desc
        self.tree = desc.tree
        self.chain = recognise_modules(desc)
        self.compiled = ChainModel.build(self.chain, self.tree.nq)
        self.reactions = ReactionsModel.build(desc, self.compiled, self.chain.end_effector)
        load_kernels("chain")           # once per process, not at the first call
        self.modules = self.chain.modules
        self.actuated_joints = tuple(i.joint for i in self.chain.info)
        self.tree_joints = tuple(self.tree.joint_names)
        self.end_effector = self.chain.end_effector
        self.gravity = self.chain.gravity.copy()
        self.name = desc.name
        self.root_link = self.tree.root_link
        self.limb_names = (self.name,)          # the whole chain is one serial limb
        self.seed_joints = self.actuated_joints

    @property
    def n(self) -> int:
        return self.chain.n

    @property
    def options(self) -> SolverOptions:
        """The solver options, fixed at construction."""
        return self._options

    def forward_dynamics(self, x, xd, u, wrench=None):
        """Actuator accelerations ``xdd`` from positions, velocities and actuator forces ``u``
        (Algorithm 1, O(n), compiled: :mod:`.compiled.chain_kernels`).  ``wrench`` (6,) or
        (batch, 6): (moment, force) acting on the end effector, in its frame.

        One state of float arrays (n,) without a wrench goes straight to the kernel's entry
        point (the calling thread's ``compiled._local.one``, :func:`.compiled.chain_model._one`);
        everything else, and a state the kernel refuses (to raise the named exception), through
        :func:`.compiled.chain_model.chain_forward_dynamics`."""
        try:
            run, mflat, dflat, fe, status, n, shape1 = self.compiled._local.one
            x, xd, u = _asc(x, float), _asc(xd, float), _asc(u, float)
        except (AttributeError, TypeError, ValueError):      # first call of a thread, or no array
            return compiled_forward_dynamics(self.compiled, x, xd, u, wrench)
        if wrench is None and shape1 == x.shape == xd.shape == u.shape:
            out = _empty(n)
            if not run(False, mflat, dflat, x, xd, u, fe, out, status):
                return out
        return compiled_forward_dynamics(self.compiled, x, xd, u, wrench)

    def inverse_dynamics(self, x, xd, xdd, wrench=None):
        """Actuator forces ``u`` for positions, velocities and accelerations (analytic, O(n),
        compiled: :mod:`.compiled.chain_kernels`).  ``x`` may be an :class:`~.interface.IKSolution`
        (its actuators).  One state goes straight to the kernel as in :meth:`forward_dynamics`."""
        try:
            run, mflat, dflat, fe, status, n, shape1 = self.compiled._local.one
            x, xd, xdd = _asc(x, float), _asc(xd, float), _asc(xdd, float)
        except (AttributeError, TypeError, ValueError):      # also an IKSolution
            if isinstance(x, IKSolution):
                x = x.actuators
            return compiled_inverse_dynamics(self.compiled, x, xd, xdd, wrench)
        if wrench is None and shape1 == x.shape == xd.shape == xdd.shape:
            out = _empty(n)
            if not run(True, mflat, dflat, x, xd, xdd, fe, out, status):
                return out
        return compiled_inverse_dynamics(self.compiled, x, xd, xdd, wrench)

    def forward_dynamics_derivatives(self, x, xd, u, wrench=None):
        """``xdd`` and its exact derivatives ``d_x``, ``d_xd``, ``d_u = M^-1`` (n, n) each (batched:
        a leading axis): a :class:`~.derivatives.DynamicsDerivatives`; compiled (forward mode)."""
        from .derivatives import chain_forward_dynamics_derivatives
        return chain_forward_dynamics_derivatives(self.compiled, x, xd, u, wrench)

    def inverse_dynamics_derivatives(self, x, xd, xdd, wrench=None):
        """``f`` and its exact derivatives ``d_x``, ``d_xd``, ``d_u = M`` (n, n) each (batched:
        a leading axis): a :class:`~.derivatives.DynamicsDerivatives`; compiled (forward mode)."""
        from .derivatives import chain_inverse_dynamics_derivatives
        return chain_inverse_dynamics_derivatives(self.compiled, x, xd, xdd, wrench)

    def forward_kinematics(self, actuators):
        """End-effector pose (4, 4) in the URDF root frame (batched: (batch, 4, 4)); compiled."""
        return compiled_forward_kinematics(self.compiled, actuators)

    def tree_state(self, x, xd=None, xdd=None):
        """``(positions, velocities, accelerations)`` of every tree joint (order ``tree_joints``)
        with all loops closed.  ``xd``/``xdd`` default to zero; compiled."""
        return compiled_tree_state(self.compiled, x, xd, xdd)

    def joint_motion(self, x, xd=None, xdd=None, initial=None) -> IKSolution:
        """The whole chain at the actuator state ``(x, xd, xdd)`` (n,): the actuators and every
        tree joint (:meth:`tree_state`); rates not given stay None.  ``initial`` is not needed
        (the loop closures are explicit, eqs. 2, 4-5)."""
        q, qd, qdd = self.tree_state(x, xd, xdd)
        xd = None if xd is None else np.asarray(xd, dtype=float)
        xdd = None if xdd is None else np.asarray(xdd, dtype=float)
        return IKSolution(actuators=np.asarray(x, dtype=float), q=q, qd=None if xd is None else qd,
                          qdd=None if xdd is None else qdd, actuators_d=xd, actuators_dd=xdd)

    @property
    def seed_reference(self) -> np.ndarray:
        """Where :meth:`inverse_kinematics` starts without ``initial``: mid-stroke (n,)."""
        return mid_stroke(self.chain)

    def inverse_kinematics(self, pose, twist=None, acceleration=None, initial=None, *,
                           search: bool = True) -> IKSolution:
        """Actuator values (and rates, accelerations) for an end-effector pose (4, 4) in the
        URDF root frame: the solution nearest ``initial`` (actuator values (n,) or a previous
        :class:`~.interface.IKSolution`; default: mid-stroke), with every solution found in
        ``solutions``; tolerance and iteration limit from ``options``; see :mod:`.chain_ik`."""
        if isinstance(initial, IKSolution):
            initial = initial.actuators
        return chain_inverse_kinematics(self, pose, twist, acceleration, initial, self.options.tolerance,
                                        self.options.max_iterations, search)

    def joint_reactions(self, x, xd, u, wrench=None):
        """Wrench transmitted by every tree and cut joint (the 4-bars' pin loads) at the state
        under the actuator forces ``u`` (frames and signs of :mod:`.reactions`): paper 000's
        analytic route, O(n), compiled (:mod:`.compiled.chain_reactions`)."""
        return chain_joint_reactions(self.reactions, x, xd, u, wrench)

    def simulate(self, x0, xd0, duration, **kw):
        """Integrate the forward dynamics in actuator space: see :mod:`.simulation`."""
        from .simulation import simulate
        return simulate(self, x0, xd0, duration, **kw)

    def higher_order_inverse_dynamics(self, x, xd, xdd, xddd, xdddd, **kw):
        """``u, du, ddu`` (+ SEA motor feedforward), paper 002: see :mod:`.higher_order`."""
        from .higher_order import higher_order_inverse_dynamics
        return higher_order_inverse_dynamics(self, x, xd, xdd, xddd, xdddd, **kw)


# inverse kinematics lives in its own module; importable from here as before.
from .chain_ik import chain_inverse_kinematics, chain_jacobian, mid_stroke  # noqa: E402,F401
