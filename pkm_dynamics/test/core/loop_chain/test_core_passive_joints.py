"""Passive joints: the grapple crane example (``robots/grapple_crane.urdf``: the HIAB crane with a
rotator and a grapple hanging below its tool point on two passive swing axes, ``<passive
joint="..."/>``), served as a chain of loops whose state holds the passive joints beside the
actuators.  Checked against the KKT route of ``test/pinocchio_loops.py`` (the passive joints'
efforts zero): forward dynamics and Featherstone's hybrid dynamics; the round trip FD(hybrid);
the energy of a grapple swing released 20 deg from the vertical with the crane held still
(Pinocchio's kinetic and potential energy of the tree, an adaptive integrator over 10 s);
named refusals."""
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from scipy.integrate import solve_ivp

from pinocchio_loops import PinocchioLoops
from pkm_dynamics.core import DescriptionError, StateError, load_robot
from pkm_dynamics.core.friction.friction_kernels import COULOMB, VISCOUS
from pkm_dynamics.testing import frictionless

#: the grapple crane without its cylinders' friction (the KKT route here knows none; the damped
#: case adds the grapple's own)
TEXT = frictionless(str(Path(__file__).resolve().parents[3] / "robots" / "grapple_crane.urdf"))
PASSIVE = '    <passive joint="grapple_swing_y"/>\n    <passive joint="grapple_swing_x"/>\n'
#: the same tree for the independent route, the passive joints prescribed in its loop closure
REFERENCE = TEXT.replace("<passive joint=", "<actuator joint=")
#: slew, lift, tilt, extension, rotator
X0 = np.array([0.3, 0.2, 0.25, 0.4, 0.3])
#: a crane pose whose tool point has the orientation of the zero configuration (turned about the
#: vertical): the grapple hangs at rest with both swing angles zero
HANGING = np.array([0.4, 0.0, 0.0, 0.5, 0.3])


@pytest.fixture(scope="module")
def robot():
    return load_robot(TEXT)


def rel(a, ref):
    return float(np.abs(np.asarray(a) - ref).max() / max(np.abs(ref).max(), 1.0))


