"""Inverse kinematics of module chains against forward kinematics (round trip) and finite
differences of the end-effector pose along a smooth actuator path."""
import os

import numpy as np
import pytest

from pkm_dynamics.core import ConvergenceError, StateError, load_robot
from pkm_dynamics.core.module_chain.chain_ik import chain_jacobian
from pkm_dynamics.core.pkm.parallel_robot import LimbChainRobot
from pkm_dynamics.core.spatial.se3 import Ad_inv, log_se3, pose_inv
from pkm_dynamics.core.tree.tree_dynamics import frame_jacobian, kinematics

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "robots")


@pytest.fixture(scope="module")
def crane():
    return load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))


def path(t):
    return np.array([0.3 + 0.2 * np.sin(t), 0.25 + 0.05 * np.sin(2 * t),
                     0.2 + 0.05 * np.cos(t), 0.5 + 0.1 * np.sin(t)])


#: the actuators' limits as the URDFs state them
LIMITS = {"heavy_duty_4dof": (np.array([-np.inf, 0.0, 0.0, 0.0]), np.array([np.inf, 0.59, 0.59, 1.1])),
          "linear_4bar_1dof": (np.array([0.0]), np.array([0.59]))}
#: the lift loop straightens (a loop singularity) at x = 0.5532 m, inside its 0.59 m stroke
REACHABLE_LIFT = 0.55


def mid_and_span(name):
    """Mid-stroke values and strokes of the actuators (a continuous joint: 0 and one turn)."""
    lo, hi = LIMITS[name]
    bounded = np.isfinite(lo)
    return (np.where(bounded, 0.5 * (np.where(bounded, lo, 0) + np.where(bounded, hi, 0)), 0.0),
            np.where(bounded, np.where(bounded, hi, 0) - np.where(bounded, lo, 0), 2 * np.pi))


def test_issue_pose_has_two_solutions_nearest_mid_stroke_returned(crane):
    """The crane pose of x = [0.3, 0.2, 0.25, 0.4] is also reached by another configuration
    within the strokes: both are reported, the one nearer mid-stroke is returned without a
    seed, and a seed picks either."""
    x = np.array([0.3, 0.2, 0.25, 0.4])
    T = crane.forward_kinematics(x)
    sol = crane.inverse_kinematics(T)
    assert len(sol.solutions) == 2
    for y in sol.solutions:
        assert np.abs(crane.forward_kinematics(y) - T).max() <= 1e-10
    other = sol.solutions[1] if np.abs(sol.solutions[0] - x).max() < 1e-9 else sol.solutions[0]
    assert np.abs(other - x).max() > 0.01                        # a different configuration
    mid, span = mid_and_span("heavy_duty_4dof")
    nearest = min((x, other), key=lambda y: np.linalg.norm((y - mid) / span))
    np.testing.assert_array_equal(sol.actuators, nearest)
    np.testing.assert_array_equal(sol.solutions[0], sol.actuators)
    for seed in (x, other):
        np.testing.assert_allclose(crane.inverse_kinematics(T, initial=seed).actuators, seed, atol=1e-12)
        only = crane.inverse_kinematics(T, initial=seed, search=False)      # Newton from the seed only
        np.testing.assert_allclose(only.actuators, seed, atol=1e-12)
        assert len(only.solutions) == 1


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_ik_states_are_exact_at_random_reachable_states(name):
    """Seeded random states over the whole reachable stroke: every returned solution reaches the
    pose (FK) to 1e-10; the known configuration is among them; the returned one is the nearest
    to mid-stroke (normalized by the URDF strokes); a seed equal to the state returns it; rates
    and accelerations reproduce the end-effector twist and acceleration through the tree
    Jacobian and tree kinematics to 1e-10 relative; the constraint-embedding route
    (LimbChainRobot) gives the same tree state."""
    robot = load_robot(os.path.join(ROBOTS, f"{name}.urdf"))
    lc = LimbChainRobot(robot.description)
    tree = robot.tree
    body, offset = tree.frame(robot.end_effector)
    lo, hi = LIMITS[name]
    lo_s, hi_s = np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)
    hi_s[robot.actuated_joints.index("lift")] = REACHABLE_LIFT
    mid, span = mid_and_span(name)
    rng = np.random.default_rng(10)
    for _ in range(40):
        x = lo_s + (hi_s - lo_s) * rng.random(robot.n)
        xd, xdd = rng.normal(size=robot.n), rng.normal(size=robot.n)
        T = robot.forward_kinematics(x)
        sol = robot.inverse_kinematics(T)
        for y in sol.solutions:
            assert np.abs(robot.forward_kinematics(y) - T).max() <= 1e-10
            assert np.all(y >= lo - 1e-12) and np.all(y <= hi + 1e-12)
        assert min(np.abs(y - x).max() for y in sol.solutions) <= 1e-8
        dist = [np.linalg.norm((y - mid) / span) for y in sol.solutions]
        assert dist[0] == min(dist) and np.array_equal(sol.actuators, sol.solutions[0])
        # twist and acceleration of the state (x, xd, xdd) from the tree
        q, qd, qdd = robot.tree_state(x, xd, xdd)
        V = Ad_inv(offset) @ kinematics(tree, q, qd, qdd)[2][body]
        Vd = Ad_inv(offset) @ kinematics(tree, q, qd, qdd)[3][body]
        s = robot.inverse_kinematics(T, V, Vd, initial=x)
        np.testing.assert_allclose(s.actuators, x, rtol=0, atol=1e-10)
        np.testing.assert_allclose(s.actuators_d, xd, rtol=0, atol=1e-10 * np.abs(xd).max())
        np.testing.assert_allclose(s.actuators_dd, xdd, rtol=0, atol=1e-10 * np.abs(xdd).max())
        J = frame_jacobian(tree, s.q, robot.end_effector)
        np.testing.assert_allclose(J @ s.qd, V, rtol=0, atol=1e-10 * np.abs(V).max())
        A = Ad_inv(offset) @ kinematics(tree, s.q, s.qd, s.qdd)[3][body]
        np.testing.assert_allclose(A, Vd, rtol=0, atol=1e-10 * np.abs(Vd).max())
        for a, b in zip(lc.tree_state(s.actuators, s.actuators_d, s.actuators_dd), (s.q, s.qd, s.qdd)):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-9 * max(1.0, np.abs(b).max()))


