"""Inverse kinematics of module chains against forward kinematics (round trip) and finite
differences of the end-effector pose along a smooth actuator path."""
import os

import numpy as np
import pytest

from pkm_dynamics.core import ConvergenceError, StateError, load_robot
from pkm_dynamics.core.module_chain import chain_jacobian
from pkm_dynamics.core.spatial import log_se3, pose_inv

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "robots")


@pytest.fixture(scope="module")
def crane():
    return load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))


def path(t):
    return np.array([0.3 + 0.2 * np.sin(t), 0.25 + 0.05 * np.sin(2 * t),
                     0.2 + 0.05 * np.cos(t), 0.5 + 0.1 * np.sin(t)])


def test_round_trip_through_forward_kinematics(crane):
    rng = np.random.default_rng(0)
    for _ in range(8):
        x = np.array([rng.uniform(-2, 2), rng.uniform(0.05, 0.5), rng.uniform(0.05, 0.5),
                      rng.uniform(0.05, 1.0)])
        sol = crane.inverse_kinematics(crane.forward_kinematics(x))
        assert sol.residual <= 1e-10
        assert np.abs(sol.actuators - x).max() < 1e-8
        # every tree joint: the loops closed at the solution
        assert np.allclose(sol.q, crane.tree_state(x)[0], atol=1e-8)


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
