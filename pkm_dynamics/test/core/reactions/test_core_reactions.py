"""Joint reaction forces (core/reactions/reactions.py) against the KKT multipliers of core/tree/constrained.py
mapped to the same frames (a consistency check: that route shares the cut-joint rows, the map
B^T and the Newton-Euler pass with reactions.py; the check that shares no code, Pinocchio's joint
forces, is in test_core_independent_kkt.py), against Pinocchio's contact forces of the crane's
rod-end pivots (CONTACT_3D), and against the physics every reaction must obey: its component
along a joint's screw is the joint's effort (actuator force, zero for a passive joint), along a
cut joint's freedoms zero, and the two sides of a cut joint feel opposite wrenches."""
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from pkm_dynamics.core.tree.constrained import kkt_forward_dynamics
from pkm_dynamics.core.tree.cut_joints import LoopConstraints, cut_joint_rate_map
from pkm_dynamics.core.errors import StateError
from pkm_dynamics.core.description.examples import module_chain_urdf
from pkm_dynamics.core.reactions.reactions import cut_frames
from pkm_dynamics.core.robot import load_robot
from pkm_dynamics.core.spatial.se3 import Ad, Ad_inv
from pkm_dynamics.core.tree.tree_model import EXTENSION_TAGS
from pkm_dynamics.core.tree.tree_dynamics import body_wrenches, crba, forward_kinematics, rnea
from pkm_dynamics.testing import frictionless

ROBOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "robots")
ONE = frictionless(os.path.join(ROBOTS, "linear_4bar_1dof.urdf"))  # friction: test/core/friction/
FOUR = frictionless(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))  # friction: test/core/friction/


def _load(case):
    return load_robot(module_chain_urdf(3)) if case == "chain3" else load_robot(case)


@pytest.fixture(scope="module")
def four():
    return load_robot(FOUR)


def _chain_states(robot, count=4, seed=5):
    rng = np.random.default_rng(seed)
    lo = np.array([robot.tree.lower[robot.tree.joint_index(j)] for j in robot.actuated_joints])
    hi = np.array([robot.tree.upper[robot.tree.joint_index(j)] for j in robot.actuated_joints])
    lo, hi = np.where(np.isfinite(lo), lo, -1.0), np.where(np.isfinite(hi), hi, 1.0)
    X = lo + (hi - lo) * rng.uniform(0.2, 0.8, (count, robot.n))
    XD = rng.normal(scale=0.3, size=X.shape)
    F = robot.inverse_dynamics(X, XD, np.zeros_like(X)) + rng.normal(scale=2000.0, size=X.shape)
    FE = rng.normal(scale=[200, 200, 200, 2000, 2000, 2000], size=(count, 6))
    return X, XD, F, FE


def _external(tree, link, offset, wrench):
    """The tree's body wrenches (n, 6) of one wrench (6,) on a frame ``link * offset``."""
    F = np.zeros((tree.nq, 6))
    if wrench is not None:
        body, off = tree.frame(link)
        F[body] = Ad_inv(off @ offset).T @ wrench
    return F


def _kkt_reactions(desc, q, qd, tau, F):
    """The KKT route of core/tree/constrained.py: qdd and lambda of the KKT system, lambda mapped to the cut-joint
    wrenches (child cut frame) and, with qdd, through the Newton-Euler backward pass."""
    qdd, lam = kkt_forward_dynamics(desc, q, qd, tau, f_ext=F)
    lc = LoopConstraints(desc)
    C = forward_kinematics(desc.tree, q)
    F = F.copy()
    cut, start = [], 0
    for geo, m, T in zip(lc.geometry, lc.sizes, cut_frames(lc, desc.cut_joints)):
        pair = (cut_joint_rate_map(geo, C).T @ lam[start:start + m]).reshape(2, 6)
        start += m
        F[geo.body_k] += pair[0]
        F[geo.body_r] += pair[1]
        cut.append(Ad(T).T @ pair[1])
    return qdd, lam, body_wrenches(desc.tree, q, qd, qdd, f_ext=F), np.array(cut)


def _rel(a, b):
    return np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1.0)


def test_kkt_multipliers_follow_the_documented_sign(four):
    """H qdd + b = tau + G^T lambda (core/tree/constrained.py's equation), as reactions assume."""
    desc = four.description
    x, xd, f = np.array([0.3, 0.2, 0.25, 0.4]), np.array([0.1, 0.05, -0.1, 0.2]), np.array([100.0, 3e4, 1e4, -5e3])
    q, qd, _ = four.tree_state(x, xd, np.zeros(4))
    tau = np.zeros(desc.tree.nq)
    tau[[desc.tree.joint_index(j) for j in four.actuated_joints]] = f
    qdd, lam = kkt_forward_dynamics(desc, q, qd, tau)
    _, G, _ = LoopConstraints(desc).evaluate(q)
    lhs = crba(desc.tree, q) @ qdd + rnea(desc.tree, q, qd, np.zeros_like(q)) - tau
    np.testing.assert_allclose(G.T @ lam, lhs, atol=1e-9 * np.abs(lhs).max())


