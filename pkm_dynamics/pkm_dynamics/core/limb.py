"""Hybrid limbs: loops, constraint resolution and limb inverse kinematics (paper 001 Secs. 3-4).

A *limb* of a parallel manipulator is the part of the robot between the base and the moving
platform; a *hybrid* limb is a serial chain of loops and joints (Sec. 2).  Its model is a
tree of its own (the *limb tree*, :class:`~.tree.TreeModel`): the limb's bodies of the robot's
spanning tree plus the platform attached through the limb's last joint (Fig. 2c).  When the
robot's spanning tree attaches the platform to another limb, the cut joint between this limb
and the platform becomes tree joints of the limb tree (one per DOF of that joint).  The
platform is massless in the limb tree: its dynamics enters separately (eq. 38).

Every other cut joint of the limb closes a fundamental cycle (FC) ``Lambda_lambda``: its
variables are the tree joints on the two paths from the cut joint's bodies to their common
predecessor.  FCs that share joints (not the case for hybrid limbs) are merged into one
group, so the algorithms also run on non-hybrid limbs.  Per FC the constraints
``g(theta_lambda) = 0`` (eq. 12; the cut-joint forms of App. A, :mod:`.cut_joints`) are
resolved for ``m`` dependent coordinates ``y`` in terms of ``delta = n - m`` independent
coordinates ``q`` (eqs. 15-20).  Redundant constraint rows (Remark 4: e.g. a planar loop
closed by a spatial revolute cut joint has 5 rows of rank 2) are handled by keeping an
independent subset of rows (rank-revealing QR), chosen with the coordinates.

Model data (:class:`Limb`, :class:`LoopGroup`) is built once by :func:`build_limbs`; the
algorithms are functions of ``(limb, theta, ...)`` with ``theta`` the limb-tree joint values
``(n_l,)``:

==============================================  ===========================================
:func:`loop_constraints`                         ``g, G, Gdot qd`` of every FC (eqs. 12-14)
:func:`cut_joint_jacobian_derivative`            ``Gdot`` as a matrix (eqs. 54, 60)
:func:`constraint_resolution`                    ``H`` (eqs. 16-18, 20)
:func:`constraint_resolution_derivative`         ``Hdot`` (eq. 19)
:func:`loop_acceleration_bias`                   ``Hdot qd`` (eq. 20)
:func:`solve_loop_constraints`                   Algorithm 2 (inner loop, eq. 33)
:func:`limb_platform_pose`                       ``psi_p`` (eq. 4)
:func:`limb_jacobians`                           ``L_p, L_t, F, K = H F`` (eqs. 22, 25, 27)
:func:`limb_inverse_kinematics_nested`           Algorithms 1 + 2 (eq. 31)
:func:`limb_inverse_kinematics_compound`         Algorithm 3
:func:`compound_newton_step`                     one Newton step of Algorithm 3
:func:`limb_velocity_ik`                         eqs. 27-28
:func:`limb_acceleration_ik`                     eq. 29
:func:`tree_coriolis_matrix`                     tree ``C(theta, thetad)`` for eq. 37
==============================================  ===========================================
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from .cut_joints import CutJointGeometry, cut_joint_constraint, cut_joint_geometry
from .description import RobotDescription
from .errors import ConvergenceError, DescriptionError, SingularityError
from .spatial import Ad, Ad_inv, ad, cross_batch, exp_unit_screws_batch, hat, log_so3, pose_inv
from .tree import TreeModel
from .tree_dynamics import body_jacobian, forward_kinematics, kinematics

#: relative singular-value threshold for rank decisions (redundant constraint rows)
RANK_TOLERANCE = 1e-9
#: names of the six body-fixed twist components, in the order of :mod:`.spatial`
TWIST_COMPONENTS = ("wx", "wy", "wz", "vx", "vy", "vz")


@dataclass(frozen=True)
class LoopGroup:
    """One fundamental cycle of a limb (or several FCs that share joints), paper 001 Sec. 3.3.

    ``joints`` (n,): limb-tree joint indices of ``theta_lambda``; ``dependent`` (r,) and
    ``independent`` (n - r,): the partition ``theta_lambda = (y, q)`` (eq. 16); ``rows`` (r,):
    the independent constraint rows used in ``G_y`` (Remark 4); ``size``: all rows ``m``."""

    cuts: tuple                 # CutJointGeometry of the cut joints, in the limb tree
    joints: np.ndarray
    dependent: np.ndarray
    independent: np.ndarray
    rows: np.ndarray
    size: int

    @property
    def names(self) -> tuple:
        return tuple(c.name for c in self.cuts)

    @property
    def dof(self) -> int:
        """``delta_lambda``: DOF of the cycle (joints minus independent constraints)."""
        return len(self.independent)


@dataclass(frozen=True)
class Limb:
    """Model data of one limb (paper 001 Sec. 3).

    ``tree``: the limb tree (platform massless); ``whole_index`` (n_l,): index of each
    limb-tree joint in the robot's spanning tree (-1: a joint made from a cut joint between
    this limb and the platform); ``independent`` (delta_l,): limb-tree indices of the limb's
    generalized coordinates ``q_(l)`` (eq. 15); ``loops``: its FCs; ``platform_body`` and
    ``platform_offset`` (4x4): the platform frame F_p on the limb tree; ``task_rows``
    (delta_p(l),): rows of the platform twist forming ``L_t`` (the selection ``P_t``, eq. 32);
    ``D_t`` (delta_p(l), delta_p): velocity distribution matrix (eqs. 25-26)."""

    name: str
    tree: TreeModel
    whole_index: np.ndarray
    independent: np.ndarray
    loops: tuple
    platform_body: int
    platform_offset: np.ndarray
    task_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    D_t: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    kin: "_LimbKinematics | None" = field(default=None, repr=False, compare=False)

    @property
    def n(self) -> int:
        return self.tree.nq

    @property
    def dof(self) -> int:
        """``delta_l``: DOF of the separated limb."""
        return len(self.independent)

    @property
    def P_t(self) -> np.ndarray:
        """Selection matrix ``P_t`` (delta_p(l), 6) of eq. 31-32."""
        P = np.zeros((len(self.task_rows), 6))
        P[np.arange(len(self.task_rows)), self.task_rows] = 1.0
        return P

    @property
    def joint_names(self) -> tuple:
        return self.tree.joint_names


# ---------------------------------------------------------------------------------------------
# building the limbs from the robot description
# ---------------------------------------------------------------------------------------------

def _components(nodes, edges):
    parent = {v: v for v in nodes}

    def find(v):
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups = {}
    for v in nodes:
        groups.setdefault(find(v), []).append(v)
    return [sorted(g) for _, g in sorted(groups.items())]


def _screw(axis, prismatic=False):
    a = np.asarray(axis, dtype=float)
    return np.concatenate([np.zeros(3), a]) if prismatic else np.concatenate([a, np.zeros(3)])


def _cut_to_joints(tree: TreeModel, cut, limb_side_is_parent: bool, C0: np.ndarray):
    """Tree joints ``[(B, X, type, suffix), ...]`` replacing a cut joint between a limb body
    (the predecessor) and the platform (the last body).  The frames of the intermediate
    bodies are the limb-side cut frame; the last body's frame is the platform body frame."""
    if limb_side_is_parent:
        L = (cut.parent_link, cut.parent_origin, cut.parent_axis)
        P = (cut.child_link, cut.child_origin, cut.child_axis)
    else:
        L = (cut.child_link, cut.child_origin, cut.child_axis)
        P = (cut.parent_link, cut.parent_origin, cut.parent_axis)
    bl, Ol = tree.frame(L[0])
    bp, Op = tree.frame(P[0])
    T_L = Ol @ L[1]                      # limb-side cut frame in its body frame
    T_P = Op @ P[1]                      # platform-side cut frame in the platform body frame
    F_L = (np.eye(4) if bl < 0 else C0[bl]) @ T_L
    F_P = C0[bp] @ T_P
    R0 = pose_inv(F_L) @ F_P             # platform cut frame in the limb cut frame at q = 0
    last_B = R0 @ pose_inv(T_P)
    last_Ad = Ad(T_P @ pose_inv(R0))
    if cut.type in ("revolute", "prismatic"):
        axis = L[2]
        return [(T_L @ last_B, last_Ad @ _screw(axis, cut.type == "prismatic"), cut.type, "")]
    if cut.type == "universal":
        axis_P = P[2] if P[2] is not None else np.array([0.0, 0.0, 1.0])
        return [(T_L, _screw(L[2]), "revolute", "_1"),
                (last_B, Ad(T_P) @ _screw(axis_P), "revolute", "_2")]
    # spherical: three revolute joints about the limb-side cut frame's x, y, z axes
    return [(T_L, _screw([1.0, 0, 0]), "revolute", "_x"),
            (np.eye(4), _screw([0, 1.0, 0]), "revolute", "_y"),
            (last_B, last_Ad @ _screw([0, 0, 1.0]), "revolute", "_z")]


