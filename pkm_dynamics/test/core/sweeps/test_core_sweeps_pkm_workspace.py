"""The workspace sweep of a parallel robot (core/sweeps, the workspace map's kernel) against the
robot's one-pose public calls from a cold start: J_IK, kappa(J_IK), the static forces at rest, M_t,
its largest eigenvalue and the worst loop kappa(G_y); a pose out of reach is not solved and the
poses after it are; the predictor along a line of poses and the path from the reference pose."""
from __future__ import annotations

import os

import numpy as np
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.core.limb.ik_refinement import loop_conditions
from pkm_dynamics.core.sweeps import pkm_workspace
from pkm_dynamics.core.sweeps.pkm_workspace import line_orders, workspace_sweep

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "robots")


@pytest.mark.parametrize("name, axis", [("gough_stewart_6ups.urdf", 1), ("irsbot2.urdf", 2)])
def test_workspace_sweep_matches_one_pose_calls(name, axis):
    robot = load_robot(os.path.join(ROBOTS, name))
    steps = [0.0, 0.01, 0.02, 5.0, 0.03, 0.02]                # the fourth far out of reach
    poses = np.stack([robot.reference_pose] * len(steps))
    for k, d in enumerate(steps):
        poses[k, :3, 3] += poses[k, :3, axis] * d
    sw = workspace_sweep(robot, poses)
    assert sw.solved.tolist() == [True, True, True, False, True, True]
    assert np.isnan(sw.J_IK[3]).all() and np.isnan(sw.kappa_G[3])
    z = np.zeros(robot.dof)
    for i in np.flatnonzero(sw.solved):
        sol = robot.inverse_kinematics(poses[i])                       # cold, from the reference
        np.testing.assert_allclose(sw.J_IK[i], sol.J_IK, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(sw.efforts[i], robot.inverse_dynamics(poses[i], z, z), rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(sw.M_t[i], robot.mass_matrix(sol), rtol=1e-8, atol=1e-12)
        assert sw.kappa_J[i] == pytest.approx(np.linalg.cond(sol.J_IK), rel=1e-8)
        assert sw.mass_max[i] == pytest.approx(np.linalg.eigvalsh(robot.mass_matrix(sol))[-1], rel=1e-8)
        worst = max([1.0] + [loop_conditions(lb, st).max() for lb, st in zip(robot.limbs, sol.limb_states)
                             if lb.loops])
        assert sw.kappa_G[i] == pytest.approx(worst, rel=1e-8)


def test_line_orders_count_the_equal_steps_of_a_straight_line():
    pts = np.array([[0, 0], [0, 1], [0, 2], [0, 3], [1, 3], [1, 2], [1, 1], [1, 0], [1, -1.0]])
    assert line_orders(pts).tolist() == [0, 0, 1, 2, 0, 0, 1, 2, 2]
    assert line_orders(pts[:2]).tolist() == [0, 0]
    assert line_orders(np.array([[0.0], [0.0], [0.0]])).tolist() == [0, 0, 0]       # no step: no line


@pytest.mark.parametrize("name, axis", [("gough_stewart_6ups.urdf", 0), ("irsbot2.urdf", 2)])
def test_predictor_along_a_line_takes_fewer_iterations_to_the_same_solutions(name, axis):
    """Along a straight line of equally spaced poses the extrapolated start (secant, then quadratic)
    converges in fewer Newton iterations than the last solution, to the solutions of the cold
    one-pose calls."""
    robot = load_robot(os.path.join(ROBOTS, name))
    poses = np.stack([robot.reference_pose] * 12)
    poses[:, :3, 3] += poses[:, :3, axis] * np.linspace(-0.02, 0.024, 12)[:, None]
    line = line_orders(poses)
    assert line.tolist() == [0, 0, 1] + [2] * 9
    got, plain = workspace_sweep(robot, poses), workspace_sweep(robot, poses, line=np.zeros(12, dtype=int))
    assert got.solved.all() and plain.solved.all()
    assert got.iterations[3:].sum() < plain.iterations[3:].sum()
    for i in range(12):
        sol = robot.inverse_kinematics(poses[i])
        np.testing.assert_allclose(got.J_IK[i], sol.J_IK, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(got.J_IK[i], plain.J_IK[i], rtol=1e-8, atol=1e-10)


def test_a_far_first_pose_is_solved_in_the_compiled_sweep_along_the_path(monkeypatch):
    """The IRSBot-2 at (x, z) = (-0.1, -0.1) m off its reference pose: the direct solve from the
    reference configuration moves a joint beyond the direct step; the compiled sweep takes the
    path from the reference pose (as the one-pose route's continuation) instead of handing the
    pose to the robot's own calls, and agrees with the cold one-pose call."""
    robot = load_robot(os.path.join(ROBOTS, "irsbot2.urdf"))
    pose = robot.reference_pose.copy()
    pose[:3, 3] += pose[:3, :3] @ np.array([-0.1, 0.0, -0.1])

    def refuse(*args):
        raise AssertionError("handed over to the one-pose calls")

    monkeypatch.setattr(pkm_workspace, "solve_from", refuse)
    sw = workspace_sweep(robot, pose[None])
    sol = robot.inverse_kinematics(pose)
    assert sw.solved[0]
    np.testing.assert_allclose(sw.J_IK[0], sol.J_IK, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(sw.M_t[0], robot.mass_matrix(sol), rtol=1e-8, atol=1e-12)
    z = np.zeros(robot.dof)
    np.testing.assert_allclose(sw.efforts[0], robot.inverse_dynamics(sol, z, z), rtol=1e-8, atol=1e-9)


def test_inverse_kinematics_from_limb_joints_is_the_warm_one_pose_call():
    """``inverse_kinematics_from(pose, flat, V, A)`` (the sweep's warm start from the joints of the
    last pose) gives what ``inverse_kinematics(pose, V, A, initial=<the solution of those joints>)``
    gives; a joint vector of another length is refused naming its shape."""
    from pkm_dynamics.core.errors import StateError
    robot = load_robot(os.path.join(ROBOTS, "gough_stewart_6ups.urdf"))
    V, A = np.full(robot.dof, 0.05), np.full(robot.dof, 0.2)
    prev = robot.inverse_kinematics(robot.reference_pose, V, A)
    pose = robot.reference_pose.copy()
    pose[:3, 3] += [0.01, -0.02, 0.015]
    got = robot.inverse_kinematics_from(pose, prev.flat, V, A)
    want = robot.inverse_kinematics(pose, V, A, initial=prev)
    for name in ("flat", "q", "qd", "qdd", "J_IK", "condition", "iterations"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    np.testing.assert_allclose(robot.inverse_dynamics(got, V, A), robot.inverse_dynamics(want, V, A), rtol=0, atol=0)
    with pytest.raises(StateError, match=r"shape \(3,\)"):
        robot.inverse_kinematics_from(pose, np.zeros(3))
