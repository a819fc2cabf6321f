"""The excavator (robots/excavator.urdf): a serial chain of loops the module-chain recogniser
refuses (the bucket linkage is two loops for one cylinder), served in actuator space by the
constraint-embedding route (core/loop_chain).  Checked against routes that share no code with
it: the KKT route of ``test/pinocchio_loops.py`` (own parser, Pinocchio spanning tree, loop
constraints as Lagrange multipliers), FD(ID) round trips, a closed-form four-bar / triangle
solution of the bucket linkage written here from the source's pivots, finite differences of the
derivatives and of the HOID, and the named refusals of bad descriptions."""
import math
from pathlib import Path

import numpy as np
import pytest

from pinocchio_loops import PinocchioLoops
from pkm_dynamics.core import DescriptionError, load_robot
from pkm_dynamics.core.limb.loop_constraints import loop_residual

ROBOTS = Path(__file__).resolve().parents[3] / "robots"
TEXT = (ROBOTS / "excavator.urdf").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def robot():
    return load_robot(TEXT)


def states(robot, count, seed, margin=0.05):
    """Random states over the strokes (``margin`` of each stroke kept off its ends), one swing
    turn, random rates and accelerations."""
    rng = np.random.default_rng(seed)
    lo = np.r_[-math.pi, robot.lower[1:]]
    hi = np.r_[math.pi, robot.upper[1:]]
    span = hi - lo
    for _ in range(count):
        x = lo + margin * span + (1 - 2 * margin) * span * rng.random(4)
        yield x, rng.normal(scale=0.2, size=4), rng.normal(scale=0.5, size=4), \
            rng.normal(scale=[500, 500, 500, 5000, 5000, 5000])


def rel(a, ref):
    return float(np.abs(np.asarray(a) - ref).max() / max(np.abs(ref).max(), 1.0))


def test_the_excavator_is_a_chain_of_loops(robot):
    """load_robot serves it on the limb route (the recogniser refuses it); its masses are the
    source's (sum of the 13 bodies, kg)."""
    assert robot.kind == "loop_chain" and robot.state_space == "actuator"
    assert robot.actuated_joints == ("swing", "boom_cylinder", "arm_cylinder", "bucket_cylinder")
    assert robot.description.tree.total_mass == pytest.approx(12200 + 20592 + 116 + 29 + 1600 + 63 + 30 + 880
                                                              + 25 + 16 + 17 + 450 + 18, abs=1e-9)
    assert len(robot.route.limb.loops) == 3          # boom, arm, and the bucket linkage's two loops as one


def test_excavator_against_the_independent_kkt(robot):
    """Tree motion, ID (with and without a wrench on the bucket) and FD against the KKT route at
    random states across the strokes: <= 1e-10 relative."""
    ref = PinocchioLoops(TEXT, robot.tree_joints, robot.tree.gravity)
    for x, xd, xdd, w in states(robot, 6, seed=28):
        q, qd, qdd = ref.close(x, xd, xdd, steps=64)
        got = robot.tree_state(x, xd, xdd)
        assert loop_residual(robot.route.limb, got[0]) <= 1e-10
        for a, b, what in zip(got, (q, qd, qdd), ("q", "qd", "qdd")):
            assert rel(a, b) <= 1e-10, f"tree {what} at x={x}"
        for wrench in (None, w):
            u_ref, _ = ref.inverse_dynamics(q, qd, qdd, wrench)
            u = robot.inverse_dynamics(x, xd, xdd, wrench)
            assert rel(u, u_ref) <= 1e-10, f"ID at x={x}: {u} vs {u_ref}"
            f = u_ref + np.array([2e3, 2e4, 2e4, 5e3]) * np.sin(np.arange(4) + x)
            a_ref, _ = ref.forward_dynamics(q, qd, f, wrench)
            a = robot.forward_dynamics(x, xd, f, wrench)
            assert rel(robot.tree_state(x, xd, a)[2], a_ref) <= 1e-10, f"FD at x={x}"


def test_excavator_fd_id_round_trips(robot):
    """FD(ID(x, xd, xdd)) = xdd and ID(FD(x, xd, u)) = u, <= 1e-10 relative."""
    for x, xd, xdd, w in states(robot, 8, seed=2028, margin=0.0):
        u = robot.inverse_dynamics(x, xd, xdd, w)
        assert rel(robot.forward_dynamics(x, xd, u, w), xdd) <= 1e-10
        f = u * 0.7
        assert rel(robot.inverse_dynamics(x, xd, robot.forward_dynamics(x, xd, f, w), w), f) <= 1e-10


