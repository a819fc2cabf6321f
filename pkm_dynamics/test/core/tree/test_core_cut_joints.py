"""Cut-joint constraints (paper 001 App. A) and the KKT constrained dynamics.

The constraint Jacobian and acceleration bias are checked against finite differences of the
residual; KKT forward dynamics against Pinocchio's constrained dynamics (spherical loop)."""
import numpy as np
import pytest

from pkm_dynamics.core import DescriptionError
from pkm_dynamics.core.tree.constrained import kkt_forward_dynamics, kkt_inverse_dynamics
from pkm_dynamics.core.tree.cut_joints import LoopConstraints
from pkm_dynamics.core.description.robot_description import parse_description
from pkm_dynamics.core.tree.tree_dynamics import frame_pose

INERTIA = ('<inertial><origin xyz="{c}"/><mass value="{m}"/>'
           '<inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0.002" izz="0.025"/></inertial>')

# two chains from the base whose tips meet at W at the zero configuration (links world-aligned)
CHAIN = [
    ("jA1", "revolute", "base", "a1", (0, 0, 0.2), (0, 0, 1)),
    ("jA2", "revolute", "a1", "a2", (0.5, 0, 0), (0, 1, 0)),
    ("jA3", "revolute", "a2", "a3", (0.4, 0, 0), (1, 0, 0)),
    ("jB1", "revolute", "base", "b1", (1.0, 0.6, 0.2), (0, 0, 1)),
    ("jB2", "prismatic", "b1", "b2", (0, -0.3, 0), (1, 0, 0)),
    ("jB3", "revolute", "b2", "b3", (0, -0.3, 0.0), (0, 1, 0)),
]
W = np.array([1.1, 0.1, 0.35])
AXIS = np.array([0.3, 0.5, 0.8]) / np.linalg.norm([0.3, 0.5, 0.8])
AXIS2 = np.cross(AXIS, [1.0, 0, 0])
AXIS2 /= np.linalg.norm(AXIS2)


def robot(cut_type, with_cut=True):
    s = '<robot name="loop"><link name="base"/>'
    pos = {"base": np.zeros(3)}
    for i, (name, typ, parent, child, xyz, axis) in enumerate(CHAIN):
        pos[child] = pos[parent] + np.array(xyz)
        s += f'<link name="{child}">' + INERTIA.format(c="0.1 0.02 -0.01", m=1.0 + 0.3 * i) + '</link>'
        s += (f'<joint name="{name}" type="{typ}"><parent link="{parent}"/><child link="{child}"/>'
              f'<origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}"/><axis xyz="{axis[0]} {axis[1]} {axis[2]}"/>'
              '<limit lower="-2" upper="2" effort="1" velocity="1"/></joint>')
    if with_cut:
        pa, pb = W - pos["a3"], W - pos["b3"]
        s += (f'<constraint name="cut" type="{cut_type}"><parent link="a3"/>'
              f'<parent_origin xyz="{pa[0]} {pa[1]} {pa[2]}"/>'
              f'<parent_axis xyz="{AXIS[0]} {AXIS[1]} {AXIS[2]}"/>'
              f'<child link="b3"/><child_origin xyz="{pb[0]} {pb[1]} {pb[2]}"/>'
              f'<child_axis xyz="{AXIS2[0]} {AXIS2[1]} {AXIS2[2]}"/></constraint>' if cut_type == "universal" else
              f'<constraint name="cut" type="{cut_type}"><parent link="a3"/>'
              f'<parent_origin xyz="{pa[0]} {pa[1]} {pa[2]}"/>'
              f'<parent_axis xyz="{AXIS[0]} {AXIS[1]} {AXIS[2]}"/>'
              f'<child link="b3"/><child_origin xyz="{pb[0]} {pb[1]} {pb[2]}"/></constraint>')
    s += '<pkm_dynamics><actuator joint="jA1"/></pkm_dynamics></robot>'
    return s


TYPES = {"revolute": 5, "prismatic": 5, "cylindrical": 4, "universal": 4, "spherical": 3}


@pytest.mark.parametrize("cut_type", sorted(TYPES))
def test_jacobian_and_bias_against_finite_differences(cut_type):
    desc = parse_description(robot(cut_type))
    lc = LoopConstraints(desc)
    assert lc.size == TYPES[cut_type]
    g0, _, _ = lc.evaluate(np.zeros(6))
    assert np.abs(g0).max() < 1e-12          # closed at the zero configuration
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1, 1, (3, 6))
        g, G, bias = lc.evaluate(q, qd)
        h = 1e-6
        Gn = np.column_stack([(lc.residual(q + h * e) - lc.residual(q - h * e)) / (2 * h) for e in np.eye(6)])
        assert np.abs(G - Gn).max() < 1e-8
        # second derivative of g along q(t) = q + qd t + qdd t^2 / 2 equals G qdd + Gdot qd
        t = 1e-4
        gpp = (lc.residual(q + qd * t + qdd * t * t / 2) - 2 * g + lc.residual(q - qd * t + qdd * t * t / 2)) / t**2
        assert np.abs(gpp - (G @ qdd + bias)).max() < 1e-5


