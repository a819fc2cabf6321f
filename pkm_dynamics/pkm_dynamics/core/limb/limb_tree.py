"""Limb trees: the tree of one limb of a parallel manipulator (paper 001 Sec. 2, Fig. 2c).

A limb's tree holds the limb's bodies of the robot's spanning tree plus the platform attached
through the limb's last joint.  When the spanning tree attaches the platform to another limb,
the cut joint between this limb and the platform becomes tree joints of the limb tree (one per
DOF of that joint: :func:`cut_to_joints`).  The platform is massless in the limb tree: its
dynamics enters separately (eq. 38).  :func:`components` groups bodies (or loops) into
connected components.
"""
from __future__ import annotations

import numpy as np

from ..errors import DescriptionError
from ..spatial.se3 import Ad, pose_inv
from ..tree.tree_model import TreeModel


def components(nodes, edges):
    """Connected components (sorted lists) of the graph ``(nodes, edges)`` (union-find),
    ordered by their smallest node."""
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


def cut_to_joints(tree: TreeModel, cut, limb_side_is_parent: bool, C0: np.ndarray):
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
    if cut.type == "cylindrical":        # a slide along the axis, then a turn about it
        return [(T_L, _screw(L[2], True), "prismatic", "_slide"),
                (last_B, last_Ad @ _screw(L[2]), "revolute", "_turn")]
    if cut.type == "universal":
        axis_P = P[2] if P[2] is not None else np.array([0.0, 0.0, 1.0])
        return [(T_L, _screw(L[2]), "revolute", "_1"),
                (last_B, Ad(T_P) @ _screw(axis_P), "revolute", "_2")]
    # spherical: three revolute joints about the limb-side cut frame's x, y, z axes
    return [(T_L, _screw([1.0, 0, 0]), "revolute", "_x"),
            (np.eye(4), _screw([0, 1.0, 0]), "revolute", "_y"),
            (last_B, last_Ad @ _screw([0, 0, 1.0]), "revolute", "_z")]


def limb_tree(tree: TreeModel, name, bodies, platform_joint, p_body) -> tuple:
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



def whole_tree(tree: TreeModel):
    """The robot's own tree as the limb tree of a robot without platform (one limb):
    ``(tree, whole_index (n,), last body)``."""
    return tree, np.arange(tree.nq), tree.nq - 1