# the source's pivots of the bucket linkage (excavator_simulator_mujoco, model/excavator/README.md),
# in the arm's plane frame: cylinder pivot I, rocker pivot K, bucket pivot M; bucket pin L at LM
# from M; rod JJ', rocker JK, coupler JL; the bucket at 70 deg to the arm at the zero configuration
I_, K_, M_ = np.array([0.2402, 0.3782]), np.array([1.522, 0.065]), np.array([1.996, 0.0])
LM, JJ, JK, JL, BUCKET0 = 0.379, 0.866, 0.4539, 0.449, math.radians(70.0)


def circles(c1, r1, c2, r2, near):
    """The intersection of two circles nearest ``near`` (the assembly branch)."""
    d = np.linalg.norm(c2 - c1)
    a = (r1 ** 2 - r2 ** 2 + d ** 2) / (2 * d)
    h = math.sqrt(r1 ** 2 - a ** 2)
    e = (c2 - c1) / d
    n = np.array([-e[1], e[0]])
    return min((c1 + a * e + s * h * n for s in (1, -1)), key=lambda p: np.linalg.norm(p - near))


def pin_L(theta):
    return M_ + LM * np.array([math.cos(BUCKET0 + theta), math.sin(BUCKET0 + theta)])


def J0():
    """The common pin J at the zero configuration (rocker and coupler circles, the branch whose
    cylinder is 0.5936 + 0.866 m long, as the source's pose)."""
    c = [circles(K_, JK, pin_L(0.0), JL, near) for near in (np.array([1.3, 0.7]), np.array([1.9, -0.7]))]
    return min(c, key=lambda j: abs(np.linalg.norm(j - I_) - 1.4596))


def bucket_angle(stroke):
    """Closed form: the triangle I-J-K (cylinder length |IJ0| + stroke, rocker JK) gives J, the
    four-bar K-J-L-M (coupler JL, bucket LM) gives L, the bucket angle is L's angle about M."""
    j0 = J0()
    J = circles(I_, np.linalg.norm(j0 - I_) + stroke, K_, JK, j0)
    L = circles(J, JL, M_, LM, pin_L(0.0))
    return math.atan2(L[1] - M_[1], L[0] - M_[0]) - BUCKET0


def stroke_of(theta):
    """Closed form, inverse: the bucket angle gives L, the coupler and rocker circles give J, the
    cylinder length |IJ| gives the stroke."""
    j0 = J0()
    J = circles(pin_L(theta), JL, K_, JK, j0)
    return np.linalg.norm(J - I_) - np.linalg.norm(j0 - I_)


def test_bucket_linkage_against_the_closed_form(robot):
    """Actuator stroke -> bucket angle (the tree's bucket joint) against the closed-form triangle
    and four-bar solution over the whole stroke, and back: <= 1e-10."""
    b = robot.tree_joints.index("bucket_joint")
    for s in np.linspace(robot.lower[3], robot.upper[3], 9):
        q = robot.tree_state(np.array([0.3, 0.0, 0.1, s]))[0]
        assert abs(q[b] - bucket_angle(s)) <= 1e-10, f"stroke {s}"
        assert abs(stroke_of(q[b]) - s) <= 1e-10
    assert bucket_angle(0.0) == pytest.approx(0.0, abs=1e-12)


def test_inverse_kinematics_round_trip(robot):
    """FK of random actuators, IK back (from the mid-stroke seed and from a seed near): the pose
    to 1e-10 and the actuators among the solutions found."""
    for x, _, _, _ in states(robot, 3, seed=5):
        T = robot.forward_kinematics(x)
        sol = robot.inverse_kinematics(T, twist=None, initial=x + 0.01)
        assert np.abs(robot.forward_kinematics(sol.actuators) - T).max() <= 1e-10
        assert np.abs(sol.actuators - x).max() <= 1e-8


def test_derivatives_against_finite_differences(robot):
    """The exact derivatives (forward-mode jets) against central differences of ID and FD."""
    x, xd, xdd, w = next(states(robot, 1, seed=9))
    d = robot.inverse_dynamics_derivatives(x, xd, xdd, w)
    assert rel(d.value, robot.inverse_dynamics(x, xd, xdd, w)) <= 1e-12
    h = 1e-6
    for k, arg in enumerate((x, xd, xdd)):
        cols = []
        for j in range(4):
            e = np.eye(4)[j] * h
            args = [x, xd, xdd]
            args[k] = arg + e
            up = robot.inverse_dynamics(*args, w)
            args[k] = arg - e
            cols.append((up - robot.inverse_dynamics(*args, w)) / (2 * h))
        assert rel((d.d_x, d.d_xd, d.d_u)[k], np.column_stack(cols)) <= 1e-5
    u = d.value * 0.9
    f = robot.forward_dynamics_derivatives(x, xd, u, w)
    M = robot.inverse_dynamics_derivatives(x, xd, f.value, w).d_u
    assert rel(f.d_u @ M, np.eye(4)) <= 1e-10
    cols = [(robot.forward_dynamics(x + e, xd, u, w) - robot.forward_dynamics(x - e, xd, u, w)) / (2 * h)
            for e in np.eye(4) * h]
    assert rel(f.d_x, np.column_stack(cols)) <= 1e-5


