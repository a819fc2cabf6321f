"""Simulation (core/simulation/, Python route): the energy of an unactuated robot — kinetic energy of the
whole spanning tree (CRBA at the closed-loop tree state) plus the potential energy of every
body's centre of mass, an independent path from the minimal-coordinate forward dynamics — is
conserved by the adaptive integrator to its tolerance; RK4 agrees with it; the feedforward of a
trajectory drives the crane along that trajectory; a stroke end stops it with the named error;
a PKM in task space."""
import os

import numpy as np
import pytest

from pkm_dynamics.core.errors import StateError
from pkm_dynamics.core.robot import load_robot
from pkm_dynamics.core.simulation import task_coordinate_rates
from pkm_dynamics.core.spatial.se3 import exp_se3, inertia_parameters
from pkm_dynamics.core.tree.tree_dynamics import crba, forward_kinematics
from pkm_dynamics.testing import frictionless

ROBOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "robots")
FOUR = frictionless(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))  # friction: test/core/friction/
RRR = os.path.join(ROBOTS, "planar_3rrr.urdf")
X0 = np.array([0.3, 0.2, 0.25, 0.4])


def tree_energy(tree, q, qd):
    """Kinetic plus potential energy of the spanning tree at a closed-loop state."""
    C = forward_kinematics(tree, q)
    potential = 0.0
    for i in range(tree.nq):
        m, c, _ = inertia_parameters(tree.M[i])
        potential -= m * tree.gravity @ (C[i][:3, :3] @ c + C[i][:3, 3])
    return 0.5 * qd @ crba(tree, q) @ qd + potential, 0.5 * qd @ crba(tree, q) @ qd


@pytest.mark.parametrize("gravity", [[0.0, 0.0, 0.0], None])
def test_unactuated_crane_conserves_energy(gravity):
    robot = load_robot(FOUR, gravity=gravity)
    s = robot.simulate(X0, np.array([0.3, 0.05, -0.05, 0.1]), 0.3, dt=0.01, method="adaptive",
                       rtol=1e-10, atol=1e-12)
    assert s.t.shape == (31,) and s.x.shape == s.xd.shape == (31, 4) and s.f.shape == (31, 4)
    np.testing.assert_array_equal(s.f, 0.0)
    E, K = np.array([tree_energy(robot.tree, *robot.tree_state(x, xd)[:2]) for x, xd in zip(s.x, s.xd)]).T
    assert np.ptp(s.x[:, 1]) > 0.01                  # the lift moves
    if gravity is None:
        assert np.ptp(K) > 0.1 * K.max()             # energy is exchanged with the potential
    assert np.abs(E - E[0]).max() < 1e-7 * K.max()


def test_rk4_agrees_with_the_adaptive_integrator():
    """A PD controller around the gravity-holding efforts (controller callback)."""
    robot = load_robot(FOUR)
    hold = robot.inverse_dynamics(X0, np.zeros(4), np.zeros(4))
    gains = np.array([2e4, 4e5, 2e5, 1e5])

    def controller(t, x, xd):
        return hold + gains * (X0 + 0.02 * np.sin(3 * t) - x) - 0.1 * gains * xd

    xd0 = np.array([0.1, 0.0, 0.05, 0.0])
    a = robot.simulate(X0, xd0, 0.4, controller=controller, dt=1e-3)
    b = robot.simulate(X0, xd0, 0.4, controller=controller, dt=1e-3, method="adaptive")
    assert a.method == "rk4" and b.method == "adaptive"
    assert np.ptp(a.x, axis=0).min() > 1e-3
    np.testing.assert_allclose(a.x, b.x, rtol=0, atol=1e-8)
    np.testing.assert_allclose(a.xd, b.xd, rtol=0, atol=1e-6)
    np.testing.assert_allclose(a.f, [controller(t, x, xd) for t, x, xd in zip(a.t, a.x, a.xd)])


def reference(t):
    """A smooth motion of the crane around X0 and its first two derivatives."""
    w = np.array([1.0, 2.0, 1.5, 2.5])
    A = np.array([0.2, 0.05, 0.05, 0.1])
    return X0 + A * np.sin(w * t), A * w * np.cos(w * t), -A * w * w * np.sin(w * t)


