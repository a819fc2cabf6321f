"""The closed-loop dynamics of every example robot against a route that shares no code with the
package (DESIGN.md, verification policy): ``test/pinocchio_loops.py`` reads the description's
XML itself, builds the spanning tree in Pinocchio, writes the cut-joint rows of every type from
Pinocchio frame placements, Jacobians and classical accelerations, closes the loops from the
actuator motion (module chains) or the task motion (PKM) by its own Newton iteration and
velocity / acceleration solves, and solves the KKT system with ``pin.crba`` / ``pin.rnea``.

Checked here: that route's own rows against finite differences; the package's cut-joint rows
(core/tree/cut_joints.py: position, and the orientation rows of revolute, universal and prismatic
cut joints) on motions the independent route closed; the tree motion, inverse and forward
dynamics of the module chains (paper 000: the 1-DoF 4-bar, the 4-DoF crane, a generated chain
of three modules) and of the PKM (paper 001: IRSBot-2 in both descriptions, Gough-Stewart,
3RRR), with and without an end-effector / platform wrench; and the joint reactions
(core/reactions/reactions.py, core/reactions/chain_reactions.py) against Pinocchio's joint forces
``data.f`` of ``pin.rnea`` with the cut-joint forces as external forces, the 6-UPS's spherical
cut-joint forces also against Pinocchio's own constraint solver (``constraintDynamics``)."""
import os

import numpy as np
import pinocchio as pin     # a test dependency (package.xml, requirements.txt): never skipped
import pytest
import scipy.linalg

from pinocchio_loops import PinocchioLoops
from pkm_dynamics.core.tree.constrained import kkt_forward_dynamics
from pkm_dynamics.core.tree.cut_joints import LoopConstraints
from pkm_dynamics.core.description.robot_description import parse_description
from pkm_dynamics.core.description.examples import module_chain_urdf
from pkm_dynamics.core.robot import load_robot
from pkm_dynamics.testing import chain_states, frictionless
from test_core_cut_joints import TYPES
from test_core_cut_joints import robot as loop_robot

ROBOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "robots")
CHAINS = ("linear_4bar_1dof", "heavy_duty_4dof", "chain3")
#: example PKM and the size of the random task displacements from the reference pose (m, rad)
PKMS = {"irsbot2": 0.05, "irsbot2_paths": 0.05, "gough_stewart_6ups": 0.03, "planar_3rrr": 0.05}


def _text(name):
    """The description of ``name`` without its friction (the routes here know none: friction is
    checked against them in test/core/friction/)."""
    if name == "chain3":
        return module_chain_urdf(3)
    return frictionless(os.path.join(ROBOTS, name + ".urdf"))


def _pair(name):
    """The package's robot and the independent route of the same description text."""
    text = _text(name)
    robot = load_robot(text)
    return robot, PinocchioLoops(text, robot.tree_joints, robot.tree.gravity)


def _rel(a, ref):
    return np.abs(np.asarray(a) - ref).max() / max(np.abs(ref).max(), 1.0)


def _agree(got, want, tol, what):
    """Assert that the package's ``got`` equals the independent ``want`` to ``tol`` (relative to
    max(|want|, 1)), naming ``what`` and both values otherwise."""
    e = _rel(got, want)
    assert e < tol, f"{what}: package {np.round(got, 6)} vs independent {np.round(want, 6)} (rel {e:.3g})"


def _pkm_states(name, robot, rng, count):
    """``count`` random task states: pose, V_t, Vdot_t, platform wrench."""
    for _ in range(count):
        pose = robot.task_pose(rng.uniform(-PKMS[name], PKMS[name], robot.dof))
        yield (pose, rng.normal(scale=0.1, size=robot.dof), rng.normal(scale=0.5, size=robot.dof),
               rng.normal(scale=[0.5, 0.5, 0.5, 5, 5, 5]))


# ---------------------------------------------------------------- the independent route itself

