"""Joint reaction forces: the wrench every joint of a closed-loop robot transmits, for a state
and the actuator efforts (both robot kinds; the pin loads of each 4-bar of a module chain, the
constraint forces of each PKM loop).

Route (per state):

1. the accelerations of the robot's own forward dynamics (paper 000 Algorithm 1 for module
   chains, paper 001 eq. 39 for PKMs) and the motion ``(q, qd, qdd)`` of every tree joint with
   the loops closed (``tree_state``; PKM: the inverse kinematics, eqs. 27-29);
2. the cut-joint multipliers ``lambda`` from the tree's equations of motion with the loops as
   constraints (paper 001 eqs. 13, 36): ``G^T lambda = rnea(q, qd, qdd) - S^T u`` — the
   actuators' forces and the constraint forces together produce the motion.  The rows of ``G``
   are first reduced to independent combinations (:func:`.constrained.independent_rows`), so
   ``lambda`` is the minimum-norm member of its family: the components
   a rigid loop cannot determine (e.g. the out-of-plane wrench of a planar 4-bar closed by a
   spatial revolute joint, statically indeterminate) are zero there and carried by the tree
   joints;
3. the constraint wrenches on the two bodies of each cut joint, ``B^T lambda`` (eqs. 55, 59,
   :func:`.cut_joints.cut_joint_rate_map`), added as external wrenches to the tree's
   Newton-Euler backward pass (:func:`.tree_dynamics.body_wrenches`), which gives the wrench
   every tree joint transmits.

**Convention** (as Featherstone's and Pinocchio's joint forces): every wrench is the one the
*parent side* exerts on the *child side*, as (moment, force) about the origin of, and
expressed in, the *child-side joint frame*:

* tree joint ``i`` (``joints``): the URDF child link frame of the joint (the body frame of
  :mod:`.tree`); the gravity and inertia of everything beyond the joint are included; the
  component along the joint screw is the joint's generalized force (the actuator effort of an
  actuated joint, zero for a passive one; with joint friction, less the joint's friction torque
  ``tau_f(qd)``: :mod:`..friction`);
* cut joint (``cut_joints``): the wrench the body of its ``<parent>`` link exerts on the body
  of its ``<child>`` link, in the child cut frame (``child link * child_origin``, which
  coincides with the parent cut frame when the loop is closed up to the joint's own freedom);
  its components along the joint's freedoms are zero.

Module chains answer ``robot.joint_reactions`` by paper 000's analytic route, compiled and O(n)
(:mod:`~pkm_dynamics.core.reactions.chain_reactions`, same frames, signs and minimum-norm convention); this module
is the route of PKMs and the independent check of that one (:func:`joint_reactions` with the
robot's :func:`reaction_model`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..friction.friction_model import friction_torques
from ..tree.constrained import independent_rows
from ..tree.cut_joints import LoopConstraints, cut_joint_rate_map
from ..errors import SingularityError, StateError
from ..spatial.se3 import Ad, Ad_inv
from ..tree.tree_dynamics import body_wrenches, forward_kinematics, rnea

#: largest relative residual of ``G^T lambda = rnea - S^T u`` accepted for a reaction answer (of a
#: 4-bar's pin equations too: :mod:`.chain_reactions_model`)
CONSISTENCY_TOLERANCE = 1e-8


@dataclass(frozen=True)
class JointReactions:
    """Result of :func:`joint_reactions` (arrays with a leading batch axis for a batch).

    ``joints`` (n names, the tree joints, ``robot.tree_joints``) and ``joint_wrenches`` (n, 6);
    ``cut_joints`` (c names, the ``<constraint>`` elements) and ``cut_wrenches`` (c, 6): each
    row (moment, force) [N m, N] in the convention of the module docstring; ``multipliers``
    (m,): the stacked cut-joint multipliers ``lambda``; ``acceleration``: the forward-dynamics
    result the reactions belong to (module chain: actuator accelerations (n_act,); PKM:
    ``Vdot_t`` (delta,))."""

    joints: tuple
    joint_wrenches: np.ndarray
    cut_joints: tuple
    cut_wrenches: np.ndarray
    multipliers: np.ndarray
    acceleration: np.ndarray


def cut_frames(lc: LoopConstraints, cuts) -> np.ndarray:
    """Pose (4, 4) of each child cut frame in the frame of its body ``r``, shape (c, 4, 4)."""
    out = []
    for cut in cuts:
        _, O = lc.tree.frame(cut.child_link)
        out.append(O @ cut.child_origin)
    return np.array(out).reshape(-1, 4, 4)


def loop_multipliers(G: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Minimum-norm ``lambda`` (m,) of ``G^T lambda = y`` (G (m, n), y (n,)): the solution in
    the column space of ``G`` (redundant rows, paper 001 Remark 4, get no share of their own).
    Raises :class:`SingularityError` when the equations are inconsistent (the motion is not one
    the constraint forces and actuators produce)."""
    U = independent_rows(G)
    Gr = U.T @ G
    mu = np.linalg.lstsq(Gr.T, y, rcond=None)[0]
    lam = U @ mu
    res = np.linalg.norm(G.T @ lam - y)
    if not res <= CONSISTENCY_TOLERANCE * max(1.0, np.linalg.norm(y)):
        raise SingularityError(f"the loop constraint forces cannot balance the motion (residual "
                               f"{res:.3g} N or N m): the loops are singular at this state")
    return lam