def test_hoid_against_inverse_dynamics(robot):
    """HOID (Taylor route): u = ID, du against a central difference of ID along the motion."""
    x, xd, xdd, _ = next(states(robot, 1, seed=11))
    j3, j4 = np.array([0.1, -0.2, 0.3, 0.1]), np.array([0.2, 0.1, -0.1, 0.3])
    r = robot.higher_order_inverse_dynamics(x, xd, xdd, j3, j4)
    assert rel(r.u, robot.inverse_dynamics(x, xd, xdd)) <= 1e-10
    h = 1e-5

    def u_at(t):
        return robot.inverse_dynamics(x + xd * t + xdd * t ** 2 / 2 + j3 * t ** 3 / 6 + j4 * t ** 4 / 24,
                                      xd + xdd * t + j3 * t ** 2 / 2 + j4 * t ** 3 / 6,
                                      xdd + j3 * t + j4 * t ** 2 / 2)
    assert rel(r.du, (u_at(h) - u_at(-h)) / (2 * h)) <= 1e-6


def test_the_streams_force_rate_needs_no_numpy_jets(robot, monkeypatch):
    """The node's stream asks ``force_rate(..., exact=False)`` once per reference (hydraulic
    outputs): a chain of loops answers by two more compiled ID calls, not by its derivatives
    (numpy jets, ~0.1 s), and the rate is the HOID's ``du`` to 1e-6 of its scale."""
    from pkm_dynamics.core.hydraulics.hydraulic_feedforward import force_rate
    x, xd, xdd, _ = next(states(robot, 1, seed=12))
    j3 = np.array([0.1, -0.2, 0.3, 0.1])
    du_exact = robot.higher_order_inverse_dynamics(x, xd, xdd, j3, np.zeros(4)).du

    def refused(*_, **__):
        raise AssertionError("the stream's rate ran the derivatives")
    monkeypatch.setattr(robot, "inverse_dynamics_derivatives", refused)
    u, du = force_rate(robot, x, xd, xdd, j3, exact=False)
    assert rel(u, robot.inverse_dynamics(x, xd, xdd)) <= 1e-14
    assert np.abs(du - du_exact).max() <= 1e-6 * np.abs(du_exact).max()


def test_the_streams_rate_follows_the_robots_compiled_derivatives(robot, monkeypatch):
    """``force_rate(..., exact=False)`` takes the central difference because the robot says its
    derivatives are not compiled (``compiled_derivatives`` False), whatever its ``kind``: the
    same answer as :func:`difference_force_rate`, to the bit, without the derivatives."""
    from pkm_dynamics.core.hydraulics.hydraulic_feedforward import difference_force_rate, force_rate
    assert robot.compiled_derivatives is False
    x, xd, xdd, _ = next(states(robot, 1, seed=13))
    j3 = np.array([0.2, 0.1, -0.3, 0.2])

    def refused(*_, **__):
        raise AssertionError("the stream's rate ran the derivatives")
    monkeypatch.setattr(robot, "inverse_dynamics_derivatives", refused)
    monkeypatch.setattr(robot, "kind", "another kind")
    u, du = force_rate(robot, x, xd, xdd, j3, exact=False)
    ref = difference_force_rate(robot, x, xd, xdd, j3)
    assert np.array_equal(u, ref[0]) and np.array_equal(du, ref[1])


def test_simulation_holds_still_under_gravity_compensation(robot):
    """Efforts = ID at rest: the simulated excavator stays where it is (RK4, 20 ms)."""
    x = np.array([0.2, 0.0, 0.1, -0.2])
    u = robot.inverse_dynamics(x, np.zeros(4), np.zeros(4))
    sim = robot.simulate(x, np.zeros(4), 0.02, efforts=u, dt=0.005)
    assert np.abs(sim.x - x).max() <= 1e-9 and np.abs(sim.xd).max() <= 1e-8


def test_reactions_balance(robot):
    """The joint reactions' generalized forces: the actuated joints carry the efforts, the passive
    tree joints nothing (their screw components of the transmitted wrench)."""
    x, xd, _, _ = next(states(robot, 1, seed=3))
    u = np.array([1e3, 2e5, -4e4, -8e3])
    r = robot.joint_reactions(x, xd, u)
    X = robot.tree.X
    tau = np.einsum("ij,ij->i", r.joint_wrenches, X)
    act = robot.actuated
    assert rel(tau[act], u) <= 1e-9
    passive = np.setdiff1d(np.arange(robot.tree.nq), act)
    assert np.abs(tau[passive]).max() <= 1e-9 * np.abs(u).max()