def _limb_tree(tree: TreeModel, name, bodies, platform_joint, p_body) -> tuple:
    """Limb tree from the robot tree's ``bodies`` (sorted) plus the massless platform."""
    new = {b: k for k, b in enumerate(bodies)}
    names, types, body_names, parent, Bs, Xs, Ms, whole = [], [], [], [], [], [], [], []
    for b in bodies:
        pb = int(tree.parent[b])
        if pb >= 0 and pb not in new:
            raise DescriptionError(f"limb '{name}': body of joint '{tree.joint_names[b]}' hangs from "
                                   f"outside the limb (the platform?): not supported")
        names.append(tree.joint_names[b]), types.append(tree.joint_types[b])
        body_names.append(tree.body_names[b]), parent.append(new.get(pb, -1))
        Bs.append(tree.B[b]), Xs.append(tree.X[b]), Ms.append(tree.M[b]), whole.append(b)
    kind, data = platform_joint
    if kind == "tree":
        pb = int(tree.parent[p_body])
        names.append(tree.joint_names[p_body]), types.append(tree.joint_types[p_body])
        body_names.append(tree.body_names[p_body]), parent.append(new.get(pb, -1))
        Bs.append(tree.B[p_body]), Xs.append(tree.X[p_body]), Ms.append(np.zeros((6, 6)))
        whole.append(p_body)
    else:
        cut, joints, limb_body = data
        prev = new.get(limb_body, -1)
        for k, (B, X, typ, suffix) in enumerate(joints):
            names.append(cut.name + suffix), types.append(typ)
            last = k == len(joints) - 1
            body_names.append(tree.body_names[p_body] if last else f"{cut.name}{suffix}_body")
            parent.append(prev), Bs.append(B), Xs.append(X), Ms.append(np.zeros((6, 6)))
            whole.append(-1)
            prev = len(names) - 1
    p_new = len(names) - 1
    body_map = dict(new)
    body_map[p_body] = p_new
    frames = {link: (body_map[b] if b >= 0 else -1, off) for link, (b, off) in tree.frames.items()
              if b < 0 or b in body_map}
    n = len(names)
    idx = [w for w in whole]
    lim = lambda arr, default: np.array([arr[w] if w >= 0 else default for w in idx])  # noqa: E731
    lt = TreeModel(
        name=f"{tree.name}/{name}", root_link=tree.root_link, joint_names=tuple(names),
        joint_types=tuple(types), body_names=tuple(body_names), parent=np.array(parent, dtype=int),
        B=np.array(Bs).reshape(n, 4, 4), X=np.array(Xs).reshape(n, 6), M=np.array(Ms).reshape(n, 6, 6),
        lower=lim(tree.lower, -np.inf), upper=lim(tree.upper, np.inf),
        velocity_limit=lim(tree.velocity_limit, np.inf), effort_limit=lim(tree.effort_limit, np.inf),
        frames=frames, base_mass=tree.base_mass, gravity=tree.gravity.copy())
    return lt, np.array(whole, dtype=int), p_new


def _pivoted_columns(A: np.ndarray, r: int) -> np.ndarray:
    """Indices of ``r`` well-conditioned columns of ``A`` (QR with column pivoting)."""
    if r == 0:
        return np.zeros(0, dtype=int)
    _, _, piv = scipy.linalg.qr(A, mode="economic", pivoting=True)
    return np.sort(piv[:r])


def _rank(A: np.ndarray, tol: float = RANK_TOLERANCE) -> int:
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > tol * max(1.0, s[0])))