@pytest.mark.parametrize("name", ["revolute", "universal", "prismatic", "spherical", "irsbot2"])
def test_independent_rows_against_finite_differences(name):
    """G = dr/dq and gamma = (dG/dt) qd of the independent rows, by central differences of r
    and of G qd along q + t qd, at configurations off the loops (every row's formula)."""
    if name in TYPES:
        ref = PinocchioLoops(loop_robot(name), [f"j{c}{i}" for c in "AB" for i in (1, 2, 3)], [0, 0, -9.81])
    else:
        ref = _pair(name)[1]
    rng = np.random.default_rng(3)
    for _ in range(3):
        th, thd = rng.uniform(-0.5, 0.5, (2, ref.n))
        ref.kinematics(th, thd)
        r, G, gamma = ref.loop_rows(th, thd)

        def rows(t):
            ref.kinematics(t)
            return ref.loop_rows(t)

        h = 1e-6
        Gn = np.column_stack([(rows(th + h * e)[0] - rows(th - h * e)[0]) / (2 * h) for e in np.eye(ref.n)])
        np.testing.assert_allclose(G, Gn, rtol=0, atol=1e-8 * max(1.0, np.abs(G).max()))
        h = 1e-5
        gn = (rows(th + h * thd)[1] @ thd - rows(th - h * thd)[1] @ thd) / (2 * h)
        np.testing.assert_allclose(gamma, gn, rtol=0, atol=1e-8 * max(1.0, np.abs(gamma).max()))


# ---------------------------------------------------------------- the package's cut-joint rows

@pytest.mark.parametrize("cut_type", sorted(TYPES))
def test_cut_joint_rows_of_every_type_against_the_independent_ones(cut_type):
    """On motions the independent route closed (its own rows and Newton iteration), the
    package's residual, velocity rows and acceleration rows (bias included) vanish, its rows span
    the same space (no row missing), and its KKT forward dynamics gives the same accelerations."""
    joints = [f"j{c}{i}" for c in "AB" for i in (1, 2, 3)]
    probe = PinocchioLoops(loop_robot(cut_type), joints, [0, 0, -9.81])
    probe.kinematics(np.zeros(6))
    _, G0, _ = probe.loop_rows(np.zeros(6))
    N0 = np.linalg.svd(G0)[2][TYPES[cut_type]:].T          # loop velocities (Pinocchio = tree order)
    act = sorted(scipy.linalg.qr(N0.T, pivoting=True)[2][:N0.shape[1]])   # best-conditioned coordinates
    text = loop_robot(cut_type).replace('<actuator joint="jA1"/>',
                                        "".join(f'<actuator joint="{joints[j]}"/>' for j in act))
    desc = parse_description(text)
    ref = PinocchioLoops(text, desc.tree.joint_names, desc.tree.gravity)
    lc = LoopConstraints(desc)
    assert lc.size == TYPES[cut_type]
    rng = np.random.default_rng(5)
    for _ in range(4):
        x, xd, xdd = rng.uniform(-0.1, 0.1, len(act)), rng.normal(size=len(act)), rng.normal(size=len(act))
        q, qd, qdd = ref.close(x, xd, xdd)
        g, G, bias = lc.evaluate(q, qd)
        np.testing.assert_allclose(g, 0.0, atol=1e-12)
        np.testing.assert_allclose(G @ qd, 0.0, atol=1e-11)
        np.testing.assert_allclose(G @ qdd + bias, 0.0, atol=1e-10)
        ref.kinematics(ref.to_pin(q))
        _, Gi, _ = ref.loop_rows(ref.to_pin(q))
        rank = np.linalg.matrix_rank(Gi, tol=1e-9)
        assert np.linalg.matrix_rank(G, tol=1e-9) == rank, f"{cut_type} cut: rank of the package's rows"
        N = np.linalg.svd(Gi[:, ref.perm])[2][rank:].T        # null space of the independent rows
        np.testing.assert_allclose(G @ N, 0.0, atol=1e-11)
        u = rng.normal(scale=3.0, size=len(act))
        tau = np.zeros(6)
        tau[[desc.tree.joint_index(joints[j]) for j in act]] = u
        qdd_pkg, _ = kkt_forward_dynamics(desc, q, qd, tau)
        qdd_ref, _ = ref.forward_dynamics(q, qd, u)
        _agree(qdd_pkg, qdd_ref, 1e-9, f"{cut_type} cut: KKT forward dynamics")