def tree_reactions(lc: LoopConstraints, q, qd, qdd, tau, f_ext=None, gravity=None):
    """Steps 2-3 of the module docstring for one tree motion: ``(W, lambda, W_c)`` with the
    tree-joint wrenches ``W`` (n, 6) (body frames), the multipliers ``lambda`` (m,) and the
    constraint wrench pairs ``W_c`` (c, 2, 6): on body k and on body r, each in its body frame.

    ``tau`` (n,): generalized forces of the tree joints (the actuator efforts at the actuated
    joints); ``f_ext`` (n, 6): external body wrenches (as :func:`.tree_dynamics.rnea`);
    ``gravity`` (3,): the robot's (default: that of ``lc.tree``)."""
    tree = lc.tree
    n = tree.nq
    F = np.zeros((n, 6)) if f_ext is None else np.array(f_ext, dtype=float).reshape(n, 6)
    _, G, _ = lc.evaluate(q)
    lam = loop_multipliers(G, rnea(tree, q, qd, qdd, gravity=gravity, f_ext=F) - tau)
    C = forward_kinematics(tree, q)
    W_c = np.zeros((len(lc.geometry), 2, 6))
    start = 0
    for c, (geo, m) in enumerate(zip(lc.geometry, lc.sizes)):
        W_c[c] = (cut_joint_rate_map(geo, C).T @ lam[start:start + m]).reshape(2, 6)
        start += m
        for side, body in enumerate((geo.body_k, geo.body_r)):
            if body >= 0:
                F[body] += W_c[c, side]
    return body_wrenches(tree, q, qd, qdd, gravity=gravity, f_ext=F), lam, W_c


class ReactionModel:
    """What :func:`joint_reactions` needs of a robot (:func:`reaction_model`): read-only once
    built, so one instance serves every thread."""

    def __init__(self, robot):
        desc = robot.description
        tree = desc.tree
        self.parallel = desc.platform is not None
        self.lc = LoopConstraints(desc)
        self.frames = cut_frames(self.lc, desc.cut_joints)
        self.cut_names = tuple(c.name for c in desc.cut_joints)
        self.actuated = np.array([tree.joint_index(j) for j in desc.actuated_joints], dtype=int)
        if self.parallel:
            body, off = tree.frame(desc.platform.link)
            off = off @ desc.platform.origin
        else:
            body, off = tree.frame(robot.end_effector)
        self.wrench_body, self.wrench_map = body, Ad_inv(off).T
        self.friction = None if desc.friction is None else desc.friction.table


def reaction_model(robot) -> ReactionModel:
    """The :class:`ReactionModel` of a robot: a PKM builds it at construction (its
    ``reaction_model`` attribute); for module chains this route is the independent check of the
    compiled one, and a caller that repeats it builds the model once and passes it."""
    return ReactionModel(robot)