def _select_coordinates(G: np.ndarray, joints: np.ndarray, preferred: set, forced: set | None,
                        what: str):
    """Rows and dependent/independent joints of one FC from its Jacobian ``G`` (m, n_lambda):
    Remark 3 (choice for conditioning) and Remark 4 (redundant rows)."""
    r = _rank(G)
    rows = _pivoted_columns(G.T, r)
    Gr = G[rows]
    n = len(joints)
    if forced:
        indep_local = [k for k in range(n) if joints[k] in forced]
        dep_local = [k for k in range(n) if joints[k] not in forced]
        if len(dep_local) != r or _rank(Gr[:, dep_local]) < r:
            raise DescriptionError(f"{what}: the given independent coordinates do not resolve the "
                                   f"loop (it has {n - r} DOF and rank-{r} constraints)")
        return rows, np.array(joints[dep_local]), np.array(joints[indep_local])
    cand = [k for k in range(n) if joints[k] not in preferred]
    dep_local = None
    if len(cand) >= r:
        sel = [cand[k] for k in _pivoted_columns(Gr[:, cand], r)]
        s = np.linalg.svd(Gr[:, sel], compute_uv=False) if r else np.ones(1)
        s_all = np.linalg.svd(Gr, compute_uv=False) if r else np.ones(1)
        if r == 0 or s[-1] > 1e-3 * s_all[-1]:
            dep_local = sel
    if dep_local is None:
        dep_local = list(_pivoted_columns(Gr, r))
    indep_local = [k for k in range(n) if k not in dep_local]
    return rows, np.array(joints[sorted(dep_local)]), np.array(joints[indep_local])


def _task_rows(Lp: np.ndarray, task: list, what: str) -> np.ndarray:
    """Rows of ``L_p`` forming the square task-space Jacobian ``L_t``: the task coordinates
    first, then the best-conditioned remaining rows up to the limb's platform DOF."""
    dof = _rank(Lp)
    if dof < Lp.shape[1]:
        raise DescriptionError(f"{what} is structurally redundant (delta_l = {Lp.shape[1]} DOF, "
                               f"platform DOF {dof}): not supported")
    if _rank(Lp[task]) < len(task):
        raise DescriptionError(f"{what} cannot produce the task-space coordinates "
                               f"{[TWIST_COMPONENTS[t] for t in task]}")
    rows = list(task)
    linear = sum(1 for t in task if t >= 3) >= len(task) / 2
    while len(rows) < dof:
        cand = [c for c in range(6) if c not in rows]
        s = {c: np.linalg.svd(Lp[rows + [c]], compute_uv=False)[-1] for c in cand}
        best = max(s.values())
        # prefer components of the task's kind (translations for a translational task space,
        # as eq. 32 does), unless that is much worse conditioned than the best choice
        same = [c for c in cand if (c >= 3) == linear and s[c] > 0.1 * best]
        rows.append(max(same, key=s.get) if same else max(cand, key=s.get))
    return np.array(rows, dtype=int)


def description_independent_coordinates(desc: RobotDescription) -> list:
    """Tree joints named in the optional ``independent="..."`` attribute of ``<constraint>``
    elements: the independent coordinates to use for that cut joint's loop (Remark 3)."""
    return [nm for cut in desc.cut_joints for nm in cut.independent]


def build_limbs(desc: RobotDescription, independent=None) -> tuple:
    """Limbs of a robot description (paper 001 Secs. 2-3), each a :class:`Limb`.

    With a ``<platform>``: the limbs are the connected components of the robot's graph (tree
    joints and cut joints) without base and platform, ordered by their first tree joint.
    Without a platform (a module chain, a serial-parallel arm): one limb, the whole tree, with
    the end effector (if any) as its "platform" frame.  ``independent``: optional names of
    tree joints to use as independent coordinates of their loops, added to those of the
    description (``<constraint ... independent="joint names">``); other loops' coordinates are
    chosen for conditioning (Remark 3, actuated joints preferred)."""
    tree = desc.tree
    names = list(independent) if independent is not None else []
    names += description_independent_coordinates(desc)
    forced = {tree.joint_index(nm) for nm in names}
    actuated = {tree.joint_index(nm) for nm in desc.actuated_joints}
    C0 = forward_kinematics(tree, np.zeros(tree.nq))
    cut_bodies = [(c, tree.frame(c.parent_link)[0], tree.frame(c.child_link)[0]) for c in desc.cut_joints]
    specs = []
    if desc.platform is None:
        ee = desc.end_effector
        if ee is not None:
            pb, off = tree.frame(ee)
        else:
            pb, off = tree.nq - 1, np.eye(4)
        lt, whole, _ = _limb_tree_plain(tree)
        specs.append(("limb", lt, whole, [c for c, _, _ in cut_bodies], pb, off, []))
    else:
        p_body, p_off = tree.frame(desc.platform.link)
        if p_body < 0:
            raise DescriptionError(f"platform link '{desc.platform.link}' is fixed to the base")
        p_off = p_off @ desc.platform.origin
        for i in range(tree.nq):
            if i != p_body and p_body in tree.support(i):
                raise DescriptionError(f"joint '{tree.joint_names[i]}' moves a body mounted on the "
                                       "platform: tools on the platform are not supported")
        nodes = [i for i in range(tree.nq) if i != p_body]
        edges = [(i, int(tree.parent[i])) for i in nodes if tree.parent[i] >= 0 and tree.parent[i] != p_body]
        edges += [(k, r) for _, k, r in cut_bodies if k >= 0 and r >= 0 and p_body not in (k, r)]
        task = [TWIST_COMPONENTS.index(c) for c in desc.platform.task_space]
        for li, bodies in enumerate(_components(nodes, edges)):
            name = f"limb{li + 1}"
            S = set(bodies)
            into = []
            if int(tree.parent[p_body]) in S:
                into.append(("tree", None))
            intra = []
            for c, k, r in cut_bodies:
                ends = {k, r}
                if p_body in ends and (ends - {p_body}) & S:
                    into.append(("cut", c))
                elif ends & S:
                    intra.append(c)
            if not into:
                raise DescriptionError(f"{name} (joints {[tree.joint_names[b] for b in bodies]}) is "
                                       "not connected to the platform")
            kind, c0 = into[0]
            intra += [c for kd, c in into[1:]]
            if kind == "tree":
                pj = ("tree", None)
            else:
                k = tree.frame(c0.parent_link)[0]
                limb_is_parent = k != p_body
                limb_body = k if limb_is_parent else tree.frame(c0.child_link)[0]
                pj = ("cut", (c0, _cut_to_joints(tree, c0, limb_is_parent, C0), limb_body))
            lt, whole, p_new = _limb_tree(tree, name, bodies, pj, p_body)
            specs.append((name, lt, whole, intra, p_new, p_off, task))
    limbs = []
    for name, lt, whole, cuts, pb, off, task in specs:
        limbs.append(_make_limb(name, lt, whole, cuts, pb, off, task, actuated, forced, desc))
    return tuple(limbs)


def _limb_tree_plain(tree: TreeModel):
    return tree, np.arange(tree.nq), tree.nq - 1


