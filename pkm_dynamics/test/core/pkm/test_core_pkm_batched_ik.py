"""The batched inverse kinematics of a parallel robot on scattered poses (a grid, random samples:
not a path): each sample starts from the previous solution, and where the compiled IK cannot
take that step directly it starts from the batch's ``initial`` as a one-pose call does, before
the continuation of the numpy route (issue 29: the batch took the numpy continuation for every
far step, 3 times slower per pose than one-pose calls).  The numbers are those of one-pose calls."""
from __future__ import annotations

import os

import numpy as np
import pytest

from pkm_dynamics.core import load_robot

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "robots")


@pytest.fixture(scope="module", params=["gough_stewart_6ups.urdf", "irsbot2.urdf"])
def robot(request):
    return load_robot(os.path.join(ROBOTS, request.param))


def scattered_poses(robot, n=12, seed=29):
    """Poses every one of which a one-pose call from the reference configuration solves, far apart."""
    rng = np.random.default_rng(seed)
    scale = np.array([0.2 if c[0] == "w" else 0.05 for c in robot.task_space])
    out = []
    while len(out) < n:
        pose = robot.task_pose(rng.uniform(-1, 1, robot.dof) * scale)
        try:
            robot.inverse_kinematics(pose)
        except Exception:
            continue
        out.append(pose)
    return np.array(out)


def test_batch_of_scattered_poses_takes_no_numpy_continuation(robot, monkeypatch):
    poses = scattered_poses(robot)
    one = [robot.inverse_kinematics(p) for p in poses]

    def no_reference_route(*args, **kw):
        raise AssertionError("the batch took the numpy route for a pose the kernel solves from the start")

    monkeypatch.setattr(robot, "_limbs_by_reference", no_reference_route)
    batch = robot.inverse_kinematics(poses)
    np.testing.assert_allclose(batch.actuators, np.array([s.actuators for s in one]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(batch.J_IK, np.array([s.J_IK for s in one]), rtol=1e-10, atol=1e-12)


def test_batch_with_rates_of_scattered_poses_matches_one_pose_calls(robot):
    poses = scattered_poses(robot, n=6, seed=7)
    V = np.full((len(poses), robot.dof), 0.01)
    A = np.full((len(poses), robot.dof), -0.02)
    batch = robot.inverse_kinematics(poses, V, A)
    for i, p in enumerate(poses):
        s = robot.inverse_kinematics(p, V[i], A[i])
        np.testing.assert_allclose(batch.actuators_d[i], s.actuators_d, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(batch.actuators_dd[i], s.actuators_dd, rtol=1e-10, atol=1e-12)

