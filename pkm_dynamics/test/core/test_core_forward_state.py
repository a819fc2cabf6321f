"""Forward kinematics with rates (core/forward_state.py), each output against a path that
does not share its code: module chains' twist against finite differences of the pose along
the actuator motion; PKMs' pose and twist against inverse kinematics (round trip); M_t against
the KKT route (constrained tree dynamics, core/tree/constrained.py, which shares the cut-joint rows
and the tree dynamics with the PKM route, checked against Pinocchio in
test_core_independent_kkt.py): at zero twist and without
gravity the actuator forces u_k of a unit task acceleration e_k satisfy J_IK^T u_k = M_t e_k."""
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core import ConvergenceError, SingularityError, StateError, load_robot
from pkm_dynamics.core.tree.constrained import kkt_inverse_dynamics
from pkm_dynamics.core.forward_state import forward_state
from pkm_dynamics.core.pkm.parallel_robot import sample
from pkm_dynamics.core.spatial.se3 import log_se3, pose_inv

ROBOTS = Path(__file__).resolve().parents[2] / "robots"
MODULE_CHAINS = {"linear_4bar_1dof": [0.2], "heavy_duty_4dof": [0.3, 0.2, 0.25, 0.4]}
PKMS = {"planar_3rrr": [0.01, -0.01, 0.05], "irsbot2": [0.02, -0.03],
        "gough_stewart_6ups": [0.02, -0.01, 0.03, 0.01, 0.02, 0.03]}


def robot(name):
    return load_robot((ROBOTS / f"{name}.urdf").read_text())


@pytest.mark.parametrize("name", MODULE_CHAINS)
def test_module_chain_twist_is_the_derivative_of_the_pose(name):
    r = robot(name)
    x = np.asarray(MODULE_CHAINS[name])
    xd = 0.1 + 0.05 * np.arange(r.n)
    s = forward_state(r, x, xd)
    assert np.allclose(s.pose, r.forward_kinematics(x), rtol=0, atol=1e-14)
    h = 1e-6
    before, after = r.forward_kinematics(x - h * xd), r.forward_kinematics(x + h * xd)
    V_fd = log_se3(pose_inv(before) @ after) / (2 * h)
    assert np.linalg.norm(s.twist - V_fd) < 1e-7 * max(1.0, np.linalg.norm(V_fd))
    q, qd, _ = r.tree_state(x, xd)
    assert np.array_equal(s.q, q) and np.array_equal(s.qd, qd)
    assert s.mass_matrix is None
    still = forward_state(r, x)
    assert still.twist is None and still.qd is None


@pytest.mark.parametrize("name", PKMS)
def test_parallel_forward_state_round_trips_through_ik_and_mt_matches_kkt(name):
    r = robot(name)
    target = r.task_pose(np.asarray(PKMS[name]))
    V = 0.1 * np.cos(np.arange(r.dof) + 1.0)
    ik = r.inverse_kinematics(target, V)
    s = forward_state(r, ik.actuators, ik.actuators_d)
    assert np.linalg.norm(s.pose - target) < 1e-8
    assert np.linalg.norm(s.twist - V) < 1e-8 * max(1.0, np.linalg.norm(V))
    assert np.linalg.norm(s.q - ik.q) < 1e-8 and np.linalg.norm(s.qd - ik.qd) < 1e-8
    # M_t from the KKT route
    desc = r.description
    tree = desc.tree
    act = [tree.joint_index(n) for n in r.actuated_joints]
    zero = np.zeros(r.dof)
    columns = []
    for e in np.eye(r.dof):
        sol = r.inverse_kinematics(s.pose, zero, e, initial=s.solution)
        u = kkt_inverse_dynamics(desc, sol.q, np.zeros(tree.nq), sol.qdd, act, gravity=np.zeros(3))
        columns.append(sol.J_IK.T @ u)
    M_kkt = np.column_stack(columns)
    assert np.linalg.norm(s.mass_matrix - M_kkt) < 1e-9 * np.linalg.norm(M_kkt)
    assert np.allclose(s.mass_matrix, s.mass_matrix.T, rtol=1e-12, atol=0)


def test_inconsistent_rates_of_a_redundant_robot_are_refused():
    text = (ROBOTS / "planar_3rrr.urdf").read_text().replace(
        '<end_effector link="platform"/>',
        '<actuator joint="limb1_b"/>\n    <end_effector link="platform"/>')
    r = load_robot(text)
    ik = r.inverse_kinematics(r.task_pose(np.zeros(3)), np.array([0.1, 0.0, 0.2]))
    ok = forward_state(r, ik.actuators, ik.actuators_d)
    assert np.linalg.norm(ok.twist - [0.1, 0.0, 0.2]) < 1e-8
    bad = ik.actuators_d + np.array([0.0, 0.0, 0.0, 0.5])
    with pytest.raises(StateError, match="inconsistent"):
        forward_state(r, ik.actuators, bad)


@pytest.mark.parametrize("name", PKMS)
@pytest.mark.parametrize("beyond", [1e-3, 1e16])
def test_parallel_actuators_beyond_a_stroke_are_refused_naming_the_joint(name, beyond):
    """Actuator values beyond a stroke are no state of the robot: refused up front, naming the
    joint (found by the fuzz campaign: 1e16 made Newton's method run for minutes)."""
    r = robot(name)
    x = r.inverse_kinematics(r.reference_pose).actuators.copy()
    tree = r.description.tree
    joint = r.actuated_joints[-1]
    x[-1] = tree.upper[tree.joint_index(joint)] + beyond
    with pytest.raises(StateError, match=f"'{joint}'"):
        forward_state(r, x)


