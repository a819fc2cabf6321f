"""Passive joints: the HIAB crane (heavy_duty_4dof) with a grapple hanging below its tool point on
two passive swing axes (``<passive joint="..."/>``), served as a chain of loops whose state holds
the passive joints beside the actuators.  Checked against the KKT route of
``test/pinocchio_loops.py`` (the passive joints' efforts zero): forward dynamics and Featherstone's
hybrid dynamics; the round trip FD(hybrid); the energy of a grapple swing released from 20 deg
with the crane held still (Pinocchio's kinetic and potential energy of the tree, RK4 at 1 ms);
named refusals.  Grapple masses: a rotator link of 20 kg, a grapple of 150 kg with its centre
of mass 0.5 m below the second axis (illustrative)."""
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from pinocchio_loops import PinocchioLoops
from pkm_dynamics.core import DescriptionError, StateError, load_robot
from pkm_dynamics.core.friction.friction_kernels import COULOMB, VISCOUS
from pkm_dynamics.testing import frictionless

#: the HIAB crane without its joint friction (the KKT route here knows none; the damped case adds
#: the grapple's own)
CRANE = frictionless(str(Path(__file__).resolve().parents[3] / "robots" / "heavy_duty_4dof.urdf"))
GRAPPLE = '''  <joint name="grapple_swing_x" type="revolute">
    <parent link="tcp"/>
    <child link="rotator"/>
    <origin xyz="0 0 0" rpy="0 0 0"/>
    <axis xyz="1 0 0"/>
    <limit lower="-1.5" upper="1.5" effort="0" velocity="0"/>
  </joint>
  <link name="rotator">
    <inertial>
      <origin xyz="0 0 -0.05" rpy="0 0 0"/>
      <mass value="20.0"/>
      <inertia ixx="0.05" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.03"/>
    </inertial>
  </link>
  <joint name="grapple_swing_y" type="revolute">
    <parent link="rotator"/>
    <child link="grapple"/>
    <origin xyz="0 0 -0.1" rpy="0 0 0"/>
    <axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="1.5" effort="0" velocity="0"/>
  </joint>
  <link name="grapple">
    <inertial>
      <origin xyz="0 0 -0.5" rpy="0 0 0"/>
      <mass value="150.0"/>
      <inertia ixx="8.0" ixy="0" ixz="0" iyy="7.0" iyz="0" izz="3.0"/>
    </inertial>
  </link>
'''
PASSIVE = '    <passive joint="grapple_swing_x"/>\n    <passive joint="grapple_swing_y"/>\n'
TEXT = CRANE.replace("  <pkm_dynamics>\n", GRAPPLE + "  <pkm_dynamics>\n").replace("  </pkm_dynamics>",
                                                                                  PASSIVE + "  </pkm_dynamics>")
#: the same tree for the independent route, the passive joints prescribed in its loop closure
REFERENCE = TEXT.replace("<passive joint=", "<actuator joint=")
X0 = np.array([0.3, 0.2, 0.25, 0.4])


@pytest.fixture(scope="module")
def robot():
    return load_robot(TEXT)


def rel(a, ref):
    return float(np.abs(np.asarray(a) - ref).max() / max(np.abs(ref).max(), 1.0))