def states(count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        x = np.concatenate([X0 + rng.uniform(-0.05, 0.05, 5), rng.uniform(-0.5, 0.5, 2)])
        yield x, rng.normal(scale=0.2, size=7), rng.normal(scale=0.5, size=5)


def test_the_grapple_crane_holds_its_passive_joints(robot):
    assert robot.kind == "loop_chain"
    assert robot.actuated_joints == ("slew", "lift", "tilt", "extension", "rotator")
    assert robot.passive_joints == ("grapple_swing_y", "grapple_swing_x") and robot.n == 7 and robot.n_act == 5
    assert robot.end_effector == "grapple"


def test_the_grapple_hangs_still_below_the_crane(robot):
    """At rest in a pose with the tool point's zero-configuration orientation the grapple's
    centre of mass is vertically below the swing axes (Pinocchio's placement of the tree) and the
    hybrid dynamics gives it no acceleration: the mount's axes are the root's there."""
    x = np.concatenate([HANGING, np.zeros(2)])
    _, passive = robot.hybrid_dynamics(x, np.zeros(7), np.zeros(5))
    assert np.abs(passive).max() <= 1e-10
    model, data = tree_model(robot)
    q = pinocchio_state(robot, model, x, np.zeros(7))[0]
    pin.forwardKinematics(model, data, q)
    pin.updateFramePlacements(model, data)
    mount = data.oMf[model.getFrameId("grapple_mount", pin.FrameType.BODY)].translation
    body = model.frames[model.getFrameId("grapple", pin.FrameType.BODY)]
    com = data.oMi[body.parentJoint].act(body.placement.act(model.inertias[body.parentJoint].lever))
    assert np.abs((com - mount)[:2]).max() <= 1e-10 and com[2] < mount[2] - 0.5


def test_forward_and_hybrid_dynamics_against_the_kkt_route(robot):
    """FD (zero effort at the passive joints) and hybrid dynamics (actuator accelerations in,
    efforts and passive accelerations out) against the KKT route with the passive efforts zero:
    the tree accelerations to 1e-10 relative; FD(hybrid) returns the actuators' accelerations."""
    ref = PinocchioLoops(REFERENCE, robot.tree_joints, robot.tree.gravity)
    u = np.array([2e3, 3e5, 1e5, -2e3, 40.0])
    for x, xd, xdd_a in states(4, seed=3):
        q, qd, _ = ref.close(x, xd, np.zeros(7))
        a_ref, _ = ref.forward_dynamics(q, qd, np.concatenate([u, np.zeros(2)]))
        a = robot.forward_dynamics(x, xd, u)
        assert a.shape == (7,)
        assert rel(robot.tree_state(x, xd, a)[2], a_ref) <= 1e-10
        uh, passive = robot.hybrid_dynamics(x, xd, xdd_a)
        assert rel(robot.inverse_dynamics(x, xd, xdd_a), uh) <= 1e-14
        a_ref, _ = ref.forward_dynamics(q, qd, np.concatenate([uh, np.zeros(2)]))
        assert rel(robot.tree_state(x, xd, np.concatenate([xdd_a, passive]))[2], a_ref) <= 1e-10
        assert rel(robot.forward_dynamics(x, xd, uh), np.concatenate([xdd_a, passive])) <= 1e-10
    sim = robot.simulate(x, xd, 0.004, efforts=uh, dt=0.002)          # the state holds every coordinate
    assert sim.x.shape == sim.xd.shape == (3, 7) and sim.f.shape == (3, 5)


def tree_model(robot):
    """Pinocchio's model of the spanning tree (its own URDF parser) and its data."""
    import xml.etree.ElementTree as ET
    root = ET.fromstring(robot.description.xml)
    for el in list(root):
        if el.tag in ("constraint", "pkm_dynamics"):
            root.remove(el)
    model = pin.buildModelFromXML(ET.tostring(root, encoding="unicode"))
    model.gravity.linear = np.array(robot.tree.gravity)
    return model, model.createData()


def pinocchio_state(robot, model, x, xd):
    """Pinocchio's configuration and velocity of the closed tree at ``(x, xd)``."""
    q, qd, _ = robot.tree_state(x, xd)
    qp, vp = np.zeros(model.nq), np.zeros(model.nv)
    for name, qi, vi in zip(robot.tree_joints, q, qd):
        j = model.joints[model.getJointId(name)]
        if j.nq == 2:
            qp[j.idx_q], qp[j.idx_q + 1] = np.cos(qi), np.sin(qi)
        else:
            qp[j.idx_q] = qi
        vp[j.idx_v] = vi
    return qp, vp


def energy(robot, model, data, x, xd):
    """Kinetic plus potential energy of the whole tree (Pinocchio, its own model of the URDF)."""
    qp, vp = pinocchio_state(robot, model, x, xd)
    return pin.computeKineticEnergy(model, data, qp, vp) + pin.computePotentialEnergy(model, data, qp)


#: the release: both swing angles equal, the grapple's hanging axis 20 deg from the vertical
#: (cos 20 deg = cos(a)^2)
RELEASE = np.arccos(np.sqrt(np.cos(np.radians(20.0))))


def swing(robot, duration):
    """The crane held still at :data:`HANGING` (actuator accelerations zero), the grapple released
    20 deg from the vertical, integrated on the passive joints (hybrid dynamics) by scipy's
    adaptive DOP853 (rtol 1e-10): the energy of the tree (Pinocchio) at every step the
    integrator took, the energy of the grapple hanging at rest, and the passive states (4, steps)."""
    model, data = tree_model(robot)
    zero = np.zeros(5)

    def rates(_, y):
        return np.concatenate([y[2:], robot.hybrid_dynamics(np.concatenate([HANGING, y[:2]]),
                                                             np.concatenate([zero, y[2:]]), zero)[1]])

    sol = solve_ivp(rates, (0.0, duration), [RELEASE, RELEASE, 0.0, 0.0], method="DOP853", rtol=1e-10,
                    atol=1e-11)
    assert sol.success, sol.message
    energies = np.array([energy(robot, model, data, np.concatenate([HANGING, y[:2]]), np.concatenate([zero, y[2:]]))
                         for y in sol.y.T])
    return energies, energy(robot, model, data, np.concatenate([HANGING, [0.0, 0.0]]), np.zeros(7)), sol.y


def test_grapple_swing_conserves_energy(robot):
    """Without damping the energy of the tree stays within 1e-8 of the swing's energy (released
    less hanging at rest) over 10 s, the grapple swinging through the vertical about both axes."""
    energies, rest, y = swing(robot, 10.0)
    assert y[0].min() < -0.5 * RELEASE and y[1].min() < -0.5 * RELEASE        # it swings
    assert np.abs(energies - energies[0]).max() <= 1e-8 * (energies[0] - rest)


def damped(c):
    """The grapple crane with the URDF damping ``c`` [N m s/rad] on both swing axes."""
    import re
    text = re.sub(r'(<joint name="grapple_swing_[xy]" type="revolute">)', rf'\1\n    <dynamics damping="{c}"/>', TEXT)
    return load_robot(text)


def test_a_damped_grapple_swing_decays():
    """With the URDF damping of the passive joints (<dynamics damping="c"/>, the joint's effort
    -c qd, read as joint friction): FD against the KKT route with those efforts, and the swing's
    energy decreasing at every step of the integrator, most of it gone in 10 s."""
    robot = damped(80.0)
    rows = [robot.description.friction.row(j) for j in robot.passive_joints]
    assert [r[VISCOUS] for r in rows] == [80.0, 80.0] and [r[COULOMB] for r in rows] == [0.0, 0.0]
    ref = PinocchioLoops(REFERENCE, robot.tree_joints, robot.tree.gravity)
    x, xd, _ = next(states(1, seed=8))
    q, qd, _ = ref.close(x, xd, np.zeros(7))
    u = np.array([2e3, 3e5, 1e5, -2e3, 40.0])
    a_ref, _ = ref.forward_dynamics(q, qd, np.concatenate([u, -80.0 * xd[5:]]))
    assert rel(robot.tree_state(x, xd, robot.forward_dynamics(x, xd, u))[2], a_ref) <= 1e-10
    energies, rest, _ = swing(robot, 10.0)
    scale = energies[0] - rest
    assert np.all(np.diff(energies) <= 1e-9 * scale) and energies[-1] - rest < 0.5 * scale


def test_bad_passive_input_is_refused_naming_the_joint(robot):
    x, xd, xdd_a = next(states(1, seed=1))
    with pytest.raises(StateError, match="grapple_swing_x"):
        robot.forward_dynamics(x[:6], xd[:6], np.zeros(5))            # a passive state missing
    bad = x.copy()
    bad[5] = np.nan
    with pytest.raises(StateError, match="joint 'grapple_swing_y'"):
        robot.hybrid_dynamics(bad, xd, xdd_a)
    with pytest.raises(StateError, match="passive joint.*grapple_swing_y, grapple_swing_x.*missing"):
        robot.forward_kinematics(x[:5])                                # the actuators only
    with pytest.raises(StateError, match="joint 'grapple_swing_x'"):
        robot.inverse_kinematics(np.eye(4), passive=[0.1, np.inf])
    with pytest.raises(DescriptionError, match="grapple_swing_x.*neither actuated nor declared passive"):
        load_robot(TEXT.replace('    <passive joint="grapple_swing_x"/>\n', ""))
    with pytest.raises(DescriptionError, match="lift_link_joint.*is a joint of loop"):
        load_robot(TEXT.replace(PASSIVE, PASSIVE + '    <passive joint="lift_link_joint"/>\n'))
    with pytest.raises(DescriptionError, match="'lift' is declared both actuated and passive"):
        load_robot(TEXT.replace(PASSIVE, PASSIVE + '    <passive joint="lift"/>\n'))


def test_the_grapple_crane_is_what_the_generator_writes():
    """``robots/grapple_crane.urdf`` is make_hiab_urdfs.py's grapple crane of its 4-DoF crane:
    regenerating changes nothing."""
    import importlib.util
    robots = Path(__file__).resolve().parents[3] / "robots"
    spec = importlib.util.spec_from_file_location("make_hiab_urdfs", robots / "make_hiab_urdfs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    crane = (robots / "heavy_duty_4dof.urdf").read_text()
    assert gen.grapple_crane(crane) == (robots / "grapple_crane.urdf").read_text()


def test_forward_kinematics_follows_the_passive_joints(robot):
    """The grapple's pose and body twist at the state's positions and rates (actuators and
    passive joints) against Pinocchio's frame placement and velocity of the spanning tree closed
    by the KKT route (its own Newton on the loops, the passive joints prescribed): 1e-10."""
    from pkm_dynamics.core.forward_state import forward_state
    ref = PinocchioLoops(REFERENCE, robot.tree_joints, robot.tree.gravity)
    for x, xd, _ in states(3, seed=11):
        q, qd, _ = ref.close(x, xd, np.zeros(7))
        ref.kinematics(ref.to_pin(q), ref.to_pin(qd))
        pose = ref.data.oMf[ref.wrench_frame].homogeneous
        twist = pin.getFrameVelocity(ref.model, ref.data, ref.wrench_frame, pin.LOCAL).vector
        assert np.abs(robot.forward_kinematics(x) - pose).max() <= 1e-10
        state = forward_state(robot, x, xd)
        assert np.abs(state.pose - pose).max() <= 1e-10
        assert rel(state.twist, np.concatenate([twist[3:], twist[:3]])) <= 1e-10
        assert rel(state.q, q) <= 1e-10 and rel(state.qd, qd) <= 1e-10
    other = x.copy()
    other[5:] += 0.2                                    # the grapple moves with its swing axes
    assert np.abs(robot.forward_kinematics(other) - robot.forward_kinematics(x)).max() > 0.1


def test_inverse_kinematics_holds_the_passive_joints(robot):
    """IK with the passive joints held (given, at rest; default zero) reaches a grapple pose made
    by Pinocchio's FK of the closed tree at known actuators: the actuators found reproduce the
    pose through Pinocchio to 1e-9, and the pose's twist (passive joints at rest) gives back
    the actuator rates."""
    ref = PinocchioLoops(REFERENCE, robot.tree_joints, robot.tree.gravity)
    for held in (np.zeros(2), np.array([0.25, -0.15])):
        x = np.concatenate([X0 + np.array([0.02, -0.03, 0.04, 0.05, -0.1]), held])
        xd = np.concatenate([[0.05, -0.02, 0.03, 0.05, 0.2], np.zeros(2)])
        q, qd, _ = ref.close(x, xd, np.zeros(7))
        ref.kinematics(ref.to_pin(q), ref.to_pin(qd))
        pose = ref.data.oMf[ref.wrench_frame].homogeneous
        twist = pin.getFrameVelocity(ref.model, ref.data, ref.wrench_frame, pin.LOCAL).vector
        sol = robot.inverse_kinematics(pose, np.concatenate([twist[3:], twist[:3]]), initial=x[:5],
                                       passive=None if not held.any() else held)
        assert sol.actuators.shape == (5,) and sol.residual <= 1e-9
        assert rel(sol.actuators, x[:5]) <= 1e-8 and rel(sol.actuators_d, xd[:5]) <= 1e-8
        qs, _, _ = ref.close(np.concatenate([sol.actuators, held]), np.zeros(7), np.zeros(7))
        ref.kinematics(ref.to_pin(qs))
        assert np.abs(ref.data.oMf[ref.wrench_frame].homogeneous - pose).max() <= 1e-9
        assert rel(sol.q, qs) <= 1e-9


def actuator_motion(t):
    """A smooth crane motion: the actuators' position and derivatives 1..3 (4, 5) at ``t``."""
    w = np.array([1.0, 2.0, 1.5, 1.0, 3.0])
    return np.array([X0 * (k == 0) + 0.05 * w**k * np.sin(w * t + k * np.pi / 2) for k in range(4)])


def test_hydraulics_follow_the_hybrid_dynamics_along_the_motion(robot):
    """The cylinders' force rate of a crane with its grapple swinging: the hybrid dynamics'
    efforts along the actuators' prescribed motion with the passive joints integrated (scipy's
    DOP853, rtol 1e-12) differenced in time (central, 0.1 ms) give ``du`` of
    ``robot.hydraulics`` (``force_rate``) to 1e-6 of its scale; the pressures are the valve
    model's at those forces and rates, the cylinders' positions the actuators'."""
    from pkm_dynamics.core.hydraulics.hydraulic_feedforward import force_rate
    from pkm_dynamics.core.hydraulics.valve_cylinder import hydraulic_state
    t0, dt, p0 = 0.3, 1e-4, np.array([0.2, -0.1, 0.3, 0.15])

    def rates(t, y):
        m = actuator_motion(t)
        _, a = robot.hybrid_dynamics(np.concatenate([m[0], y[:2]]), np.concatenate([m[1], y[2:]]), m[2])
        return np.concatenate([y[2:], a])

    sol = solve_ivp(rates, (t0, t0 + dt), p0, method="DOP853", rtol=1e-12, atol=1e-14, dense_output=True)
    back = solve_ivp(rates, (t0, t0 - dt), p0, method="DOP853", rtol=1e-12, atol=1e-14)

    def effort(t, y):
        m = actuator_motion(t)
        return robot.hybrid_dynamics(np.concatenate([m[0], y[:2]]), np.concatenate([m[1], y[2:]]), m[2])[0]

    du_time = (effort(t0 + dt, sol.y[:, -1]) - effort(t0 - dt, back.y[:, -1])) / (2 * dt)
    m = actuator_motion(t0)
    x, xd = np.concatenate([m[0], p0[:2]]), np.concatenate([m[1], p0[2:]])
    u, du = force_rate(robot, x, xd, m[2], m[3])
    assert rel(u, effort(t0, p0)) <= 1e-14
    assert np.abs(du - du_time).max() <= 1e-6 * np.abs(du_time).max()
    h = robot.hydraulics(x, xd, m[2], m[3], check=False)
    ref = hydraulic_state(robot.hydraulic_model, m[0], m[1], u, du, check=False)
    assert robot.hydraulic_model.n > 0 and np.array_equal(h.pressure_a, ref.pressure_a)
    assert np.array_equal(h.spool, ref.spool)