def _make_limb(name, lt, whole, cuts, pb, off, task, actuated, forced, desc) -> Limb:
    geos = [cut_joint_geometry(lt, c) for c in cuts]
    theta0 = np.zeros(lt.nq)
    C = forward_kinematics(lt, theta0)
    sup = {}

    def support(b):
        if b not in sup:
            sup[b] = set(lt.support(b)) if b >= 0 else set()
        return sup[b]

    loop_sets = [support(g.body_k) ^ support(g.body_r) for g in geos]
    groups = _components(list(range(len(geos))),
                         [(a, b) for a in range(len(geos)) for b in range(a + 1, len(geos))
                          if loop_sets[a] & loop_sets[b]])
    pref = {j for j in range(lt.nq) if whole[j] in actuated}
    forced_l = {j for j in range(lt.nq) if whole[j] in forced}
    loops = []
    in_loop = set()
    for grp in groups:
        joints = np.array(sorted(set().union(*(loop_sets[a] for a in grp))), dtype=int)
        if len(joints) == 0:
            continue
        G = np.vstack([cut_joint_constraint(lt, geos[a], C)[1] for a in grp])[:, joints]
        what = f"{name} loop ({', '.join(geos[a].name for a in grp)})"
        rows, dep, ind = _select_coordinates(G, joints, pref, forced_l & set(joints) or None, what)
        loops.append(LoopGroup(tuple(geos[a] for a in grp), joints, dep, ind, rows,
                               int(sum(geos[a].size for a in grp))))
        in_loop |= set(joints.tolist())
    indep = sorted(set(range(lt.nq)) - in_loop | {int(j) for lp in loops for j in lp.independent})
    limb = Limb(name, lt, whole, np.array(indep, dtype=int), tuple(loops), pb, off,
                kin=_limb_kinematics(lt))
    if task:
        jac = limb_jacobians(limb, theta0)
        rows = _task_rows(jac.L_p, task, name)
        D = np.zeros((len(rows), len(task)))
        for i, r in enumerate(rows):
            if r in task:
                D[i, task.index(r)] = 1.0
        limb = Limb(name, lt, whole, limb.independent, limb.loops, pb, off, rows, D, limb.kin)
        if len(rows) != limb.dof:
            raise DescriptionError(f"{name}: {limb.dof} DOF but platform DOF {len(rows)}")
    return limb


# ---------------------------------------------------------------------------------------------
# fast position-level kinematics of a limb tree (the inner loops of Algorithms 1-3)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _LimbKinematics:
    """Constant per-joint data for the closed-form exponentials ``exp(X theta)`` of unit screws
    ``X = (w, v)``, ``|w| = 1`` (revolute) or ``(0, e)`` (prismatic)
    (:func:`.spatial.exp_unit_screws_batch`)."""

    parent: tuple
    B: np.ndarray
    X: np.ndarray
    W: np.ndarray
    W2: np.ndarray
    Wv: np.ndarray
    W2v: np.ndarray
    revolute: np.ndarray
    supports: tuple
    support_mask: np.ndarray = None   # (n, n) row i: 1.0 at the joints supporting body i


def _limb_kinematics(tree: TreeModel) -> _LimbKinematics:
    X = tree.X
    w = X[:, :3]
    rev = np.linalg.norm(w, axis=1) > 0.5
    if np.any(np.abs(np.linalg.norm(w[rev], axis=1) - 1.0) > 1e-9):
        raise DescriptionError(f"{tree.name}: joint screws must have unit rotation axes")
    W = np.array([hat(x) for x in w]).reshape(-1, 3, 3)
    W2 = W @ W
    v = X[:, 3:]
    supports = tuple(np.array(tree.support(i), dtype=int) for i in range(tree.nq))
    mask = np.zeros((tree.nq, tree.nq))
    for i, S in enumerate(supports):
        mask[i, S] = 1.0
    return _LimbKinematics(tuple(int(p) for p in tree.parent), tree.B.copy(), X.copy(), W, W2,
                           np.einsum("nij,nj->ni", W, v), np.einsum("nij,nj->ni", W2, v), rev,
                           supports, mask)


_I4 = np.eye(4)     # pose of the fixed base (read only)
_I4.setflags(write=False)


def _fk(kin: _LimbKinematics, theta) -> tuple:
    """Absolute poses ``C`` (n, 4, 4) and spatial screws ``Y = Ad(C_i) X_i`` (n, 6)."""
    th = np.asarray(theta, dtype=float)
    P = kin.B @ exp_unit_screws_batch(th, kin.X, kin.W, kin.W2, kin.Wv, kin.W2v)
    C = np.empty_like(P)
    for i, p in enumerate(kin.parent):
        C[i] = P[i] if p < 0 else C[p] @ P[i]
    R = C[:, :3, :3]
    ws = np.einsum("nij,nj->ni", R, kin.X[:, :3])
    vs = np.einsum("nij,nj->ni", R, kin.X[:, 3:]) + cross_batch(C[:, :3, 3], ws)
    return C, np.concatenate([ws, vs], axis=1)


def _spatial_to_body(C, Y, kin, body, offset=None):
    """Body-fixed Jacobian (6, n) of ``C[body] @ offset`` from spatial screws ``Y``."""
    J = np.zeros((6, len(Y)))
    if body < 0:
        return J
    F = C[body] if offset is None else C[body] @ offset
    S = kin.supports[body]
    J[:, S] = Ad_inv(F) @ Y[S].T
    return J


def _cut_eval(geo: CutJointGeometry, C, Y, kin):
    """Residual (m,) and Jacobian (m, n) of one cut joint (paper 001 eqs. 50-51, 55-56, 58-59),
    from the spatial screws: ``G = B (Ad(C_k)^-1 Y_Sk ; Ad(C_r)^-1 Y_Sr)``."""
    k, r = geo.body_k, geo.body_r
    Ck = _I4 if k < 0 else C[k]
    Cr = _I4 if r < 0 else C[r]
    Rk, Rr = Ck[:3, :3], Cr[:3, :3]
    R_kr = Rk.T @ Rr
    dd = Rk.T @ (Cr[:3, 3] - Ck[:3, 3]) + R_kr @ geo.d_r
    w = geo.u_b @ R_kr.T
    g = np.concatenate([geo.u_pos @ (dd - geo.d_k), np.einsum("ij,ij->i", geo.u_a, w)])
    m = len(g)
    Bk = np.zeros((m, 6))
    Br = np.zeros((m, 6))
    npos = len(geo.u_pos)
    if npos:
        Bk[:npos, :3] = geo.u_pos @ hat(dd)
        Bk[:npos, 3:] = -geo.u_pos
        uR = geo.u_pos @ R_kr
        Br[:npos, :3] = -uR @ hat(geo.d_r)
        Br[:npos, 3:] = uR
    if len(geo.u_a):
        Bk[npos:, :3] = cross_batch(geo.u_a, w)                  # u_a^T [R_kr u_b]x
        Br[npos:, :3] = -cross_batch(geo.u_a @ R_kr, geo.u_b)     # -u_a^T R_kr [u_b]x
    # columns of the joints supporting body k (r): Ad(C_k)^-1 Y_Sk, zero elsewhere
    G = (Bk @ Ad_inv(Ck)) @ (Y.T * kin.support_mask[k]) if k >= 0 else np.zeros((m, len(Y)))
    if r >= 0:
        G += (Br @ Ad_inv(Cr)) @ (Y.T * kin.support_mask[r])
    return g, G