@pytest.mark.parametrize("case", [ONE, FOUR, "chain3"], ids=["linear_4bar_1dof", "heavy_duty_4dof", "chain3"])
def test_module_chain_reactions_equal_the_kkt_multipliers(case):
    robot = _load(case)
    desc, tree = robot.description, robot.tree
    act = [tree.joint_index(j) for j in robot.actuated_joints]
    for x, xd, f, fe in zip(*_chain_states(robot)):
        for wrench in (None, fe):
            R = robot.joint_reactions(x, xd, f, wrench=wrench)
            q, qd, _ = robot.tree_state(x, xd, np.zeros(robot.n))
            tau = np.zeros(tree.nq)
            tau[act] = f
            F = _external(tree, robot.end_effector, np.eye(4), wrench)
            qdd, lam, W, W_cut = _kkt_reactions(desc, q, qd, tau, F)
            assert R.joints == robot.tree_joints and R.cut_joints == tuple(c.name for c in desc.cut_joints)
            assert _rel(R.acceleration, qdd[act]) < 1e-9
            assert _rel(R.multipliers, lam) < 1e-8
            assert _rel(R.cut_wrenches, W_cut) < 1e-8
            assert _rel(R.joint_wrenches, W) < 1e-8


@pytest.mark.parametrize("case", [ONE, FOUR, "chain3"], ids=["linear_4bar_1dof", "heavy_duty_4dof", "chain3"])
def test_reactions_obey_the_joints(case):
    """Along each tree joint's screw: the actuator force (passive joints: zero); along each
    cut joint's freedom (revolute: the moment about its axis) zero; the parent side of a cut
    joint feels the opposite wrench of the child side."""
    robot = _load(case)
    desc, tree = robot.description, robot.tree
    act = [tree.joint_index(j) for j in robot.actuated_joints]
    for x, xd, f, fe in zip(*_chain_states(robot, count=3, seed=11)):
        R = robot.joint_reactions(x, xd, f, wrench=fe)
        tau = np.einsum("ni,ni->n", tree.X, R.joint_wrenches)
        expect = np.zeros(tree.nq)
        expect[act] = f
        scale = np.abs(R.joint_wrenches).max()
        np.testing.assert_allclose(tau, expect, atol=1e-9 * scale)
        q, _, _ = robot.tree_state(x)
        C = forward_kinematics(tree, q)
        for cut, w_child in zip(desc.cut_joints, R.cut_wrenches):
            assert cut.type == "revolute"
            assert abs(cut.child_axis @ w_child[:3]) < 1e-9 * scale
            k, Ok = tree.frame(cut.parent_link)
            r, Or = tree.frame(cut.child_link)
            Fk, Fr = C[k] @ Ok @ cut.parent_origin, C[r] @ Or @ cut.child_origin
            np.testing.assert_allclose(Fk[:3, 3], Fr[:3, 3], atol=1e-9)   # the loop is closed
            # the child's wrench expressed in the parent cut frame, minus the parent's own
            lc = LoopConstraints(desc)
            geo = lc.geometry[[g.name for g in lc.geometry].index(cut.name)]
            lam = R.multipliers[sum(lc.sizes[:lc.geometry.index(geo)]):][:geo.size]
            on_k = Ad(Ok @ cut.parent_origin).T @ (cut_joint_rate_map(geo, C).T @ lam)[:6]
            child_in_k = Ad(np.linalg.inv(Fr) @ Fk).T @ w_child
            np.testing.assert_allclose(on_k, -child_in_k, atol=1e-9 * scale)


def test_batch_equals_single(four):
    X, XD, F, FE = _chain_states(four, count=3)
    B = four.joint_reactions(X, XD, F, wrench=FE)
    assert B.joint_wrenches.shape == (3, four.tree.nq, 6) and B.cut_wrenches.shape == (3, 2, 6)
    for i in range(3):
        S = four.joint_reactions(X[i], XD[i], F[i], wrench=FE[i])
        np.testing.assert_array_equal(B.joint_wrenches[i], S.joint_wrenches)
        np.testing.assert_array_equal(B.cut_wrenches[i], S.cut_wrenches)


def test_state_beyond_the_stroke_names_the_joint(four):
    with pytest.raises(StateError, match="lift"):
        four.joint_reactions(np.array([0.3, 0.8, 0.25, 0.4]), np.zeros(4), np.zeros(4))


def _pinocchio_crane(robot):
    import pinocchio as pin     # a test dependency (package.xml, requirements.txt): never skipped
    root = ET.fromstring(robot.description.xml)
    for el in list(root):
        if el.tag in EXTENSION_TAGS:
            root.remove(el)
    m = pin.buildModelFromXML(ET.tostring(root, encoding="unicode"))
    m.gravity.linear = robot.gravity
    cms = pin.StdVec_RigidConstraintModel()
    for cut in robot.description.cut_joints:
        ends = []
        for link, origin in ((cut.parent_link, cut.parent_origin), (cut.child_link, cut.child_origin)):
            fr = m.frames[m.getFrameId(link)]
            ends.append((fr.parentJoint, fr.placement * pin.SE3(origin[:3, :3].copy(), origin[:3, 3].copy())))
        cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, m, ends[0][0], ends[0][1],
                                            ends[1][0], ends[1][1], pin.ReferenceFrame.LOCAL))
    return pin, m, cms