#: seeded random poses about the reference: task coordinates up to +-0.15 rad / +-0.09 m
ROUND_TRIP_POSES = 100


def random_poses(r, n, seed=7):
    scale = np.array([0.15 if c[0] == "w" else 0.09 for c in r.task_space])
    rng = np.random.default_rng(seed)
    return [r.task_pose(rng.uniform(-1, 1, r.dof) * scale) for _ in range(n)]


@pytest.mark.parametrize("name", ["gough_stewart_6ups", "planar_3rrr", "irsbot2", "irsbot2_paths"])
def test_forward_kinematics_returns_every_pose_the_ik_solves(name):
    """FK(IK(P)) = P to 1e-9 for every pose P that the IK solves from the reference: seeded
    random poses and, for the IRSBot-2, the identity pose (0.92 m above the reference of
    irsbot2_paths, beyond an actuation singularity: the IK now refuses it, see the next test).
    Before: a Newton iterate beyond a leg's stroke refused the Gough-Stewart FK (the limits
    were checked on the iterates), the stop on the actuator error left 2-6e-9 of pose error,
    and the FK of the identity pose's actuators failed in the loop closure (a full Newton step
    0.9 m away)."""
    r = robot(name)
    poses = random_poses(r, ROUND_TRIP_POSES) + ([np.eye(4)] if name.startswith("irsbot2") else [])
    solved = 0
    for P in poses:
        try:
            ik = r.inverse_kinematics(P)
        except (ConvergenceError, SingularityError, StateError):
            continue
        solved += 1
        C = r.forward_kinematics(ik.actuators)
        assert np.abs(log_se3(pose_inv(P) @ C)).max() <= 1e-9, (name, r.task_coordinates(P))
    assert solved >= 0.6 * len(poses)


def test_a_pose_beyond_an_actuation_singularity_is_another_assembly_mode():
    """irsbot2_paths, identity pose (0.92 m above the reference): the straight task path from
    the reference crosses an actuation singularity (tracked in 20 steps, each IK from the
    previous: det J_IK changes sign).  The IK from the reference refuses the pose instead of
    returning a configuration of another assembly mode; the FK from the reference returns, for
    the actuator values of the tracked configuration, the pose of the reference's assembly mode
    (its IK gives those values back), and from a start beyond the singularity the identity."""
    r = robot("irsbot2_paths")
    x1 = r.task_coordinates(np.eye(4))
    track = r.inverse_kinematics(r.task_pose(np.linspace(0.0, 1.0, 21)[:, None] * x1))
    det = np.linalg.det(track.J_IK)
    assert det[0] > 0 > det[-1]
    with pytest.raises(SingularityError, match="actuation singularity"):
        r.inverse_kinematics(np.eye(4))
    a = track.actuators[-1]
    C = r.forward_kinematics(a)
    back = r.inverse_kinematics(C)
    assert np.abs(back.actuators - a).max() <= 1e-9 and np.linalg.det(back.J_IK) > 0
    assert np.linalg.norm(C[:3, 3]) > 0.1
    C = r.forward_kinematics(a, initial=sample(track, 16))
    assert np.abs(log_se3(C)).max() <= 1e-9


def test_newton_iterates_of_the_forward_kinematics_may_pass_beyond_a_stroke():
    """gough_stewart_6ups: a pose whose leg 1 is at 0.0774 m of its 0.08 m stroke; Newton's
    first step from the reference puts that leg at 0.083 m (refused before: the limits were
    checked on the iterates); the solution is within the limits and is the pose.  Actuator
    values whose pose puts a joint beyond its limits are still refused, naming the joint."""
    r = robot("gough_stewart_6ups")
    P = r.task_pose([-0.0855, -0.0758, -0.051, -0.0077, -0.0753, 0.0455])
    ik = r.inverse_kinematics(P)
    assert 0.077 < ik.actuators[0] < 0.08
    C, sol = r.forward_kinematics(ik.actuators, return_solution=True)
    assert np.abs(log_se3(pose_inv(P) @ C)).max() <= 1e-9
    tree = r.description.tree
    assert np.all((sol.q >= tree.lower) & (sol.q <= tree.upper))
    # the same robot with leg 1's first U axis limited to +-0.01 rad: that pose is beyond it
    u1 = ik.q[tree.joint_index("leg1_u1")]
    assert abs(u1) > 0.02
    text = (ROBOTS / "gough_stewart_6ups.urdf").read_text()
    i = text.index('<joint name="leg1_u1"')
    j = text.index('<limit lower="-1.2" upper="1.2"', i)
    tight = load_robot(text[:j] + '<limit lower="-0.01" upper="0.01"' + text[j + 31:])
    with pytest.raises(StateError, match=r"joint 'leg1_u1' \(limb1\) would be at .* outside its limits"):
        tight.inverse_kinematics(P)
    with pytest.raises(StateError, match=r"joint 'leg1_u1' \(limb1\) would be at .* outside its limits"):
        tight.forward_kinematics(ik.actuators)