# ---------------------------------------------------------------- module chains (paper 000)

@pytest.mark.parametrize("name", CHAINS)
def test_module_chain_dynamics_against_the_independent_kkt(name):
    robot, ref = _pair(name)
    rng = np.random.default_rng(11)
    X, XD, XDD, FE = chain_states(robot, rng, 5, (0.2, 0.8), rate_scale=0.3, wrench_scale=1.0)
    FE = FE * np.array([200, 200, 200, 2000, 2000, 2000])
    for x, xd, xdd, fe in zip(X, XD, XDD, FE):
        q, qd, qdd = ref.close(x, xd, xdd)
        for got, want, what in zip(robot.tree_state(x, xd, xdd), (q, qd, qdd), ("q", "qd", "qdd")):
            _agree(got, want, 1e-10, f"{name} tree {what} at x={x}")
        for wrench in (None, fe):
            u_ref, _ = ref.inverse_dynamics(q, qd, qdd, wrench)
            u = robot.inverse_dynamics(x, xd, xdd, wrench=wrench)
            _agree(u, u_ref, 1e-9, f"{name} inverse dynamics at x={x}")
            f = u + rng.normal(scale=500.0, size=robot.n)
            a_ref, _ = ref.forward_dynamics(q, qd, f, wrench)
            a = robot.forward_dynamics(x, xd, f, wrench=wrench)
            _agree(robot.tree_state(x, xd, a)[2], a_ref, 1e-9, f"{name} forward dynamics (tree qdd) at x={x}")


# ---------------------------------------------------------------- PKM (paper 001)

@pytest.mark.parametrize("name", sorted(PKMS))
def test_pkm_dynamics_against_the_independent_kkt(name):
    """From the task motion alone: the IK's tree motion, eq. 45 (ID) and eq. 39 (FD)."""
    robot, ref = _pair(name)
    rng = np.random.default_rng(13)
    for pose, V, A, W in _pkm_states(name, robot, rng, 3):
        q, qd, qdd = ref.close(pose, V, A)
        s = robot.inverse_kinematics(pose, V, A)
        for got, want, what in zip((s.q, s.qd, s.qdd), (q, qd, qdd), ("q", "qd", "qdd")):
            _agree(got, want, 1e-9, f"{name} IK tree {what}")
        for wrench in (None, W):
            u_ref, _ = ref.inverse_dynamics(q, qd, qdd, wrench)
            u = robot.inverse_dynamics(s, V, A, wrench=wrench)
            _agree(u, u_ref, 1e-8, f"{name} inverse dynamics (eq. 45)")
            f = u + rng.normal(scale=5.0, size=len(u))
            a_ref = ref.task_acceleration(q, qd, ref.forward_dynamics(q, qd, f, wrench)[0])
            _agree(robot.forward_dynamics(s, V, f, wrench=wrench), a_ref, 1e-8, f"{name} forward dynamics (eq. 39)")


# ---------------------------------------------------------------- joint reactions

def _reactions_case(name, robot, ref, rng):
    if name in PKMS:
        pose, V, _, W = next(_pkm_states(name, robot, rng, 1))
        u = robot.inverse_dynamics(robot.inverse_kinematics(pose), V, np.zeros(robot.dof))
        u = u + rng.normal(scale=5.0, size=len(u))
        q, qd, _ = ref.close(pose, V, np.zeros(robot.dof))
        return pose, V, u, W, q, qd
    x, xd, _, W = chain_states(robot, rng, None, (0.2, 0.8), rate_scale=0.3, wrench_scale=1.0)
    W = W * np.array([200, 200, 200, 2000, 2000, 2000])
    u = robot.inverse_dynamics(x, xd, np.zeros(robot.n)) + rng.normal(scale=2000.0, size=robot.n)
    q, qd, _ = ref.close(x, xd, np.zeros(robot.n))
    return x, xd, u, W, q, qd