def states(count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        x = np.concatenate([X0 + rng.uniform(-0.05, 0.05, 4), rng.uniform(-0.5, 0.5, 2)])
        yield x, rng.normal(scale=0.2, size=6), rng.normal(scale=0.5, size=4)


def test_the_grapple_crane_holds_its_passive_joints(robot):
    assert robot.kind == "loop_chain" and robot.actuated_joints == ("slew", "lift", "tilt", "extension")
    assert robot.passive_joints == ("grapple_swing_x", "grapple_swing_y") and robot.n == 6 and robot.n_act == 4


def test_forward_and_hybrid_dynamics_against_the_kkt_route(robot):
    """FD (zero effort at the passive joints) and hybrid dynamics (actuator accelerations in,
    efforts and passive accelerations out) against the KKT route with the passive efforts zero:
    the tree accelerations to 1e-10 relative; FD(hybrid) returns the actuators' accelerations."""
    ref = PinocchioLoops(REFERENCE, robot.tree_joints, robot.tree.gravity)
    for x, xd, xdd_a in states(4, seed=3):
        q, qd, _ = ref.close(x, xd, np.zeros(6))
        u = np.array([2e3, 3e5, 1e5, -2e3])
        a_ref, _ = ref.forward_dynamics(q, qd, np.concatenate([u, np.zeros(2)]))
        a = robot.forward_dynamics(x, xd, u)
        assert a.shape == (6,)
        assert rel(robot.tree_state(x, xd, a)[2], a_ref) <= 1e-10
        uh, passive = robot.hybrid_dynamics(x, xd, xdd_a)
        assert rel(robot.inverse_dynamics(x, xd, xdd_a), uh) <= 1e-14
        a_ref, _ = ref.forward_dynamics(q, qd, np.concatenate([uh, np.zeros(2)]))
        assert rel(robot.tree_state(x, xd, np.concatenate([xdd_a, passive]))[2], a_ref) <= 1e-10
        assert rel(robot.forward_dynamics(x, xd, uh), np.concatenate([xdd_a, passive])) <= 1e-10
    sim = robot.simulate(x, xd, 0.004, efforts=uh, dt=0.002)          # the state holds every coordinate
    assert sim.x.shape == sim.xd.shape == (3, 6) and sim.f.shape == (3, 4)


def energy(robot, model, data, x, xd):
    """Kinetic plus potential energy of the whole tree (Pinocchio, its own model of the URDF)."""
    q, qd, _ = robot.tree_state(x, xd)
    qp, vp = np.zeros(model.nq), np.zeros(model.nv)
    for name, qi, vi in zip(robot.tree_joints, q, qd):
        j = model.joints[model.getJointId(name)]
        if j.nq == 2:
            qp[j.idx_q], qp[j.idx_q + 1] = np.cos(qi), np.sin(qi)
        else:
            qp[j.idx_q] = qi
        vp[j.idx_v] = vi
    return pin.computeKineticEnergy(model, data, qp, vp) + pin.computePotentialEnergy(model, data, qp)


def swing(robot, steps):
    """The crane held still (actuator accelerations zero), the grapple released from 20 deg about
    its first axis, RK4 at 1 ms on the passive joints (hybrid dynamics): the energy of the tree
    (Pinocchio) at every step, and the last passive state."""
    import xml.etree.ElementTree as ET
    root = ET.fromstring(TEXT)
    for el in list(root):
        if el.tag in ("constraint", "pkm_dynamics"):
            root.remove(el)
    model = pin.buildModelFromXML(ET.tostring(root, encoding="unicode"))
    model.gravity.linear = np.array(robot.tree.gravity)
    data = model.createData()
    p, v = np.array([np.radians(20.0), 0.0]), np.zeros(2)
    zero = np.zeros(4)

    def acc(pp, vv):
        return robot.hybrid_dynamics(np.concatenate([X0, pp]), np.concatenate([zero, vv]), zero)[1]

    def E(pp, vv):
        return energy(robot, model, data, np.concatenate([X0, pp]), np.concatenate([zero, vv]))

    h, energies = 1e-3, [E(p, v)]
    for _ in range(steps):
        k1p, k1v = v, acc(p, v)
        k2p, k2v = v + h / 2 * k1v, acc(p + h / 2 * k1p, v + h / 2 * k1v)
        k3p, k3v = v + h / 2 * k2v, acc(p + h / 2 * k2p, v + h / 2 * k2v)
        k4p, k4v = v + h * k3v, acc(p + h * k3p, v + h * k3v)
        p = p + h / 6 * (k1p + 2 * k2p + 2 * k3p + k4p)
        v = v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        energies.append(E(p, v))
    return np.array(energies), p, v


#: the grapple's swing energy scale m g l (1 - cos 20 deg), J
SCALE = 150.0 * 9.80665 * 0.6 * (1 - np.cos(np.radians(20.0)))


def test_grapple_swing_conserves_energy(robot):
    """Without damping the energy of the tree stays within 1e-8 of the swing energy scale over
    0.25 s (RK4 at 1 ms)."""
    energies, p, v = swing(robot, 250)
    assert abs(p[0]) < np.radians(20.0) - 0.05 or abs(v[0]) > 0.1      # it swings
    assert np.abs(energies - energies[0]).max() <= 1e-8 * SCALE


def test_a_damped_grapple_swing_decays():
    """With the URDF damping of the passive joints (<dynamics damping="c"/>, the joint's effort
    -c qd, read as joint friction): FD against the KKT route with those efforts, and the swing's energy decreasing."""
    damped = load_robot(TEXT.replace('<axis xyz="1 0 0"/>', '<axis xyz="1 0 0"/>\n    <dynamics damping="80"/>')
                        .replace('<axis xyz="0 1 0"/>\n    <limit lower="-1.5"',
                                 '<axis xyz="0 1 0"/>\n    <dynamics damping="80"/>\n    <limit lower="-1.5"'))
    rows = [damped.description.friction.row(j) for j in damped.passive_joints]
    assert [r[VISCOUS] for r in rows] == [80.0, 80.0] and [r[COULOMB] for r in rows] == [0.0, 0.0]
    ref = PinocchioLoops(REFERENCE, damped.tree_joints, damped.tree.gravity)
    x, xd, _ = next(states(1, seed=8))
    q, qd, _ = ref.close(x, xd, np.zeros(6))
    u = np.array([2e3, 3e5, 1e5, -2e3])
    a_ref, _ = ref.forward_dynamics(q, qd, np.concatenate([u, -80.0 * xd[4:]]))
    assert rel(damped.tree_state(x, xd, damped.forward_dynamics(x, xd, u))[2], a_ref) <= 1e-10
    energies, _, _ = swing(damped, 120)
    assert np.all(np.diff(energies) <= 1e-9 * SCALE) and energies[0] - energies[-1] > 1e-3 * SCALE


def test_bad_passive_input_is_refused_naming_the_joint(robot):
    x, xd, xdd_a = next(states(1, seed=1))
    with pytest.raises(StateError, match="grapple_swing_y"):
        robot.forward_dynamics(x[:5], xd[:5], np.zeros(4))            # a passive state missing
    bad = x.copy()
    bad[5] = np.nan
    with pytest.raises(StateError, match="grapple_swing_y"):
        robot.hybrid_dynamics(bad, xd, xdd_a)
    with pytest.raises(StateError, match="passive joints"):
        robot.inverse_kinematics(np.eye(4))
    with pytest.raises(DescriptionError, match="grapple_swing_x.*neither actuated nor declared passive"):
        load_robot(TEXT.replace('    <passive joint="grapple_swing_x"/>\n', ""))
    with pytest.raises(DescriptionError, match="lift_link_joint.*is a joint of loop"):
        load_robot(TEXT.replace(PASSIVE, PASSIVE + '    <passive joint="lift_link_joint"/>\n'))
    with pytest.raises(DescriptionError, match="'lift' is declared both actuated and passive"):
        load_robot(TEXT.replace(PASSIVE, PASSIVE + '    <passive joint="lift"/>\n'))