def test_rates_and_accelerations_against_finite_differences(crane):
    def twist(t, h=1e-5):          # body-fixed end-effector twist by central differences
        T0 = crane.forward_kinematics(path(t))
        return (log_se3(pose_inv(T0) @ crane.forward_kinematics(path(t + h)))
                - log_se3(pose_inv(T0) @ crane.forward_kinematics(path(t - h)))) / (2 * h)

    for t in (0.3, 1.1, 2.5):
        H = 1e-3
        Vd = (-twist(t + 2 * H) + 8 * twist(t + H) - 8 * twist(t - H) + twist(t - 2 * H)) / (12 * H)
        sol = crane.inverse_kinematics(crane.forward_kinematics(path(t)), twist(t), Vd)
        xd = (path(t + 1e-5) - path(t - 1e-5)) / 2e-5
        xdd = (path(t + 1e-3) - 2 * path(t) + path(t - 1e-3)) / 1e-6
        assert np.abs(sol.actuators_d - xd).max() < 1e-5 * np.abs(xd).max()
        assert np.abs(sol.actuators_dd - xdd).max() < 1e-3 * np.abs(xdd).max()
        q, qd, qdd = crane.tree_state(sol.actuators, sol.actuators_d, sol.actuators_dd)
        assert np.allclose(sol.qd, qd) and np.allclose(sol.qdd, qdd)


def test_unreachable_pose_and_unrealisable_twist(crane):
    T = crane.forward_kinematics(path(0.4))
    far = T.copy()
    far[:3, 3] += [20.0, 0.0, 0.0]                   # 20 m away: beyond the boom's reach
    with pytest.raises(ConvergenceError, match="did not reach the pose"):
        crane.inverse_kinematics(far)
    sol = crane.inverse_kinematics(T)
    J, _ = chain_jacobian(crane, sol.actuators)
    U, _, _ = np.linalg.svd(J)
    with pytest.raises(StateError, match="not realisable"):
        crane.inverse_kinematics(T, twist=U[:, -1])   # a direction the 4 actuators cannot produce
    with pytest.raises(StateError, match="pose must be"):
        crane.inverse_kinematics(np.eye(3))


def test_ik_reaches_poses_with_actuators_at_their_stroke_ends(crane):
    """Poses whose configuration has actuators on or near a stroke end (within 2 cm; the slew
    anywhere in the turn) are reached: the search does not stall against a stroke end."""
    rng = np.random.default_rng(4)
    ends = np.array([[0.0, 0.0, 0.0], [REACHABLE_LIFT, 0.59, 1.1]])
    cases = [np.array([2.5447062, 0.00925501, 0.17907027, 1.09892847])]   # stalled at lift = 0 once
    for _ in range(20):
        x = np.concatenate([[rng.uniform(-np.pi, np.pi)], rng.uniform(ends[0], ends[1])])
        pick = rng.random(3) < 0.5
        side = rng.integers(0, 2, 3)
        near = ends[side, np.arange(3)] + np.where(side == 0, 1.0, -1.0) * rng.uniform(0, 0.02, 3)
        x[1:][pick] = near[pick]
        cases.append(x)
    for x in cases:
        T = crane.forward_kinematics(x)
        sol = crane.inverse_kinematics(T)
        assert min(np.abs(y - x).max() for y in sol.solutions) <= 1e-8, x
        assert sol.residual <= 1e-10


def test_compiled_newton_solve_matches_the_numpy_route(crane):
    """The compiled Gauss-Newton solve (one kernel per start) against the numpy pose_newton it
    replaces, from every start of the search at seeded random poses: every start that converges
    converges in both, to the same actuator values (1e-11) and in the same number of iterations."""
    from pkm_dynamics.core.module_chain import chain_ik
    rng = np.random.default_rng(8)
    lo, hi = LIMITS["heavy_duty_4dof"]
    mid, _ = mid_and_span("heavy_duty_4dof")
    converged = 0
    for _ in range(8):
        x = np.concatenate([[rng.uniform(-np.pi, np.pi)], rng.uniform(lo[1:], [REACHABLE_LIFT, *hi[2:]])])
        T = crane.forward_kinematics(x)
        for start in chain_ik.ik_starts(crane.chain, mid):
            ref = chain_ik.pose_newton(crane, T, start, 1e-10, 50)
            got = chain_ik.compiled_pose_newton(crane, T, start, 1e-10, 50)
            assert (ref[1] <= 1e-10) == (got[1] <= 1e-10)
            if ref[1] <= 1e-10:
                converged += 1
                np.testing.assert_allclose(got[0], ref[0], rtol=0, atol=1e-11)
                assert got[2] == ref[2]
    assert converged >= 8