def _evaluate(limb: Limb, theta):
    """``(C, Y, [(g, G) per FC])`` at ``theta``: the position-level data of one Newton step."""
    kin = limb.kin if limb.kin is not None else _limb_kinematics(limb.tree)
    C, Y = _fk(kin, theta)
    cons = []
    for lp in limb.loops:
        parts = [_cut_eval(geo, C, Y, kin) for geo in lp.cuts]
        if len(parts) == 1:
            cons.append((parts[0][0], parts[0][1], None))
        else:
            cons.append((np.concatenate([p[0] for p in parts]), np.vstack([p[1] for p in parts]), None))
    return C, Y, cons


# ---------------------------------------------------------------------------------------------
# loop constraints and their resolution (eqs. 12-20)
# ---------------------------------------------------------------------------------------------

def loop_constraints(limb: Limb, C: np.ndarray, V=None, A0=None) -> list:
    """Per FC: ``(g (m,), G (m, n_l), Gdot qd (m,))`` at absolute poses ``C`` (eqs. 12-14).

    ``V``, ``A0``: body twists and accelerations for ``qdd = 0`` (from
    :func:`~.tree_dynamics.kinematics`) for the acceleration bias."""
    out = []
    for lp in limb.loops:
        parts = [cut_joint_constraint(limb.tree, geo, C, V, A0) for geo in lp.cuts]
        out.append((np.concatenate([p[0] for p in parts]), np.vstack([p[1] for p in parts]),
                    np.concatenate([p[2] for p in parts])))
    return out


def loop_residual(limb: Limb, theta) -> float:
    """Largest absolute cut-joint residual ``max |g|`` over the limb's FCs (m, rad)."""
    res = [np.max(np.abs(g)) for g, _, _ in _evaluate(limb, theta)[2] if len(g)]
    return float(max(res)) if res else 0.0


def _body_jacobian_derivative(tree: TreeModel, C, V, body: int) -> np.ndarray:
    """``Jdot`` (6, n) of the body-fixed Jacobian of ``body``: column ``j`` is
    ``-ad(V_k - Ad(C_kj) V_j) Ad(C_kj) X_j`` (paper 002 Lemma 1, eq. 23, body-fixed form)."""
    Jd = np.zeros((6, tree.nq))
    if body < 0:
        return Jd
    Ck_inv = pose_inv(C[body])
    for j in tree.support(body):
        A = Ad(Ck_inv @ C[j])
        Jd[:, j] = -ad(V[body] - A @ V[j]) @ (A @ tree.X[j])
    return Jd


def cut_joint_jacobian_derivative(tree: TreeModel, geo: CutJointGeometry, C, V) -> np.ndarray:
    """``Gdot`` (m, n) of one cut joint as a matrix, ``Gdot = Bdot J + B Jdot`` (paper 001
    eqs. 54-55 and 59-60; :mod:`.cut_joints` gives ``G`` and the vector ``Gdot qd``).

    ``C``: absolute poses (n, 4, 4); ``V``: body-fixed twists (n, 6) for the joint rates."""
    k, r = geo.body_k, geo.body_r
    Ck = _I4 if k < 0 else C[k]
    Cr = _I4 if r < 0 else C[r]
    Vk = np.zeros(6) if k < 0 else V[k]
    Vr = np.zeros(6) if r < 0 else V[r]
    Rk, Rr = Ck[:3, :3], Cr[:3, :3]
    R_kr = Rk.T @ Rr
    dd = Rk.T @ (Cr[:3, 3] - Ck[:3, 3]) + R_kr @ geo.d_r
    wk, wr = Vk[:3], Vr[:3]
    dR = R_kr @ hat(wr) - hat(wk) @ R_kr
    Z = np.zeros((3, 3))
    B_pos = np.hstack([hat(dd), -np.eye(3), -R_kr @ hat(geo.d_r), R_kr])
    d_dot = B_pos @ np.concatenate([Vk, Vr])
    Bd_pos = np.hstack([hat(d_dot), Z, -dR @ hat(geo.d_r), dR])
    B_rows, Bd_rows = [geo.u_pos @ B_pos], [geo.u_pos @ Bd_pos]
    for ua, ub in zip(geo.u_a, geo.u_b):
        w, wd = R_kr @ ub, dR @ ub
        B_rows.append((ua @ np.hstack([hat(w), Z, -R_kr @ hat(ub), Z]))[None])
        Bd_rows.append((ua @ np.hstack([hat(wd), Z, -dR @ hat(ub), Z]))[None])
    Bm, Bd = np.vstack(B_rows), np.vstack(Bd_rows)
    J = np.vstack([body_jacobian(tree, C, k), body_jacobian(tree, C, r)])
    Jd = np.vstack([_body_jacobian_derivative(tree, C, V, k), _body_jacobian_derivative(tree, C, V, r)])
    return Bd @ J + Bm @ Jd


def _resolve(lp: LoopGroup, G: np.ndarray):
    """``(Gy, Gq)`` of a FC from its full Jacobian rows (m, n_l): the selected rows."""
    Gr = G[lp.rows]
    return Gr[:, lp.dependent], Gr[:, lp.independent]


def _solve(A, b, limb, lp=None, what=None):
    """``A^-1 b``; a singular ``A`` raises :class:`SingularityError` naming the limb and the loop
    ``lp`` (or ``what``) -- the message is only formatted then."""
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        where = f"{limb.name} loop {lp.names}" if lp is not None else f"{limb.name} {what or ''}".rstrip()
        raise SingularityError(f"{where}: singular matrix (a loop or limb singularity)") from None


