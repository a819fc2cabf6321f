"""Forward kinematics with rates (core/forward_state.py), each output against a path that
does not share its code: module chains' twist against finite differences of the pose along
the actuator motion; PKMs' pose and twist against inverse kinematics (round trip); M_t against
the KKT route (constrained tree dynamics, core/constrained.py, which shares the cut-joint rows
and the tree dynamics with the PKM route, checked against Pinocchio in
test_core_independent_kkt.py): at zero twist and without
gravity the actuator forces u_k of a unit task acceleration e_k satisfy J_IK^T u_k = M_t e_k."""
from pathlib import Path

import numpy as np
import pytest

from pkm_dynamics.core import StateError, load_robot
from pkm_dynamics.core.tree.constrained import kkt_inverse_dynamics
from pkm_dynamics.core.forward_state import forward_state
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