def _one(robot, m: ReactionModel, x, xd, f, wrench, initial):
    tree = robot.tree
    if m.parallel:
        sol = x if hasattr(x, "limb_theta") else robot.inverse_kinematics(x, initial=initial)
        a = robot.forward_dynamics(sol, xd, f, wrench=wrench)
        sol = robot.inverse_kinematics(sol.pose, xd, a, initial=sol)
        q, qd, qdd = sol.q, sol.qd, sol.qdd
    else:
        a = robot.forward_dynamics(x, xd, f, wrench=wrench)
        q, qd, qdd = robot.tree_state(x, xd, a)
    tau = np.zeros(tree.nq)
    tau[m.actuated] = f
    if m.friction is not None:                  # each joint's effort less its friction torque
        tau -= friction_torques(m.friction, qd)[0]
    F = np.zeros((tree.nq, 6))
    if wrench is not None and m.wrench_body >= 0:
        F[m.wrench_body] = m.wrench_map @ np.asarray(wrench, dtype=float).reshape(6)
    W, lam, W_c = tree_reactions(m.lc, q, qd, qdd, tau, F, gravity=tree.gravity)
    W_cut = np.array([Ad(T).T @ w for T, w in zip(m.frames, W_c[:, 1])]).reshape(-1, 6)
    return W, W_cut, lam, a, (sol if m.parallel else None)


def joint_reactions(robot, x, xd, f, wrench=None, initial=None, model=None) -> JointReactions:
    """Wrenches transmitted by every tree joint and every cut joint (module docstring) at the
    state ``(x, xd)`` under the actuator efforts ``f`` (n_act,) [N, N m].

    Module chains: ``x``, ``xd`` actuator positions and velocities (n_act,); PKMs: ``x`` the
    platform pose (4, 4) (or a :class:`~.pkm.PkmIKSolution`), ``xd`` the task twist ``V_t``
    (delta,).  ``wrench`` (6,): external wrench (moment, force) on the end effector / platform,
    in its frame.  ``initial``: PKM IK start (as ``inverse_kinematics``).  A leading batch axis
    on ``x``, ``xd``, ``f`` (and ``wrench``) gives results with one (a PKM batch warm-starts
    each row from the previous one).  Raises the robot's errors (:class:`StateError`,
    :class:`SingularityError` naming the joint, module, limb or loop).  ``model``: the robot's
    :func:`reaction_model` (default: the robot's ``reaction_model`` attribute, else built for
    this call)."""
    m = model if model is not None else getattr(robot, "reaction_model", None) or reaction_model(robot)
    f = np.asarray(f, dtype=float)
    xd = np.asarray(xd, dtype=float)
    single_ndim = 2 if m.parallel else 1
    xa = np.asarray(x.pose if hasattr(x, "pose") else x, dtype=float)
    if xa.ndim == single_ndim:
        W, Wc, lam, a, _ = _one(robot, m, x, xd, f, wrench, initial)
        return JointReactions(robot.tree_joints, W, m.cut_names, Wc, lam, a)
    if hasattr(x, "pose"):
        raise StateError("joint_reactions takes a batch of poses, not a batched IK solution")
    if f.ndim != 2 or len(f) != len(xa) or len(xd) != len(xa):
        raise StateError(f"x, xd and f must have the same leading batch length, got {len(xa)}, "
                         f"{len(xd)} and {f.shape[0] if f.ndim == 2 else 'no batch axis'}")
    wr = np.asarray(wrench, dtype=float) if wrench is not None else None
    rows = []
    for i in range(len(xa)):
        wi = None if wr is None else (wr[i] if wr.ndim == 2 else wr)
        W, Wc, lam, a, sol = _one(robot, m, xa[i], xd[i], f[i], wi, initial)
        initial = sol if m.parallel else initial
        rows.append((W, Wc, lam, a))
    stack = [np.stack([r[k] for r in rows]) for k in range(4)]
    return JointReactions(robot.tree_joints, stack[0], m.cut_names, stack[1], stack[2], stack[3])