def constraint_resolution(limb: Limb, theta=None, constraints=None) -> np.ndarray:
    """``H_(l)`` (n_l, delta_l) with ``thetad = H qd`` (eqs. 16-18 per FC, eq. 20 assembled).

    Columns follow ``limb.independent``; rows of an independent coordinate are unit rows, rows of
    a dependent coordinate hold ``-G_y^-1 G_q`` (eq. 18)."""
    if constraints is None:
        constraints = _evaluate(limb, theta)[2]
    H = np.zeros((limb.n, limb.dof))
    col = {int(j): c for c, j in enumerate(limb.independent)}
    for j, c in col.items():
        H[j, c] = 1.0
    for lp, (_, G, _) in zip(limb.loops, constraints):
        Gy, Gq = _resolve(lp, G)
        Hy = -_solve(Gy, Gq, limb, lp)
        cols = [col[int(j)] for j in lp.independent]
        H[np.ix_(lp.dependent, cols)] = Hy
    return H


def constraint_resolution_derivative(limb: Limb, theta, thetad, H=None) -> np.ndarray:
    """``Hdot_(l)`` (n_l, delta_l), eq. 19: rows of ``y``: ``-G_y^-1 (Gdot_y H_y + Gdot_q)``.

    ``thetad`` (n_l,) must satisfy the velocity constraints (eq. 13)."""
    _, C, V, _ = kinematics(limb.tree, theta, thetad)
    cons = loop_constraints(limb, C)
    H = constraint_resolution(limb, constraints=cons) if H is None else H
    Hd = np.zeros_like(H)
    col = {int(j): c for c, j in enumerate(limb.independent)}
    for lp, (_, G, _) in zip(limb.loops, cons):
        Gd = np.vstack([cut_joint_jacobian_derivative(limb.tree, geo, C, V) for geo in lp.cuts])
        Gy, _ = _resolve(lp, G)
        Gdy, Gdq = _resolve(lp, Gd)
        cols = [col[int(j)] for j in lp.independent]
        Hy = H[np.ix_(lp.dependent, cols)]
        Hd[np.ix_(lp.dependent, cols)] = -_solve(Gy, Gdy @ Hy + Gdq, limb, lp)
    return Hd


def _cut_bias(geo: CutJointGeometry, C, V, A0) -> np.ndarray:
    """``Gdot thetad`` (m,) of one cut joint: ``B (Vdot_k, Vdot_r)|_{thetadd=0} + Bdot (V_k, V_r)``
    (paper 001 eqs. 53-55, 57, 60); same formula as :func:`.cut_joints.cut_joint_constraint`
    without rebuilding ``G``."""
    k, r = geo.body_k, geo.body_r
    z = np.zeros(6)
    Ck = _I4 if k < 0 else C[k]
    Cr = _I4 if r < 0 else C[r]
    Vk, Vr = (z if k < 0 else V[k]), (z if r < 0 else V[r])
    Ak, Ar = (z if k < 0 else A0[k]), (z if r < 0 else A0[r])
    Rk, Rr = Ck[:3, :3], Cr[:3, :3]
    R_kr = Rk.T @ Rr
    dd = Rk.T @ (Cr[:3, 3] - Ck[:3, 3]) + R_kr @ geo.d_r
    wk, vk, wr, vr = Vk[:3], Vk[3:], Vr[:3], Vr[3:]
    dR = R_kr @ hat(wr) - hat(wk) @ R_kr
    rd = R_kr @ hat(geo.d_r)
    d_dot = hat(dd) @ wk - vk - rd @ wr + R_kr @ vr               # B_pos (V_k, V_r), eq. 52
    acc = hat(dd) @ Ak[:3] - Ak[3:] - rd @ Ar[:3] + R_kr @ Ar[3:]   # B_pos (Vdot_k, Vdot_r)
    bdot = cross_batch(d_dot, wk) - dR @ hat(geo.d_r) @ wr + dR @ vr     # Bdot_pos (V_k, V_r)
    out = [geo.u_pos @ (acc + bdot)]
    if len(geo.u_a):
        w = geo.u_b @ R_kr.T                                           # rows R_kr u_b
        wd = geo.u_b @ dR.T
        rot = (cross_batch(w, Ak[:3]) - (R_kr @ cross_batch(geo.u_b, Ar[:3]).T).T
               + cross_batch(wd, wk) - (dR @ cross_batch(geo.u_b, wr).T).T)
        out.append(np.einsum("ij,ij->i", geo.u_a, rot))
    return np.concatenate(out)


def loop_acceleration_bias(limb: Limb, theta, thetad, state=None, motion=None) -> np.ndarray:
    """``Hdot qd`` (n_l,) of eq. 20 from the cut-joint acceleration bias ``Gdot thetad``:
    rows of ``y`` hold ``-G_y^-1 (Gdot thetad)``, rows of ``q`` zero.  ``state``:
    ``_evaluate(limb, theta)``; ``motion``: ``(C, V, A0)`` of the tree motion with
    ``thetadd = 0`` (:func:`~.tree_dynamics.kinematics`), computed when not given."""
    C, _, cons = _evaluate(limb, theta) if state is None else state
    if motion is None:
        _, C, V, A0 = kinematics(limb.tree, theta, thetad)
    else:
        C, V, A0 = motion
    out = np.zeros(limb.n)
    for lp, (_, G, _) in zip(limb.loops, cons):
        bias = np.concatenate([_cut_bias(geo, C, V, A0) for geo in lp.cuts])
        Gy, _ = _resolve(lp, G)
        out[lp.dependent] = -_solve(Gy, bias[lp.rows], limb, lp)
    return out