def test_pin_loads_equal_pinocchio_contact_forces(four):
    """The rod-end pivots as CONTACT_3D constraints of Pinocchio's constraintDynamics: its
    contact force is the force on the parent side in the parent cut frame (LOCAL), i.e. minus
    ours carried from the child cut frame into the parent one."""
    pin, m, cms = _pinocchio_crane(four)
    data = m.createData()
    cds = pin.StdVec_RigidConstraintData()
    for c in cms:
        cds.append(c.createData())
    pin.initConstraintDynamics(m, data, cms, cds)
    prox = pin.ProximalSettings(1e-12, 1e-10, 50)
    for x, xd, f, _ in zip(*_chain_states(four, count=3, seed=2)):
        R = four.joint_reactions(x, xd, f)
        Q, QD, _ = four.tree_state(x, xd)
        q, v, tau = pin.neutral(m), np.zeros(m.nv), np.zeros(m.nv)
        for name, qi, vi in zip(four.tree_joints, Q, QD):
            j = m.joints[m.getJointId(name)]
            if j.nq == 2:                       # continuous joint: (cos, sin)
                q[j.idx_q], q[j.idx_q + 1] = np.cos(qi), np.sin(qi)
            else:
                q[j.idx_q] = qi
            v[j.idx_v] = vi
        for name, fi in zip(four.actuated_joints, f):
            tau[m.joints[m.getJointId(name)].idx_v] = fi
        pin.constraintDynamics(m, data, q, v, tau, cms, cds, prox)
        for cd, w in zip(cds, R.cut_wrenches):
            R12 = cd.oMc1.rotation.T @ cd.oMc2.rotation
            ref = np.asarray(cd.contact_force.linear)
            np.testing.assert_allclose(R12 @ w[3:], -ref, atol=1e-7 * np.abs(ref).max())
            np.testing.assert_allclose(w[:3], 0.0, atol=1e-9 * np.abs(ref).max())


@pytest.mark.parametrize("name", ["planar_3rrr", "irsbot2_paths"])
def test_pkm_reactions_equal_the_kkt_multipliers(name):
    robot = load_robot(os.path.join(ROBOTS, name + ".urdf"))
    desc, tree = robot.description, robot.tree
    act = [tree.joint_index(j) for j in robot.actuated_joints]
    rng = np.random.default_rng(4)
    for _ in range(2):
        pose = robot.task_pose(rng.uniform(-0.02, 0.02, robot.dof))
        V = rng.normal(scale=0.1, size=robot.dof)
        sol = robot.inverse_kinematics(pose)
        u = robot.inverse_dynamics(sol, V, np.zeros(robot.dof)) + rng.normal(scale=5.0, size=len(act))
        W_ee = rng.normal(scale=[0.5, 0.5, 0.5, 5, 5, 5])
        R = robot.joint_reactions(pose, V, u, wrench=W_ee)
        s = robot.inverse_kinematics(pose, V, R.acceleration)
        tau = np.zeros(tree.nq)
        tau[act] = u
        F = _external(tree, desc.platform.link, desc.platform.origin, W_ee)
        qdd, lam, W, W_cut = _kkt_reactions(desc, s.q, s.qd, tau, F)
        assert _rel(s.qdd, qdd) < 1e-8
        assert _rel(R.multipliers, lam) < 1e-8
        assert _rel(R.cut_wrenches, W_cut) < 1e-8
        assert _rel(R.joint_wrenches, W) < 1e-8
        np.testing.assert_allclose(np.einsum("ni,ni->n", tree.X, R.joint_wrenches), tau,
                                   atol=1e-8 * np.abs(R.joint_wrenches).max())


def test_pkm_reactions_from_an_ik_solution():
    robot = load_robot(os.path.join(ROBOTS, "planar_3rrr.urdf"))
    pose, V, u = robot.task_pose([0.01, 0.0, 0.05]), np.array([0.05, 0.0, -0.1]), np.array([0.2, -0.1, 0.3])
    a = robot.joint_reactions(pose, V, u)
    b = robot.joint_reactions(robot.inverse_kinematics(pose), V, u)
    np.testing.assert_allclose(b.cut_wrenches, a.cut_wrenches, rtol=0, atol=1e-12 * np.abs(a.cut_wrenches).max())
    B = robot.joint_reactions(np.stack([pose, pose]), np.stack([V, V]), np.stack([u, u]))
    assert B.joint_wrenches.shape == (2, robot.tree.nq, 6)
    np.testing.assert_allclose(B.joint_wrenches[1], a.joint_wrenches, rtol=0,
                               atol=1e-9 * np.abs(a.joint_wrenches).max())