def test_feedforward_drives_the_crane_along_its_trajectory():
    robot = load_robot(FOUR)
    s = robot.simulate(X0, reference(0.0)[1], 1.0, efforts=lambda t: robot.inverse_dynamics(*reference(t)),
                       dt=1e-3)
    ref = np.array([reference(t)[0] for t in s.t])
    assert np.abs(s.x - ref).max() < 1e-8
    assert np.abs(s.x - X0).max() > 0.1


def test_stroke_end_ends_the_simulation_naming_the_joint_and_time():
    robot = load_robot(FOUR)
    push = robot.inverse_dynamics(X0, np.zeros(4), np.zeros(4)) + np.array([0.0, 0.0, 0.0, 2e4])
    for method in ("rk4", "adaptive"):
        with pytest.raises(StateError, match=r"simulation at t = 0\.[0-9]+ s: .*'extension'.*stroke"):
            robot.simulate(X0, np.zeros(4), 2.0, efforts=push, method=method)


def test_bad_arguments_are_named():
    robot = load_robot(FOUR)
    with pytest.raises(StateError, match="efforts at t = 0 s"):
        robot.simulate(X0, np.zeros(4), 0.1, efforts=lambda t: np.zeros(3))
    with pytest.raises(StateError, match="either efforts"):
        robot.simulate(X0, np.zeros(4), 0.1, efforts=np.zeros(4), controller=lambda t, x, xd: x)
    with pytest.raises(StateError, match="method"):
        robot.simulate(X0, np.zeros(4), 0.1, method="euler")


@pytest.mark.parametrize("name", ["planar_3rrr", "gough_stewart_6ups"])
def test_task_coordinate_rates_against_differences(name):
    robot = load_robot(os.path.join(ROBOTS, name + ".urdf"))
    rng = np.random.default_rng(1)
    x, V = rng.uniform(-0.3, 0.3, robot.dof), rng.normal(size=robot.dof)
    C, h = robot.task_pose(x), 1e-6
    fd = (robot.task_coordinates(C @ exp_se3(robot.P_p @ V, h))
          - robot.task_coordinates(C @ exp_se3(robot.P_p @ V, -h))) / (2 * h)
    np.testing.assert_allclose(task_coordinate_rates(robot.P_p, x, V), fd, atol=1e-8)


def test_pkm_in_task_space():
    """3RRR: unactuated without gravity, its energy is conserved; with gravity in its plane and
    constant efforts RK4 agrees with the adaptive integrator; poses are the task poses."""
    free = load_robot(RRR, gravity=[0.0, 0.0, 0.0])
    V0 = np.array([0.05, -0.03, 0.2])
    s = free.simulate(np.zeros(3), V0, 0.1, dt=0.02, method="adaptive", rtol=1e-10, atol=1e-12)
    K, sol = [], None
    for C, V in zip(s.pose, s.xd):
        sol = free.inverse_kinematics(C, V, initial=sol)
        K.append(0.5 * sol.qd @ crba(free.tree, sol.q) @ sol.qd)
    assert np.ptp(s.xd, axis=0).max() > 1e-3          # the limbs' inertia changes V_t
    assert np.ptp(K) < 1e-7 * max(K)
    robot = load_robot(RRR, gravity=[0.0, -9.80665, 0.0])
    u = np.array([0.3, -0.2, 0.1])
    a = robot.simulate(robot.task_pose(np.zeros(3)), np.zeros(3), 0.06, efforts=u, dt=0.005)
    b = robot.simulate(np.zeros(3), np.zeros(3), 0.06, efforts=u, dt=0.005, method="adaptive")
    assert np.abs(a.x[-1]).max() > 1e-4
    np.testing.assert_allclose(a.x, b.x, atol=1e-9)
    np.testing.assert_allclose(a.pose[-1], robot.task_pose(a.x[-1]))
    lifted = robot.task_pose(np.zeros(3))
    lifted[2, 3] += 0.05
    with pytest.raises(StateError, match="off the task manifold"):
        robot.simulate(lifted, np.zeros(3), 0.01, efforts=u)