def solve_loop_constraints(limb: Limb, theta, q, tol: float = 1e-10, max_iter: int = 30,
                           state=None, return_state: bool = False):
    """Algorithm 2 (inner loop): ``theta = psi_(l)(q)`` for the limb's generalized coordinates
    ``q`` (delta_l,), Newton-Raphson from the admissible ``theta`` (n_l,) (eq. 33).

    All FCs are iterated side by side (they are independent for a hybrid limb), each until its
    residual ``||g|| <= tol``.  Returns ``(theta, iterations)`` with the number of Newton steps
    of each FC (the predictor step of eq. 33 counts as the first); with ``return_state`` also
    ``_evaluate(limb, theta)`` at the solution.  ``state``: ``_evaluate`` at the start."""
    theta = np.array(theta, dtype=float)
    q = np.asarray(q, dtype=float)
    cons = (_evaluate(limb, theta) if state is None else state)[2]
    dq = q - theta[limb.independent]
    dtheta_q = np.zeros(limb.n)
    dtheta_q[limb.independent] = dq
    its = np.zeros(len(limb.loops), dtype=int)
    # predictor (eq. 33): linearized constraints at the start configuration
    for i, (lp, (g, G, _)) in enumerate(zip(limb.loops, cons)):
        Gy, Gq = _resolve(lp, G)
        rhs = g[lp.rows] + Gq @ dtheta_q[lp.independent]
        theta[lp.dependent] -= _solve(Gy, rhs, limb, lp)
        its[i] = 1
    theta[limb.independent] = q
    active = np.ones(len(limb.loops), dtype=bool)
    while True:
        st = _evaluate(limb, theta)
        cons = st[2]
        for i, (lp, (g, G, _)) in enumerate(zip(limb.loops, cons)):
            if not active[i]:
                continue
            if np.linalg.norm(g) <= tol:
                active[i] = False
                continue
            if its[i] >= max_iter:
                raise ConvergenceError(f"{limb.name} loop {lp.names}: constraints not solved in "
                                       f"{max_iter} iterations (|g| = {np.linalg.norm(g):.3g} > {tol:g})")
            Gy, _ = _resolve(lp, G)
            theta[lp.dependent] -= _solve(Gy, g[lp.rows], limb, lp)
            its[i] += 1
        if not active.any():
            return (theta, its, st) if return_state else (theta, its)


# ---------------------------------------------------------------------------------------------
# platform kinematics of a limb (eqs. 4, 21-22, 24-27)
# ---------------------------------------------------------------------------------------------

def limb_platform_pose(limb: Limb, theta, C=None) -> np.ndarray:
    """``C_p = psi_p(theta)`` (4x4), pose of the platform frame (eq. 4)."""
    if C is None:
        C = _fk(limb.kin, theta)[0] if limb.kin is not None else forward_kinematics(limb.tree, theta)
    return C[limb.platform_body] @ limb.platform_offset


@dataclass(frozen=True)
class LimbJacobians:
    """Velocity-level quantities of a limb at one configuration (paper 001 eqs. 20-27).

    ``H`` (n_l, delta_l); ``J_p`` (6, n_l) platform Jacobian (eq. 5); ``L_p = J_p H`` (6,
    delta_l) (eq. 22); ``L_t = P_t L_p`` (delta_p(l), delta_l); ``F = L_t^-1 D_t`` (delta_l,
    delta_p) (eq. 27); ``K = H F`` (n_l, delta_p) with ``thetad = K V_t`` (eq. 28)."""

    H: np.ndarray
    J_p: np.ndarray
    L_p: np.ndarray
    L_t: np.ndarray
    F: np.ndarray
    K: np.ndarray

    @property
    def condition(self) -> float:
        """``sqrt(kappa(F^T F)) = kappa(F)``, the measure of Fig. 20b (inf when singular)."""
        if self.F.size == 0:
            return 1.0
        s = np.linalg.svd(self.F, compute_uv=False)
        return float(s[0] / s[-1]) if s[-1] > 0 else np.inf


def limb_jacobians(limb: Limb, theta, state=None) -> LimbJacobians:
    """:class:`LimbJacobians` at ``theta`` (n_l,); ``state``: ``_evaluate(limb, theta)`` if known."""
    C, Y, constraints = _evaluate(limb, theta) if state is None else state
    H = constraint_resolution(limb, constraints=constraints)
    J = _spatial_to_body(C, Y, limb.kin, limb.platform_body, limb.platform_offset)
    Lp = J @ H
    if len(limb.task_rows) == 0:
        return LimbJacobians(H, J, Lp, np.zeros((0, limb.dof)), np.zeros((limb.dof, 0)), np.zeros((limb.n, 0)))
    Lt = Lp[limb.task_rows]
    try:
        F = np.linalg.solve(Lt, limb.D_t)
    except np.linalg.LinAlgError:
        F = np.full((limb.dof, limb.D_t.shape[1]), np.inf)
    return LimbJacobians(H, J, Lp, Lt, F, H @ F)


def pose_error(limb: Limb, C_current, C_target) -> np.ndarray:
    """``Delta x_t = P_t (Delta C_p - I)^vee`` (eq. 31), ``Delta C_p = C_current^-1 C_target``:
    rotation part from the logarithm of ``Delta R``, translation part ``Delta C_p``'s."""
    D = pose_inv(C_current) @ C_target
    e = np.concatenate([log_so3(D[:3, :3]), D[:3, 3]])
    return e[limb.task_rows]


def _norm(limb: Limb, dx, alpha=1.0, beta=1.0) -> float:
    """Left-invariant norm ``alpha |xi| + beta |eta|`` of Sec. 4.1.1 on the selected rows."""
    rot = limb.task_rows < 3
    return float(alpha * np.linalg.norm(dx[rot]) + beta * np.linalg.norm(dx[~rot]))


@dataclass
class LimbIKInfo:
    """Iteration record of one limb IK solve: outer iterations and, per outer step, the inner
    iterations of each FC (nested scheme) -- the data of Figs. 11-13 and 16; ``state``: the
    position-level data ``_evaluate(limb, theta)`` at the returned ``theta``."""

    outer: int = 0
    inner: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    state: tuple | None = field(default=None, repr=False)


def _check_condition(limb, jac: LimbJacobians, threshold):
    if threshold is None:
        return
    k = jac.condition
    if not np.isfinite(k) or k > threshold:
        raise SingularityError(f"{limb.name}: inverse kinematics Jacobian F is ill-conditioned "
                               f"(kappa(F) = {k:.3g} > threshold {threshold:.3g}): near an input singularity")


def limb_inverse_kinematics_nested(limb: Limb, C_target, theta0, tol: float = 1e-10,
                                   inner_tol: float | None = None, max_iter: int = 50,
                                   singularity_threshold: float | None = None):
    """Algorithm 1 with Algorithm 2 as inner loop: ``theta`` (n_l,) of the limb whose platform
    frame reaches ``C_target`` (4x4), starting from the admissible ``theta0`` (n_l,).

    Outer step (eq. 31): ``Delta q = F_t Delta x_t`` with ``F_t = L_t^-1``; then
    ``theta = psi(q)`` by :func:`solve_loop_constraints`.  Returns ``(theta, LimbIKInfo)``.
    Raises :class:`ConvergenceError` after ``max_iter`` outer steps and
    :class:`SingularityError` when ``kappa(F)`` exceeds ``singularity_threshold``."""
    inner_tol = tol if inner_tol is None else inner_tol
    theta = np.array(theta0, dtype=float)
    state = _evaluate(limb, theta)
    dx = pose_error(limb, limb_platform_pose(limb, theta, state[0]), C_target)
    info = LimbIKInfo(errors=[_norm(limb, dx)])
    while info.errors[-1] > tol:
        if info.outer >= max_iter:
            raise ConvergenceError(f"{limb.name}: inverse kinematics did not converge in {max_iter} "
                                   f"iterations (|dx| = {info.errors[-1]:.3g} > {tol:g})")
        jac = limb_jacobians(limb, theta, state)
        _check_condition(limb, jac, singularity_threshold)
        dq = _solve(jac.L_t, dx, limb, what="task-space Jacobian L_t")
        theta, its, state = solve_loop_constraints(limb, theta, theta[limb.independent] + dq, inner_tol,
                                                   state=state, return_state=True)
        info.outer += 1
        info.inner.append(its)
        dx = pose_error(limb, limb_platform_pose(limb, theta, state[0]), C_target)
        info.errors.append(_norm(limb, dx))
    info.state = state
    return theta, info