def test_rejects_open_loop_and_bad_names():
    shifted = robot("spherical").replace('<parent link="a3"/>', '<parent link="a2"/>')
    with pytest.raises(DescriptionError, match="'cut'.*does not close"):
        parse_description(shifted)
    with pytest.raises(DescriptionError, match="nope"):
        parse_description(robot("spherical").replace('<parent link="a3"/>', '<parent link="nope"/>'))
    with pytest.raises(DescriptionError, match="actuator 'jX'"):
        parse_description(robot("spherical").replace('actuator joint="jA1"', 'actuator joint="jX"'))
    with pytest.raises(DescriptionError, match="hinge"):
        parse_description(robot("spherical").replace('type="spherical"', 'type="hinge"'))


@pytest.mark.parametrize("cut_type", sorted(TYPES))
def test_kkt_forward_inverse_round_trip(cut_type):
    desc = parse_description(robot(cut_type))
    lc = LoopConstraints(desc)
    q = np.zeros(6)
    _, G, _ = lc.evaluate(q)
    # velocities in the null space of G, actuators = a set of independent coordinates
    _, s, Vt = np.linalg.svd(G)
    rank = int(np.sum(s > 1e-9))
    N = Vt[rank:].T
    rng = np.random.default_rng(1)
    qd = N @ rng.normal(size=N.shape[1])
    act = []
    for j in range(6):  # greedy: joints whose rates are independent on the constraint manifold
        if np.linalg.matrix_rank(N[act + [j]], tol=1e-6) > len(act):
            act.append(j)
    assert len(act) == N.shape[1]
    u = rng.normal(size=len(act)) * 5
    tau = np.zeros(6)
    tau[act] = u
    qdd, lam = kkt_forward_dynamics(desc, q, qd, tau, constraints=lc)
    _, G, bias = lc.evaluate(q, qd)
    assert np.abs(G @ qdd + bias).max() < 1e-10
    assert np.allclose(kkt_inverse_dynamics(desc, q, qd, qdd, act, constraints=lc), u, rtol=1e-10, atol=1e-10)


def test_kkt_against_pinocchio_spherical_loop():
    import pinocchio as pin     # a test dependency (package.xml, requirements.txt): never skipped
    desc = parse_description(robot("spherical"))
    urdf = robot("spherical", with_cut=False)
    model = pin.buildModelFromXML(urdf)
    model.gravity.linear = desc.tree.gravity
    data = model.createData()
    perm = [model.joints[model.getJointId(n)].idx_q for n in desc.tree.joint_names]
    # contact frames: the cut point on a3 and on b3 (LOCAL 3D constraint)
    pa = frame_pose(desc.tree, np.zeros(6), "a3")
    pb = frame_pose(desc.tree, np.zeros(6), "b3")
    P1 = pin.SE3(np.eye(3), W - pa[:3, 3])
    P2 = pin.SE3(np.eye(3), W - pb[:3, 3])
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model, model.getJointId("jA3"), P1,
                                  model.getJointId("jB3"), P2, pin.ReferenceFrame.LOCAL)
    cmodels = [cm]
    cdatas = [c.createData() for c in cmodels]
    pin.initConstraintDynamics(model, data, cmodels, cdatas)
    prox = pin.ProximalSettings(1e-14, 1e-12, 1)
    lc = LoopConstraints(desc)
    _, G, _ = lc.evaluate(np.zeros(6))
    _, s, Vt = np.linalg.svd(G)
    rng = np.random.default_rng(2)
    qd = Vt[3:].T @ rng.normal(size=3)
    tau = rng.normal(size=6) * 3
    qdd, _ = kkt_forward_dynamics(desc, np.zeros(6), qd, tau, constraints=lc)
    Q, V, T = np.zeros(6), np.zeros(6), np.zeros(6)
    V[perm], T[perm] = qd, tau
    a = pin.constraintDynamics(model, data, Q, V, T, cmodels, cdatas, prox)
    assert np.linalg.norm(np.asarray(a)[perm] - qdd) / np.linalg.norm(qdd) < 1e-9