@pytest.mark.parametrize("name", CHAINS + tuple(sorted(PKMS)))
def test_joint_reactions_against_pinocchio_joint_forces(name):
    """The 6-D wrench of every tree joint (parent side on child side, (moment, force) in the
    joint's child link frame) against ``data.f`` of ``pin.rnea`` with the independent route's
    motion and its minimum-norm cut forces on the two cut links; the cut-joint wrenches (child
    cut frame) against those forces.  The rnea torques must be the actuator efforts."""
    robot, ref = _pair(name)
    rng = np.random.default_rng(17)
    for _ in range(2):
        x, xd, u, W, q, qd = _reactions_case(name, robot, ref, rng)
        for wrench in (None, W):
            R = robot.joint_reactions(x, xd, u, wrench=wrench)
            qdd, lam = ref.forward_dynamics(q, qd, u, wrench)
            joints, tau = ref.reactions(q, qd, qdd, lam, wrench)
            tau_act = np.zeros(len(tau))
            tau_act[[robot.tree_joints.index(j) for j in robot.actuated_joints]] = u
            np.testing.assert_allclose(tau, tau_act, rtol=0, atol=1e-9 * np.abs(u).max())
            _agree(R.joint_wrenches, joints, 1e-8, f"{name} joint wrenches")
            _agree(R.cut_wrenches, ref.cut_forces(q, lam)[1], 1e-8, f"{name} cut-joint wrenches")


def test_spherical_cut_wrenches_equal_pinocchio_constraint_forces():
    """The 6-UPS's five spherical cut joints as CONTACT_3D constraints of Pinocchio's own
    ``constraintDynamics`` (not the KKT system of pinocchio_loops.py): its accelerations and its
    contact forces (the force on the parent side, in the parent cut frame, LOCAL) against the
    package's forward dynamics and cut-joint wrenches (force on the child side, child cut frame)."""
    name = "gough_stewart_6ups"
    robot, ref = _pair(name)
    m = ref.model
    assert {c["type"] for c in ref.cuts} == {"spherical"}
    cms = pin.StdVec_RigidConstraintModel()
    for c in ref.cuts:
        fp, fc = (m.frames[f] for f in c["frames"])
        cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, m, fp.parentJoint, fp.placement,
                                            fc.parentJoint, fc.placement, pin.ReferenceFrame.LOCAL))
    data = m.createData()
    cds = pin.StdVec_RigidConstraintData()
    for c in cms:
        cds.append(c.createData())
    pin.initConstraintDynamics(m, data, cms, cds)
    prox = pin.ProximalSettings(1e-12, 1e-10, 50)
    rng = np.random.default_rng(19)
    for pose, V, _, _ in _pkm_states(name, robot, rng, 3):
        u = robot.inverse_dynamics(robot.inverse_kinematics(pose), V, np.zeros(robot.dof))
        u = u + rng.normal(scale=5.0, size=len(u))
        q, qd, _ = ref.close(pose, V, np.zeros(robot.dof))
        R = robot.joint_reactions(pose, V, u)
        ddq = pin.constraintDynamics(m, data, ref.q_pin(ref.to_pin(q)), ref.to_pin(qd), _actuation(ref, u),
                                     cms, cds, prox)
        _agree(R.acceleration, ref.task_acceleration(q, qd, ref.from_pin(ddq)), 1e-8, f"{name} forward dynamics")
        for cd, w, c in zip(cds, R.cut_wrenches, ref.cuts):
            R12 = cd.oMc1.rotation.T @ cd.oMc2.rotation
            _agree(R12 @ w[3:], -np.asarray(cd.contact_force.linear), 1e-8, f"{name} cut {c['name']} force")
            np.testing.assert_allclose(w[:3], 0.0, atol=1e-9 * np.abs(w).max())


def _actuation(ref, u):
    """The generalized forces (Pinocchio v order) of actuator efforts ``u``."""
    tau = np.zeros(ref.n)
    tau[ref.act] = u
    return tau