def limb_inverse_kinematics_compound(limb: Limb, C_target, theta0, tol: float = 1e-10,
                                     constraint_tol: float | None = None, max_iter: int = 50,
                                     singularity_threshold: float | None = None):
    """Algorithm 3: one compound Newton step for limb IK and loop constraints together.

    Step: ``Delta theta = H Delta q + c`` with the loop correction ``c_y = -G_y^-1 g`` (eq. 33)
    and ``Delta q = F_t (Delta x_t - P_t J_p c)``, the exact Newton step of the stacked system
    ``(g, Delta x_t) = 0`` (the printed Algorithm 3 omits ``c``: without it ``g`` is never
    reduced).  Stops when ``|Delta x_t| <= tol`` and ``|g| <= constraint_tol``.  Returns
    ``(theta, LimbIKInfo)`` (``inner`` empty)."""
    ctol = tol if constraint_tol is None else constraint_tol
    theta = np.array(theta0, dtype=float)
    info = LimbIKInfo()
    while True:
        state = _evaluate(limb, theta)
        C, _, cons = state
        dx = pose_error(limb, limb_platform_pose(limb, theta, C), C_target)
        gnorm = max([np.linalg.norm(g) for g, _, _ in cons], default=0.0)
        info.errors.append(_norm(limb, dx))
        if info.errors[-1] <= tol and gnorm <= ctol:
            info.state = state
            return theta, info
        if info.outer >= max_iter:
            raise ConvergenceError(f"{limb.name}: inverse kinematics (compound scheme) did not converge "
                                   f"in {max_iter} iterations (|dx| = {info.errors[-1]:.3g}, |g| = {gnorm:.3g})")
        jac = limb_jacobians(limb, theta, state)
        _check_condition(limb, jac, singularity_threshold)
        theta = theta + compound_newton_step(limb, state, jac, dx)
        info.outer += 1


def compound_newton_step(limb: Limb, state, jac: LimbJacobians, dx) -> np.ndarray:
    """The compound Newton step ``Delta theta = H Delta q + c`` (n_l,) of Algorithm 3 for the
    stacked system ``(g, Delta x_t) = 0``: loop correction ``c_y = -G_y^-1 g`` (eq. 33) and
    ``Delta q = L_t^-1 (Delta x_t - P_t J_p c)``.  ``state``: ``_evaluate(limb, theta)``;
    ``jac``: :func:`limb_jacobians` there; ``dx`` (delta_p(l),): :func:`pose_error`."""
    c = np.zeros(limb.n)
    for lp, (g, G, _) in zip(limb.loops, state[2]):
        Gy, _ = _resolve(lp, G)
        c[lp.dependent] = -_solve(Gy, g[lp.rows], limb, lp)
    dq = _solve(jac.L_t, dx - (jac.J_p @ c)[limb.task_rows], limb, what="task-space Jacobian L_t")
    return jac.H @ dq + c


def limb_velocity_ik(limb: Limb, theta, V_t, jac: LimbJacobians | None = None):
    """Eqs. 27-28: ``qd = F V_t`` (delta_l,) and ``thetad = H qd`` (n_l,)."""
    jac = limb_jacobians(limb, theta) if jac is None else jac
    qd = jac.F @ np.asarray(V_t, dtype=float)
    return qd, jac.H @ qd


def limb_acceleration_ik(limb: Limb, theta, thetad, Vdot_t, jac: LimbJacobians | None = None,
                         state=None, motion=None):
    """Eq. 29: ``thetadd = H F Vdot_t + (Hdot - H L_t^-1 Ldot_t) qd`` (n_l,) with
    ``Ldot_t qd = P_t (Jdot_p thetad + J_p Hdot qd)`` evaluated as the platform acceleration of
    the tree motion ``(theta, thetad, Hdot qd)``.  Returns ``(qdd, thetadd)``.  ``state``:
    ``_evaluate(limb, theta)`` if known (e.g. from the IK); ``motion``: ``(C, V, A0)`` of
    :func:`~.tree_dynamics.kinematics` at ``(theta, thetad)`` if known."""
    jac = limb_jacobians(limb, theta) if jac is None else jac
    if motion is None:
        motion = kinematics(limb.tree, theta, thetad)[1:]
    C, V, A0 = motion                                             # Jdot thetad = A0
    bias = loop_acceleration_bias(limb, theta, thetad, state=state, motion=(C, V, A0))   # Hdot qd
    # platform frame acceleration of the motion (theta, thetad, Hdot qd): Jdot_p thetad + J_p Hdot qd
    A_p = Ad_inv(limb.platform_offset) @ A0[limb.platform_body] + jac.J_p @ bias
    qdd = jac.F @ np.asarray(Vdot_t, dtype=float) - _solve(jac.L_t, A_p[limb.task_rows], limb)
    return qdd, jac.H @ qdd + bias


def tree_coriolis_matrix(tree: TreeModel, theta, thetad) -> np.ndarray:
    """Coriolis/centrifugal matrix ``C`` (n, n) of a tree with ``C thetad`` the velocity terms
    of the RNEA: ``C = sum_i J_i^T (M_i Jdot_i - ad(V_i)^T M_i J_i)`` (Lie-group closed form,
    paper 001 ref. [24]; ``Jdot_i`` from paper 002 eq. 23)."""
    _, C, V, _ = kinematics(tree, theta, thetad)
    out = np.zeros((tree.nq, tree.nq))
    for i in range(tree.nq):
        if not np.any(tree.M[i]):
            continue
        J = body_jacobian(tree, C, i)
        Jd = _body_jacobian_derivative(tree, C, V, i)
        out += J.T @ (tree.M[i] @ Jd - ad(V[i]).T @ tree.M[i] @ J)
    return out
