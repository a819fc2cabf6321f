"""Limb model: hybrid limbs and their loops, built from the robot description (paper 001 Secs. 2-3).

A *limb* of a parallel manipulator is the part of the robot between the base and the moving
platform; a *hybrid* limb is a serial chain of loops and joints (Sec. 2).  Its model is a
tree of its own (the *limb tree*, :mod:`.limb_tree`), with the platform massless in it.

Every other cut joint of the limb closes a fundamental cycle (FC) ``Lambda_lambda``: its
variables are the tree joints on the two paths from the cut joint's bodies to their common
predecessor.  FCs that share joints (not the case for hybrid limbs) are merged into one
group, so the algorithms also run on non-hybrid limbs.  Per FC the constraints
``g(theta_lambda) = 0`` (eq. 12; the cut-joint forms of App. A, :mod:`.cut_joints`) are
resolved for ``m`` dependent coordinates ``y`` in terms of ``delta = n - m`` independent
coordinates ``q`` (eqs. 15-20, :mod:`.loop_constraints`).  Redundant constraint rows (Remark
4: e.g. a planar loop closed by a spatial revolute cut joint has 5 rows of rank 2) are handled
by keeping an independent subset of rows (rank-revealing QR), chosen with the coordinates
(Remark 3).

Model data (:class:`Limb`, :class:`LoopGroup`) is built once by :func:`build_limbs`; the
algorithms are functions of ``(limb, theta, ...)`` with ``theta`` the limb-tree joint values
``(n_l,)`` (:mod:`.limb_kinematics`, :mod:`.loop_constraints`, :mod:`.limb_ik`).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from ..tree.cut_joints import cut_joint_constraint, cut_joint_geometry
from ..description.robot_description import RobotDescription
from ..errors import DescriptionError
from .limb_ik import limb_jacobians
from .limb_kinematics import limb_screws
from .limb_tree import components, cut_to_joints, limb_tree, whole_tree
from .limb_types import Limb, LoopGroup
from ..status import RANK_TOLERANCE
from ..tree.tree_dynamics import forward_kinematics

#: names of the six body-fixed twist components, in the order of :mod:`.spatial`
TWIST_COMPONENTS = ("wx", "wy", "wz", "vx", "vy", "vz")


# ---------------------------------------------------------------------------------------------
# building the limbs from the robot description
# ---------------------------------------------------------------------------------------------

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
        lt, whole, _ = whole_tree(tree)
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
        for li, bodies in enumerate(components(nodes, edges)):
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
                pj = ("cut", (c0, cut_to_joints(tree, c0, limb_is_parent, C0), limb_body))
            lt, whole, p_new = limb_tree(tree, name, bodies, pj, p_body)
            specs.append((name, lt, whole, intra, p_new, p_off, task))
    limbs = []
    for name, lt, whole, cuts, pb, off, task in specs:
        limbs.append(_make_limb(name, lt, whole, cuts, pb, off, task, actuated, forced, desc))
    return tuple(limbs)


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
    groups = components(list(range(len(geos))),
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
                kin=limb_screws(lt))
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