@pytest.mark.parametrize("edit, words", [
    ('    <actuator joint="bucket_cylinder"/>\n', ("loop (bucket_rod_end, coupler_end) has no actuator",)),
    ('    <actuator joint="bucket_cylinder"/>\n',
     ("has nothing to drive", "loop (bucket_rod_end, coupler_end)", "'rocker_joint'", "'bucket_cylinder'")),
])
def test_bad_descriptions_are_refused_naming_the_joint(edit, words):
    """A loop with no actuator, an actuator with nothing left to drive: DescriptionError naming
    the loop and the joints."""
    if "nothing" in words[0]:
        text = TEXT.replace(edit, edit + '    <actuator joint="rocker_joint"/>\n')
    else:
        text = TEXT.replace(edit, "")
    with pytest.raises(DescriptionError) as err:
        load_robot(text)
    for w in words:
        assert w in str(err.value), str(err.value)


def test_payload_in_the_bucket(robot):
    """A payload in the bucket (robot_with_payload) against the KKT route of the same text with the
    payload as a fixed link of the bucket: ID at random states, <= 1e-10 relative."""
    from pkm_dynamics.core.description.payload import Payload, robot_with_payload
    load = Payload.from_urdf_inertia(800.0, [0.3, 0.0, -0.5], [60, 0, 1, 40, 0, 50])
    loaded = robot_with_payload(robot, load)
    assert loaded.kind == "loop_chain"
    text = TEXT.replace('  <pkm_dynamics>', '''  <joint name="payload_mount" type="fixed">
    <parent link="bucket"/>
    <child link="payload"/>
    <origin xyz="0 0 0" rpy="0 0 0"/>
  </joint>
  <link name="payload">
    <inertial>
      <origin xyz="0.3 0.0 -0.5" rpy="0 0 0"/>
      <mass value="800.0"/>
      <inertia ixx="60" ixy="0" ixz="1" iyy="40" iyz="0" izz="50"/>
    </inertial>
  </link>
  <pkm_dynamics>''')
    ref = PinocchioLoops(text, robot.tree_joints, robot.tree.gravity)
    for x, xd, xdd, _ in states(robot, 3, seed=41):
        q, qd, qdd = ref.close(x, xd, xdd, steps=64)
        u_ref, _ = ref.inverse_dynamics(q, qd, qdd)
        assert rel(loaded.inverse_dynamics(x, xd, xdd), u_ref) <= 1e-10
        assert rel(robot.inverse_dynamics(x, xd, xdd), u_ref) > 1e-3      # the payload matters


def test_public_calls_refuse_bad_input_naming_it(robot):
    """FD and ID check finiteness and strokes inside the kernel call; a refusal still names the
    field, the entry and the joint (or the limit), for one state and for a bad row of a batch,
    and the good rows of a batch are the single-state answers."""
    from pkm_dynamics.core import StateError
    (x, xd, xdd, _), (x2, xd2, xdd2, _) = states(robot, 2, seed=21)
    names = robot.coordinates
    for call, third in ((robot.forward_dynamics, "u"), (robot.inverse_dynamics, "xdd")):
        args = [x, xd, xdd]
        for i, field in enumerate(("x", "xd", third)):
            for k in (0, 2):
                bad = [a.copy() for a in args]
                bad[i][k] = np.nan
                with pytest.raises(StateError, match=rf"^{field}\[{k}\] \(joint '{names[k]}'\) is not finite"):
                    call(*bad)
                batch = [np.stack([a, b]) for a, b in zip(args, bad)]
                with pytest.raises(StateError, match=rf"^{field}\[{k}\] \(joint '{names[k]}'\) is not finite"):
                    call(*batch)
        far = x.copy()
        far[2] = robot.upper[2] + 0.01
        with pytest.raises(StateError, match=rf"^x\[2\] = .* beyond the limits .* of joint '{names[2]}'"):
            call(np.stack([x, far]), np.stack([xd, xd]), np.stack([xdd, xdd]))
        with pytest.raises(StateError, match=r"^xd has shape \(3,\), expected \(4,\)"):
            call(x, xd[:3], xdd)
        both = call(np.stack([x, x2]), np.stack([xd, xd2]), np.stack([xdd, xdd2]))
        assert np.array_equal(both[0], call(x, xd, xdd)) and np.array_equal(both[1], call(x2, xd2, xdd2))
