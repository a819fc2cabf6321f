"""The workspace sweep of a parallel robot (core/sweeps, the workspace map's kernel) against the
robot's one-pose public calls from a cold start: J_IK, the static forces at rest, M_t and the
worst loop kappa(G_y); a pose out of reach is not solved and the poses after it are."""
from __future__ import annotations

import os

import numpy as np
import pytest

from pkm_dynamics.core import load_robot
from pkm_dynamics.core.limb.ik_refinement import loop_conditions
from pkm_dynamics.core.sweeps.pkm_workspace import workspace_sweep

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
        worst = max([1.0] + [loop_conditions(lb, st).max() for lb, st in zip(robot.limbs, sol.limb_states)
                             if lb.loops])
        assert sw.kappa_G[i] == pytest.approx(worst, rel=1e-8)
